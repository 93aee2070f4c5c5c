"""The sorted pools (voxmetrics.metrics.pools): built from a matrix or from two pools alike.

The float32 rates equal torch's; the pools of a matrix equal those of its two pools
(``tests/reference_pooled.py`` splits them); a ``ScoreMatrix`` builds its pools once; the
non-target sums and moments do not depend on the BLAS threads, and their sum-only first pass
gives the same float as the former pass (kept below as the reference). ``pav_runs`` (logs once
per PAV bin) equals the former per-run logs of ``tests/metrics/run_count_cases.py``, exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pool_cases
import pytest
import reference_pooled as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_registry import forget_unimportable_modules

from tests.metrics.run_count_cases import (
    old_d_ece_runs,
    old_min_cllr_terms,
    old_pav_runs,
    tied_matrix,
)
from voxmetrics.metrics.pools import RunCounts, SortedPools, _rate32, non_block_sums, pav_runs
from voxmetrics.metrics.uncertainty import _rocch_eer_runs
from voxmetrics.metrics.zebra import d_ece_from_runs, replicate_run_counts, speaker_run_counts

from .matrix_cases import matrix, shapes


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


pools = pool_cases.pools


def test_rate32_equals_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for total in (7, 1000, 2**24 + 1, 109_000_003):
        k = rng.integers(0, total + 1, 50)
        ours = _rate32(k.astype(np.int64), total)
        theirs = torch.from_numpy(k).float() / total
        assert np.array_equal(ours, theirs.numpy())


@settings(max_examples=100, deadline=None)
@given(pools(), st.integers(2, 5))
def test_from_matrix_equals_from_pools(tn, n_cols):
    tar, _ = tn
    rng = np.random.default_rng(tar.size)
    s = rng.integers(0, 5, (tar.size, n_cols)).astype(tar.dtype)
    t = rng.integers(0, n_cols, tar.size)
    s[np.arange(tar.size), t] = tar
    a = SortedPools.from_matrix(s, t)
    mt, mn = ref.mated_pools(s, t)
    b = SortedPools.from_pools(mt, mn)
    assert np.array_equal(a.values, b.values)
    for f in ("cells", "tar_at", "non_at"):
        assert np.array_equal(getattr(a.counts, f), getattr(b.counts, f))
    assert np.array_equal(a.cell_first, b.cell_first, equal_nan=True)
    assert a.eer_points == b.eer_points
    for v in np.unique(mn):
        assert a.locate(float(v), False) == b.locate(float(v), False)
        assert mn[a.locate(float(v), False)] == v


def test_pools_are_built_once_per_matrix():
    from voxmetrics.synth import demo_study

    sm = demo_study(n_speakers=6).conditions[0].eval
    a = SortedPools.of(sm)
    assert SortedPools.of(sm) is a
    b = SortedPools.from_pools(sm.tar, sm.non)
    assert np.array_equal(a.values, b.values) and a.eer_points == b.eer_points


def test_non_sums_do_not_depend_on_the_blas_threads():
    """Dask workers run one BLAS thread: the sums must not follow BLAS's thread count (a BLAS
    dot of 400,000 values does, with 2 threads or more)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(0)
    s = rng.normal(size=(200, 2000))
    pools = SortedPools.from_matrix(s, rng.integers(0, 2000, 200))
    default = pools.non_sums(0.1)
    with threadpoolctl.threadpool_limits(1):
        assert pools.non_sums(0.1) == default


# --------------------------------------------------------------------------------------------
# d''s non-target moments: the sum-only first pass gives the same float
# --------------------------------------------------------------------------------------------


def reference_moments(sp: SortedPools) -> tuple[float, float, float, float]:
    """The former ``SortedPools.moments``: the sum from ``non_sums(0.0)``."""
    v = sp.values.astype(np.float64)
    w = sp.counts.tar_at
    if v.size == 1:
        mean_tar, var_tar = float(v[0]), 0.0
    else:
        mean_tar = float((w * v).sum() / sp.n_tar)
        var_tar = float((w * (v - mean_tar) ** 2).sum() / sp.n_tar)
    at = v[sp.counts.non_at > 0]
    lo = np.fmin(np.nanmin(sp.cell_first, initial=np.inf), at.min(initial=np.inf))
    hi = np.fmax(np.nanmax(sp.cell_last, initial=-np.inf), at.max(initial=-np.inf))
    if lo == hi:
        return mean_tar, var_tar, float(lo), 0.0
    total, _ = sp.non_sums(0.0)
    mean_non = total / sp.n_non
    _, sq = sp.non_sums(mean_non)
    return mean_tar, var_tar, mean_non, sq / sp.n_non


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=shapes,
    dtype=st.sampled_from(["float32", "float64"]),
    kind=st.sampled_from(["ties", "zeros", "spread"]),
)
def test_sum_only_pass_is_the_same_sum(seed, shape, dtype, kind):
    s = matrix(seed, *shape, dtype, kind)
    t = np.random.default_rng(seed + 1).integers(0, shape[1], shape[0])
    total, sq = non_block_sums(s, t, math.nan)
    ref_total, _ = non_block_sums(s, t, 0.0)
    assert math.isnan(sq)
    assert np.float64(total).tobytes() == np.float64(ref_total).tobytes()
    if shape[1] == 1:  # no non-target: no pools
        return
    sp = SortedPools.from_matrix(s, t)
    assert sp.non_sums(math.nan)[0] == sp.non_sums(0.0)[0]
    got, ref = sp.moments, reference_moments(sp)
    assert np.array(got).tobytes() == np.array(ref).tobytes(), (got, ref)
    mated = np.zeros(s.shape, dtype=bool)  # the same pools, given as two 1-D arrays
    mated[np.arange(shape[0]), t] = True
    sp2 = SortedPools.from_pools(s[mated], s[~mated])
    assert np.array(sp2.moments).tobytes() == np.array(reference_moments(sp2)).tobytes()


def test_moments_hand_computed():
    sp = SortedPools.from_matrix(np.array([[3.0, 1.0, 2.0], [5.0, 4.0, 0.0]]), np.array([0, 1]))
    # targets 3 and 4; non-targets 1, 2, 5, 0: mean 2, variance (1 + 0 + 9 + 4) / 4 = 3.5
    assert sp.moments == (3.5, 0.25, 2.0, 3.5)


# ----------------------------------------------------------------------------------------------
# pav_runs (logs once per PAV bin) and the per-run sums of ROCCH-EER / min Cllr / D_ECE
# against the former element-by-element formulas (tests/metrics/run_count_cases.py), exact, on
# bootstrap replicates with many ties
# ----------------------------------------------------------------------------------------------


def _replicate_counts(seed):
    """Run counts of the full data and of replicates (integer weights, zero runs included)."""
    s, t, spk = tied_matrix(seed, t_n=120, n=11, decimals=1 + seed % 2)
    pools = SortedPools.from_matrix(s, t)
    per_speaker = speaker_run_counts(pools, s, t, spk, 7)
    counts = np.random.default_rng(seed).multinomial(7, np.full(7, 1 / 7), size=40)
    out = [pools.counts]
    for _, rows in replicate_run_counts(per_speaker, counts):
        for row in rows:
            rc = RunCounts(cells=row[0::3], tar_at=row[1::3], non_at=row[2::3])
            if rc.n_tar > 0 and rc.n_non > 0:
                out.append(rc)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_pav_runs_once_per_bin_equal_the_former_per_run_logs(seed):
    for rc in _replicate_counts(seed):
        for first in (True, False):
            for laplace in (True, False):
                new = pav_runs(rc, targets_first=first, laplace=laplace)
                old = old_pav_runs(rc, targets_first=first, laplace=laplace)
                for name in ("labels", "counts", "slots", "llr", "posterior"):
                    np.testing.assert_array_equal(getattr(new, name), getattr(old, name))
                assert new.bin_runs.sum() == new.llr.size
                np.testing.assert_array_equal(np.repeat(new.bin_llr, new.bin_runs), new.llr)
                assert d_ece_from_runs(new, rc.n_tar, rc.n_non) == old_d_ece_runs(
                    old, rc.n_tar, rc.n_non
                )
                if not laplace:
                    _, mc = _rocch_eer_runs(rc, targets_first=first, pav=new)
                    assert mc == old_min_cllr_terms(old, rc.n_tar, rc.n_non)


def test_per_run_without_bins_applies_f_to_every_run():
    r = old_pav_runs(
        RunCounts(np.array([1.0, 0.0, 2.0]), np.array([1.0, 3.0]), np.array([1.0, 0.0])),
        targets_first=True,
        laplace=False,
    )
    np.testing.assert_array_equal(r.per_run(np.negative), -r.llr)
