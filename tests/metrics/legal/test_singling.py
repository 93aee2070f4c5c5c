"""Singling out, its curve against N and conversation-length averaging (legal/singling.py).

The reference is a loop-by-loop singling-out implementation written from the text of
metrics.md section 5 / paper 001 (section 3.4, footnote 4); the fast kernels are checked
against the former ones (a partition per fold, one speaker at a time), kept here.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.metrics.legal.legal_cases import small_embedding_set
from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.legal import (
    SinglingOutResult,
    average_consecutive,
    linkability_grid,
    singling_out,
    singling_out_draws,
    singling_out_embeddings,
    speaker_profiles,
)


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


# ---------------------------------------------------------------- conversation length: grouping


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


def test_singling_out_embeddings_needs_both_roles():
    es = small_embedding_set()
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
    from voxmetrics.metrics.legal import average_consecutive, singling_out

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
