"""Linkability: the rank rules, the value, its curve against N' and the EER against N'.

Vauquier et al. 2025's linkage of a trial to its speaker among N enrolled identities. The rule
(``rule="code"`` or ``"strict"``, package docstring) sets how ties with the true speaker's score
rank; the curve against N' is the exact expectation over random candidate sets of N'
identities, and the EER against N' is averaged over draws of such sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._scipy import special
from voxmetrics.metrics._validation import LinkabilityRule, check_linkability_rule, check_matrix
from voxmetrics.metrics.eer import eer_rocch_from_counts
from voxmetrics.metrics.pools import RunCounts, Ties, check_ties
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks, target_ranks

__all__ = [
    "EERCurve",
    "LinkabilityCurve",
    "eer_curve",
    "link_rank_ties",
    "linkability",
    "linkability_curve",
    "linkability_curve_from_ranks",
    "linkability_from_ranks",
    "linkability_grid",
    "other_candidates",
    "prob_no_beater",
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
    grid: list[int] = []
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


def prob_no_beater(b: NDArray[np.int64], n_enrolled: int, n_prime: int) -> NDArray[np.float64]:
    """C(N-1-b, N'-1) / C(N-1, N'-1): no candidate scoring >= the target is among N'-1 drawn."""
    k = n_prime - 1
    ok = n_enrolled - 1 - b >= k
    out = np.zeros(b.shape, dtype=np.float64)
    bb = b[ok].astype(np.float64)
    out[ok] = np.exp(
        special.gammaln(n_enrolled - bb)
        - special.gammaln(n_enrolled - bb - k)
        - special.gammaln(n_enrolled)
        + special.gammaln(n_enrolled - k)
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
        [(counts * prob_no_beater(values, n_enrolled, int(m))).sum() / beaters.size for m in grid]
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
    for rows in row_blocks(scores.shape[0], scores.shape[1], CHUNK_ELEMENTS):
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
