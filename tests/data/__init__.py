"""Tests of voxmetrics.data, one module per module (tests/data/test_<module>.py)."""
