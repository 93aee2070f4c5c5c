"""The row pass of ``evaluate`` (LID z-scores and log-posteriors) equals its reference formulas
bit for bit: the fast paths (a float64 power-of-two product for float32 scores, in-place
log-softmax) may not move any number.

Leftover of the metrics test reorganisation: these test ``voxmetrics.metrics.lid``, whose
owner folds them into its tests.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax

from voxmetrics.metrics.lid import log_posteriors, row_znorm


def _reference_znorm(scores, ddof):
    """row_znorm as first written: ldexp scaling, every step a new array."""
    s = np.asarray(scores, dtype=np.float64)
    peak = np.abs(s).max(axis=1, keepdims=True)
    _, exponent = np.frexp(np.where(np.isfinite(peak) & (peak > 0), peak, 1.0))
    s = np.ldexp(s, -exponent)
    mean = s.mean(axis=1, keepdims=True)
    centred = s - mean
    sd = np.sqrt((centred**2).sum(axis=1, keepdims=True) / (s.shape[1] - ddof))
    scale = np.maximum(np.abs(mean), np.abs(s).max(axis=1, keepdims=True))
    degenerate = (sd <= 1e-12 * scale).ravel() | (sd == 0).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(degenerate[:, None], 0.0, centred / np.where(sd == 0, 1.0, sd))
    return z, degenerate


def _matrices(seed: int):
    """Score matrices of every kind the row pass meets: float32 and float64, coarse (ties),
    constant rows, tiny and huge scales, and a row spanning 600 orders of magnitude."""
    rng = np.random.default_rng(seed)
    r, n = int(rng.integers(1, 40)), int(rng.integers(2, 200))
    s = rng.normal(0.0, 10 ** rng.uniform(-4, 4), (r, n))
    coarse = np.round(s, 1)
    constant = s.copy()
    constant[0] = 0.25
    spread = s.copy()
    spread[:, 0], spread[:, -1] = 1e-300, 1e300
    return [
        s,
        s.astype(np.float32),
        coarse,
        coarse.astype(np.float32),
        constant.astype(np.float32),
        s * 1e-300,
        s * 1e300,
        spread,
    ]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ddof", [0, 1])
def test_row_znorm_equals_its_reference_formula(seed, ddof):
    for s in _matrices(seed):
        z, deg = row_znorm(s, ddof=ddof)
        z_ref, deg_ref = _reference_znorm(s, ddof)
        assert z.dtype == np.float64 and z.tobytes() == z_ref.tobytes()
        assert deg.tolist() == deg_ref.tolist()


@pytest.mark.parametrize("seed", range(12))
def test_log_posteriors_equal_scipy_log_softmax(seed):
    for s in _matrices(seed):
        for w, b, prior, ddof in [(1.0, 0.0, 0.0, 0), (17.5, -2.0, np.log(1 / 99), 1)]:
            got, _ = log_posteriors(s, w, b, prior, ddof)
            z, _ = _reference_znorm(s, ddof)
            assert got.tobytes() == log_softmax(w * z + (b - prior), axis=1).tobytes()


def test_row_znorm_leaves_its_input_alone():
    s = np.array([[0.5, 0.25, 0.125]], dtype=np.float64)
    s32 = s.astype(np.float32)
    before, before32 = s.copy(), s32.copy()
    row_znorm(s)
    log_posteriors(s32, 3.0, 0.0, 0.0, 1)
    assert s.tobytes() == before.tobytes() and s32.tobytes() == before32.tobytes()
