"""What the LID tests share: Hypothesis strategies, quiet wrappers, a synthetic score matrix.

Used by ``test_disclosure.py`` (steps 3-6 of LID) and ``test_calibration.py`` (steps 1-2);
the row pass's reference formula and its score matrices serve both.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.lid import calibrate_lid, lid

PROPS = settings(max_examples=60, deadline=None)
SCORES = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
# Scores on a 0.001 grid: a row is either exactly constant or spread by >= 0.001, so after
# s -> a s + c with a >= 0.1, |c| <= 10 the spread (>= 1e-4) stays ~1e11 ulps of the values
# (<= 60): z keeps ~11 significant digits and no row becomes (or stops being) degenerate.
GRID = st.integers(-5000, 5000).map(lambda k: k / 1000)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


@st.composite
def matrices(draw, elements=SCORES, max_t=12, min_n=2, max_n=8, n=None):
    """(scores, targets): T x N float64 scores, T in 1..max_t, N in min_n..max_n."""
    n = draw(st.integers(min_n, max_n)) if n is None else n
    t = draw(st.integers(1, max_t))
    scores = draw(arrays(np.float64, (t, n), elements=elements))
    targets = draw(arrays(np.int64, (t,), elements=st.integers(0, n - 1)))
    return scores, targets


ML = {"variant": "maximum-likelihood"}
"""The unpenalised fit (no longer the default)."""


def quiet_calibrate(scores, targets, **options):
    """calibrate_lid without its degenerate-data warnings (the fit is what matters here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return calibrate_lid(scores, targets, **options)


def quiet_lid(scores, targets, cal):
    """lid without its degenerate-data warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return lid(scores, targets, cal)


@st.composite
def row_affine_maps(draw, t):
    """(a, c): a positive scale and a shift per row, for s -> a s + c."""
    a = draw(arrays(np.float64, (t, 1), elements=st.floats(0.1, 10)))
    c = draw(arrays(np.float64, (t, 1), elements=st.floats(-10, 10)))
    return a, c


def shifted_normal(t, n, shift, seed=0):
    """t x n normal scores with each trial's mated score shifted up by ``shift``."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(t, n))
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += shift
    return scores, targets.tolist()


# --------------------------------------------------------------------------------------------
# The row pass (row_znorm, log_posteriors): its reference formula and the matrices it meets
# --------------------------------------------------------------------------------------------


def reference_row_znorm(scores, ddof):
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


def row_pass_matrices(seed: int):
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
