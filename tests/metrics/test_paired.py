"""Paired comparison of two conditions (voxmetrics.metrics.paired), checked by hand.

The p-values of a few replicate differences are worked out in the comments; Holm's adjustment
is the step-down rule applied by hand; ``compare_replicates`` is fed replicates written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.paired import Comparison, compare_replicates, holm, paired_p_values
from voxmetrics.metrics.uncertainty import (
    ConditionReplicates,
    SpeakerDraws,
    condition_replicates,
)


def _replicates(estimates, reps) -> ConditionReplicates:
    """A condition's numbers and their replicates (no linkability curve)."""
    return ConditionReplicates(
        estimates=estimates,
        reps={k: np.asarray(v, dtype=np.float64) for k, v in reps.items()},
        curve_n=np.zeros(0, dtype=np.int64),
        curve=np.zeros(0),
        curve_reps=np.zeros((len(next(iter(reps.values()))), 0)),
    )


# ------------------------------------------------------------------------------- p-values


def test_p_values_of_two_replicates_by_hand():
    # d* = [1, 3], d = 2: sd(d*) (ddof 1) = sqrt(2), z = 2 / sqrt(2) = sqrt(2),
    # p = 2 Phi(-sqrt 2) = erfc(1) = 0.15729920705028513
    # resampling: |d* - d| = [1, 1], none >= |d| = 2 -> (1 + 0) / (1 + 2) = 1/3 = the floor
    p, p_res, floor = paired_p_values([1.0, 3.0], 2.0)
    assert p == pytest.approx(math.erfc(1.0), rel=1e-15)
    assert p == pytest.approx(0.15729920705028513, rel=1e-12)
    assert (p_res, floor) == (pytest.approx(1 / 3), pytest.approx(1 / 3))


def test_p_values_count_the_replicates_as_far_from_d_as_zero():
    # d* = [-1, 0, 1, 2, 3], d = 1: |d* - d| = [2, 1, 0, 1, 2] >= 1 for four of them
    # -> (1 + 4) / (1 + 5) = 5/6; sd = sqrt(2.5), p = erfc(1 / sqrt(2.5) / sqrt(2)) = erfc(1/sqrt 5)
    p, p_res, floor = paired_p_values([-1.0, 0.0, 1.0, 2.0, 3.0], 1.0)
    assert p_res == pytest.approx(5 / 6) and floor == pytest.approx(1 / 6)
    assert p == pytest.approx(math.erfc(1 / math.sqrt(5.0)), rel=1e-14)


def test_p_values_without_spread():
    # sd(d*) = 0: no difference is certain (p 1), any other is certain too (p 0)
    assert paired_p_values([0.5, 0.5, 0.5], 0.5)[0] == 0.0
    assert paired_p_values([0.0, 0.0, 0.0], 0.0) == (1.0, 1.0, 0.25)
    # one replicate has no sample sd: treated as no spread
    assert paired_p_values([0.2], 0.2)[0] == 0.0


# ------------------------------------------------------------------------------- Holm


def test_holm_steps_down_and_stays_monotone():
    # sorted 0.001, 0.02, 0.03, 0.2 times 4, 3, 2, 1 = 0.004, 0.06, 0.06, 0.2 (running max)
    got = holm({"a": 0.03, "b": 0.001, "c": 0.2, "d": 0.02})
    assert got == {"a": 0.06, "b": 0.004, "c": 0.2, "d": 0.06}
    assert list(got) == ["a", "b", "c", "d"]  # the caller's order


def test_holm_caps_at_one_and_keeps_none():
    # 0.5 * 2 = 1.0; 0.6 * 1 = 0.6 but at least the previous 1.0
    assert holm({"x": 0.5, "y": 0.6, "z": None}) == {"x": 1.0, "y": 1.0, "z": None}
    assert holm({"only": 0.04}) == {"only": 0.04}  # one number: no adjustment
    assert holm({}) == {} and holm({"n": None}) == {"n": None}


# ------------------------------------------------------------------------------- comparisons


def test_compare_replicates_by_hand():
    a = _replicates(
        {"eer": 0.20, "max_d": 2.0, "idr": 0.5, "only_a": 1.0, "cllr": None},
        {
            "eer": [0.18, 0.20, 0.22, 0.20, 0.20],
            "max_d": [1.9, 2.0, 2.1, 2.0, 2.0],
            "idr": [0.4, np.nan, np.nan, np.nan, 0.6],
            "only_a": [1.0] * 5,
            "cllr": [np.nan] * 5,
        },
    )
    b = _replicates(
        {"eer": 0.30, "max_d": 2.5, "idr": 0.7, "cllr": 0.9},
        {
            "eer": [0.29, 0.30, 0.31, 0.32, 0.28],
            "max_d": [2.4, 2.5, 2.6, 2.5, 2.5],
            "idr": [0.6, 0.7, 0.8, 0.7, 0.7],
            "cllr": [0.9] * 5,
        },
    )
    c = compare_replicates(a, b, confidence=0.5)
    assert set(c) == {"eer", "max_d", "idr", "cllr"}  # only the numbers both have
    eer = c["eer"]
    assert (eer.a, eer.b) == (0.20, 0.30) and eer.difference == pytest.approx(0.10)
    # d* = b* - a* = [.11, .10, .09, .12, .08]; its 25% and 75% quantiles: .09 and .11
    assert eer.interval == (pytest.approx(0.09), pytest.approx(0.11))
    d = np.array([0.29, 0.30, 0.31, 0.32, 0.28]) - np.array([0.18, 0.20, 0.22, 0.20, 0.20])
    p, p_res, floor = paired_p_values(d, 0.30 - 0.20)
    assert (eer.p_value, eer.p_resampled, eer.p_floor) == (p, p_res, floor)
    # the only p-value of the family: unadjusted, kept to 12 significant digits
    assert eer.p_adjusted == float(f"{eer.p_value:.12g}")
    # a maximum is compared through its q95 number: no interval and no p-value of its own
    assert c["max_d"].difference == pytest.approx(0.5)
    assert c["max_d"].interval == (None, None) and c["max_d"].p_value is None
    # fewer than half the replicates defined in both: no interval
    assert c["idr"].interval == (None, None) and c["idr"].p_value is None
    # a number missing in A: no difference
    assert c["cllr"].difference is None and c["cllr"].p_adjusted is None


def test_compare_replicates_refuses_different_draws():
    a = _replicates({"eer": 0.2}, {"eer": [0.2, 0.2, 0.2]})
    b = _replicates({"eer": 0.3}, {"eer": [0.3, 0.3]})
    with pytest.raises(VoxMetricsInputError, match="resampled with different draws"):
        compare_replicates(a, b)


def test_comparison_to_dict_names_the_reason_only_when_there_is_one():
    plain = Comparison(0.1, 0.2, 0.1, (0.05, 0.15), 0.01, 0.02, None, 0.03, 0.005)
    assert plain.to_dict() == {
        "a": 0.1,
        "b": 0.2,
        "difference": 0.1,
        "interval": [0.05, 0.15],
        "p_value": 0.01,
        "p_adjusted": 0.02,
        "p_resampled": 0.03,
        "p_floor": 0.005,
    }
    missing = Comparison(0.1, None, None, (None, None), None, reason="no embeddings in B")
    assert missing.to_dict()["reason"] == "no embeddings in B"


# ----------------------------------------------------------------------------------------------
# holm and compare_replicates on bootstrap replicates of random score matrices: hand
# values, a real difference found, the level held under the null
# ----------------------------------------------------------------------------------------------


def _matrix(rng, n_spk=6, per=3, n=5, signal=1.0):
    spk = np.repeat([f"s{i}" for i in range(n_spk)], per)
    targets = np.repeat(np.arange(n_spk) % n, per)
    s = rng.normal(size=(spk.size, n))
    s[np.arange(spk.size), targets] += signal
    return s, targets, spk


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


# ----------------------------------------------------------------------------------------------
# paired_p_values: the normal approximation of the bootstrap, its resampling floor
# ----------------------------------------------------------------------------------------------


def test_paired_p_values_are_the_normal_approximation_of_the_bootstrap():
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 0.1, 200)  # z about 5
    p, p_res, floor = paired_p_values(d, 0.5)
    assert p == pytest.approx(math.erfc(0.5 / np.std(d, ddof=1) / math.sqrt(2)))
    assert p < 1e-4 and p_res == floor == 1 / 201  # below the floor of the resampling p
    # no difference: nothing to reject, at any resolution
    p0, p0_res, _ = paired_p_values(rng.normal(0.0, 0.1, 200), 0.0)
    assert p0 == 1.0 and p0_res == 1.0
    # a difference small against its spread: a large p
    assert paired_p_values(rng.normal(0.02, 0.1, 200), 0.02)[0] > 0.5
