"""Literal aliases shared across the package."""

from __future__ import annotations

from typing import Literal

ScoreFormat = Literal["auto", "csv", "parquet", "npz", "kaldi"]
"""Score file formats understood by :func:`voxmetrics.read_scores` (design.md, input formats)."""

Split = Literal["dev", "eval"]
"""The two halves of a condition: calibration (dev) and evaluation (eval)."""

Role = Literal["enrol", "trial"]
"""Role of an utterance in an :class:`~voxmetrics.EmbeddingSet`."""

Attacker = Literal["ignorant", "lazy-informed", "semi-informed"]
"""Knowledge level of the attacker of a condition."""

ATTACKERS: tuple[Attacker, ...] = ("ignorant", "lazy-informed", "semi-informed")

ScoreKind = Literal["similarity", "llr", "distance"]
"""What the scores of a condition are: similarities (higher = closer; the default), calibrated
natural-log LLRs (adds the actual DCF and APE curves), or distances (lower = closer), which are
negated on reading."""

SCORE_KINDS: tuple[ScoreKind, ...] = ("similarity", "llr", "distance")

SCORE_KIND_LABELS: dict[str, str] = {
    "similarity": "similarity",
    "llr": "llr",
    "distance": "distance (negated)",
}
"""How the reports name each kind (the JSON ``score_kind``)."""
