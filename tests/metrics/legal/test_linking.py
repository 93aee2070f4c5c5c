"""Linkability, linkability vs N' and the EER vs N' (metrics.md section 5; legal/linking.py).

References are computed independently here: brute-force enumeration of every candidate set,
a sampler that literally draws N'-1 other columns per trial, the authors' recipe re-written,
and legal-eval v2's exact expectation under both linkability rules (the authors' code: a tie
is a link; the paper's strict eq. 3).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.metrics.legal.legal_cases import count_beaters, linkability_exact
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.legal import (
    eer_curve,
    linkability,
    linkability_curve,
    linkability_grid,
    other_candidates,
)
from voxmetrics.metrics.ranks import row_blocks
from voxmetrics.metrics.srd import srd

# ---------------------------------------------------------------- independent references


def brute_force_linkability(scores, targets, n_prime: int) -> float:
    """Mean over trials and over EVERY set of N'-1 other candidates of [target >= max others].

    '>=' as the authors' public code: a tie goes to the true speaker.
    """
    s = np.asarray(scores, dtype=float)
    n = s.shape[1]
    per_trial = []
    for row, m in zip(s, targets, strict=True):
        others = [j for j in range(n) if j != m]
        wins = [
            all(row[m] >= row[j] for j in subset)
            for subset in itertools.combinations(others, n_prime - 1)
        ]
        per_trial.append(np.mean(wins))
    return float(np.mean(per_trial))


def sampled_linkability(scores, targets, n_prime: int, draws: int, seed: int) -> np.ndarray:
    """Per-draw linkability: each draw picks N'-1 other columns per trial (no replacement)."""
    rng = np.random.default_rng(seed)
    s = np.asarray(scores, dtype=float)
    n = s.shape[1]
    out = np.empty(draws)
    for r in range(draws):
        hits = 0
        for row, m in zip(s, targets, strict=True):
            others = np.delete(np.arange(n), m)
            chosen = rng.choice(others, size=n_prime - 1, replace=False)
            hits += bool(row[m] >= row[chosen].max())
        out[r] = hits / s.shape[0]
    return out


# ---------------------------------------------------------------- linkability


def test_linkability_worked_example_of_metrics_md():
    # metrics.md section 1: every trial's target is strictly above its row's others -> 1.0,
    # although the EER of the same matrix is 0.5
    S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
    assert linkability(S, [0, 0, 1, 2]) == 1.0


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_linkability_tie_goes_to_the_true_speaker(ties):
    # the authors' code links when target >= max others: row 0's tie is linked, row 2 is not
    scores = [[0.5, 0.5, 0.1], [0.6, 0.5, 0.1], [0.4, 0.5, 0.1]]
    assert linkability(scores, [0, 0, 0], ties=ties) == pytest.approx(2 / 3)
    # the strict reading of the paper's equation is SRD's rank-1 rate (ties against)
    assert srd(scores, [0, 0, 0]).stats.idr == pytest.approx(1 / 3)
    assert srd(scores, [0, 0, 0], ties="attacker").stats.idr == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("scores", "targets", "expected"),
    [
        # the mated score ties a non-mated one: linked (the authors' code, >=)
        ([[0.5, 0.5]], [0], 1.0),
        ([[0.5, 0.5]], [1], 1.0),
        # ties among non-mated scores do not matter
        ([[0.9, 0.3, 0.3]], [0], 1.0),
        # rows: tie (yes), 0.9 > 0.2, 0.4 (yes), 0.7 < 0.8 (no), 0.3 > 0.1, 0.2 (yes) -> 3/4
        (
            [[0.5, 0.5, 0.1], [0.2, 0.9, 0.4], [0.7, 0.6, 0.8], [0.1, 0.2, 0.3]],
            [0, 1, 0, 2],
            0.75,
        ),
    ],
)
def test_linkability_hand_values(scores, targets, expected):
    # ties count against the attacker: a mated score tied with a non-mated one is linked
    # (voxmetrics.linkability is this function)
    assert linkability(scores, targets) == expected


def authors_code_linkability(scores, targets):
    """The v2 reference recipe, re-written: linked when the true speaker's score is >= all."""
    s = np.asarray(scores, dtype=float)
    t = np.asarray(targets)
    mated = s[np.arange(len(t)), t]
    others = s.copy()
    others[np.arange(len(t)), t] = -np.inf
    return float(np.mean(mated >= others.max(axis=1)))


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.int64, st.tuples(st.integers(1, 8), st.integers(2, 6)), elements=st.integers(0, 3)
    ),
    st.data(),
)
def test_linkability_equals_the_reference_recipe_with_many_ties(scores, data):
    t = np.asarray(
        data.draw(
            st.lists(
                st.integers(0, scores.shape[1] - 1),
                min_size=scores.shape[0],
                max_size=scores.shape[0],
            )
        )
    )
    for ties in ("reference", "attacker"):
        assert linkability(scores.astype(float), t, ties=ties) == authors_code_linkability(
            scores, t
        )
    # the attacker convention can only raise rank-based numbers
    assert (
        srd(scores.astype(float), t, ties="attacker").stats.idr
        >= srd(scores.astype(float), t).stats.idr
    )


def test_unknown_ties_is_a_clear_error():
    with pytest.raises(VoxMetricsInputError, match="ties"):
        linkability([[1.0, 0.0]], [0], ties="strict")  # type: ignore[arg-type]


# ---------------------------------------------------------------- the N' grid


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (2, [2]),
        (3, [2, 3]),
        (5, [2, 5]),
        (6, [2, 5, 6]),
        (10, [2, 5, 10]),
        (40, [2, 5, 10, 20, 40]),
        (50, [2, 5, 10, 20, 50]),
        (51, [2, 5, 10, 20, 50, 51]),
        (4949, [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 4949]),
        (22024, [2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 22024]),
    ],
)
def test_linkability_grid(n, expected):
    # 1-2-5 steps per decade strictly below N, then N itself (metrics.md 5)
    assert linkability_grid(n).tolist() == expected


# ---------------------------------------------------------------- linkability vs N'

small_matrices = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        # integer scores in 0..3 make ties frequent
        hnp.arrays(np.int64, st.tuples(st.integers(1, 5), st.just(n)), elements=st.integers(0, 3)),
        st.just(n),
    )
)


@settings(max_examples=60, deadline=None)
@given(small_matrices, st.data())
def test_exact_expectation_equals_brute_force_enumeration(matrix_n, data):
    scores, n = matrix_n
    targets = np.asarray(
        data.draw(st.lists(st.integers(0, n - 1), min_size=len(scores), max_size=len(scores)))
    )
    curve = linkability_curve(scores.astype(float), targets, n=np.arange(2, n + 1))
    for n_prime, value in zip(curve.n, curve.expected, strict=True):
        assert value == pytest.approx(
            brute_force_linkability(scores, targets, int(n_prime)), abs=1e-12
        )


def test_exact_expectation_hand_example_with_a_tie():
    # one trial, N = 4, target 0.5, others [0.5 (tie), 0.9, 0.1]: the tie goes to the true
    # speaker, so only b = 1 candidate (0.9) beats it.
    # N' = 2: 2 of the C(3,1) = 3 single others are harmless (0.5, 0.1) -> 2/3.
    # N' = 3: 1 of the C(3,2) = 3 pairs avoids 0.9 ({0.5, 0.1}) -> 1/3. N' = 4: 0.
    curve = linkability_curve([[0.5, 0.5, 0.9, 0.1]], [0], n=[2, 3, 4])
    assert curve.expected.tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert curve.chance.tolist() == pytest.approx([1 / 2, 1 / 3, 1 / 4])


def test_value_at_full_n_equals_linkability_and_chance_is_one_over_n():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(200, 37))
    targets = rng.integers(0, 37, size=200)
    scores[np.arange(200), targets] += 1.5
    curve = linkability_curve(scores, targets)
    assert curve.n.tolist() == [2, 5, 10, 20, 37]
    assert curve.expected[-1] == pytest.approx(linkability(scores, targets), abs=1e-12)
    np.testing.assert_allclose(curve.chance, 1.0 / curve.n)
    # more candidates can only make linkage harder
    assert np.all(np.diff(curve.expected) <= 1e-12)
    assert curve.to_list()[-1] == [37, pytest.approx(linkability(scores, targets))]


def test_exact_expectation_equals_an_independent_sampler():
    # 30 trials, N = 12 with ties; 400 literal draws of N'-1 others per trial and N'.
    # The mean of 400 draws of a per-draw linkability (a mean of 30 Bernoullis) has a standard
    # error <= 0.5 / sqrt(30 * 400) ~ 0.0046; allow 5 of them.
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, size=(30, 12)).astype(float)
    targets = rng.integers(0, 12, size=30)
    scores[np.arange(30), targets] += 2
    curve = linkability_curve(scores, targets, n=[2, 4, 8, 12])
    for n_prime, exact in zip(curve.n, curve.expected, strict=True):
        draws = sampled_linkability(scores, targets, int(n_prime), draws=400, seed=int(n_prime))
        se = max(draws.std() / math.sqrt(draws.size), 1e-9)
        assert abs(draws.mean() - exact) <= 5 * se + 1e-12, (n_prime, draws.mean(), exact)


def test_library_sampled_estimate_agrees_with_the_exact_expectation():
    rng = np.random.default_rng(8)
    scores = rng.normal(size=(300, 60))
    targets = rng.integers(0, 60, size=300)
    scores[np.arange(300), targets] += 1.0
    curve = linkability_curve(scores, targets, n_draws=500, seed=1)
    assert curve.n_draws == 500
    assert curve.sampled is not None and curve.sampled_sd is not None
    assert curve.sampled.shape == curve.expected.shape == curve.sampled_sd.shape
    # sampled = mean of 500 per-draw values with sd sampled_sd: 5 standard errors
    tolerance = 5 * curve.sampled_sd / math.sqrt(500) + 1e-12
    assert np.all(np.abs(curve.sampled - curve.expected) <= tolerance)
    # at N' = N every draw holds every candidate: no sampling noise at all
    assert curve.sampled[-1] == pytest.approx(curve.expected[-1], abs=1e-12)
    assert curve.sampled_sd[-1] == pytest.approx(0.0, abs=1e-12)
    # the draws are seeded
    again = linkability_curve(scores, targets, n_draws=500, seed=1)
    np.testing.assert_array_equal(curve.sampled, again.sampled)


def test_no_draws_means_no_sampled_estimate():
    curve = linkability_curve([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert curve.sampled is None and curve.sampled_sd is None and curve.n_draws == 0


@pytest.mark.parametrize("n", [[1], [2, 5], [0, 2], []])
def test_n_prime_outside_2_to_n_is_refused(n):
    with pytest.raises(VoxMetricsInputError, match=r"2\.\.4"):
        linkability_curve(np.eye(4), [0, 1, 2, 3], n=n)


# ---------------------------------------------------------------- EER vs N'


def _pools(scores, targets):
    s = np.asarray(scores, dtype=float)
    mated = s[np.arange(len(targets)), targets]
    mask = np.ones(s.shape, bool)
    mask[np.arange(len(targets)), targets] = False
    return mated, s[mask]


def test_eer_at_full_n_is_the_rocch_eer_of_the_pools():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(120, 15))
    targets = rng.integers(0, 15, size=120)
    scores[np.arange(120), targets] += 1.0
    curve = eer_curve(scores, targets, n=[15])
    assert curve.eer.tolist() == [eer_rocch(*_pools(scores, targets))]
    assert curve.sd.tolist() == [0.0] and curve.one_minus_eer[0] == 1 - curve.eer[0]


def test_eer_does_not_depend_on_the_draw_when_each_row_has_one_non_mated_value():
    # every non-mated score of trial i equals c_i: any candidate subset gives the same pools
    # up to multiplicity, and with equal counts per trial the ROCCH-EER is the same
    rng = np.random.default_rng(4)
    t, n = 40, 8
    c = rng.normal(size=t)
    scores = np.repeat(c[:, None], n, axis=1)
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] = c + rng.normal(0.5, 1.0, size=t)
    curve = eer_curve(scores, targets, n=[2, 4, 8], n_draws=3)
    full = eer_rocch(*_pools(scores, targets))
    np.testing.assert_allclose(curve.eer, full, atol=1e-12)
    np.testing.assert_allclose(curve.sd, 0.0, atol=1e-12)


def loop_eer_curve(scores, targets, n_prime, draws, seed):
    """Independent sampler: per draw and trial, N'-1 other columns by rng.choice."""
    rng = np.random.default_rng(seed)
    s = np.asarray(scores, float)
    out = []
    for _ in range(draws):
        tar, non = [], []
        for row, m in zip(s, targets, strict=True):
            others = np.delete(np.arange(s.shape[1]), m)
            tar.append(row[m])
            non.extend(row[rng.choice(others, size=n_prime - 1, replace=False)])
        out.append(eer_rocch(tar, non))
    return np.asarray(out)


def test_eer_vs_n_agrees_with_an_independent_sampler():
    rng = np.random.default_rng(6)
    scores = rng.normal(size=(150, 30))
    targets = rng.integers(0, 30, size=150)
    scores[np.arange(150), targets] += 1.2
    curve = eer_curve(scores, targets, n=[3, 10], n_draws=40, seed=1)
    for n_prime, ours, sd in zip(curve.n, curve.eer, curve.sd, strict=True):
        ref = loop_eer_curve(scores, targets, int(n_prime), 40, seed=9)
        se = math.hypot(sd, ref.std()) / math.sqrt(40)
        assert abs(ours - ref.mean()) <= 5 * se + 1e-9, (n_prime, ours, ref.mean())
    again = eer_curve(scores, targets, n=[3, 10], n_draws=40, seed=1)
    np.testing.assert_array_equal(again.eer, curve.eer)  # seeded


def former_eer_curve(scores, targets, grid, n_draws, seed):
    """The former eer_curve: the picked non-mated scores pooled and sorted, per draw."""
    s = np.asarray(scores)
    t = np.asarray(targets)
    n_enrolled = s.shape[1]
    rows_all = np.arange(s.shape[0])
    tar = s[rows_all, t]
    rng = np.random.default_rng(seed)
    means, sds = [], []
    for m in np.unique(grid):
        if m == n_enrolled:
            mask = np.ones(s.shape, dtype=bool)
            mask[rows_all, t] = False
            means.append(eer_rocch(tar, s[mask]))
            sds.append(0.0)
            continue
        values = []
        for _ in range(n_draws):
            non = []
            for rows in row_blocks(*s.shape):
                picked = other_candidates(rng, t[rows], n_enrolled, int(m) - 1)
                non.append(np.take_along_axis(s[rows], picked, axis=1).ravel())
            values.append(eer_rocch(tar, np.concatenate(non)))
        means.append(float(np.mean(values)))
        sds.append(float(np.std(values)))
    return means, sds


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_eer_curve_equals_the_former_sort_per_draw(dtype, decimals):
    # the cells of the picks against the sorted pools of the picks: the same floats, ties
    # included (rounded scores: many non-mated scores equal to mated ones and to each other)
    rng = np.random.default_rng(11)
    t, n = 300, 90  # N' = 20, 50: Floyd's draws; 70: the sorting draws (more than 64 picks)
    scores = rng.normal(size=(t, n))
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += 1.5
    if decimals is not None:
        scores = np.round(scores, decimals)
    scores = scores.astype(dtype)
    grid = [2, 20, 50, 70, n]
    curve = eer_curve(scores, targets, n=grid, n_draws=4, seed=3)
    means, sds = former_eer_curve(scores, targets, grid, 4, 3)
    assert curve.eer.tolist() == means
    assert curve.sd.tolist() == sds


def test_eer_curve_equals_the_former_one_in_several_row_blocks(monkeypatch):
    # the draws go block by block (the generator's stream): blocks of 7 rows here
    import voxmetrics.metrics.legal as legal
    import voxmetrics.metrics.ranks as ranks

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 7 * 40)
    rng = np.random.default_rng(12)
    scores = np.round(rng.normal(size=(60, 40)), 1)
    targets = rng.integers(0, 40, size=60)
    curve = legal.eer_curve(scores, targets, n=[5, 30, 40], n_draws=3, seed=0)
    means, sds = former_eer_curve(scores, targets, [5, 30, 40], 3, 0)
    assert curve.eer.tolist() == means and curve.sd.tolist() == sds


def former_floyd(rng, targets, n_enrolled, k):
    """The former Floyd draws: each draw compared with every column chosen before it."""
    t = np.asarray(targets, dtype=np.int64)
    n = n_enrolled - 1
    chosen = np.empty((t.size, k), dtype=np.int64)
    for i, j in enumerate(range(n - k, n)):
        draw = rng.integers(0, j + 1, size=t.size)
        taken = (chosen[:, :i] == draw[:, None]).any(axis=1)
        chosen[:, i] = np.where(taken, j, draw)
    return chosen + (chosen >= t[:, None])


@pytest.mark.parametrize("n_enrolled, k", [(2, 1), (5, 4), (30, 1), (30, 29), (200, 64), (70, 64)])
def test_other_candidates_equal_the_former_floyd_draws(n_enrolled, k):
    targets = np.random.default_rng(1).integers(0, n_enrolled, size=257)
    ours = other_candidates(np.random.default_rng(5), targets, n_enrolled, k)
    assert np.array_equal(ours, former_floyd(np.random.default_rng(5), targets, n_enrolled, k))


def test_eer_curve_refuses_bad_n_and_draws():
    with pytest.raises(VoxMetricsInputError, match="N' values"):
        eer_curve([[1.0, 0.0]], [0], n=[3])
    with pytest.raises(VoxMetricsInputError, match="n_draws"):
        eer_curve([[1.0, 0.0]], [0], n_draws=0)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("floyd", [True, False])
def test_other_candidates_are_uniform_subsets_of_the_others(monkeypatch, k, floyd):
    # N = 5: every k-subset of the 4 others is equally likely, the own column never drawn
    import voxmetrics.metrics.legal.linking as linking

    monkeypatch.setattr(linking, "_FLOYD_MAX", 64 if floyd else 0)
    targets = np.full(6000, 2)
    drawn = other_candidates(np.random.default_rng(11), targets, 5, k)
    assert drawn.shape == (6000, k)
    assert not (drawn == 2).any() and ((drawn >= 0) & (drawn < 5)).all()
    assert all(len(set(r)) == k for r in drawn.tolist())
    subsets = [tuple(sorted(r)) for r in drawn.tolist()]
    expected = list(itertools.combinations([0, 1, 3, 4], k))
    counts = np.array([subsets.count(c) for c in expected])
    assert counts.sum() == 6000
    p = 1 / len(expected)
    sd = math.sqrt(6000 * p * (1 - p))
    assert np.all(np.abs(counts - 6000 * p) <= 5 * sd), counts


def test_other_candidates_refuses_too_many():
    with pytest.raises(VoxMetricsInputError, match="cannot draw"):
        other_candidates(np.random.default_rng(0), [0], 3, 3)


# ---------------------------------------------------------------- the linkability rule


@st.composite
def tied_matrices(draw):
    n_t = draw(st.integers(1, 12))
    n_e = draw(st.integers(2, 7))
    hi = draw(st.integers(0, 4))  # few values: many ties with the true speaker
    s = np.array(
        draw(st.lists(st.integers(0, hi), min_size=n_t * n_e, max_size=n_t * n_e)), float
    ).reshape(n_t, n_e)
    t = np.array(draw(st.lists(st.integers(0, n_e - 1), min_size=n_t, max_size=n_t)))
    return s, t


@settings(max_examples=150, deadline=None)
@given(tied_matrices())
def test_both_rules_equal_legal_eval_v2(data):
    s, t = data
    n_e = s.shape[1]
    for rule, strict in (("code", False), ("strict", True)):
        beaters = count_beaters(s.T, t, strict=strict)
        assert linkability(s, t, rule=rule) == pytest.approx(
            linkability_exact(beaters, n_e, n_e), abs=1e-12
        )
        curve = linkability_curve(s, t, rule=rule)
        assert curve.n.tolist() == linkability_grid(n_e).tolist()
        expected = [linkability_exact(beaters, n_e, int(m)) for m in curve.n]
        np.testing.assert_allclose(curve.expected, expected, rtol=1e-9, atol=1e-12)
        for ties in ("reference", "attacker"):  # the tie rule of the pooled metrics: no effect
            assert linkability(s, t, ties=ties, rule=rule) == linkability(s, t, rule=rule)
    # the strict rule is SRD's identification rate (ties against the true speaker)
    assert linkability(s, t, rule="strict") == pytest.approx(srd(s, t).stats.idr, abs=1e-12)
    assert linkability(s, t, rule="strict") <= linkability(s, t)


def test_a_tie_for_the_top_score_under_each_rule():
    s = [[0.9, 0.9, 0.1], [0.2, 0.8, 0.1], [0.5, 0.5, 0.5]]
    assert linkability(s, [0, 1, 2]) == 1.0  # the code: every tie is a link
    assert linkability(s, [0, 1, 2], rule="strict") == pytest.approx(1 / 3)
    with pytest.raises(VoxMetricsInputError, match="linkability_rule"):
        linkability(s, [0, 1, 2], rule="paper")
