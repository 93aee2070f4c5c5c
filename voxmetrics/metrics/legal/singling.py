"""Singling out (Vauquier et al. 2025, eq. 1): isolation by threshold predicates on profiles.

Enrolment profiles (:func:`speaker_profiles`) are the predicates; held-out trial embeddings of
the population are the entries they must isolate. Also the curve against the population size
and the averaging of consecutive trial embeddings into conversations of L utterances
(:func:`average_consecutive`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import Progress
from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.legal.linking import linkability_grid
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.ranks import row_blocks

__all__ = [
    "MapBlocks",
    "SinglingOutCurve",
    "SinglingOutResult",
    "average_consecutive",
    "singling_out",
    "singling_out_curve",
    "singling_out_draws",
    "singling_out_embeddings",
    "singling_out_from_isolations",
    "singling_out_isolations",
    "speaker_profiles",
]


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
        parts = [singling_out_isolations(p, lab, *shared) for p, lab in blocks]
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
    # any str, as the other callers of roles here: a split without utterances is refused there
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
    return singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk, **options)


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
    progress: Progress | None = None,
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


def _codes(labels: NDArray[np.str_], sorted_unique: NDArray[np.str_]) -> NDArray[np.int64]:
    """Index of each label in ``sorted_unique``, -1 for a label not in it."""
    at = np.searchsorted(sorted_unique, labels).clip(max=max(sorted_unique.size - 1, 0))
    return np.where(sorted_unique[at] == labels, at, -1)
