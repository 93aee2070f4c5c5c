"""Tests of voxmetrics.evaluation, one module per module (tests/evaluation/test_<module>.py)."""
