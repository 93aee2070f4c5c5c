"""Tests of voxmetrics.embeddings, one module per module (tests/embeddings/test_<module>.py)."""
