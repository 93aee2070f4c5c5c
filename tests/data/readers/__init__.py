"""Tests of voxmetrics.data.readers, one module per module (tests/data/readers/test_<module>.py)."""
