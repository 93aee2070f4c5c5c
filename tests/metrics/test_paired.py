"""Paired comparison of two conditions (voxmetrics.metrics.paired), checked by hand.

The p-values of a few replicate differences are worked out in the comments; Holm's adjustment
is the step-down rule applied by hand; ``compare_replicates`` is fed replicates written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.paired import Comparison, compare_replicates, holm, paired_p_values
from voxmetrics.metrics.uncertainty import ConditionReplicates


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
