"""Speaker-level replicates of every headline number, their intervals, worst-case quantiles.

``condition_replicates`` is checked against recomputing every metric on the resampled rows,
and against the former run-count kernels (kept in ``run_count_cases.py``). Chance levels are
tested in ``test_chance.py``, the weighted quantile in ``test_bootstrap.py``, the similarity
intervals in ``test_embedding_intervals.py``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.metrics.run_count_cases import (
    old_d_ece_runs,
    old_pav_runs,
    old_speaker_run_counts,
    tied_matrix,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.baseline import baseline_metrics
from voxmetrics.metrics.eer import eer
from voxmetrics.metrics.legal import linkability_curve
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.srd import srd
from voxmetrics.metrics.uncertainty import (
    REPLICATE_FAMILIES,
    SpeakerDraws,
    condition_replicates,
    eer_from_runs,
    weighted_quantile,
)
from voxmetrics.metrics.zebra import zebra


def _matrix(rng, n_spk=6, per=3, n=5, signal=1.0):
    spk = np.repeat([f"s{i}" for i in range(n_spk)], per)
    targets = np.repeat(np.arange(n_spk) % n, per)
    s = rng.normal(size=(spk.size, n))
    s[np.arange(spk.size), targets] += signal
    return s, targets, spk


def _resampled(s, t, spk, draws, b, extra=None):
    """The matrix of replicate b built row by row (the slow reference)."""
    inv = draws.index(spk)
    rows = np.concatenate(
        [np.tile(np.flatnonzero(inv == j), c) for j, c in enumerate(draws.counts[b]) if c]
    )
    out = [s[rows], t[rows]]
    if extra is not None:
        out.append(extra[rows])
    return out


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_replicates_equal_recomputing_on_the_resampled_rows(ties):
    rng = np.random.default_rng(3)
    s, t, spk = _matrix(rng)
    lid = rng.normal(size=t.size)
    draws = SpeakerDraws.draw(spk, n_boot=12, seed=5)
    r = condition_replicates(s, t, spk, draws, lid=lid, ties=ties)
    for b in range(draws.n_boot):
        sb, tb, lb = _resampled(s, t, spk, draws, b, lid)
        base = baseline_metrics(sb, tb, ties=ties)
        z = zebra(sb[np.arange(tb.size), tb], sb[np.arange(sb.shape[1]) != tb[:, None]], ties=ties)
        st_ = srd(sb, tb, ties=ties).stats
        curve = linkability_curve(sb, tb)
        exact = {
            "eer_rocch": base.eer_rocch,
            "cllr": base.cllr,
            "min_cllr": base.min_cllr,
            "linkability": base.linkability,
            "d_ece": z.d_ece,
            "log10_l": z.log10_l,
            "mean_d": st_.mean_d,
            "idr": st_.idr,
            "max_d": st_.max_d,
            "alid": lb.mean(),
            "pdr": (lb > 0).mean(),
            "ndr": (lb <= 0).mean(),
            "lid_max": lb.max(),
            "lid_q95": np.quantile(lb, 0.95, method="inverted_cdf"),
        }
        if (lb > 0).any():
            exact["lid_plus"] = lb[lb > 0].mean()
        if (lb <= 0).any():
            exact["lid_minus"] = lb[lb <= 0].mean()
        for k, v in exact.items():
            assert r.reps[k][b] == pytest.approx(v, rel=1e-9, abs=1e-12), (k, b)
        np.testing.assert_allclose(r.curve_reps[b], curve.expected, rtol=1e-12)
        # the EER is exact to within one step of the ROC (continuous scores)
        n_non = sb.size - tb.size
        assert abs(r.reps["eer"][b] - base.eer) <= 1.0 / n_non + 1.0 / tb.size + 1e-12


def test_full_data_estimates_equal_the_metrics():
    rng = np.random.default_rng(0)
    s, t, spk = _matrix(rng, n_spk=8, per=4, n=8)
    r = condition_replicates(s, t, spk, SpeakerDraws.draw(spk, n_boot=5))
    base = baseline_metrics(s, t)
    for k in ("eer_rocch", "cllr", "min_cllr", "linkability"):
        assert r.estimates[k] == pytest.approx(getattr(base, k), rel=1e-12)
    assert r.estimates["mean_d"] == pytest.approx(srd(s, t).stats.mean_d)


def test_eer_from_runs_equals_speechbrain_eer_up_to_one_roc_step():
    rng = np.random.default_rng(1)
    for _ in range(200):
        t = rng.normal(size=rng.integers(1, 30))
        n = rng.normal(size=rng.integers(1, 60))
        sp = SortedPools.from_pools(t, n)
        for ties in ("reference", "attacker"):
            assert abs(eer_from_runs(sp.counts, ties=ties) - eer(t, n, ties=ties)) <= (
                1.0 / n.size + 1.0 / t.size + 1e-12
            )


def test_maxima_carry_no_percentile_interval_and_their_quantile_does():
    rng = np.random.default_rng(2)
    s, t, spk = _matrix(rng)
    r = condition_replicates(s, t, spk, SpeakerDraws.draw(spk, n_boot=50), lid=s[:, 0])
    iv = r.intervals()
    for k in ("lid_max", "max_d", "log10_l"):
        assert iv[k].low is None and iv[k].high is None and iv[k].estimate is not None
    for k in ("lid_q95", "max_d_q95", "log10_l_q95"):
        assert iv[k].low <= iv[k].high


def test_worst_case_quantile_interval_covers_the_true_quantile_near_nominal():
    """Studies drawn from a known model: LID-like values with a speaker effect,
    x = u_s + e, u ~ N(0, 0.5), e ~ N(0, 1), so x ~ N(0, 1.5); the true 95 % point is known.
    The speaker-level percentile interval of the 0.95 quantile must cover it about 95 % of the
    time; the percentile interval of the maximum, read as an interval of the same quantity,
    would not (its upper bound is the sample maximum, and the maximum overshoots)."""
    from scipy.stats import norm

    rng = np.random.default_rng(12345)
    truth = norm.ppf(0.95) * math.sqrt(1.5)
    n_spk, per, n_studies = 40, 8, 300
    spk = np.repeat(np.arange(n_spk).astype(str), per)
    hits = 0
    for k in range(n_studies):
        x = np.repeat(rng.normal(scale=math.sqrt(0.5), size=n_spk), per) + rng.normal(
            size=n_spk * per
        )
        d = SpeakerDraws.draw(spk, n_boot=200, seed=k)
        reps = weighted_quantile(x, d.counts[:, d.index(spk)], 0.95)
        lo, hi = np.quantile(reps, [0.025, 0.975])
        hits += lo <= truth <= hi
    coverage = hits / n_studies
    # Binomial sd at 300 studies is 0.013. With 40 speakers the sample quantile is biased low
    # by about a quarter of its sd (the speaker effects do not average out), so the interval is
    # mildly anti-conservative: measured 0.877 here, 0.917 with 150 speakers x 4 trials.
    assert 0.85 <= coverage <= 0.99, coverage


def test_draws_reject_speakers_not_drawn():
    d = SpeakerDraws.draw(["a", "b"], n_boot=3)
    with pytest.raises(VoxMetricsInputError, match="absent from the replicate draws"):
        d.index(["a", "c"])


@settings(max_examples=200, deadline=None)
@given(
    tar=st.lists(st.integers(0, 3), min_size=1, max_size=12),
    cells=st.lists(st.integers(0, 3), min_size=13, max_size=13),
    non=st.lists(st.integers(0, 2), min_size=12, max_size=12),
)
def test_rocch_shares_the_plain_pav_when_no_target_value_holds_non_targets(tar, cells, non):
    # the replicates reuse the targets-last PAV for the ROCCH (targets first) when no value
    # has both: same runs, so the same ROCCH-EER and min Cllr to the bit
    from voxmetrics.metrics.pools import RunCounts, pav_runs
    from voxmetrics.metrics.uncertainty import _rocch_eer_runs

    k = len(tar)
    t = np.asarray(tar, dtype=float)
    rc = RunCounts(
        cells=np.asarray(cells[: k + 1], dtype=float),
        tar_at=t,
        non_at=np.where(t > 0, 0.0, np.asarray(non[:k], dtype=float)),
    )
    assume(rc.n_tar > 0 and rc.n_non > 0)
    last = pav_runs(rc, targets_first=False, laplace=False)
    first = pav_runs(rc, targets_first=True, laplace=False)
    for f in ("labels", "counts", "slots", "llr", "posterior"):
        np.testing.assert_array_equal(getattr(first, f), getattr(last, f))
    assert _rocch_eer_runs(rc, targets_first=True, pav=last) == _rocch_eer_runs(
        rc, targets_first=True
    )


# --- the whole replicate set against the former kernels -------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_condition_replicates_with_the_former_kernels_unchanged(seed, monkeypatch):
    """Every replicate of every pairwise number equals the one computed with the former
    run counts (the kernels swapped back in), on tied float32 scores."""
    s, t, spk = tied_matrix(seed, t_n=90, n=12, decimals=1, dtype=np.float32)
    names = np.array([f"s{i}" for i in spk])
    draws = SpeakerDraws.draw(names, n_boot=60, seed=seed)
    new = condition_replicates(s, t, names, draws)
    unc = sys.modules["voxmetrics.metrics.uncertainty"]

    def former_counts(per_speaker, counts, chunk=64):
        for b in range(0, counts.shape[0], chunk):
            yield b, np.asarray(per_speaker.T @ counts[b : b + chunk].T).T.astype(np.float64)

    monkeypatch.setattr(unc, "speaker_run_counts", old_speaker_run_counts)
    monkeypatch.setattr(unc, "replicate_run_counts", former_counts)
    monkeypatch.setattr(unc, "pav_runs", old_pav_runs)
    monkeypatch.setattr(unc, "d_ece_from_runs", old_d_ece_runs)
    old = condition_replicates(s, t, names, draws)
    assert new.estimates == old.estimates
    for k in old.reps:
        np.testing.assert_array_equal(new.reps[k], old.reps[k], err_msg=k)


# ----------------------------------------------------------------------------------------------
# Replicates by family: each family alone equals every number's
# ----------------------------------------------------------------------------------------------


def _same_floats(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize(
    "families",
    [("pairwise",), ("zebra",), ("linkability",), ("linkability", "srd"), ("lid",)],
)
def test_replicate_families_equal_those_of_every_number(families):
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=(40, 12)), 1)
    targets = rng.integers(0, 12, size=40)
    speakers = np.array([f"s{v}" for v in rng.integers(0, 9, size=40)])
    lid = rng.normal(size=40)
    draws = SpeakerDraws.draw(speakers, n_boot=30, seed=4)
    every = condition_replicates(scores, targets, speakers, draws, lid=lid)
    ranks = (
        target_ranks(scores, targets, ties="attacker"),
        target_ranks(scores, targets, ties="reference"),
    )
    alone = condition_replicates(
        scores, targets, speakers, draws, lid=lid, ranks=ranks, families=families
    )
    keys = {k for f in families for k in REPLICATE_FAMILIES[f]}
    assert set(alone.estimates) == keys
    for key in keys:
        assert alone.estimates[key] == every.estimates[key]
        _same_floats(alone.reps[key], every.reps[key])
        assert alone.intervals()[key] == every.intervals()[key]
    if "linkability" in families:
        _same_floats(alone.curve_reps, every.curve_reps)
    with pytest.raises(VoxMetricsInputError, match="unknown replicate families"):
        condition_replicates(scores, targets, speakers, draws, families=("nothing",))
