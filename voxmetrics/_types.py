"""Literal aliases shared across the package."""

from __future__ import annotations

from typing import Literal

ScoreFormat = Literal["auto", "csv", "parquet", "npz", "kaldi"]
"""Score file formats understood by :func:`voxmetrics.read_scores`."""

Split = Literal["dev", "eval"]
"""The two halves of a condition: calibration (dev) and evaluation (eval)."""

Role = Literal["enrol", "trial"]
"""Role of an utterance in an :class:`~voxmetrics.EmbeddingSet`."""

Attacker = Literal["ignorant", "lazy-informed", "semi-informed"]
"""Knowledge level of the attacker of a condition."""

ATTACKERS: tuple[Attacker, ...] = ("ignorant", "lazy-informed", "semi-informed")
