"""Leftover: tests of metrics.ranks (entry_ranks) and metrics.paired (holm, compare_replicates).

This file's tests of voxmetrics.metrics.uncertainty, chance and embedding_intervals now live in
tests/metrics/test_uncertainty.py, test_chance.py and test_embedding_intervals.py. What is left
belongs in tests/metrics/test_ranks.py and tests/metrics/test_paired.py (kept by the owner of
those modules' tests).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.metrics.paired import compare_replicates, holm
from voxmetrics.metrics.ranks import entry_ranks
from voxmetrics.metrics.uncertainty import SpeakerDraws, condition_replicates


def _matrix(rng, n_spk=6, per=3, n=5, signal=1.0):
    spk = np.repeat([f"s{i}" for i in range(n_spk)], per)
    targets = np.repeat(np.arange(n_spk) % n, per)
    s = rng.normal(size=(spk.size, n))
    s[np.arange(spk.size), targets] += signal
    return s, targets, spk


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
