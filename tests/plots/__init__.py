"""Tests of voxmetrics.plots, one file per module (tests/plots/test_<module>.py)."""
