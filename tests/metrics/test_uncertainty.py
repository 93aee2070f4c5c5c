"""Intervals of every headline number, worst-case quantiles, chance levels, paired comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference_pooled import chance_levels_reference

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.baseline import baseline_metrics
from voxmetrics.metrics.chance import chance_levels
from voxmetrics.metrics.eer import eer
from voxmetrics.metrics.legal import linkability_curve
from voxmetrics.metrics.paired import compare_replicates, holm
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.ranks import entry_ranks, row_blocks
from voxmetrics.metrics.srd import srd
from voxmetrics.metrics.uncertainty import (
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


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=30),
    st.floats(0.01, 1.0),
)
def test_weighted_quantile_with_unit_weights_is_numpys_inverted_cdf(values, q):
    got = weighted_quantile(values, np.ones(len(values)), q)[0]
    assert got == np.quantile(values, q, method="inverted_cdf")


def test_weighted_quantile_equals_the_quantile_of_repeated_values():
    v = np.array([4.0, 1.0, 3.0, 2.0])
    w = np.array([[2, 0, 1, 3], [0, 1, 0, 0]])
    got = weighted_quantile(v, w, 0.5)
    assert got.tolist() == [np.quantile(np.repeat(v, w[0]), 0.5, method="inverted_cdf"), 1.0]


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


def test_chance_levels_of_random_scores_match_what_random_scores_give():
    """35 trials x 131 identities: random scores give MeanD ~ 2.15 bits; chance says so."""
    rng = np.random.default_rng(0)
    values = []
    for _ in range(20):
        s = rng.normal(size=(35, 131))
        t = rng.integers(0, 131, size=35)
        values.append(srd(s, t).stats.mean_d)
    c = chance_levels(rng.normal(size=(35, 131)), n_draws=400)
    assert c.values["mean_d"] == pytest.approx(np.mean(values), abs=0.08)
    assert 2.0 < c.values["mean_d"] < 2.3
    assert c.values["linkability"] == pytest.approx(1 / 131)
    np.testing.assert_allclose(c.curve, 1.0 / c.curve_n)


def test_chance_linkability_gives_tied_top_scores_to_the_true_speaker():
    s = np.array([[1.0, 1.0, 0.0], [3.0, 2.0, 1.0]])
    # as linkability: a tie at the top links; row 0 has two such columns, row 1 one
    assert chance_levels(s, n_draws=5).values["linkability"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_chance_alid_and_pdr_are_exact_expectations_over_the_column():
    from voxmetrics.metrics.lid import LIDCalibration, lid

    rng = np.random.default_rng(4)
    s = rng.normal(size=(7, 5))
    cal = LIDCalibration(w=2.0, b=0.0, prior_log_odds=math.log(1 / 4), n_pairs=0)
    every = np.array([lid(s, np.full(7, j), cal).lid for j in range(5)])
    c = chance_levels(s, calibration=cal, n_draws=10)
    assert c.values["alid"] == pytest.approx(every.mean())
    assert c.values["pdr"] == pytest.approx((every > 0).mean())


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(2, 9),
    st.integers(1, 4),
    st.integers(0, 10_000),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from(["reference", "attacker"]),
)
def test_entry_ranks_equal_rankdata_of_every_entry(n_rows, n, d, seed, dtype, ties):
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    s = rng.integers(-3, 3, size=(n_rows, n)).astype(dtype)  # many ties, -0.0 and +0.0 alike
    s[s == 0] *= -1
    cols = rng.integers(0, n, size=(d, n_rows))
    ref = rankdata(-s.astype(np.float64), method="max" if ties == "reference" else "min", axis=1)
    got = entry_ranks(s, cols, ties=ties)
    np.testing.assert_array_equal(got, ref[np.arange(n_rows), cols])


def test_entry_ranks_hand_computed():
    s = np.array([[2.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
    assert entry_ranks(s, [[0, 0], [1, 2]]).tolist() == [[2, 2], [3, 3]]
    assert entry_ranks(s, [[0, 0], [1, 2]], ties="attacker").tolist() == [[1, 2], [3, 3]]


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chance_levels_equal_the_rankdata_reference(ties, dtype, monkeypatch):
    from voxmetrics.metrics import chance, ranks
    from voxmetrics.metrics.lid import LIDCalibration

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 40)  # several row blocks
    monkeypatch.setattr(chance, "CHUNK_ELEMENTS", 20)  # and several chunks in each
    rng = np.random.default_rng(9)
    s = np.round(rng.normal(size=(23, 11)), 1).astype(dtype)  # ties inside rows
    assert len(row_blocks(23, 11)) > 3
    cal = LIDCalibration(w=1.7, b=0.0, prior_log_odds=math.log(1 / 10), n_pairs=0)
    got = chance_levels(s, calibration=cal, n_draws=30, seed=3, ties=ties)
    ref, grid = chance_levels_reference(s, calibration=cal, n_draws=30, seed=3, ties=ties)
    for k, v in ref.items():
        assert got.values[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k
    for k in ("linkability", "mean_d", "idr", "max_d", "max_d_q95", "pdr"):
        assert got.values[k] == ref[k], k  # counts and ranks: exactly
    np.testing.assert_array_equal(got.curve_n, grid)


def test_holm_hand_computed():
    assert holm({"a": 0.01, "b": 0.04, "c": 0.03}) == {"a": 0.03, "b": 0.06, "c": 0.06}
    assert holm({"a": 0.5, "b": None}) == {"a": 0.5, "b": None}


def test_compare_identical_conditions_differs_by_zero_with_p_one():
    rng = np.random.default_rng(5)
    s, t, spk = _matrix(rng)
    d = SpeakerDraws.draw(spk, n_boot=100)
    a = condition_replicates(s, t, spk, d)
    c = compare_replicates(a, a)
    assert c["eer_rocch"].difference == 0.0 and c["eer_rocch"].p_value == 1.0
    assert c["eer_rocch"].interval == (0.0, 0.0)
    assert c["log10_l"].p_value is None


def test_compare_finds_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(6)
    spk = np.repeat([f"s{i}" for i in range(30)], 4)
    t = np.repeat(np.arange(30), 4)
    noise = rng.normal(size=(120, 30))
    leaky = noise.copy()
    leaky[np.arange(120), t] += 3.0
    other = rng.normal(size=(120, 30))
    d = SpeakerDraws.draw(spk, n_boot=300, seed=1)
    r_noise = condition_replicates(noise, t, spk, d)
    c = compare_replicates(r_noise, condition_replicates(leaky, t, spk, d))
    assert c["linkability"].p_value < 0.01 and c["linkability"].interval[0] > 0
    c0 = compare_replicates(r_noise, condition_replicates(other, t, spk, d))
    assert c0["linkability"].p_value > 0.05
    assert c0["linkability"].p_adjusted >= c0["linkability"].p_value


def test_draws_reject_speakers_not_drawn():
    d = SpeakerDraws.draw(["a", "b"], n_boot=3)
    with pytest.raises(VoxMetricsInputError, match="absent from the replicate draws"):
        d.index(["a", "c"])


def test_weighted_d_diag_equals_the_resampled_matrix_over_distinct_speaker_pairs():
    from voxmetrics.metrics.embedding_intervals import _weighted_d_diag
    from voxmetrics.metrics.similarity import d_diag

    rng = np.random.default_rng(8)
    m = rng.uniform(size=(6, 6))
    m = (m + m.T) / 2 + np.eye(6)
    assert _weighted_d_diag(m, np.ones((1, 6)))[0] == pytest.approx(d_diag(m))
    d = SpeakerDraws.draw(np.arange(6).astype(str), n_boot=20, seed=3)
    got = _weighted_d_diag(m, d.counts.astype(float))
    for b in range(20):
        drawn = np.repeat(np.arange(6), d.counts[b])
        diag = m[drawn, drawn].mean()
        off = [m[i, j] for i in drawn for j in drawn if i != j]
        assert got[b] == pytest.approx(abs(diag - np.mean(off)))


def test_similarity_intervals_bracket_deid_and_g_vd():
    from types import SimpleNamespace

    from voxmetrics.metrics.embedding_intervals import similarity_intervals
    from voxmetrics.metrics.similarity import voice_distinctiveness

    rng = np.random.default_rng(9)
    spk = np.arange(10).astype(str)

    def sim(strength):
        m = rng.uniform(0.2, 0.4, size=(10, 10))
        m = (m + m.T) / 2 + strength * np.eye(10)
        return SimpleNamespace(speakers=spk, matrix=m)

    oo, oa, aa = sim(0.5), sim(0.2), sim(0.3)
    res = SimpleNamespace(
        oo=oo, oa=oa, aa=aa, distinctiveness=voice_distinctiveness(oo.matrix, oa.matrix, aa.matrix)
    )
    ci = similarity_intervals(res, n_boot=200, seed=1)
    for k in ("deid", "g_vd", "d_diag_oo"):
        assert ci[k].low <= ci[k].estimate <= ci[k].high, k
    bad = SimpleNamespace(
        **{**vars(res), "aa": SimpleNamespace(speakers=spk[::-1], matrix=aa.matrix)}
    )
    with pytest.raises(VoxMetricsInputError, match="other speakers"):
        similarity_intervals(bad, n_boot=10)


def test_paired_p_values_hold_their_level_under_the_null():
    """Two anonymisers that disclose the same amount: p < 0.05 about 5 % of the time."""
    rng = np.random.default_rng(11)
    spk = np.repeat([f"s{i}" for i in range(25)], 3)
    t = np.repeat(np.arange(25), 3)
    rejections = 0
    n_pairs = 40
    for k in range(n_pairs):
        mats = []
        for _ in range(2):
            s = rng.normal(size=(75, 25))
            s[np.arange(75), t] += 1.0  # the same leak in both conditions
            mats.append(s)
        d = SpeakerDraws.draw(spk, n_boot=100, seed=k)
        a, b = (condition_replicates(m, t, spk, d) for m in mats)
        rejections += compare_replicates(a, b)["linkability"].p_value < 0.05
    assert rejections / n_pairs <= 0.15  # binomial sd 0.034 around 0.05


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_adjusted_p_values_are_at_least_the_raw_ones_and_keep_their_order(ps):
    adj = holm({str(i): p for i, p in enumerate(ps)})
    for i, p in enumerate(ps):
        assert p - 1e-12 <= adj[str(i)] <= 1.0
    order = np.argsort(ps, kind="stable")
    seq = [adj[str(i)] for i in order]
    assert (np.diff(seq) >= -1e-12).all()


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_chance_levels_from_row_blocks_equal_the_whole_matrix(monkeypatch, ties):
    """Blocks of rows (as on Dask workers) give the same chance levels: ALID up to the order
    of its float sum, everything else exactly; on the same blocks, ALID exactly too."""
    import voxmetrics.metrics.ranks as ranks_mod
    from voxmetrics.metrics.chance import chance_block, chance_columns, chance_levels_from_blocks
    from voxmetrics.metrics.lid import LIDCalibration

    rng = np.random.default_rng(11)
    s = np.round(rng.normal(size=(40, 6)), 1)  # ties within rows
    cal = LIDCalibration(w=1.5, b=0.0, prior_log_odds=math.log(1 / 5), n_pairs=0)
    whole = chance_levels(s, calibration=cal, n_draws=30, seed=2, ties=ties)
    cols = chance_columns(40, 6, n_draws=30, seed=2)
    cuts = [(0, 1), (1, 7), (7, 8), (8, 25), (25, 40)]
    parts = [chance_block(s[a:b], cols[:, a:b], calibration=cal, ties=ties) for a, b in cuts]
    got = chance_levels_from_blocks(parts, 6)
    assert got.n_draws == whole.n_draws == 30
    for key, value in whole.values.items():
        if key == "alid":
            assert got.values[key] == pytest.approx(value, rel=1e-12)
        else:
            assert got.values[key] == value, key
    np.testing.assert_array_equal(got.curve, whole.curve)
    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", 6 * 8)  # chance_levels' own blocks: 8 rows
    blocked = chance_levels(s, calibration=cal, n_draws=30, seed=2, ties=ties)
    same = [
        chance_block(s[a : a + 8], cols[:, a : a + 8], calibration=cal, ties=ties)
        for a in range(0, 40, 8)
    ]
    assert chance_levels_from_blocks(same, 6).values == blocked.values
    # the draws shrink on large matrices, to at least 20
    assert chance_columns(1_000_000, 3, n_draws=200).shape == (20, 1_000_000)
    with pytest.raises(VoxMetricsInputError, match="n_draws"):
        chance_columns(5, 3, n_draws=0)


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


@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lid_with_chance_equals_lid_and_the_chance_levels_bit_for_bit(
    threads, ties, dtype, monkeypatch
):
    """One pass for LID and its chance levels gives lid()'s and chance_levels()' numbers
    exactly, on several row blocks and chunks, serial or on threads, a constant row included."""
    from voxmetrics.errors import DegenerateDataWarning
    from voxmetrics.metrics import chance, ranks
    from voxmetrics.metrics.chance import lid_with_chance
    from voxmetrics.metrics.lid import LIDCalibration, lid

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 50)  # several row blocks
    monkeypatch.setattr(chance, "CHUNK_ELEMENTS", 20)  # several chunks in each
    monkeypatch.setenv("VOXMETRICS_THREADS", threads)
    rng = np.random.default_rng(21)
    s = np.round(rng.normal(size=(37, 9)), 1).astype(dtype)  # ties inside rows
    s[5] = 0.25  # no evidence: LID 0, one warning
    t = rng.integers(0, 9, size=37)
    cal = LIDCalibration(w=1.9, b=-0.7, prior_log_odds=math.log(1 / 8), n_pairs=0)
    with pytest.warns(DegenerateDataWarning, match="1 eval trial"):
        ref = lid(s, t, cal)
    with pytest.warns(DegenerateDataWarning, match="1 eval trial"):
        got, chance = lid_with_chance(s, t, cal, n_draws=25, seed=4, ties=ties)
    np.testing.assert_array_equal(got.lid, ref.lid)
    np.testing.assert_array_equal(got.p_target, ref.p_target)
    np.testing.assert_array_equal(got.rank, ref.rank)
    assert got.n_degenerate == ref.n_degenerate == 1
    assert got.lid[5] == 0.0
    alone = chance_levels(s, calibration=cal, n_draws=25, seed=4, ties=ties)
    assert chance.values == alone.values
    assert chance.n_draws == alone.n_draws == 25


def test_chance_levels_on_threads_equal_the_serial_loop(monkeypatch):
    from voxmetrics.metrics import ranks
    from voxmetrics.metrics.lid import LIDCalibration

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 30)
    rng = np.random.default_rng(3)
    s = rng.normal(size=(60, 7))
    cal = LIDCalibration(w=1.2, b=0.3, prior_log_odds=math.log(1 / 6), n_pairs=0)
    assert len(row_blocks(60, 7)) == 15
    got = {}
    for n in ("1", "2", "5"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        got[n] = chance_levels(s, calibration=cal, n_draws=40, seed=1).values
    assert got["1"] == got["2"] == got["5"]
