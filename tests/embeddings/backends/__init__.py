"""Tests of voxmetrics.embeddings.backends, one module per module (test_<module>.py)."""
