"""Linkability, linkability vs N', singling out and conversation length (metrics.md section 5).

References are computed independently here: brute-force enumeration of every candidate set,
a sampler that literally draws N'-1 other columns per trial, and a loop-by-loop singling-out
implementation written from the text of metrics.md / paper 001 (section 3.4, footnote 4).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.legal import (
    SinglingOutResult,
    average_consecutive,
    conversation_length_curve,
    eer_curve,
    legal_evaluation,
    linkability,
    linkability_curve,
    linkability_grid,
    other_candidates,
    singling_out,
    singling_out_draws,
    singling_out_embeddings,
    speaker_profiles,
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


def reference_singling_out(enrol_emb, enrol_spk, trial_emb, trial_spk) -> tuple[float, list]:
    """Singling out with explicit loops, as Vauquier et al. 2025 describe it (one draw).

    Speakers with fewer than 2 trial embeddings are left out. Predicates: the unit-norm mean
    of each enrolled speaker's unit enrolment embeddings, for speakers that have trial
    embeddings. Fold f holds out trial embedding f mod K_s (file order) of every speaker,
    f < F = max K_s (the paper's 10 folds, where a speaker with 2 <= K < 10 uses K - 1 to
    calibrate and 1 to test). Threshold: midpoint of the M-th and (M+1)-th highest calibration
    scores, M = K_e - 1. Success: exactly one held-out score strictly above it.
    """
    unit = lambda v: np.asarray(v, float) / np.linalg.norm(v)  # noqa: E731
    by_spk: dict[str, list[np.ndarray]] = {}
    for e, s in zip(enrol_emb, enrol_spk, strict=True):
        by_spk.setdefault(str(s), []).append(unit(e))
    trials: dict[str, list[np.ndarray]] = {}
    for e, s in zip(trial_emb, trial_spk, strict=True):
        trials.setdefault(str(s), []).append(unit(e))
    trials = {s: v for s, v in trials.items() if len(v) >= 2}
    folds = max(len(v) for v in trials.values())
    predicates = {s: unit(np.sum(v, axis=0)) for s, v in by_spk.items() if s in trials}
    per_fold = []
    for f in range(folds):
        wins = []
        for s, p in sorted(predicates.items()):
            m = len(trials[s]) - 1
            cal = sorted(
                (
                    float(p @ x)
                    for spk, xs in trials.items()
                    for k, x in enumerate(xs)
                    if k != f % len(xs)
                ),
                reverse=True,
            )
            threshold = (cal[m - 1] + cal[m]) / 2
            above = sum(float(p @ xs[f % len(xs)]) > threshold for xs in trials.values())
            wins.append(above == 1)
        per_fold.append(float(np.mean(wins)))
    return float(np.mean(per_fold)), per_fold


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


# ---------------------------------------------------------------- singling out


def _orthogonal_case(n_speakers=4, k=3, noise=0.05, seed=0):
    """Speaker s lives on basis vector e_s; trial embeddings are small perturbations of it."""
    rng = np.random.default_rng(seed)
    d = n_speakers + 1
    spk = [f"s{i}" for i in range(n_speakers)]
    enrol = np.eye(d)[:n_speakers]
    trial, trial_spk = [], []
    for i, s in enumerate(spk):
        for _ in range(k):
            trial.append(np.eye(d)[i] + noise * rng.normal(size=d))
            trial_spk.append(s)
    return enrol, spk, np.asarray(trial), trial_spk


def test_singling_out_is_one_when_every_predicate_isolates_its_speaker():
    # predicate e: its K-1 = 2 calibration embeddings score ~1, all others ~0, so the
    # threshold is ~0.5 (midpoint of the 2nd and 3rd highest) and only e's held-out embedding
    # passes it, in every fold
    enrol, spk, trial, trial_spk = _orthogonal_case()
    result = singling_out(enrol, spk, trial, trial_spk, shuffle=False)
    assert result.value == 1.0
    assert result.per_fold.tolist() == [1.0, 1.0, 1.0]
    assert (result.n_speakers, result.n_predicates, result.folds) == (4, 4, 3)
    # random draws of the utterances: the geometry is the same in every order
    drawn = singling_out(enrol, spk, trial, trial_spk, n_draws=4, seed=3)
    assert drawn.value == 1.0 and drawn.n_draws == 4 and drawn.per_fold.shape == (12,)


def test_singling_out_is_zero_when_all_trial_embeddings_are_identical():
    # every score equals the threshold (midpoint of two equal values) and isolation needs a
    # score strictly above it: 0 held-out embeddings pass, never exactly one
    trial = np.tile([1.0, 1.0, 0.0], (6, 1))
    result = singling_out(np.eye(3), ["a", "b", "c"], trial, ["a", "a", "b", "b", "c", "c"])
    assert result.value == 0.0


def test_singling_out_is_zero_when_the_threshold_lets_two_held_out_embeddings_through():
    # Both predicates point along (1, 0); scores are cosines c. Speaker a: c = 0.9, 0.8;
    # speaker b: c = 0.85, 0.7 (K = 2, M = 1).
    # fold 0 holds out (0.9, 0.85); calibration (0.8, 0.7) -> threshold 0.75 -> 2 above.
    # fold 1 holds out (0.8, 0.7); calibration (0.9, 0.85) -> threshold 0.875 -> 0 above.
    vec = lambda c: [c, math.sqrt(1 - c * c)]  # noqa: E731
    trial = [vec(0.9), vec(0.8), vec(0.85), vec(0.7)]
    result = singling_out([[1, 0], [1, 0]], ["a", "b"], trial, ["a", "a", "b", "b"], shuffle=False)
    assert result.per_fold.tolist() == [0.0, 0.0]
    assert result.value == 0.0


def test_fold_f_holds_out_the_f_th_embedding_of_every_speaker():
    # Same geometry as above, a = (0.9, 0.78), b = (0.7, 0.95): fold 0 holds out (0.9, 0.7),
    # calibration (0.78, 0.95) -> threshold 0.865 -> only 0.9 above -> success; fold 1 holds
    # out (0.78, 0.95), calibration (0.9, 0.7) -> threshold 0.8 -> only 0.95 above -> success.
    # b = (0.95, 0.7) instead: fold 0 holds out (0.9, 0.95) over calibration (0.78, 0.7) ->
    # threshold 0.74 -> 2 above; fold 1 holds out (0.78, 0.7) over (0.9, 0.95) -> 0.925 -> 0.
    vec = lambda c: [c, math.sqrt(1 - c * c)]  # noqa: E731
    enrol, spk = [[1, 0], [1, 0]], ["a", "b"]
    ordered = singling_out(
        enrol, spk, [vec(0.9), vec(0.78), vec(0.7), vec(0.95)], list("aabb"), shuffle=False
    )
    assert ordered.per_fold.tolist() == [1.0, 1.0]
    swapped = singling_out(
        enrol, spk, [vec(0.9), vec(0.78), vec(0.95), vec(0.7)], list("aabb"), shuffle=False
    )
    assert swapped.per_fold.tolist() == [0.0, 0.0]
    # drawn in random orders, each draw is one of the two cases: the mean lies between
    drawn = singling_out(
        enrol, spk, [vec(0.9), vec(0.78), vec(0.7), vec(0.95)], list("aabb"), n_draws=20, seed=1
    )
    assert set(drawn.per_fold.tolist()) <= {0.0, 1.0} and 0 < drawn.value < 1


def test_folds_follow_the_largest_speaker_and_wrap_around():
    # K = (4, 2, 3) -> F = 4 folds (not the smallest K): speaker s1 holds out rows 4, 5, 4, 5
    enrol, spk, trial, trial_spk = _orthogonal_case(n_speakers=3, k=4)
    keep = [0, 1, 2, 3, 4, 5, 8, 9, 10]  # s0: 4, s1: 2 (rows 4, 5), s2: 3 (rows 8-10)
    result = singling_out(enrol, spk, trial[keep], [trial_spk[i] for i in keep], shuffle=False)
    assert result.folds == 4 and result.per_fold.shape == (4,)


def test_at_most_max_per_speaker_embeddings_are_used():
    enrol, spk, trial, trial_spk = _orthogonal_case(n_speakers=3, k=12)
    assert singling_out(enrol, spk, trial, trial_spk).folds == 10  # the paper's 10
    assert singling_out(enrol, spk, trial, trial_spk, max_per_speaker=3).folds == 3
    assert singling_out(enrol, spk, trial, trial_spk, max_per_speaker=None).folds == 12
    draws = singling_out_draws(trial_spk, max_per_speaker=3, n_draws=2, seed=0)
    assert [d.size for d in draws] == [9, 9]
    labels = np.asarray(trial_spk)
    for d in draws:  # three distinct rows of every speaker, speakers in sorted order
        assert [np.unique(labels[d[i : i + 3]]).tolist() for i in (0, 3, 6)] == [
            ["s0"],
            ["s1"],
            ["s2"],
        ]
        assert np.unique(d).size == 9
    assert [d.tolist() for d in draws] == [
        d.tolist() for d in singling_out_draws(trial_spk, max_per_speaker=3, n_draws=2, seed=0)
    ]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 5),
    st.lists(st.integers(2, 4), min_size=5, max_size=5),
    st.integers(0, 2**32 - 1),
)
def test_singling_out_equals_the_loop_reference(n_speakers, ks, seed):
    rng = np.random.default_rng(seed)
    d = 3
    centres = rng.normal(size=(n_speakers, d))
    enrol_spk = [f"s{i}" for i in range(n_speakers) for _ in range(2)]
    enrol = np.repeat(centres, 2, axis=0) + 0.3 * rng.normal(size=(2 * n_speakers, d))
    trial_spk = [f"s{i}" for i in range(n_speakers) for _ in range(ks[i])]
    trial = np.concatenate(
        [centres[i] + 0.6 * rng.normal(size=(ks[i], d)) for i in range(n_speakers)]
    )
    order = rng.permutation(len(trial_spk))  # interleave speakers: order within each is kept
    trial, trial_spk = trial[order], [trial_spk[i] for i in order]
    result = singling_out(enrol, enrol_spk, trial, trial_spk, shuffle=False)
    value, per_fold = reference_singling_out(enrol, enrol_spk, trial, trial_spk)
    assert result.folds == max(ks[:n_speakers])
    np.testing.assert_allclose(result.per_fold, per_fold, atol=1e-12)
    assert result.value == pytest.approx(value, abs=1e-12)
    # with random draws: the mean of the reference over the drawn orders
    drawn = singling_out(enrol, enrol_spk, trial, trial_spk, n_draws=3, seed=seed % 1000)
    rows = singling_out_draws(trial_spk, n_draws=3, seed=seed % 1000)
    refs = [
        reference_singling_out(enrol, enrol_spk, trial[r], [trial_spk[i] for i in r]) for r in rows
    ]
    assert drawn.value == pytest.approx(np.mean([v for _, pf in refs for v in pf]), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (2, 0.5),  # (1/2)^1
        (3, 4 / 9),  # (2/3)^2
        (40, (39 / 40) ** 39),  # 0.37255, the demo's eval population
    ],
)
def test_singling_out_chance(n, expected):
    spk = [f"s{i}" for i in range(n)]
    rng = np.random.default_rng(0)
    result = singling_out(
        rng.normal(size=(n, 4)), spk, rng.normal(size=(2 * n, 4)), [s for s in spk for _ in "ab"]
    )
    assert result.n_speakers == n
    assert result.chance == pytest.approx(expected, rel=1e-12)
    assert result.to_dict() == {
        "value": result.value,
        "chance": result.chance,
        "n_speakers": n,
        "folds": 2,
        "n_draws": 5,
        "n_excluded_speakers": 0,
    }


def test_singling_out_chance_tends_to_one_over_e():
    # (1 - 1/N)^(N-1) = e^-1 (1 + 1/(2N) + O(1/N^2)): above e^-1 by less than 1/N, decreasing
    ns = (10, 100, 10_000, 1_000_000)
    values = [
        SinglingOutResult(0.0, n_speakers=n, n_predicates=1, folds=2, per_fold=np.zeros(2)).chance
        for n in ns
    ]
    assert all(a > b for a, b in itertools.pairwise(values))
    for n, v in zip(ns, values, strict=True):
        assert 0 < v - math.exp(-1) < 1 / n


def test_speakers_with_one_trial_embedding_are_left_out_and_counted():
    # the paper excludes speakers with K < 2; c has one embedding
    enrol, spk, trial, trial_spk = _orthogonal_case(n_speakers=3, k=3)
    extra = np.vstack([trial, np.eye(trial.shape[1])[3]])
    result = singling_out(
        [*enrol, np.eye(trial.shape[1])[3]], [*spk, "c"], extra, [*trial_spk, "c"], shuffle=False
    )
    without = singling_out(enrol, spk, trial, trial_spk, shuffle=False)
    assert result.n_excluded_speakers == 1 and result.n_speakers == 3
    assert result.value == without.value and result.to_dict()["n_excluded_speakers"] == 1
    with pytest.raises(VoxMetricsInputError, match=r"at least 2 trial speakers.*'b'"):
        singling_out(np.eye(2), ["a", "b"], [[1, 0], [1, 0.1], [0, 1]], ["a", "a", "b"])


def test_singling_out_needs_two_trial_speakers_and_a_predicate():
    with pytest.raises(VoxMetricsInputError, match="at least 2 trial speakers"):
        singling_out(np.eye(2), ["a", "b"], [[1, 0], [1, 0.1]], ["a", "a"])
    with pytest.raises(VoxMetricsInputError, match="no enrolled speaker has trial embeddings"):
        singling_out(np.eye(2), ["x", "y"], [[1, 0], [1, 0.1], [0, 1], [0.1, 1]], list("aabb"))


def test_speaker_profiles_are_unit_means_of_unit_embeddings():
    # a: (3, 0) and (0, 1) -> units (1, 0), (0, 1) -> mean (.5, .5) -> (0.7071, 0.7071)
    labels, profiles = speaker_profiles([[3, 0], [0, 1], [0, 2]], ["a", "a", "b"])
    assert labels.tolist() == ["a", "b"]
    np.testing.assert_allclose(profiles, [[2**-0.5, 2**-0.5], [0, 1]])


# ---------------------------------------------------------------- conversation length


def test_average_consecutive_groups_in_order_and_drops_the_incomplete_group():
    # speaker a: rows 0, 2, 4, 6, 8 (interleaved with b); L = 2 -> groups (0, 2), (4, 6);
    # row 8 is an incomplete group and is dropped. Each row is made unit before averaging.
    emb = np.array(
        [[2, 0, 0], [0, 0, 5], [0, 3, 0], [0, 0, 1], [0, 0, 4], [1, 0, 0], [1, 0, 0],
         [0, 1, 0], [9, 9, 9]],
        dtype=float,
    )  # fmt: skip
    spk = ["a", "b", "a", "b", "a", "b", "a", "b", "a"]
    e, s = average_consecutive(emb, spk, 2)
    h = 2**-0.5
    # a: mean((1,0,0),(0,1,0)) -> (h,h,0); mean((0,0,1),(1,0,0)) -> (h,0,h)
    # b: mean((0,0,1),(0,0,1)) -> (0,0,1); mean((1,0,0),(0,1,0)) -> (h,h,0)
    assert s.tolist() == ["a", "a", "b", "b"]
    np.testing.assert_allclose(e, [[h, h, 0], [h, 0, h], [0, 0, 1], [h, h, 0]], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0)


def test_average_consecutive_length_one_only_normalises():
    e, s = average_consecutive([[3, 4], [0, 2]], ["a", "b"], 1)
    np.testing.assert_allclose(e, [[0.6, 0.8], [0, 1]])
    assert s.tolist() == ["a", "b"]


def test_average_consecutive_refuses_impossible_lengths():
    with pytest.raises(VoxMetricsInputError, match=">= 1"):
        average_consecutive([[1, 0]], ["a"], 0)
    with pytest.raises(VoxMetricsInputError, match="no speaker has 3 embeddings"):
        average_consecutive([[1, 0], [0, 1]], ["a", "a"], 3)


def _embedding_set(n_speakers=6, n_enrol=2, n_trial=6, seed=0) -> EmbeddingSet:
    rng = np.random.default_rng(seed)
    rows, xs = [], []
    for k in range(n_speakers):
        centre = rng.normal(size=8)
        for role, count in (("enrol", n_enrol), ("trial", n_trial)):
            for u in range(count):
                rows.append((f"s{k}-{role}{u}", f"s{k}", role, "eval"))
                xs.append(centre + 1.2 * rng.normal(size=8))
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"])
    return EmbeddingSet.from_arrays(np.asarray(xs), meta)


def test_conversation_length_one_equals_the_plain_metrics():
    es = _embedding_set()
    curve = conversation_length_curve(es, (1, 2, 3, 6))
    sm = es.score_matrix("eval")
    assert curve.linkability[0] == pytest.approx(linkability(sm.scores, sm.targets), abs=1e-12)
    assert curve.singling_out[0] == pytest.approx(singling_out_embeddings(es).value, abs=1e-12)
    assert (curve.n_enrolled, curve.n_speakers) == (6, 6)
    # L = 2, 3 leave 3 and 2 groups per speaker; L = 6 one group: no held-out fold -> NaN
    assert curve.lengths.tolist() == [1, 2, 3, 6]
    assert np.isfinite(curve.singling_out[:3]).all() and np.isnan(curve.singling_out[3])
    assert np.isfinite(curve.linkability).all()


def test_conversation_length_averages_before_scoring():
    # at L = 2 the curve's linkability is that of the explicitly averaged trial embeddings
    es = _embedding_set(seed=4)
    curve = conversation_length_curve(es, (2,))
    meta = es.meta
    trial = (meta["role"] == "trial").to_numpy()
    enrol = ~trial
    t_emb, t_spk = average_consecutive(es.embeddings[trial], meta["speaker"][trial], 2)
    labels, profiles = speaker_profiles(es.embeddings[enrol], meta["speaker"][enrol])
    scores = t_emb @ profiles.T
    targets = np.array([labels.tolist().index(s) for s in t_spk])
    assert curve.linkability[0] == pytest.approx(linkability(scores, targets), abs=1e-12)
    so = singling_out(es.embeddings[enrol], meta["speaker"][enrol], t_emb, t_spk).value
    assert curve.singling_out[0] == pytest.approx(so, abs=1e-12)


def test_singling_out_embeddings_needs_both_roles():
    es = _embedding_set()
    trial_only = EmbeddingSet.from_arrays(
        es.embeddings[es.meta["role"].to_numpy() == "trial"],
        es.meta[es.meta["role"] == "trial"],
    )
    with pytest.raises(VoxMetricsInputError, match="needs both enrolment and trial"):
        singling_out_embeddings(trial_only)


def test_singling_out_curve_at_full_n_equals_singling_out_and_random_tracks_chance():
    from voxmetrics.metrics.legal import singling_out_curve
    from voxmetrics.synth import demo_embeddings

    sets = demo_embeddings(n_speakers=20)
    plain = singling_out_curve(sets["plain"], n_draws=5)
    assert plain.n.tolist() == [2, 5, 10, 20]
    # at the full population there is one set: the plain singling out, no spread
    assert plain.value[-1] == singling_out_embeddings(sets["plain"]).value
    assert plain.sd[-1] == 0.0
    np.testing.assert_allclose(plain.chance, (1 - 1 / plain.n) ** (plain.n - 1))
    # a system that keeps no identity isolates at about the chance rate at every size
    rand = singling_out_curve(sets["random"], n_draws=20)
    assert np.all(np.abs(rand.value - rand.chance) < 0.2)
    assert np.all(plain.value > rand.value)
    # seeded
    again = singling_out_curve(sets["plain"], n_draws=5)
    np.testing.assert_array_equal(again.value, plain.value)
    with pytest.raises(VoxMetricsInputError, match="population sizes"):
        singling_out_curve(sets["plain"], n=[1, 5])


def _singling_out_curve_isin(es, n_draws, seed, length):
    """singling_out_curve as it was: each population's rows by ``np.isin`` of the labels."""
    from voxmetrics.metrics.legal import average_consecutive, linkability_grid, singling_out

    enrol, trial = es.roles("eval")
    spk = es.meta["speaker"].to_numpy().astype(str)
    t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
    groups, counts = np.unique(t_spk, return_counts=True)
    speakers = np.intersect1d(spk[enrol], groups[counts >= 2])
    grid = linkability_grid(speakers.size)
    rng = np.random.default_rng(seed)
    values, sds = [], []
    for size in grid:
        vals = []
        for _ in range(1 if size == speakers.size else n_draws):
            chosen = rng.choice(speakers, size=int(size), replace=False)
            e_rows = enrol & np.isin(spk, chosen)
            t_rows = np.isin(t_spk, chosen)
            vals.append(
                singling_out(
                    es.embeddings[e_rows], spk[e_rows], t_emb[t_rows], t_spk[t_rows], seed=seed
                ).value
            )
        values.append(np.mean(vals))
        sds.append(np.std(vals))
    return np.array(values), np.array(sds)


@pytest.mark.parametrize("length", [1, 2])
def test_singling_out_curve_populations_by_integer_codes_equal_isin(length):
    """Speakers not enrolled, enrolled without trials or with too few: the same curve."""
    from voxmetrics.metrics.legal import singling_out_curve
    from voxmetrics.synth import demo_embeddings

    es = demo_embeddings(n_speakers=16)["anon-mild"]
    meta = es.meta
    trial_speakers = meta.loc[(meta["split"] == "eval") & (meta["role"] == "trial"), "speaker"]
    first, second, third = sorted(set(trial_speakers))[:3]
    drop = (meta["speaker"] == first) & (meta["role"] == "enrol")  # trials, not enrolled
    drop |= (meta["speaker"] == second) & (meta["role"] == "trial")  # enrolled, no trial
    third_trials = meta.index[(meta["speaker"] == third) & (meta["role"] == "trial")]
    drop |= meta.index.isin(third_trials[1:])  # one trial utterance
    keep = ~drop.to_numpy()
    es = EmbeddingSet(es.embeddings[keep], meta[keep].reset_index(drop=True))
    got = singling_out_curve(es, n_draws=4, seed=3, length=length)
    want_values, want_sds = _singling_out_curve_isin(es, 4, 3, length)
    np.testing.assert_array_equal(got.value, want_values)
    np.testing.assert_array_equal(got.sd, want_sds)


# ---------------------------------------------------------------- EER vs N' and figure 1


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


def test_legal_evaluation_on_the_demo_follows_the_protocol():
    from voxmetrics.synth import demo_study

    es = demo_study().get("anon-mild").embeddings
    ev = legal_evaluation(es, lengths=[1, 3, 30], n_draws=3)
    assert ev.lengths == [1, 3]  # nobody has 30 trial utterances in the demo
    assert ev.skipped[0][0] == 30 and "30" in ev.skipped[0][1]
    one, three = ev.results
    # L = 1 is the plain linkability curve of the split's score matrix
    sm = es.score_matrix("eval")
    plain = linkability_curve(sm.scores, sm.targets)
    np.testing.assert_allclose(one.linkability.expected, plain.expected, atol=1e-12)
    assert one.eer.eer[-1] == pytest.approx(eer_rocch(sm.tar, sm.non), abs=1e-12)
    # averaging 3 utterances makes linkage easier and leaves a third of the trials
    assert three.n_trials * 3 <= one.n_trials
    assert three.linkability.expected[-1] > one.linkability.expected[-1]
    assert one.singling_out is not None
    d = json.loads(json.dumps(ev.to_dict()))
    assert d["lengths"] == [1, 3] and d["skipped"][0]["length"] == 30
    assert d["results"][0]["eer_vs_n"][-1][0] == sm.scores.shape[1]
    with pytest.raises(VoxMetricsInputError, match="no conversation length"):
        legal_evaluation(es, lengths=[500])


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


def test_legal_evaluation_clips_the_sizes_to_the_data():
    from voxmetrics.synth import demo_study

    es = demo_study(n_speakers=8).get("anon-mild").embeddings
    ev = legal_evaluation(es, lengths=[1], n=[2, 5, 1000], n_draws=2)
    r = ev.results[0]
    assert r.linkability.n.tolist() == [2, 5] == r.eer.n.tolist()
    assert r.singling_out is not None and r.singling_out.n.tolist() == [2, 5]


def test_singling_out_over_blocks_of_predicates_equals_one_block(monkeypatch):
    """map_blocks (as on Dask workers) and small blocks of predicates change no number."""
    import voxmetrics.metrics.ranks as ranks_mod
    from voxmetrics.metrics.legal import singling_out_from_isolations, singling_out_isolations

    rng = np.random.default_rng(3)
    n_spk, d = 12, 4
    centres = rng.normal(size=(n_spk, d))
    enrol_spk = np.repeat([f"s{i:02d}" for i in range(n_spk)], 2)
    enrol = np.repeat(centres, 2, axis=0) + 0.4 * rng.normal(size=(2 * n_spk, d))
    trial_spk = np.repeat([f"s{i:02d}" for i in range(n_spk)], 5)
    trial = np.repeat(centres, 5, axis=0) + 0.7 * rng.normal(size=(5 * n_spk, d))
    whole = singling_out(enrol, enrol_spk, trial, trial_spk, n_draws=3, seed=4)
    calls = []

    def backwards(fn, shared, blocks):  # computes the blocks in reverse, returns them in order
        calls.append(len(blocks))
        return [fn(*b, *shared) for b in blocks[::-1]][::-1]

    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", 12 * trial.shape[0])  # 3 predicates a block
    got = singling_out(enrol, enrol_spk, trial, trial_spk, n_draws=3, seed=4, map_blocks=backwards)
    assert calls == [4]
    assert got.value == whole.value and got.folds == whole.folds == 5
    np.testing.assert_array_equal(got.per_fold, whole.per_fold)
    np.testing.assert_array_equal(got.per_predicate, whole.per_predicate)
    # the kernel's per-fold matrix: one column per fold of every draw
    draws = singling_out_draws(trial_spk, n_draws=3, seed=4)
    unit = trial / np.linalg.norm(trial, axis=1, keepdims=True)
    labels, profiles = speaker_profiles(enrol, enrol_spk)
    pop = np.unique(trial_spk)
    iso, folds = singling_out_isolations(profiles, labels, unit, trial_spk, pop, draws)
    assert iso.shape == (n_spk, 15) and folds == 5
    again = singling_out_from_isolations([(iso, folds)], labels, pop, draws, 0)
    assert again.value == pytest.approx(whole.value, abs=1e-15)
    np.testing.assert_array_equal(again.per_predicate, iso.mean(axis=1))


def _partition_isolations(profiles, predicates, trial_unit, trial_speakers, population, draws):
    """The kernel as it was before the top scores were kept: one partition per fold and draw."""
    scores_all = profiles @ trial_unit.T
    out, rows, folds = [], np.arange(predicates.size), 0
    for chosen in draws:
        spk = trial_speakers[chosen]
        _, inverse, counts = np.unique(spk, return_inverse=True, return_counts=True)
        m = counts[np.searchsorted(population, predicates)] - 1
        order = np.argsort(inverse, kind="stable")
        position = np.empty(spk.size, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        position[order] = np.arange(spk.size) - np.repeat(starts, counts)
        scores = scores_all[:, chosen]
        folds = int(counts.max())
        for f in range(folds):
            held = position == f % counts[inverse]
            kth = np.unique(np.concatenate([m - 1, m]))
            cal = -np.partition(-scores[:, ~held], kth, axis=1)
            threshold = (cal[rows, m - 1] + cal[rows, m]) / 2
            out.append((scores[:, held] > threshold[:, None]).sum(axis=1) == 1)
    return np.stack(out, axis=1), folds


@pytest.mark.parametrize("fold_cells", [2_000_000, 1])
@pytest.mark.parametrize("margin", [16, 0])
@pytest.mark.parametrize("seed", range(6))
def test_singling_out_top_scores_equal_a_partition_per_fold(monkeypatch, seed, margin, fold_cells):
    """The kept top scores give the same isolations as one partition per fold, ties included.

    Margin 0 keeps only M + 1 scores a predicate, so held-out embeddings often crowd them out
    and the exact fallback runs; coarse embeddings (few distinct values) make many ties.
    ``fold_cells`` 1 takes the folds one at a time, the default all of a draw's at once.
    """
    import voxmetrics.metrics.legal.singling as singling
    from voxmetrics.metrics.legal import singling_out_isolations

    monkeypatch.setattr(singling, "_TOP_MARGIN", margin)
    monkeypatch.setattr(singling, "_FOLD_CELLS", fold_cells)
    rng = np.random.default_rng(seed)
    n_spk, d = 30, 3
    per = rng.integers(2, 14, size=n_spk)  # K_s from 2 to 13: some above max_per_speaker
    centres = rng.normal(size=(n_spk, d))
    names = np.array([f"s{i:02d}" for i in range(n_spk)])
    trial_spk = np.repeat(names, per)
    trial = np.repeat(centres, per, axis=0) + rng.normal(size=(per.sum(), d))
    if seed % 2:  # coarse: ties between scores
        trial = np.round(trial)
        trial[~trial.any(axis=1)] = 1.0
    enrol_spk = np.repeat(names[: n_spk - 3], 2)  # some trial speakers are not predicates
    enrol = np.round(np.repeat(centres[: n_spk - 3], 2, axis=0) + rng.normal(size=(54, d)))
    enrol[~enrol.any(axis=1)] = 1.0
    labels, profiles = speaker_profiles(enrol, enrol_spk)
    unit = trial / np.linalg.norm(trial, axis=1, keepdims=True)
    pop = np.unique(trial_spk)
    for draws in (
        singling_out_draws(trial_spk, n_draws=3, seed=seed),
        singling_out_draws(trial_spk, shuffle=False, max_per_speaker=None),
    ):
        got = singling_out_isolations(profiles, labels, unit, trial_spk, pop, draws)
        want = _partition_isolations(profiles, labels, unit, trial_spk, pop, draws)
        assert got[1] == want[1]
        np.testing.assert_array_equal(got[0], want[0])


def _average_consecutive_loop(embeddings, speakers, length):
    """average_consecutive as it was: one speaker at a time, in order of first appearance."""
    e = unit_rows(np.asarray(embeddings, dtype=np.float64))
    spk = np.asarray(speakers).astype(str).ravel()
    out_e, out_s = [], []
    for label in dict.fromkeys(spk.tolist()):
        rows = np.flatnonzero(spk == label)
        n_groups = rows.size // length
        if n_groups:
            grouped = e[rows[: n_groups * length]].reshape(n_groups, length, -1).mean(axis=1)
            out_e.append(unit_rows(grouped))
            out_s += [label] * n_groups
    return np.concatenate(out_e), np.asarray(out_s)


@pytest.mark.parametrize("length", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_average_consecutive_equals_one_speaker_at_a_time(seed, length):
    """The vectorised grouping gives the loop's embeddings bit for bit, in the same order."""
    rng = np.random.default_rng(seed)
    spk = rng.choice([f"z{i}" for i in range(7)] + ["a", "bb", "m"], size=90)
    emb = rng.normal(size=(90, 6)) * rng.choice([1e-3, 1.0, 1e3], size=(90, 1))
    got_e, got_s = average_consecutive(emb, spk, length)
    want_e, want_s = _average_consecutive_loop(emb, spk, length)
    assert got_s.tolist() == want_s.tolist()
    np.testing.assert_array_equal(got_e, want_e)
