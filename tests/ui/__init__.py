"""Tests of voxmetrics.ui, one file per module (tests/ui/test_<module>.py)."""
