"""How firm VoicePrivacy's ranking is (voxmetrics.analysis.rank_stability and the ranking).

The arithmetic against references (Kendall's τ-b against SciPy, the ranks against a loop), and
the invariants of the ranking's stability under hypothesis: probabilities in [0, 1], intervals
that hold the point rank, a system far inside a band has p_band 1, replicates equal to the point
give the point ranking back (τ = 1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from voxmetrics.analysis.rank_stability import band_ranks, kendall_tau_b, rank_interval
from voxmetrics.analysis.ranking import EER_BANDS, RankingReplicates, voiceprivacy_ranking
from voxmetrics.analysis.tradeoff import ConditionNumbers

# ------------------------------------------------------------------ arithmetic


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 8).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
            st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n), min_size=1, max_size=5),
        )
    )
)
def test_kendall_tau_b_is_scipys(data):
    x, ys = data
    ours = kendall_tau_b(x, ys)
    for row, tau in zip(ys, ours, strict=True):
        ref = stats.kendalltau(x, row).statistic
        if math.isnan(ref):
            assert math.isnan(tau)
        else:
            assert tau == pytest.approx(ref, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda n: st.lists(
            st.tuples(st.booleans(), st.integers(0, 3), st.integers(-2, 2)), min_size=n, max_size=n
        )
    )
)
def test_band_ranks_by_hand(systems):
    m = np.array([[s[0] for s in systems]])
    w = np.array([[float(s[1]) for s in systems]])
    u = np.array([[float(s[2]) for s in systems]])
    ranks = band_ranks(m, w, u)[0]
    for i, (inside, wi, ui) in enumerate(systems):
        if not inside:
            assert math.isnan(ranks[i])
            continue
        beaten = sum(1 for b, wj, uj in systems if b and (wj < wi or (wj == wi and uj < ui)))
        assert ranks[i] == 1 + beaten


def test_rank_interval_holds_the_point_rank():
    assert rank_interval([3, 3, 3, 3], 1) == (1, 3)
    assert rank_interval([np.nan, np.nan], 2) == (2, 2)
    assert rank_interval([1] * 97 + [2] * 3, 1) == (1, 2)


# ------------------------------------------------------------------ the ranking's stability


def _numbers(systems):
    return [
        ConditionNumbers(f"s{k}", "semi-informed", {"eer": e, "wer": w, "uar": u})
        for k, (e, w, u, _) in enumerate(systems)
    ]


def _replicates(systems, n_boot, seed):
    rng = np.random.default_rng(seed)
    values = {}
    for k, (e, w, _u, spread) in enumerate(systems):
        values[f"s{k}"] = {
            "eer": e + spread * rng.standard_normal(n_boot),
            "wer": w + 0.01 * rng.standard_normal(n_boot),
        }
    return RankingReplicates(values=values, n_replicates=n_boot)


_system = st.tuples(
    st.floats(0.0, 0.6, allow_nan=False),
    st.floats(0.0, 1.0, allow_nan=False),
    st.one_of(st.none(), st.floats(0.0, 1.0, allow_nan=False)),
    st.floats(0.0, 0.1, allow_nan=False),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_system, min_size=1, max_size=8), st.integers(1, 60), st.integers(0, 10))
def test_stability_invariants(systems, n_boot, seed):
    r = voiceprivacy_ranking(_numbers(systems), replicates=_replicates(systems, n_boot, seed))
    assert r.stability is not None and r.stability.n_replicates == n_boot
    for row in r.rows:
        assert 0.0 <= row.p_band <= 1.0 and 0.0 <= row.p_rank1 <= 1.0
        lo, hi = row.rank_interval
        assert 1 <= lo <= row.rank <= hi <= len(systems)
    for per_band in r.stability.p_band.values():
        assert all(0.0 <= p <= 1.0 for p in per_band.values())
        # a higher band is never easier to enter
        ps = [per_band[b] for b in r.bands]
        assert ps == sorted(ps, reverse=True)
    for tau in r.stability.kendall_tau.values():
        if tau["median"] is not None:
            assert -1.0 <= tau["low"] <= tau["median"] <= tau["high"] <= 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(_system, min_size=1, max_size=6), st.integers(5, 40))
def test_a_system_far_inside_a_band_enters_it_in_every_replicate(systems, n_boot):
    systems = [(max(e, 0.45), w, u, 0.01) for e, w, u, _ in systems]  # EER >= 0.45 +- 0.01
    rng = np.random.default_rng(0)
    values = {
        f"s{k}": {"eer": np.clip(e + 0.01 * rng.standard_normal(n_boot), 0.42, None)}
        for k, (e, _w, _u, _s) in enumerate(systems)
    }
    r = voiceprivacy_ranking(
        _numbers(systems), replicates=RankingReplicates(values=values, n_replicates=n_boot)
    )
    for row in r.rows:  # 0.42 and above: far inside the bands of 10, 20 and 30 %
        if row.band <= 0.30:
            assert row.p_band == 1.0


def test_replicates_equal_to_the_point_give_the_point_ranking_back():
    systems = [(0.45, 0.05, 0.6, 0.0), (0.35, 0.04, 0.5, 0.0), (0.25, 0.09, None, 0.0)]
    r = voiceprivacy_ranking(_numbers(systems), replicates=_replicates(systems, 20, 0))
    for row in r.rows:
        # the WER moves by 0.01 sd, so only the EER is exactly the point's
        assert row.p_band == 1.0
    exact = RankingReplicates(
        values={
            f"s{k}": {"eer": np.full(10, e), "wer": np.full(10, w)}
            for k, (e, w, _u, _s) in enumerate(systems)
        },
        n_replicates=10,
    )
    r = voiceprivacy_ranking(_numbers(systems), replicates=exact)
    for row in r.rows:
        assert row.rank_interval == (row.rank, row.rank) and row.p_band == 1.0
        assert row.p_rank1 == (1.0 if row.rank == 1 else 0.0)
    for tau in r.stability.kendall_tau.values():
        assert tau["median"] in (1.0, None)


def test_a_system_just_below_a_band_gets_its_chance_of_entering_it():
    # sttts-like: EER 0.368 [0.336, 0.402], below the 40 % band at its point
    rng = np.random.default_rng(1)
    reps = np.clip(0.368 + 0.017 * rng.standard_normal(1000), 0, 1)
    r = voiceprivacy_ranking(
        [ConditionNumbers("sttts", "semi-informed", {"eer": 0.368, "wer": 0.039})],
        replicates=RankingReplicates({"sttts": {"eer": reps}}, 1000),
    )
    assert [x.band for x in r.rows] == [b for b in EER_BANDS if b <= 0.368]
    p40 = r.stability.p_band["sttts"][0.4]
    at_challenge_precision = np.array([round(x * 100, 3) for x in reps.tolist()])  # 0.001 %
    assert p40 == pytest.approx(float(np.mean(at_challenge_precision >= 40))) and 0.0 < p40 < 0.2
    assert r.stability.fixed == {"sttts": ("wer",)}  # no UAR: nothing to fix
    frame = r.band_frame().set_index("System")
    assert frame.loc["sttts", "P(EER >= 40%)"] == p40


def test_json_rows_carry_p_band_and_rank_interval():
    import json

    systems = [(0.45, 0.05, 0.6, 0.02), (0.35, 0.04, 0.5, 0.02)]
    r = voiceprivacy_ranking(_numbers(systems), replicates=_replicates(systems, 30, 0))
    d = json.loads(json.dumps(r.to_dict()))
    assert all({"p_band", "rank_interval", "p_rank1"} <= set(row) for row in d["rows"])
    assert all(isinstance(row["rank_interval"], list) for row in d["rows"])
    assert "Maier-Hein" in d["stability"]["method"]
    assert set(d["stability"]["kendall_tau"]) == {str(b) for b in r.bands}
    plain = voiceprivacy_ranking(_numbers(systems)).to_dict()
    assert plain["stability"] is None and plain["rows"][0]["p_band"] is None
    assert list(voiceprivacy_ranking(_numbers(systems)).frame().columns) == [
        "EER band", "Rank", "System", "EER", "WER", "UAR",
    ]  # fmt: skip
    assert "P(in band)" in r.frame(stability=True).columns
