"""Data model, readers and validation (design.md layer 1)."""

from voxmetrics.data.model import META_COLUMNS, EmbeddingSet, ScoreMatrix

__all__ = ["META_COLUMNS", "EmbeddingSet", "ScoreMatrix"]
