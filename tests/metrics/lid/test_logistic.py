"""LID's calibration passes sum their terms chunk by chunk: the same floats as whole blocks.

``metrics.lid.logistic._block_sums`` computes the logistic terms of a block of z-scores on
the halves of numpy's own pairwise-summation tree and adds the partial sums back up that tree,
so each sum equals numpy's ``.sum()`` of the whole block's term array. The slow reference
below is the former code (one array per term, the whole block at once). No timing is asserted
here.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

lid_module = importlib.import_module("voxmetrics.metrics.lid")
solver = importlib.import_module("voxmetrics.metrics.lid.logistic")


def _reference_block_sums(z, w, b):
    zz = z.astype(np.float64, copy=False).ravel()
    eta = w * zz + b
    e = np.exp(-np.abs(eta))
    sp = np.maximum(eta, 0.0) + np.log1p(e)
    p = np.where(eta >= 0, 1.0, e) / (1.0 + e)
    v = p * (1.0 - p)
    vz = v * zz
    return np.array([sp.sum(), p.sum(), (p * zz).sum(), v.sum(), vz.sum(), (vz * zz).sum()])


@pytest.mark.parametrize(
    "shape", [(1, 7), (3, 43), (17, 129), (64, 1000), (300, 777), (1000, 4096), (4096, 1024)]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_block_sums_equal_the_whole_block_sums(shape, dtype):
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    z = (rng.standard_normal(shape) * 3).astype(dtype)
    for w, b in [(0.0, -6.9), (2.5, -3.0), (-40.0, 1.0), (1e4, -2e4)]:
        assert _reference_block_sums(z, w, b).tolist() == solver._block_sums(z, w, b).tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(2, 300),
    st.integers(0, 2**32 - 1),
    st.sampled_from([None, 0.5, 1.0]),
    st.floats(-50, 50),
    st.floats(-50, 50),
)
def test_block_sums_of_any_block_with_ties(rows, cols, seed, step, w, b):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((rows, cols)) * 2
    if step is not None:  # few distinct values: many equal terms
        z = np.round(z / step) * step
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(solver, "_SUM_CHUNK", 136)  # many chunks even in a small block
        assert _reference_block_sums(z, w, b).tolist() == solver._block_sums(z, w, b).tolist()


@pytest.mark.parametrize("variant", ["reference-code", "maximum-likelihood"])
@pytest.mark.parametrize("ties", [False, True])
def test_calibration_and_lid_equal_the_former_passes(variant, ties, monkeypatch):
    rng = np.random.default_rng(5)
    t, n = 700, 120
    targets = rng.integers(0, n, t)
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += 1.5
    if ties:
        scores = np.round(scores, 1)
    # a warm start on every k-th trial, then all pairs; many chunks per block
    monkeypatch.setattr(solver, "_WARM_START_PAIRS", 20_000)
    monkeypatch.setattr(solver, "_SUM_CHUNK", 1000)
    fast = lid_module.calibrate_lid(scores, targets, variant=variant)
    monkeypatch.setattr(solver, "_block_sums", _reference_block_sums)
    slow = lid_module.calibrate_lid(scores, targets, variant=variant)
    assert fast == slow
    a, b = lid_module.lid(scores, targets, fast), lid_module.lid(scores, targets, slow)
    assert a.lid.tolist() == b.lid.tolist() and a.alid == b.alid
