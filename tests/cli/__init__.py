"""Tests of voxmetrics.cli, one module per module (tests/cli/test_<module>.py)."""
