"""Legally validated linkage metrics (Vauquier et al. 2025).

Ties. The authors' public evaluation code (v2) counts a linkage as successful when the true
speaker's score is at least every other candidate's, so a tie goes to the true speaker; that is
``rule="code"`` (the default, under both ``ties`` conventions). The paper's eq. 3 (and an
independent public reproduction) is strict: ``rule="strict"`` counts a tie for the top score as
no link (it equals the rank-1 rate IdR of :func:`~voxmetrics.metrics.srd.srd`). The curve
against N' follows the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from voxmetrics.data.model import EmbeddingSet, unit_rows
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._validation import (
    LINKABILITY_RULES,
    LinkabilityRule,
    check_linkability_rule,
    check_matrix,
)
from voxmetrics.metrics.eer import eer_rocch_from_counts
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import RunCounts, Ties, check_ties
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks, target_ranks

__all__ = [
    "LINKABILITY_RULES",
    "ConversationLengthCurve",
    "EERCurve",
    "LegalEvaluation",
    "LegalLengthResult",
    "LinkabilityCurve",
    "LinkabilityRule",
    "MapBlocks",
    "SinglingOutCurve",
    "SinglingOutResult",
    "average_consecutive",
    "check_linkability_rule",
    "conversation_length_curve",
    "eer_curve",
    "legal_evaluation",
    "link_rank_ties",
    "linkability",
    "linkability_curve",
    "linkability_curve_from_ranks",
    "linkability_from_ranks",
    "linkability_grid",
    "other_candidates",
    "singling_out",
    "singling_out_curve",
    "singling_out_draws",
    "singling_out_embeddings",
    "singling_out_from_isolations",
    "singling_out_isolations",
    "speaker_profiles",
]


def linkability(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    ties: Ties = "reference",
    rule: LinkabilityRule = "code",
) -> float:
    """Fraction of trials whose mated score is at least (or above) every non-mated score.

    Linkability = mean_i [s_i,m_i >= max_{j != m_i} s_ij] (Vauquier et al. 2025, as their
    public code computes it: ``rule="code"``), or with ``>`` (the paper's eq. 3:
    ``rule="strict"``). The rule alone decides a tie with a non-mated score, under both
    ``ties`` conventions (module docstring). Chance level is 1/N.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.
    ties : {"reference", "attacker"}
        Tie convention of the pooled metrics; it does not change linkability (``rule`` does).
    rule : {"code", "strict"}
        ``"code"``: a tie for the top score is a link (the authors' code); ``"strict"``: it is
        not (the paper's eq. 3).

    Returns
    -------
    float
        Linkability in [0, 1].

    Examples
    --------
    >>> linkability([[0.9, 0.8], [0.5, 0.5], [0.2, 0.4]], [0, 1, 0])
    0.6666666666666666
    >>> linkability([[0.9, 0.8], [0.5, 0.5], [0.2, 0.4]], [0, 1, 0], rule="strict")
    0.3333333333333333
    """
    check_ties(ties)
    return linkability_from_ranks(target_ranks(scores, targets, ties=link_rank_ties(rule)))


def link_rank_ties(rule: str) -> Ties:
    """The :func:`~voxmetrics.metrics.ranks.target_ranks` tie rule whose rank 1 is a link.

    ``"code"``: ``"attacker"`` (1 + #{j != m_i : s_ij > s_i,m_i}, a tie goes to the true
    speaker); ``"strict"``: ``"reference"`` (#{j : s_ij >= s_i,m_i}, a tie goes against it).

    Examples
    --------
    >>> link_rank_ties("code"), link_rank_ties("strict")
    ('attacker', 'reference')
    """
    return "attacker" if check_linkability_rule(rule) == "code" else "reference"


def linkability_from_ranks(ranks: NDArray[np.int64]) -> float:
    """:func:`linkability` from the trials' target ranks (rank 1 = linked).

    These are :func:`~voxmetrics.metrics.ranks.target_ranks` with
    ``ties=link_rank_ties(rule)``: 1 + #{j != m_i : s_ij > s_i,m_i} for the code's rule.

    Examples
    --------
    >>> linkability_from_ranks(np.array([1, 2, 1, 1]))
    0.75
    """
    return float((ranks == 1).mean())


def linkability_grid(n_enrolled: int) -> NDArray[np.int64]:
    """N' values of the linkability curve: 2, 5, 10, 20, 50, 100, ... below N, and N itself.

    Examples
    --------
    >>> linkability_grid(40).tolist()
    [2, 5, 10, 20, 40]
    """
    grid = []
    decade = 1
    while True:
        for m in (2, 5, 10):
            v = m * decade
            if v >= n_enrolled:
                return np.asarray([*grid, n_enrolled], dtype=np.int64)
            if not grid or v > grid[-1]:
                grid.append(v)
        decade *= 10


@dataclass(frozen=True)
class LinkabilityCurve:
    """Linkability as a function of the number N' of enrolled candidates."""

    n: NDArray[np.int64] = field(repr=False)
    """The N' values, ascending, 2 <= N' <= N."""
    expected: NDArray[np.float64] = field(repr=False)
    """Exact expectation over random candidate sets that contain the target."""
    chance: NDArray[np.float64] = field(repr=False)
    """1 / N'."""
    sampled: NDArray[np.float64] | None = field(default=None, repr=False)
    """Mean over ``n_draws`` random candidate sets per trial (when asked for)."""
    sampled_sd: NDArray[np.float64] | None = field(default=None, repr=False)
    """Standard deviation over the draws of the per-draw linkability."""
    n_draws: int = 0
    """Draws behind ``sampled``."""

    def to_list(self) -> list[list[float]]:
        """``[[n, value], ...]``, the CLI's ``linkability_vs_n``."""
        return [[int(n), float(v)] for n, v in zip(self.n, self.expected, strict=True)]


def _prob_no_beater(b: NDArray[np.int64], n_enrolled: int, n_prime: int) -> NDArray[np.float64]:
    """C(N-1-b, N'-1) / C(N-1, N'-1): no candidate scoring >= the target is among N'-1 drawn."""
    k = n_prime - 1
    ok = n_enrolled - 1 - b >= k
    out = np.zeros(b.shape, dtype=np.float64)
    bb = b[ok].astype(np.float64)
    out[ok] = np.exp(
        gammaln(n_enrolled - bb)
        - gammaln(n_enrolled - bb - k)
        - gammaln(n_enrolled)
        + gammaln(n_enrolled - k)
    )
    return out


def linkability_curve(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    n: ArrayLike | None = None,
    n_draws: int = 0,
    seed: int = 0,
    ties: Ties = "reference",
    rule: LinkabilityRule = "code",
) -> LinkabilityCurve:
    """Linkability against N' enrolled candidates, by exact expectation.

    For trial i with b_i = #{j != m_i : s_ij > s_i,m_i} (``rule="code"``: ties go to the true
    speaker, as in :func:`linkability`; ``>=`` under ``rule="strict"``), a random
    candidate set of N' identities that contains the target links it with probability
    P_i = C(N-1-b_i, N'-1) / C(N-1, N'-1); the curve is mean_i P_i. No sampling is needed; with
    ``n_draws`` > 0 a sampled estimate (the paper's procedure: draw the N'-1 other candidates at
    random, R times per trial) is added beside it.

    Parameters
    ----------
    scores, targets : array_like
        T x N matrix and target columns.
    n : array_like of int, optional
        N' values (2 <= N' <= N); default :func:`linkability_grid`.
    n_draws : int
        Random candidate sets per trial for the sampled estimate (0 = none).
    seed : int
        Seed of the draws.
    ties : {"reference", "attacker"}
        Tie convention of the pooled metrics (it does not change the curve).
    rule : {"code", "strict"}
        As :func:`linkability`.

    Returns
    -------
    LinkabilityCurve

    Examples
    --------
    >>> S = [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]]
    >>> c = linkability_curve(S, [0, 0, 1, 2])
    >>> c.to_list()
    [[2, 1.0], [4, 1.0]]
    """
    s, t = check_matrix(scores, targets)
    check_ties(ties)
    return linkability_curve_from_ranks(
        target_ranks(s, t, ties=link_rank_ties(rule)), s.shape[1], n=n, n_draws=n_draws, seed=seed
    )


def linkability_curve_from_ranks(
    ranks: NDArray[np.int64],
    n_enrolled: int,
    *,
    n: ArrayLike | None = None,
    n_draws: int = 0,
    seed: int = 0,
) -> LinkabilityCurve:
    """:func:`linkability_curve` from the trials' target ranks 1 + #{j != m_i : s_ij > s_i,m_i}.

    These are :func:`~voxmetrics.metrics.ranks.target_ranks` with
    ``ties=link_rank_ties(rule)`` (rank - 1 is b_i under the rule of :func:`linkability_curve`).

    Examples
    --------
    >>> linkability_curve_from_ranks(np.array([1, 1, 2, 1]), 4).to_list()
    [[2, 0.917], [4, 0.75]]
    """
    grid = linkability_grid(n_enrolled) if n is None else np.asarray(n, dtype=np.int64).ravel()
    if grid.size == 0 or grid.min() < 2 or grid.max() > n_enrolled:
        raise VoxMetricsInputError(f"N' values must lie in 2..{n_enrolled} (the enrolled count).")
    grid = np.unique(grid)
    beaters = np.asarray(ranks, dtype=np.int64) - 1
    values, counts = np.unique(beaters, return_counts=True)
    expected = np.array(
        [(counts * _prob_no_beater(values, n_enrolled, int(m))).sum() / beaters.size for m in grid]
    )
    sampled = sampled_sd = None
    if n_draws > 0:
        rng = np.random.default_rng(seed)
        sampled, sampled_sd = np.empty(grid.size), np.empty(grid.size)
        for g, m in enumerate(grid):
            # beaters among the N'-1 drawn candidates ~ hypergeometric, per trial and draw
            drawn = rng.hypergeometric(
                beaters, n_enrolled - 1 - beaters, int(m) - 1, size=(n_draws, beaters.size)
            )
            per_draw = (drawn == 0).mean(axis=1)
            sampled[g], sampled_sd[g] = per_draw.mean(), per_draw.std()
    return LinkabilityCurve(
        n=grid,
        expected=expected,
        chance=1.0 / grid,
        sampled=sampled,
        sampled_sd=sampled_sd,
        n_draws=int(n_draws),
    )


def _unit(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return unit_rows(x)


def speaker_profiles(
    embeddings: ArrayLike, speakers: ArrayLike
) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """Unit-norm enrolment profiles: the mean of each speaker's L2-normalised embeddings.

    Returns
    -------
    labels : ndarray of str, shape (S,)
        Sorted speaker labels.
    profiles : ndarray, shape (S, d)
        One L2-normalised profile per speaker.
    """
    e = _unit(np.asarray(embeddings, dtype=np.float64))
    labels, inverse = np.unique(np.asarray(speakers).astype(str), return_inverse=True)
    profiles = np.zeros((labels.size, e.shape[1]))
    np.add.at(profiles, inverse, e)
    return labels, _unit(profiles)


@dataclass(frozen=True)
class SinglingOutResult:
    """Singling out (predicate singling out, Vauquier et al. 2025 eq. 1)."""

    value: float
    """Probability of isolation, mean over draws, folds and predicates."""
    n_speakers: int
    """N, the trial speakers used (the population one entry each is drawn from)."""
    n_predicates: int
    """Enrolled speakers used as predicates."""
    folds: int
    """F = the largest number of utterances used for one speaker (at most
    ``max_per_speaker``): fold f holds out utterance f mod K_s of every speaker s."""
    per_fold: NDArray[np.float64] = field(repr=False)
    """Isolation rate of each (draw, fold), draw-major."""
    n_draws: int = 1
    """Random draws of the utterances used (the paper repeats its draws 5 times)."""
    n_excluded_speakers: int = 0
    """Trial speakers left out for having fewer than 2 trial embeddings."""
    predicates: NDArray[np.str_] | None = field(default=None, repr=False)
    """Speaker of each predicate."""
    per_predicate: NDArray[np.float64] | None = field(default=None, repr=False)
    """Isolation rate of each predicate over the (draw, fold)s (their mean is ``value``)."""

    @property
    def chance(self) -> float:
        """(1 - 1/N)^(N-1): a random predicate of mean 1/N isolates with this probability."""
        n = self.n_speakers
        return (1.0 - 1.0 / n) ** (n - 1)

    def to_dict(self) -> dict[str, float | int]:
        """The CLI's ``singling_out`` block."""
        return {
            "value": self.value,
            "chance": self.chance,
            "n_speakers": self.n_speakers,
            "folds": self.folds,
            "n_draws": self.n_draws,
            "n_excluded_speakers": self.n_excluded_speakers,
        }


MapBlocks = Callable[[Callable[..., Any], tuple[Any, ...], list[tuple[Any, ...]]], list[Any]]
"""``map_blocks(fn, shared, blocks)``: ``fn(*block, *shared)`` for each block, in order."""


def singling_out_draws(
    speakers: ArrayLike,
    *,
    max_per_speaker: int | None = 10,
    n_draws: int = 5,
    seed: int = 0,
    shuffle: bool = True,
) -> list[NDArray[np.int64]]:
    """Which trial rows each draw of :func:`singling_out` uses, in order, per draw.

    Speakers with fewer than 2 rows are left out. With ``shuffle`` each draw takes, for every
    speaker (in sorted order), min(K_s, ``max_per_speaker``) of its rows in a random order
    (``numpy.random.default_rng(seed)``; the paper draws 10 x L utterances at random and
    repeats the draw); without it, one draw takes the first ones in file order.

    Examples
    --------
    >>> [d.tolist() for d in singling_out_draws(list("abab"), shuffle=False)]
    [[0, 2, 1, 3]]
    """
    spk = np.asarray(speakers).astype(str).ravel()
    if max_per_speaker is not None and max_per_speaker < 2:
        raise VoxMetricsInputError("`max_per_speaker` must be None or at least 2.")
    if n_draws < 1:
        raise VoxMetricsInputError("`n_draws` must be >= 1.")
    _, inverse, counts = np.unique(spk, return_inverse=True, return_counts=True)
    # each speaker's rows in file order, speakers in sorted order
    rows_of = np.split(np.argsort(inverse, kind="stable"), np.cumsum(counts)[:-1])
    rows_of = [r for r in rows_of if r.size >= 2]
    cap = max_per_speaker or max((r.size for r in rows_of), default=0)
    if not shuffle:
        return [np.concatenate([r[:cap] for r in rows_of]) if rows_of else np.zeros(0, int)]
    rng = np.random.default_rng(seed)
    return [
        np.concatenate([rng.permutation(r)[:cap] for r in rows_of]) if rows_of else np.zeros(0, int)
        for _ in range(n_draws)
    ]


@single_blas_thread()
def singling_out(
    enrol_embeddings: ArrayLike,
    enrol_speakers: ArrayLike,
    trial_embeddings: ArrayLike,
    trial_speakers: ArrayLike,
    *,
    max_per_speaker: int | None = 10,
    n_draws: int = 5,
    seed: int = 0,
    shuffle: bool = True,
    map_blocks: MapBlocks | None = None,
) -> SinglingOutResult:
    """Singling out by threshold predicates on enrolment profiles (Vauquier et al. 2025).

    Predicates are the enrolled speakers' profiles. The population is the N trial speakers
    with at least 2 trial embeddings (the others are left out and counted, as in the paper).
    Each draw (:func:`singling_out_draws`) uses K_s = min(#embeddings, ``max_per_speaker``)
    embeddings of speaker s, in a random order. Fold f = 0..F-1 (F = max K_s, 10 in the paper)
    holds out embedding f mod K_s of every speaker; the others are the calibration set. For
    predicate e (M = K_e - 1) the threshold is the midpoint of the M-th and (M+1)-th highest
    cosine scores of e's profile against the calibration embeddings, so the predicate is true
    for M of them (a rate of about 1/N). Isolation succeeds when exactly one held-out
    embedding scores strictly above the threshold, whoever it belongs to. The value is the
    mean over draws, folds and predicates.

    BLAS runs on one thread (:func:`~voxmetrics.metrics.parallel.single_blas_thread`), as in
    :func:`~voxmetrics.evaluation.evaluate`: the page's curves of many small populations
    then cost no spinning threads, and their scores are those of the study report's.

    Parameters
    ----------
    enrol_embeddings : array_like, shape (U_e, d)
    enrol_speakers : array_like of str, shape (U_e,)
    trial_embeddings : array_like, shape (U_t, d)
    trial_speakers : array_like of str, shape (U_t,)
    max_per_speaker : int or None, default 10
        Embeddings used per speaker and draw (the paper's 10; None = all).
    n_draws : int, default 5
        Random draws of the embeddings used (the paper's 5).
    seed : int
        Seed of the draws.
    shuffle : bool, default True
        False: one draw of the first embeddings of each speaker in file order (deterministic).
    map_blocks : callable, optional
        ``map_blocks(fn, shared, blocks)`` -> ``[fn(*block, *shared) for block in blocks]``,
        computed anywhere (e.g. on Dask workers, :mod:`voxmetrics.evaluation.blockwise`); the blocks
        are rows of predicates (:func:`singling_out_isolations`). Default: in this process.

    Returns
    -------
    SinglingOutResult

    Examples
    --------
    Two speakers far apart, two trial embeddings each: every predicate isolates.

    >>> enrol = [[1, 0], [0, 1]]
    >>> trial = [[1, 0.1], [1, -0.1], [0.1, 1], [-0.1, 1]]
    >>> singling_out(enrol, ["a", "b"], trial, ["a", "a", "b", "b"]).value
    1.0
    """
    t_emb = np.asarray(trial_embeddings, dtype=np.float64)
    t_spk = np.asarray(trial_speakers).astype(str).ravel()
    e_spk = np.asarray(enrol_speakers).astype(str).ravel()
    if t_emb.ndim != 2 or t_emb.shape[0] != t_spk.size:
        raise VoxMetricsInputError("trial embeddings need one speaker label per row.")
    labels, profiles = speaker_profiles(enrol_embeddings, e_spk)
    all_speakers, all_counts = np.unique(t_spk, return_counts=True)
    n_excluded = int((all_counts < 2).sum())
    pop = all_speakers[all_counts >= 2]
    if pop.size < 2:
        few = all_speakers[all_counts < 2]
        raise VoxMetricsInputError(
            f"singling out needs at least 2 trial speakers with at least 2 trial embeddings "
            f"each (one is held out, the others calibrate); found {pop.size}"
            + (f", and {few.size} with one only (e.g. '{few[0]}')" if few.size else "")
            + "."
        )
    has_trials = np.isin(labels, pop)
    if not has_trials.any():
        raise VoxMetricsInputError(
            "no enrolled speaker has trial embeddings; predicates need K_e trial embeddings."
        )
    labels, profiles = labels[has_trials], profiles[has_trials]
    t_unit = _unit(t_emb)
    draws = singling_out_draws(
        t_spk, max_per_speaker=max_per_speaker, n_draws=n_draws, seed=seed, shuffle=shuffle
    )
    # predicates are independent: blocks of rows bound the memory (a block's scores and the
    # few copies the folds make: a quarter of the usual block each)
    blocks = [(profiles[r], labels[r]) for r in row_blocks(labels.size, 4 * t_unit.shape[0])]
    shared = (t_unit, t_spk, pop, draws)
    if map_blocks is None:
        parts = [singling_out_isolations(*block, *shared) for block in blocks]
    else:
        parts = map_blocks(singling_out_isolations, shared, blocks)
    return singling_out_from_isolations(parts, labels, pop, draws, n_excluded)


def singling_out_isolations(
    profiles: NDArray[np.float64],
    predicates: NDArray[np.str_],
    trial_unit: NDArray[np.float64],
    trial_speakers: NDArray[np.str_],
    population: NDArray[np.str_],
    draws: Sequence[NDArray[np.int64]],
) -> tuple[NDArray[np.bool_], int]:
    """Which of these predicates isolate, per fold of each draw (the work of :func:`singling_out`).

    ``profiles`` (unit norm) and ``predicates`` are some rows of the enrolled speakers'
    profiles and their labels; ``trial_unit`` the unit-norm trial embeddings, ``population``
    the sorted trial speakers with at least 2 of them and ``draws`` their
    :func:`singling_out_draws`. Returns a (predicates x folds of every draw) boolean matrix
    and the folds of the last draw. Predicates are independent: blocks of them computed
    anywhere (one machine, Dask workers) and put together with
    :func:`singling_out_from_isolations` give the same result, bit for bit when cut on the same
    rows (the scores are a matrix product).

    Examples
    --------
    >>> pop = np.array(["a", "b"])
    >>> t = np.array([[1, 0.1], [1, -0.1], [0.1, 1], [-0.1, 1]])
    >>> t /= np.linalg.norm(t, axis=1, keepdims=True)
    >>> draws = singling_out_draws(["a", "a", "b", "b"], shuffle=False)
    >>> iso, folds = singling_out_isolations(np.eye(2), pop, t, np.array(list("aabb")), pop, draws)
    >>> iso.tolist(), folds
    ([[True, True], [True, True]], 2)
    """
    scores_all = profiles @ trial_unit.T  # predicates x trial embeddings
    out: list[NDArray[np.bool_]] = []
    folds = 0
    top: _TopScores | None = None
    _, codes = np.unique(trial_speakers, return_inverse=True)  # in sorted order of the labels
    for chosen in draws:
        spk = codes[chosen]
        _, inverse, counts = np.unique(spk, return_inverse=True, return_counts=True)
        m = counts[np.searchsorted(population, predicates)] - 1  # M = K_e - 1 per predicate
        # position of each chosen embedding within its speaker, in the drawn order
        order = np.argsort(inverse, kind="stable")
        position = np.empty(spk.size, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        position[order] = np.arange(spk.size) - np.repeat(starts, counts)
        columns = np.sort(chosen)
        if top is None or not np.array_equal(columns, top.columns):
            top = _TopScores(scores_all, columns, int(m.max(initial=0)) + 1 + _TOP_MARGIN)
        folds = int(counts.max())
        k_of = counts[inverse]  # K_s of each chosen embedding's speaker
        # folds a few at a time: each holds out one embedding of every speaker
        step = max(1, _FOLD_CELLS // (top.idx.size + trial_unit.shape[0]))
        for start in range(0, folds, step):
            fs = np.arange(start, min(folds, start + step))
            at = np.nonzero(position[None, :] == fs[:, None] % k_of[None, :])
            out_now = chosen[at[1]].reshape(fs.size, -1)  # fold x speaker, in drawn order
            held = np.zeros((fs.size, trial_unit.shape[0]), dtype=bool)
            held[at[0], out_now.ravel()] = True
            out.append(top.isolations(held, m, out_now))
    return np.concatenate(out, axis=1), folds


_FOLD_CELLS = 2_000_000
"""Folds x (predicates x kept scores + trial embeddings) handled at once: the memory bound."""

_TOP_MARGIN = 24
"""Scores kept per predicate beyond the M + 1 its thresholds need when none is held out."""


class _TopScores:
    """The highest scores of each predicate among some columns, sorted, for every fold.

    A fold's threshold of predicate e is the midpoint of the M-th and (M+1)-th highest of e's
    scores in the draw that are not held out. Those are the M-th and (M+1)-th of the kept
    highest scores that are not held out whenever at least M + 1 of them are not; the others
    (held-out embeddings crowding the top) are computed from all the row's scores. The values
    are the same order statistics either way, ties included, so the thresholds equal those of
    a partition of every fold's calibration scores, bit for bit. Draws of the same embeddings
    in another order share one instance.
    """

    def __init__(self, scores: NDArray[np.float64], columns: NDArray[np.int64], keep: int):
        self.scores, self.columns = scores, columns
        # columns are sorted and distinct: all of them is the matrix itself (no copy)
        sub = scores if columns.size == scores.shape[1] else scores[:, columns]
        keep = min(columns.size, keep)
        if keep < columns.size:
            at = np.argpartition(-sub, keep - 1, axis=1)[:, :keep]
        else:
            at = np.broadcast_to(np.arange(keep), sub.shape).copy()
        vals = np.take_along_axis(sub, at, axis=1)
        desc = np.argsort(-vals, axis=1, kind="stable")
        self.idx = columns[np.take_along_axis(at, desc, axis=1)]  # columns of ``scores``
        self.vals = np.take_along_axis(vals, desc, axis=1)

    def isolations(
        self, held: NDArray[np.bool_], m: NDArray[np.int64], out_now: NDArray[np.int64]
    ) -> NDArray[np.bool_]:
        """Whether exactly one held-out score is above each threshold, for a batch of folds.

        ``held`` (folds x all columns of ``scores``) marks each fold's held-out columns,
        ``out_now`` (folds x speakers) lists them; returns predicates x folds. A fold's
        threshold of predicate e is the midpoint of the M-th and (M+1)-th highest of e's
        scores in the columns that are not held out. A row whose threshold comes from its
        kept scores (at least M + 1 of them calibrate) has every score above the threshold
        among them: the threshold is at least the (M+1)-th kept score, and a score not kept is
        at most the last kept one. So the held-out scores above it are counted among the kept
        ones, the same comparisons as against every held-out column (``scores[:, out_now] >
        threshold``); the other rows take their thresholds from all their columns and
        compare every held-out column.
        """
        rows = np.arange(m.size)
        held_kept = held[:, self.idx]  # folds x predicates x kept
        kept = np.cumsum(~held_kept, axis=2)  # calibration scores among the first j + 1
        first = np.argmax(kept >= m[None, :, None], axis=2)
        second = np.argmax(kept >= m[None, :, None] + 1, axis=2)
        threshold = (self.vals[rows, first] + self.vals[rows, second]) / 2
        above = ((self.vals[None] > threshold[:, :, None]) & held_kept).sum(axis=2)
        shorts = kept[:, :, -1] < m + 1
        for f in np.flatnonzero(shorts.any(axis=1)):
            short = np.flatnonzero(shorts[f])
            mm = m[short]
            kth = np.unique(np.concatenate([mm - 1, mm]))
            calibration = self.columns[~held[f, self.columns]]
            cal = -np.partition(-self.scores[np.ix_(short, calibration)], kth, axis=1)
            at = np.arange(short.size)
            low = (cal[at, mm - 1] + cal[at, mm]) / 2
            above[f, short] = (self.scores[np.ix_(short, out_now[f])] > low[:, None]).sum(axis=1)
        return (above == 1).T


def singling_out_from_isolations(
    parts: Sequence[tuple[NDArray[np.bool_], int]],
    predicates: NDArray[np.str_],
    population: NDArray[np.str_],
    draws: Sequence[NDArray[np.int64]],
    n_excluded: int,
) -> SinglingOutResult:
    """:class:`SinglingOutResult` from :func:`singling_out_isolations` of blocks of predicates.

    ``parts`` in the order of ``predicates``; ``n_excluded`` trial speakers had fewer than 2
    embeddings.
    """
    iso = np.concatenate([p[0] for p in parts], axis=0)
    folds = parts[-1][1]
    values = iso.mean(axis=0)  # per fold (and draw): the fraction of predicates isolating
    return SinglingOutResult(
        value=float(values.mean()),
        n_speakers=int(population.size),
        n_predicates=int(predicates.size),
        folds=folds,
        per_fold=values,
        n_draws=len(draws),
        n_excluded_speakers=n_excluded,
        predicates=predicates,
        per_predicate=iso.sum(axis=1) / values.size,
    )


def average_consecutive(
    embeddings: ArrayLike, speakers: ArrayLike, length: int
) -> tuple[NDArray[np.float64], NDArray[np.str_]]:
    """Conversation length L: average each speaker's embeddings in consecutive groups of L.

    Groups follow the given order within each speaker; an incomplete last group is dropped.
    Embeddings are L2-normalised before averaging and the averages again after.

    Examples
    --------
    >>> e, s = average_consecutive([[1, 0], [0, 1], [1, 0], [2, 0], [0, 3]],
    ...                            ["a", "a", "a", "b", "b"], 2)
    >>> np.round(e, 4).tolist(), s.tolist()
    ([[0.7071, 0.7071], [0.7071, 0.7071]], ['a', 'b'])
    """
    if length < 1:
        raise VoxMetricsInputError("the conversation length L must be >= 1.")
    e = _unit(np.asarray(embeddings, dtype=np.float64))
    spk = np.asarray(speakers).astype(str).ravel()
    _, first, inverse, counts = np.unique(
        spk, return_index=True, return_inverse=True, return_counts=True
    )
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)  # order of first appearance
    order = np.argsort(rank[inverse], kind="stable")  # by speaker, file order within each
    sizes = counts[np.argsort(rank, kind="stable")]  # rows per speaker, in that order
    within = np.arange(spk.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    kept = order[within < np.repeat(sizes // length * length, sizes)]  # whole groups only
    if not kept.size:
        raise VoxMetricsInputError(f"no speaker has {length} embeddings to average.")
    grouped = e[kept].reshape(kept.size // length, length, -1).mean(axis=1)
    return _unit(grouped), spk[kept[::length]]


def singling_out_embeddings(
    es: EmbeddingSet,
    *,
    split: str = "eval",
    system: str | None = None,
    length: int = 1,
    **options: Any,
) -> SinglingOutResult:
    """:func:`singling_out` on one split of an EmbeddingSet, optionally with conversation length.

    Trial embeddings are taken in file order; with ``length`` L > 1 they are first averaged in
    consecutive groups of L per speaker (:func:`average_consecutive`). ``options`` go to
    :func:`singling_out` (``max_per_speaker``, ``n_draws``, ``seed``, ``shuffle``).
    """
    enrol, trial = es.roles(split, system=system)
    spk = es.meta["speaker"].to_numpy().astype(str)
    t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
    return singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk, **options)


@dataclass(frozen=True)
class ConversationLengthCurve:
    """Linkability and singling out against the conversation length L (Vauquier et al. 2025)."""

    lengths: NDArray[np.int64] = field(repr=False)
    """The L values."""
    linkability: NDArray[np.float64] = field(repr=False)
    """Linkability of the L-averaged trial embeddings against all enrolled profiles."""
    singling_out: NDArray[np.float64] = field(repr=False)
    """Singling out of the L-averaged trial embeddings (NaN where fewer than 2 groups)."""
    n_enrolled: int
    """N enrolled profiles (linkability chance 1/N)."""
    n_speakers: int
    """Trial speakers (singling-out chance (1 - 1/N)^(N-1))."""

    @property
    def linkability_chance(self) -> float:
        """1 / N enrolled."""
        return 1.0 / self.n_enrolled

    @property
    def singling_out_chance(self) -> float:
        """(1 - 1/N)^(N-1) for the N trial speakers."""
        n = self.n_speakers
        return (1.0 - 1.0 / n) ** (n - 1)


def conversation_length_curve(
    es: EmbeddingSet,
    lengths: ArrayLike = (1, 2, 4),
    *,
    split: str = "eval",
    system: str | None = None,
    seed: int = 0,
) -> ConversationLengthCurve:
    """Linkability and singling out for several conversation lengths L on one split.

    ``seed`` seeds the utterance draws of :func:`singling_out`.
    """
    enrol, trial = es.roles(split, system=system)
    spk = es.meta["speaker"].to_numpy().astype(str)
    labels, profiles = speaker_profiles(es.embeddings[enrol], spk[enrol])
    ls = np.asarray(lengths, dtype=np.int64).ravel()
    link, so = np.full(ls.size, np.nan), np.full(ls.size, np.nan)
    n_speakers = np.unique(spk[trial]).size
    for k, length in enumerate(ls):
        t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], int(length))
        enrolled = np.isin(t_spk, labels)
        scores = t_emb[enrolled] @ profiles.T
        link[k] = linkability(scores, np.searchsorted(labels, t_spk[enrolled]))
        try:
            so[k] = singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk, seed=seed).value
        except VoxMetricsInputError:
            pass  # fewer than 2 groups per speaker at this L: no held-out fold
    return ConversationLengthCurve(
        lengths=ls,
        linkability=link,
        singling_out=so,
        n_enrolled=int(labels.size),
        n_speakers=int(n_speakers),
    )


@dataclass(frozen=True)
class SinglingOutCurve:
    """Singling out against the population size N (Vauquier et al. 2025, figure 1)."""

    n: NDArray[np.int64] = field(repr=False)
    """Population sizes, ascending, 2 <= n <= N."""
    value: NDArray[np.float64] = field(repr=False)
    """Mean isolation probability over the random populations of each size."""
    sd: NDArray[np.float64] = field(repr=False)
    """Standard deviation over those populations."""
    n_draws: int
    """Random populations per size (one at the full size)."""

    @property
    def chance(self) -> NDArray[np.float64]:
        """(1 - 1/n)^(n-1) for each population size."""
        return (1.0 - 1.0 / self.n) ** (self.n - 1)


def singling_out_curve(
    es: EmbeddingSet,
    n: ArrayLike | None = None,
    *,
    n_draws: int = 20,
    split: str = "eval",
    system: str | None = None,
    seed: int = 0,
    length: int = 1,
    clip: bool = False,
    progress: Callable[[float, str], None] | None = None,
) -> SinglingOutCurve:
    """Singling out on random populations of n speakers (Vauquier et al. 2025, figure 1 row 1).

    The trial embeddings are first averaged in groups of ``length`` L per speaker
    (:func:`average_consecutive`); speakers with fewer than 2 groups (2 L utterances) are left
    out, as in the paper. For each size n, ``n_draws`` random sets of n remaining speakers that
    are also enrolled are drawn; :func:`singling_out` runs on their trial embeddings with their
    enrolment profiles as the predicates. At the full size there is one population.

    Parameters
    ----------
    es : EmbeddingSet
    n : array_like of int, optional
        Population sizes; default :func:`linkability_grid` of the number of speakers.
    n_draws : int
        Random populations per size.
    split, system :
        Which utterances (as :meth:`EmbeddingSet.roles`).
    seed : int
        Seed of the draws.
    length : int
        Conversation length L.
    clip : bool
        Drop the sizes in ``n`` above the number of usable speakers (and use all of them
        when none is left) instead of refusing them.
    progress : callable(fraction, message), optional
        Called before each population size (the work grows with the size squared, so the
        fraction is the share of the sizes' draws x size^2 done).
    """
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
    groups, counts = np.unique(t_spk, return_counts=True)
    speakers = np.intersect1d(spk[enrol], groups[counts >= 2])
    if speakers.size < 2:
        raise VoxMetricsInputError(
            f"singling out at L = {length} needs at least 2 enrolled speakers with 2 x L = "
            f"{2 * length} trial embeddings each; found {speakers.size}."
        )
    grid = linkability_grid(speakers.size) if n is None else np.unique(np.asarray(n, int))
    if clip:
        grid = grid[(grid >= 2) & (grid <= speakers.size)]
        grid = grid if grid.size else np.asarray([speakers.size])
    if grid.size == 0 or grid.min() < 2 or grid.max() > speakers.size:
        raise VoxMetricsInputError(f"population sizes must lie in 2..{speakers.size}.")
    if n_draws < 1:
        raise VoxMetricsInputError("`n_draws` must be >= 1.")
    rng = np.random.default_rng(seed)
    values, sds = np.empty(grid.size), np.empty(grid.size)
    work = np.where(grid == speakers.size, 1, n_draws) * grid.astype(np.float64) ** 2
    done = np.concatenate([[0.0], np.cumsum(work)]) / work.sum()
    # each utterance's index in ``speakers`` (-1 if not there): populations as integer masks
    e_code, t_code = _codes(spk, speakers), _codes(t_spk, speakers)
    for g, size in enumerate(grid):
        if progress is not None:
            progress(float(done[g]), f"singling out of {n_draws} populations of {size}")
        draws = 1 if size == speakers.size else n_draws
        vals = []
        for _ in range(draws):
            chosen = rng.choice(speakers, size=int(size), replace=False)
            member = np.zeros(speakers.size + 1, dtype=bool)  # the last: not a speaker
            member[np.searchsorted(speakers, chosen)] = True
            e_rows = enrol & member[e_code]  # = np.isin(spk, chosen)
            t_rows = member[t_code]
            vals.append(
                singling_out(
                    es.embeddings[e_rows], spk[e_rows], t_emb[t_rows], t_spk[t_rows], seed=seed
                ).value
            )
        values[g], sds[g] = float(np.mean(vals)), float(np.std(vals))
    return SinglingOutCurve(n=grid.astype(np.int64), value=values, sd=sds, n_draws=n_draws)


def _sub_progress(
    progress: Callable[[float, str], None], start: float, share: float, prefix: str
) -> Callable[[float, str], None]:
    """``progress`` of a step that takes ``share`` of the work from ``start`` on."""

    def step(fraction: float, message: str) -> None:
        progress(start + share * fraction, prefix + message)

    return step


def _codes(labels: NDArray[np.str_], sorted_unique: NDArray[np.str_]) -> NDArray[np.int64]:
    """Index of each label in ``sorted_unique``, -1 for a label not in it."""
    at = np.searchsorted(sorted_unique, labels).clip(max=max(sorted_unique.size - 1, 0))
    return np.where(sorted_unique[at] == labels, at, -1)


@dataclass(frozen=True)
class EERCurve:
    """EER of the pooled scores against the number N' of enrolled candidates."""

    n: NDArray[np.int64] = field(repr=False)
    """The N' values, ascending, 2 <= N' <= N."""
    eer: NDArray[np.float64] = field(repr=False)
    """Mean over the draws of the ROCCH-EER with N' candidates per trial."""
    sd: NDArray[np.float64] = field(repr=False)
    """Standard deviation over the draws (0 at N' = N, which needs no draw)."""
    n_draws: int
    """Random candidate sets per trial and N'."""

    @property
    def one_minus_eer(self) -> NDArray[np.float64]:
        """1 - EER, the quantity plotted by Vauquier et al. 2025 (chance 0.5)."""
        return 1.0 - self.eer

    def to_list(self) -> list[list[float]]:
        """``[[n, eer, sd], ...]``."""
        return [
            [int(n), float(e), float(d)] for n, e, d in zip(self.n, self.eer, self.sd, strict=True)
        ]


_FLOYD_MAX = 64
"""Up to this many candidates per trial are drawn by Floyd's algorithm, beyond by sorting."""


def other_candidates(
    rng: np.random.Generator, targets: ArrayLike, n_enrolled: int, k: int
) -> NDArray[np.int64]:
    """For each trial, k distinct enrolled columns other than its own, uniformly at random.

    Every k-subset of the N - 1 other columns is equally likely. Small k use Floyd's
    algorithm (k passes over the trials, each looking its draw up in a T x (N - 1) boolean
    map of the columns taken); larger k take the k smallest of N - 1 uniform keys per trial.

    Returns
    -------
    ndarray of int, shape (T, k)

    Examples
    --------
    >>> c = other_candidates(np.random.default_rng(0), [0, 3], 4, 3)
    >>> [sorted(r) for r in c.tolist()]
    [[1, 2, 3], [0, 1, 2]]
    """
    t = np.asarray(targets, dtype=np.int64).ravel()
    n = n_enrolled - 1
    if not 0 <= k <= n:
        raise VoxMetricsInputError(f"cannot draw {k} of the {n} other enrolled identities.")
    if k <= _FLOYD_MAX:
        chosen = np.empty((t.size, k), dtype=np.int64)
        taken = np.zeros((t.size, n), dtype=bool)
        rows = np.arange(t.size)
        for i, j in enumerate(range(n - k, n)):
            draw = rng.integers(0, j + 1, size=t.size)
            # Floyd: a column drawn before gives way to j, which no earlier step could draw
            chosen[:, i] = np.where(taken[rows, draw], j, draw)
            taken[rows, chosen[:, i]] = True
    else:
        chosen = np.argpartition(rng.random((t.size, n)), k - 1, axis=1)[:, :k]
    # index among the others -> enrolled column, skipping the trial's own
    return chosen + (chosen >= t[:, None])


def eer_curve(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    n: ArrayLike | None = None,
    n_draws: int = 5,
    seed: int = 0,
) -> EERCurve:
    """EER against N' enrolled candidates (Vauquier et al. 2025, figure 1 row 3).

    Definition: for each draw r and each trial i, C_i^r is a uniformly random set of N' - 1
    enrolled identities other than the trial's own speaker. EER^r(N') is the ROCCH-EER
    (:func:`~voxmetrics.metrics.eer.eer_rocch`, the paper's EER) of the pooled mated scores
    {s_i,m_i} against the pooled non-mated scores {s_ij : j in C_i^r}; EER(N') is the mean over
    the ``n_draws`` draws. At N' = N every identity is a candidate and no draw is needed. The
    mated pool does not change with N' and the non-mated pool is a random subsample, so the EER
    stays about constant: the point of the paper's figure.

    The ROC convex hull of a draw depends on its non-mated scores only through how many lie
    between consecutive distinct mated values and on each of them, so every score's place among
    the mated values is found once and each draw counts its picks
    (:func:`~voxmetrics.metrics.eer.eer_rocch_from_counts`): no pool is sorted per draw, and the
    values equal those of pooling and sorting each draw's scores, ties included.

    Parameters
    ----------
    scores, targets : array_like
        T x N matrix and target columns.
    n : array_like of int, optional
        N' values (2 <= N' <= N); default :func:`linkability_grid`.
    n_draws : int
        Draws per N' (the paper's 5).
    seed : int
        Seed of the draws.

    Examples
    --------
    >>> S = [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]]
    >>> c = eer_curve(S, [0, 0, 1, 2], n=[4])
    >>> c.to_list()
    [[4, 0.375, 0.0]]
    """
    s, t = check_matrix(scores, targets)
    n_enrolled = s.shape[1]
    grid = linkability_grid(n_enrolled) if n is None else np.asarray(n, dtype=np.int64).ravel()
    if grid.size == 0 or grid.min() < 2 or grid.max() > n_enrolled:
        raise VoxMetricsInputError(f"N' values must lie in 2..{n_enrolled} (the enrolled count).")
    if n_draws < 1:
        raise VoxMetricsInputError("`n_draws` must be >= 1.")
    grid = np.unique(grid)
    tar = s[np.arange(s.shape[0]), t]
    # the ROCCH-EER depends on the non-mated scores only through their counts in the cells
    # between the distinct mated values and at them: each draw counts its picks' cells
    values, tar_at = np.unique(tar, return_counts=True)
    cells = _tie_cells(s, values)
    n_slots = 2 * values.size + 1
    rng = np.random.default_rng(seed)
    means, sds = np.empty(grid.size), np.empty(grid.size)
    for g, m in enumerate(grid):
        if m == n_enrolled:  # every non-mated score: all the cells less the mated scores
            counts = np.bincount(cells.ravel(), minlength=n_slots)
            counts[1::2] -= tar_at
            means[g], sds[g] = _eer_of_cells(counts, tar_at), 0.0
            continue
        draws = []
        for _ in range(n_draws):
            counts = np.zeros(n_slots, dtype=np.int64)
            for rows in row_blocks(*s.shape):
                picked = other_candidates(rng, t[rows], n_enrolled, int(m) - 1)
                drawn = np.take_along_axis(cells[rows], picked, axis=1)
                counts += np.bincount(drawn.ravel(), minlength=n_slots)
            draws.append(_eer_of_cells(counts, tar_at))
        means[g], sds[g] = float(np.mean(draws)), float(np.std(draws))
    return EERCurve(n=grid, eer=means, sd=sds, n_draws=int(n_draws))


def _tie_cells(scores: NDArray[np.floating], values: NDArray[np.floating]) -> NDArray[np.integer]:
    """Cell of every score among the distinct mated ``values`` (ascending, same dtype).

    ``2k`` for a score strictly between ``values[k - 1]`` and ``values[k]`` (cell k of
    :class:`~voxmetrics.metrics.pools.RunCounts`, k = 0..K), ``2k + 1`` for a score equal to
    ``values[k]``: exact comparisons in the scores' dtype, so ties fall where a sort puts them.
    """
    out = np.empty(scores.shape, dtype=np.min_scalar_type(2 * values.size))
    for rows in row_blocks(*scores.shape, CHUNK_ELEMENTS):
        block = scores[rows]
        at = np.searchsorted(values, block, side="left")
        equal = values[np.minimum(at, values.size - 1)] == block
        out[rows] = 2 * at + equal
    return out


def _eer_of_cells(counts: NDArray[np.int64], tar_at: NDArray[np.int64]) -> float:
    """ROCCH-EER of the non-mated scores counted per cell (:func:`_tie_cells`) and the targets."""
    rc = RunCounts(
        cells=counts[0::2].astype(np.float64),
        tar_at=tar_at.astype(np.float64),
        non_at=counts[1::2].astype(np.float64),
    )
    return eer_rocch_from_counts(rc)


@dataclass(frozen=True)
class LegalLengthResult:
    """Vauquier et al. 2025's three curves at one conversation length L."""

    length: int
    """L: trial utterances averaged into one trial embedding."""
    n_trials: int
    """Averaged trial embeddings of enrolled speakers (the rows of the score matrix)."""
    linkability: LinkabilityCurve
    """Linkability against N' (exact expectation; figure 1 row 2)."""
    eer: EERCurve
    """EER against N' (row 3 plots 1 - EER)."""
    singling_out: SinglingOutCurve | None
    """Singling out against the population size N (row 1); None when fewer than 2 speakers
    have 2 L trial utterances."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the three curves."""
        so = self.singling_out
        return {
            "length": self.length,
            "n_trials": self.n_trials,
            "linkability_vs_n": self.linkability.to_list(),
            "eer_vs_n": self.eer.to_list(),
            "singling_out_vs_n": None
            if so is None
            else [
                [int(a), float(b), float(c)] for a, b, c in zip(so.n, so.value, so.sd, strict=True)
            ],
        }


@dataclass(frozen=True)
class LegalEvaluation:
    """Vauquier et al. 2025's evaluation of one condition: figure 1, one column per L."""

    results: tuple[LegalLengthResult, ...]
    """One entry per conversation length that could be evaluated, ascending L."""
    skipped: tuple[tuple[int, str], ...] = ()
    """(L, why) for the lengths that could not (too few utterances per speaker)."""
    n_draws: int = 5
    """Random draws behind the sampled curves."""

    @property
    def lengths(self) -> list[int]:
        """The evaluated L values."""
        return [r.length for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the ``legal`` command."""
        return {
            "lengths": self.lengths,
            "n_draws": self.n_draws,
            "results": [r.to_dict() for r in self.results],
            "skipped": [{"length": length, "reason": why} for length, why in self.skipped],
        }


def legal_evaluation(
    es: EmbeddingSet,
    lengths: ArrayLike = (1, 3, 30),
    *,
    n: ArrayLike | None = None,
    n_draws: int = 5,
    seed: int = 0,
    split: str = "eval",
    system: str | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> LegalEvaluation:
    """Singling out, linkability and EER against the number of speakers, for each L.

    Vauquier et al. 2025's protocol (their figure 1): for each conversation length L the trial
    embeddings are averaged in groups of L per speaker (:func:`average_consecutive`) and
    scored against the enrolment profiles; linkability (:func:`linkability_curve`) and EER
    (:func:`eer_curve`) are computed against the number N' of enrolled candidates and singling
    out (:func:`singling_out_curve`) against the population size N. Lengths that leave no
    trial are skipped and listed.

    Parameters
    ----------
    es : EmbeddingSet
    lengths : array_like of int
        Conversation lengths L (the paper's 1, 3 and 30).
    n : array_like of int, optional
        N' and N values (each clipped to what the data allow); default
        :func:`linkability_grid`.
    n_draws : int
        Random draws of candidates (EER) and of populations (singling out).
    seed : int
        Seed of every draw.
    split, system :
        Which utterances (as :meth:`EmbeddingSet.roles`).
    progress : callable(fraction, message), optional
        Called as each length's singling out advances (a length's share: 1 / the lengths).
    """
    ls = np.unique(np.asarray(lengths, dtype=np.int64).ravel())
    if ls.size == 0 or ls.min() < 1:
        raise VoxMetricsInputError("conversation lengths L must be integers >= 1.")
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    labels, profiles = speaker_profiles(es.embeddings[enrol], spk[enrol])
    grid = None if n is None else np.unique(np.asarray(n, dtype=np.int64).ravel())
    results, skipped = [], []
    for k, length in enumerate(ls.tolist()):
        step = None
        if progress is not None:
            step = _sub_progress(progress, k / ls.size, 1 / ls.size, f"L = {length}: ")
            step(0.0, "averaging")
        try:
            t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
        except VoxMetricsInputError as exc:
            skipped.append((length, str(exc)))
            continue
        enrolled = np.isin(t_spk, labels)
        if not enrolled.any():
            skipped.append((length, "no trial speaker is enrolled."))
            continue
        scores = t_emb[enrolled] @ profiles.T
        targets = np.searchsorted(labels, t_spk[enrolled])
        n_link = None if grid is None else grid[(grid >= 2) & (grid <= labels.size)]
        if n_link is not None and n_link.size == 0:
            n_link = np.asarray([labels.size])
        try:
            so: SinglingOutCurve | None = singling_out_curve(
                es,
                None if grid is None else grid,
                n_draws=n_draws,
                split=split,
                system=system,
                seed=seed,
                length=length,
                clip=True,
                progress=step,
            )
        except VoxMetricsInputError:
            so = None  # fewer than 2 speakers with 2 L trial utterances
        results.append(
            LegalLengthResult(
                length=length,
                n_trials=int(enrolled.sum()),
                linkability=linkability_curve(scores, targets, n=n_link),
                eer=eer_curve(scores, targets, n=n_link, n_draws=n_draws, seed=seed),
                singling_out=so,
            )
        )
    if not results:
        raise VoxMetricsInputError(
            "no conversation length could be evaluated: "
            + "; ".join(f"L = {length}: {why}" for length, why in skipped)
        )
    return LegalEvaluation(results=tuple(results), skipped=tuple(skipped), n_draws=n_draws)
