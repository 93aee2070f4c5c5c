"""Tests of voxmetrics.report, one file per module (tests/report/test_<module>.py)."""
