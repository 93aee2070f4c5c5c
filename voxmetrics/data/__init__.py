"""Data model, readers and validation (design.md layer 1)."""

from voxmetrics.data.model import META_COLUMNS, EmbeddingSet, ScoreMatrix
from voxmetrics.data.predictions import AttributePrediction, join_predictions
from voxmetrics.data.readers import (
    FORMATS,
    SCORE_COLUMNS,
    Source,
    detect_format,
    read_embeddings,
    read_scores,
    read_table,
)
from voxmetrics.data.writers import write_embeddings, write_scores

__all__ = [
    "FORMATS",
    "META_COLUMNS",
    "SCORE_COLUMNS",
    "AttributePrediction",
    "EmbeddingSet",
    "ScoreMatrix",
    "Source",
    "detect_format",
    "join_predictions",
    "read_embeddings",
    "read_scores",
    "read_table",
    "write_embeddings",
    "write_scores",
]
