"""Legally validated linkage metrics (paper 001; metrics.md section 5)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from voxmetrics.data.model import EmbeddingSet, unit_rows
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.ranks import target_ranks

__all__ = [
    "ConversationLengthCurve",
    "LinkabilityCurve",
    "SinglingOutCurve",
    "SinglingOutResult",
    "average_consecutive",
    "conversation_length_curve",
    "linkability",
    "linkability_curve",
    "linkability_curve_from_ranks",
    "linkability_grid",
    "singling_out",
    "singling_out_curve",
    "singling_out_embeddings",
    "speaker_profiles",
]


def linkability(scores: ArrayLike, targets: ArrayLike) -> float:
    """Fraction of trials whose mated score is strictly above every non-mated score.

    Linkability = mean_i [s_i,m_i > max_{j != m_i} s_ij] (paper 001, eq. 2; metrics.md
    section 5), i.e. the share of trials whose target has rank 1. A tie with a non-mated score
    counts against the attacker. Chance level is 1/N.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.

    Returns
    -------
    float
        Linkability in [0, 1].

    Examples
    --------
    >>> linkability([[0.9, 0.8], [0.5, 0.5]], [0, 1])
    0.5
    """
    return float((target_ranks(scores, targets) == 1).mean())


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
    """Linkability as a function of the number N' of enrolled candidates (metrics.md 5)."""

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
) -> LinkabilityCurve:
    """Linkability against N' enrolled candidates, by exact expectation (metrics.md 5).

    For trial i with b_i = #{j != m_i : s_ij >= s_i,m_i} (ties against the attacker), a random
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
    return linkability_curve_from_ranks(
        target_ranks(s, t), s.shape[1], n=n, n_draws=n_draws, seed=seed
    )


def linkability_curve_from_ranks(
    ranks: NDArray[np.int64],
    n_enrolled: int,
    *,
    n: ArrayLike | None = None,
    n_draws: int = 0,
    seed: int = 0,
) -> LinkabilityCurve:
    """:func:`linkability_curve` from the target ranks (1..N) of the trials.

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
    """Singling out (predicate singling out, paper 001 eq. 2; metrics.md section 5)."""

    value: float
    """Probability of isolation, mean over predicates and folds."""
    n_speakers: int
    """N, the trial speakers (the population one entry each is drawn from)."""
    n_predicates: int
    """Enrolled speakers used as predicates."""
    folds: int
    """F = min_s K_s: fold f holds out the f-th trial embedding of every speaker."""
    per_fold: NDArray[np.float64] = field(repr=False)
    """Isolation rate of each fold."""

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
        }


def singling_out(
    enrol_embeddings: ArrayLike,
    enrol_speakers: ArrayLike,
    trial_embeddings: ArrayLike,
    trial_speakers: ArrayLike,
) -> SinglingOutResult:
    """Singling out by threshold predicates on enrolment profiles (metrics.md section 5).

    Predicates are the enrolled speakers' profiles. The population is the N trial speakers,
    speaker s having K_s trial embeddings in the given order. Fold f = 0..F-1 (F = min K_s)
    holds out the f-th embedding of every speaker; the others are the calibration set. For
    predicate e (with K_e trial embeddings, M = K_e - 1) the threshold is the midpoint of the
    M-th and (M+1)-th highest cosine scores of e's profile against the calibration embeddings,
    so the predicate is true for M of them (a rate of about 1/N). Isolation succeeds when
    exactly one held-out embedding scores strictly above the threshold, whoever it belongs to.

    Parameters
    ----------
    enrol_embeddings : array_like, shape (U_e, d)
    enrol_speakers : array_like of str, shape (U_e,)
    trial_embeddings : array_like, shape (U_t, d)
    trial_speakers : array_like of str, shape (U_t,)

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
    pop, inverse = np.unique(t_spk, return_inverse=True)
    if pop.size < 2:
        raise VoxMetricsInputError("singling out needs at least 2 trial speakers.")
    counts = np.bincount(inverse)
    folds = int(counts.min())
    if folds < 2:
        raise VoxMetricsInputError(
            f"singling out needs at least 2 trial embeddings per speaker (speaker "
            f"'{pop[counts.argmin()]}' has {folds}): one is held out, the others calibrate."
        )
    has_trials = np.isin(labels, pop)
    if not has_trials.any():
        raise VoxMetricsInputError(
            "no enrolled speaker has trial embeddings; predicates need K_e trial embeddings."
        )
    labels, profiles = labels[has_trials], profiles[has_trials]
    m = counts[np.searchsorted(pop, labels)] - 1  # M = K_e - 1 per predicate
    # position of each trial embedding within its speaker, in the given order
    order = np.argsort(inverse, kind="stable")
    position = np.empty(t_spk.size, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position[order] = np.arange(t_spk.size) - np.repeat(starts, counts)
    scores = profiles @ _unit(t_emb).T  # predicates x trial embeddings
    per_fold = np.empty(folds)
    rows = np.arange(labels.size)
    for f in range(folds):
        held = position == f
        cal = np.sort(scores[:, ~held], axis=1)[:, ::-1]  # descending per predicate
        threshold = (cal[rows, m - 1] + cal[rows, m]) / 2
        above = (scores[:, held] > threshold[:, None]).sum(axis=1)
        per_fold[f] = (above == 1).mean()
    return SinglingOutResult(
        value=float(per_fold.mean()),
        n_speakers=int(pop.size),
        n_predicates=int(labels.size),
        folds=folds,
        per_fold=per_fold,
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
    out_e, out_s = [], []
    for label in dict.fromkeys(spk.tolist()):  # speakers in order of first appearance
        rows = np.flatnonzero(spk == label)
        n_groups = rows.size // length
        if n_groups:
            grouped = e[rows[: n_groups * length]].reshape(n_groups, length, -1).mean(axis=1)
            out_e.append(_unit(grouped))
            out_s += [label] * n_groups
    if not out_e:
        raise VoxMetricsInputError(f"no speaker has {length} embeddings to average.")
    return np.concatenate(out_e), np.asarray(out_s)


def singling_out_embeddings(
    es: EmbeddingSet, *, split: str = "eval", system: str | None = None, length: int = 1
) -> SinglingOutResult:
    """:func:`singling_out` on one split of an EmbeddingSet, optionally with conversation length.

    Trial embeddings are taken in file order; with ``length`` L > 1 they are first averaged in
    consecutive groups of L per speaker (:func:`average_consecutive`).
    """
    enrol, trial = es.roles(split, system=system)
    spk = es.meta["speaker"].to_numpy().astype(str)
    t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
    return singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk)


@dataclass(frozen=True)
class ConversationLengthCurve:
    """Linkability and singling out as functions of the conversation length L (paper 001)."""

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
) -> ConversationLengthCurve:
    """Linkability and singling out for several conversation lengths L on one split."""
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
            so[k] = singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk).value
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
    """Singling out against the population size N (paper 001, figure 1)."""

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
) -> SinglingOutCurve:
    """Singling out on random populations of n speakers (paper 001: N from 20 to thousands).

    For each size n, ``n_draws`` random sets of n trial speakers that are also enrolled are
    drawn; :func:`singling_out` runs on their trial embeddings with their enrolment profiles
    as the predicates. At the full size there is one population.

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
    """
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    speakers = np.intersect1d(spk[enrol], spk[trial])
    if speakers.size < 2:
        raise VoxMetricsInputError("singling out needs at least 2 speakers with both roles.")
    grid = linkability_grid(speakers.size) if n is None else np.unique(np.asarray(n, int))
    if grid.min() < 2 or grid.max() > speakers.size:
        raise VoxMetricsInputError(f"population sizes must lie in 2..{speakers.size}.")
    if n_draws < 1:
        raise VoxMetricsInputError("`n_draws` must be >= 1.")
    rng = np.random.default_rng(seed)
    values, sds = np.empty(grid.size), np.empty(grid.size)
    for g, size in enumerate(grid):
        draws = 1 if size == speakers.size else n_draws
        vals = []
        for _ in range(draws):
            chosen = rng.choice(speakers, size=int(size), replace=False)
            e_rows = enrol & np.isin(spk, chosen)
            t_rows = trial & np.isin(spk, chosen)
            vals.append(
                singling_out(
                    es.embeddings[e_rows], spk[e_rows], es.embeddings[t_rows], spk[t_rows]
                ).value
            )
        values[g], sds[g] = float(np.mean(vals)), float(np.std(vals))
    return SinglingOutCurve(n=grid.astype(np.int64), value=values, sd=sds, n_draws=n_draws)
