"""Conditions shaped for equality tests of the partial report paths (not collected by pytest).

``tied`` rounds a condition's scores so that mated and non-mated scores tie; ``sparse`` and
``incomplete`` give it a sparse trial list (some trials miss a non-mated pair, or all do).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition


def _rounded(sm: ScoreMatrix, decimals: int, mask: np.ndarray | None = None) -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        np.round(sm.scores, decimals),
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        mask=mask,
    )


def tied(
    cond: Condition, decimals: int, mask: np.ndarray | None = None, *, keep_dev: bool = False
) -> Condition:
    """``cond`` with its eval scores rounded (its dev too with ``keep_dev``, else no dev)."""
    dev = _rounded(cond.dev, decimals) if keep_dev and cond.dev is not None else None
    return dataclasses.replace(cond, eval=_rounded(cond.eval, decimals, mask), dev=dev)


def sparse(cond: Condition, decimals: int = 2, share: float = 0.4, seed: int = 0) -> Condition:
    """``cond`` rounded, with about ``share`` of its trials missing one non-mated pair."""
    sm = cond.eval
    mask = np.ones(sm.scores.shape, dtype=bool)
    rows = np.flatnonzero(np.random.default_rng(seed).random(sm.n_trials) < share)
    mask[rows, (sm.targets[rows] + 1) % sm.n_enrolled] = False
    return tied(cond, decimals, mask=mask)


def incomplete(cond: Condition, decimals: int = 3) -> Condition:
    """``cond`` rounded, without embeddings, and no trial complete (each misses a pair)."""
    sm = cond.eval
    mask = np.ones(sm.scores.shape, dtype=bool)
    mask[np.arange(sm.n_trials), (sm.targets + 1) % sm.n_enrolled] = False
    return dataclasses.replace(tied(cond, decimals, mask=mask), embeddings=None)
