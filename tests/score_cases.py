"""Small score matrices written out by hand (not collected by pytest)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from voxmetrics.data.model import ScoreMatrix


def score_matrix(
    scores: ArrayLike,
    speakers: Sequence[str] = ("a", "b", "c"),
    trial_speakers: Sequence[str] | None = None,
) -> ScoreMatrix:
    """``scores`` (trials x ``speakers`` enrolled) with trials t0, t1, ... spoken by
    ``trial_speakers`` (by default trial i by enrolled speaker i)."""
    s = np.asarray(scores, dtype=float)
    return ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"t{i}" for i in range(s.shape[0])],
        trial_speakers=list(trial_speakers or speakers[: s.shape[0]]),
        enrol_speakers=list(speakers),
    )
