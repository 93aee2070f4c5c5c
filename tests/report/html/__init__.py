"""Tests of voxmetrics.report.html, one file per module (tests/report/html/test_<module>.py)."""
