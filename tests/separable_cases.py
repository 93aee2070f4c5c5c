"""Real-shaped scores whose dev pools separate: the unpenalised LID calibration hits its cap.

The data mimic original speech scored by a speaker encoder: every dev mated score sits above
every non-mated one, where the maximum-likelihood calibration's LIDs go to thousands of bits
below zero (issue #27). Shared by the tests of the LID display range and the report card.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from voxmetrics._types import LID_DISPLAY_FLOOR
from voxmetrics.data import ScoreMatrix
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate

BITS = ("alid", "lid_plus", "lid_minus", "lid_max", "lid_q95")


def separable(n_speakers: int, per_speaker: int, seed: int, prefix: str, gap: float):
    """Cosine-like scores whose mated scores sit ``gap`` above the non-mated ones."""
    rng = np.random.default_rng(seed)
    speakers = [f"{prefix}{k}" for k in range(n_speakers)]
    targets = np.repeat(np.arange(n_speakers), per_speaker)
    scores = rng.normal(0.1, 0.05, (targets.size, n_speakers))
    scores[np.arange(targets.size), targets] = rng.normal(0.1 + gap, 0.05, targets.size)
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"{prefix}t{i}" for i in range(targets.size)],
        trial_speakers=np.repeat(speakers, per_speaker),
        enrol_speakers=speakers,
    )


DEV = separable(8, 4, 0, "d", gap=0.5)  # separable: max-likelihood w is infinite
EVAL = separable(5, 4, 1, "e", gap=0.2)  # N = 5, as the original condition


def quiet_evaluate(**options):
    """The report of ``EVAL`` calibrated on ``DEV``, its degenerate-data warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate(EVAL, dev=DEV, name="original", bootstrap=30, **options)


def in_range(x: float | None, n: int) -> bool:
    """Whether ``x`` is unknown or within the LID display range [-64 bits, log2 n]."""
    return x is None or LID_DISPLAY_FLOOR <= x <= math.log2(n) + 1e-9
