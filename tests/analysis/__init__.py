"""Tests of voxmetrics.analysis, one module per module (tests/analysis/test_<module>.py)."""
