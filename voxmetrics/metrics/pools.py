"""The pooled scores sorted once, as runs of labels: the input of every 1-to-1 metric.

A :class:`SortedPools` is built from the mated (target) and non-mated (non-target) scores, or
straight from a score matrix, with one sort of the pooled scores in their own dtype (float32
stays float32). It keeps only what the pooled metrics need:

* the distinct target values ``v_0 < ... < v_{K-1}`` with their counts,
* the non-targets *at* each ``v_k`` and *between* consecutive ones (K + 1 open cells),
* the EER operating points, found while the sorted scores are at hand.

The label sequence of the sorted pooled scores is then 3K + 1 runs (cell 0, then for every k:
targets at ``v_k`` and non-targets at ``v_k`` in the order of the tie rule, then cell k + 1).
Pool-adjacent-violators on the runs, weighted by their lengths, equals PAV on every score
(equal consecutive labels always share a PAV bin), so PAV LLRs, the ROC convex hull, min Cllr,
D_ECE, the worst case and the ECE curves cost O(K) after the sort, K <= the number of targets.
A speaker-level bootstrap replicate only reweights the runs (:class:`RunCounts`).

Tie rules (``ties``):

``"reference"`` (default)
    Each number equals its reference implementation: the EER as SpeechBrain's ``EER``; the
    ROC convex hull, ROCCH-EER and min Cllr as BOSARIS ``rocch`` / PYLLR (targets before
    non-targets at equal scores); D_ECE and the minimum-ECE profile as the ZEBRA code of
    Nautsch et al. 2020 (its ``rocch_pava``: targets before non-targets at equal scores);
    log10 l and the tag as the same code's Laplace worst case (its ``optimal_llr``, which ports
    BOSARIS ``opt_loglr``: non-targets before targets at equal scores). Both orders are read
    from the same runs (:meth:`RunCounts.runs`), so one sort serves both.
``"attacker"``
    Every tie is resolved for the attacker (the conservative audit view): non-targets before
    targets at equal scores everywhere, and the EER may also pick the operating point that
    rejects the non-targets and accepts the targets of a tied score.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._scipy import optimize
from voxmetrics.metrics._validation import TIES, Ties, check_scores, check_ties
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.ranks import BLOCK_ELEMENTS, CHUNK_ELEMENTS, row_blocks

__all__ = [
    "TIES",
    "EERCandidates",
    "EERPoint",
    "PAVRuns",
    "RunCounts",
    "SortedPools",
    "Ties",
    "check_ties",
    "eer_candidates",
    "non_block_sums",
    "pav_runs",
    "rocch_of_counts",
]


@dataclass(frozen=True)
class EERPoint:
    """The EER operating point: SpeechBrain's choice, counted exactly."""

    threshold: float
    """The candidate threshold SpeechBrain's scan ends on (a pooled score or a midpoint)."""
    n_fr: int
    """Targets rejected there (score <= threshold; under ``ties="attacker"`` possibly < )."""
    n_fa: int
    """Non-targets accepted there (score > threshold)."""


@dataclass(frozen=True)
class RunCounts:
    """Counts of the 3K + 1 label runs of a :class:`SortedPools`, possibly reweighted.

    ``cells[k]`` counts the non-targets between ``v_{k-1}`` and ``v_k`` (open interval), ``tar_at``
    and ``non_at`` the targets and non-targets equal to ``v_k``. Float, so that bootstrap
    replicates (integer weights) use the same code.
    """

    cells: NDArray[np.float64]
    """(K + 1,) non-targets in each open cell."""
    tar_at: NDArray[np.float64]
    """(K,) targets at each distinct target value."""
    non_at: NDArray[np.float64]
    """(K,) non-targets equal to each distinct target value."""

    @cached_property
    def n_tar(self) -> float:
        """Number of targets (summed once: every pooled number of a replicate asks for it)."""
        return float(self.tar_at.sum())

    @cached_property
    def n_non(self) -> float:
        """Number of non-targets."""
        return float(self.cells.sum() + self.non_at.sum())

    def runs(
        self, *, targets_first: bool
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
        """Labels (1 target, 0 non-target), lengths and slot of the non-empty runs, in order.

        Slot ``3k`` is cell k, ``3k + 1`` the targets at ``v_k``, ``3k + 2`` the non-targets at
        ``v_k``; the order inside a tie follows ``targets_first``.
        """
        k = self.tar_at.size
        counts = np.empty(3 * k + 1)
        counts[0::3] = self.cells
        first, second = (self.tar_at, self.non_at) if targets_first else (self.non_at, self.tar_at)
        counts[1::3], counts[2::3] = first, second
        labels, slots = _run_layout(k, targets_first)
        keep = counts > 0
        return labels[keep], counts[keep], slots[keep]


@functools.lru_cache(maxsize=2)  # one K, both tie orders: what a bootstrap alternates
def _run_layout(k: int, targets_first: bool) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Labels and slots of all 3K + 1 runs in order (read-only; shared by every replicate)."""
    slots = np.arange(3 * k + 1)
    if not targets_first:  # slot numbers stay "1 = targets", "2 = non-targets"
        slots[1::3], slots[2::3] = slots[2::3].copy(), slots[1::3].copy()
    labels = (slots % 3 == 1).astype(np.float64)
    slots.flags.writeable = labels.flags.writeable = False
    return labels, slots


@dataclass(frozen=True)
class PAVRuns:
    """PAV on the runs: one LLR per run."""

    labels: NDArray[np.float64]
    """1.0 for a run of targets, 0.0 for non-targets, in sorted order."""
    counts: NDArray[np.float64]
    """Length (possibly reweighted) of each run."""
    slots: NDArray[np.intp]
    """Slot of each run in :meth:`RunCounts.runs`' numbering (3k: cell k; 3k + 1, 3k + 2: the
    targets and non-targets at ``v_k``)."""
    llr: NDArray[np.float64]
    """Natural-log LLR of each run (may be +-inf without Laplace's rule)."""
    posterior: NDArray[np.float64]
    """PAV posterior P(target) of each run."""
    bin_llr: NDArray[np.float64] | None = field(default=None, repr=False)
    """LLR of each PAV bin (consecutive runs fitted to one value), in order."""
    bin_runs: NDArray[np.intp] | None = field(default=None, repr=False)
    """Number of runs in each bin (``llr`` is ``bin_llr`` repeated by these)."""

    def per_run(
        self, f: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    ) -> NDArray[np.float64]:
        """``f(llr)`` for an elementwise ``f``, evaluated once per bin: the same floats.

        Examples
        --------
        >>> r = pav_runs(RunCounts(np.array([1.0, 1.0]), np.array([2.0]), np.array([0.0])),
        ...              targets_first=True, laplace=False)
        >>> bool((r.per_run(np.exp) == np.exp(r.llr)).all())
        True
        """
        if self.bin_llr is None or self.bin_runs is None:
            return f(self.llr)
        return np.repeat(f(self.bin_llr), self.bin_runs)


def pav_runs(rc: RunCounts, *, targets_first: bool, laplace: bool) -> PAVRuns:
    """Weighted PAV of the runs of ``rc``; LLR = logit(P) - ln(N_tar / N_non) per run.

    Laplace's rule adds a dummy target then a dummy non-target (one score each) below and above
    all scores; the prior odds keep the real counts.
    """
    labels, counts, slots = rc.runs(targets_first=targets_first)
    y, w = labels, counts
    if laplace:
        y = np.concatenate([[1.0, 0.0], y, [1.0, 0.0]])
        w = np.concatenate([[1.0, 1.0], w, [1.0, 1.0]])
    fit = optimize.isotonic_regression(y, weights=w)
    # every run of a PAV bin has the bin's value: the logs are taken once per bin
    starts, stops = fit.blocks[:-1], fit.blocks[1:]
    if laplace:  # the bins' real runs (the dummy scores are the first and last two)
        starts = np.clip(starts - 2, 0, labels.size)
        stops = np.clip(stops - 2, 0, labels.size)
    real = stops > starts
    p_bin = fit.x[fit.blocks[:-1][real]]
    n_runs = (stops - starts)[real]
    with np.errstate(divide="ignore"):
        llr_bin = np.log(p_bin) - np.log1p(-p_bin) - np.log(rc.n_tar / rc.n_non)
    llr, p = np.repeat(llr_bin, n_runs), np.repeat(p_bin, n_runs)
    return PAVRuns(labels, counts, slots, llr, p, llr_bin, n_runs)


def non_block_sums(
    block: NDArray[np.floating], targets: NDArray[np.intp], c: float
) -> tuple[float, float]:
    """Sum of a block's non-mated scores and of their squared deviations from ``c``.

    ``block`` (rows x N) holds the scores of rows whose mated columns are ``targets``; the
    mated cells are left out of both sums (set to 0, then to 0 deviation), not subtracted
    afterwards, so a non-target pool of tiny spread keeps its variance. Computed in float64 on
    cache-sized chunks of rows (:data:`~voxmetrics.metrics.ranks.CHUNK_ELEMENTS`), each summed
    with NumPy's pairwise sum (not a BLAS dot, whose order depends on its threads) and added in
    row order: the same on every machine, a Dask worker's included. With ``c`` NaN only the
    sum is computed (the same sum), and the squares are NaN.

    Examples
    --------
    >>> non_block_sums(np.array([[1.0, 2.0], [4.0, 3.0]]), np.array([0, 0]), 2.5)
    (5.0, 0.5)
    >>> non_block_sums(np.array([[1.0, 2.0], [4.0, 3.0]]), np.array([0, 0]), math.nan)
    (5.0, nan)
    """
    sum_only = math.isnan(c)
    total = sq = 0.0
    for ch in row_blocks(block.shape[0], block.shape[1], CHUNK_ELEMENTS):
        b = block[ch].astype(np.float64)  # a copy, in float64
        rows = np.arange(b.shape[0])
        b[rows, targets[ch]] = 0.0
        total += float(b.sum())
        if sum_only:
            continue
        b -= c
        b[rows, targets[ch]] = 0.0
        np.square(b, out=b)
        sq += float(b.sum())
    return total, math.nan if sum_only else sq


@dataclass(frozen=True, eq=False)
class SortedPools:
    """Target and non-target scores sorted once, kept as run counts (see the module doc).

    Build with :meth:`from_pools` (two 1-D arrays) or :meth:`from_matrix` (a T x N matrix and
    its target columns, without building the non-mated pool).

    Examples
    --------
    >>> sp = SortedPools.from_pools([1.0, 3.0, 3.0], [0.0, 3.0, 5.0])
    >>> sp.values.tolist(), sp.counts.tar_at.tolist(), sp.counts.non_at.tolist()
    ([1.0, 3.0], [1.0, 2.0], [0.0, 1.0])
    >>> sp.counts.cells.tolist()
    [1.0, 0.0, 1.0]
    """

    values: NDArray[np.floating]
    """(K,) distinct target scores, ascending, in the scores' dtype."""
    counts: RunCounts
    """Run counts of the full data."""
    cell_first: NDArray[np.float64]
    """(K + 1,) lowest non-target score of each cell (NaN when empty)."""
    cell_last: NDArray[np.float64]
    """(K + 1,) highest non-target score of each cell (NaN when empty)."""
    n_distinct: int
    """Number of distinct pooled scores."""
    n_tar: int
    """Number of targets."""
    n_non: int
    """Number of non-targets."""
    eer_points: dict[str, EERPoint] = field(repr=False)
    """EER operating point by tie rule."""
    locate: Callable[[float, bool], int] = field(repr=False)
    """``locate(score, mated)``: index of the first score equal to ``score`` in the target pool
    (``mated``) or in the non-target pool (row-major order without the target cells)."""
    count_non_le: Callable[[ArrayLike], NDArray[np.int64]] = field(repr=False)
    """``count_non_le(thresholds)``: number of non-targets <= each threshold (any float64s;
    on a matrix one blockwise pass, the non-target pool is not built)."""
    non_sums: Callable[[float], tuple[float, float]] = field(repr=False)
    """``non_sums(c)``: sum of the non-targets and of their squared deviations from ``c``,
    accumulated in float64 (blockwise on a matrix); ``c`` NaN: the sum only (squares NaN)."""

    @cached_property
    def moments(self) -> tuple[float, float, float, float]:
        """Means and population variances ``(mean_tar, var_tar, mean_non, var_non)``, float64.

        The target ones from the run counts, the non-target ones in two passes (the mean, then
        the squared deviations from it), so no cancellation.
        """
        v = self.values.astype(np.float64)
        w = self.counts.tar_at
        if v.size == 1:  # constant: exact
            mean_tar, var_tar = float(v[0]), 0.0
        else:
            # pairwise sums, not a BLAS dot (whose last bits depend on its thread count)
            mean_tar = float((w * v).sum() / self.n_tar)
            var_tar = float((w * (v - mean_tar) ** 2).sum() / self.n_tar)
        at = v[self.counts.non_at > 0]
        lo = np.fmin(np.nanmin(self.cell_first, initial=np.inf), at.min(initial=np.inf))
        hi = np.fmax(np.nanmax(self.cell_last, initial=-np.inf), at.max(initial=-np.inf))
        if lo == hi:  # constant: exact
            return mean_tar, var_tar, float(lo), 0.0
        total, _ = self.non_sums(math.nan)  # the sum only
        mean_non = total / self.n_non
        _, sq = self.non_sums(mean_non)
        return mean_tar, var_tar, mean_non, sq / self.n_non

    def count_tar_le(self, thresholds: ArrayLike) -> NDArray[np.int64]:
        """Number of targets <= each threshold."""
        cum = np.concatenate([[0], np.cumsum(self.counts.tar_at.astype(np.int64))])
        x = np.asarray(thresholds, dtype=np.float64)
        return cum[np.searchsorted(self.values, x, side="right")]

    @classmethod
    def of(cls, matrix: Any) -> SortedPools:
        """The pools of a :class:`~voxmetrics.data.model.ScoreMatrix`, built once and cached.

        The cache holds the pools as long as the matrix lives (a weak reference to it). A sparse
        trial list (a matrix with a ``mask``) pools its listed pairs only.
        """
        pools = _BY_MATRIX.get(matrix)
        if pools is None:
            if getattr(matrix, "mask", None) is None:
                pools = cls.from_matrix(matrix.scores, matrix.targets)
            else:
                if matrix.tar.size == 0:
                    raise VoxMetricsInputError(
                        f"{matrix.source or 'score matrix'}: no mated (target) pair is listed, "
                        "so no pooled metric can be computed; list each trial against its own "
                        "speaker."
                    )
                pools = cls.from_pools(matrix.tar, matrix.non)
            _BY_MATRIX[matrix] = pools
        return pools

    @classmethod
    def from_pools(cls, tar: ArrayLike, non: ArrayLike) -> SortedPools:
        """Build from target and non-target scores (1-D arrays of finite numbers)."""
        t, n = check_scores(tar, "tar"), check_scores(non, "non")
        dtype = np.result_type(t.dtype, n.dtype)
        pooled = np.sort(np.concatenate([t.astype(dtype, copy=False), n.astype(dtype, copy=False)]))

        def locate(score: float, mated: bool) -> int:
            pool = t if mated else n
            return int(np.flatnonzero(pool == pool.dtype.type(score))[0])

        sorted_non: list[NDArray[np.floating]] = []  # sorted on first use (PAV needs none)

        def count_non_le(thresholds: ArrayLike) -> NDArray[np.int64]:
            if not sorted_non:
                sorted_non.append(np.sort(n))
            x = np.asarray(thresholds, dtype=np.float64)
            return np.searchsorted(sorted_non[0], x, side="right").astype(np.int64)

        def non_sums(c: float) -> tuple[float, float]:
            d = n.astype(np.float64)
            if math.isnan(c):  # the sum only
                return float(d.sum()), math.nan
            return float(d.sum()), float(((d - c) ** 2).sum())

        return cls._build(
            pooled, np.sort(t.astype(dtype, copy=False)), locate, count_non_le, non_sums
        )

    @classmethod
    def from_matrix(cls, scores: NDArray[np.floating], targets: NDArray[np.intp]) -> SortedPools:
        """Build from a validated T x N matrix (float32 or float64) and its target columns.

        One sorted copy of the matrix is made (and dropped after the build); the non-mated pool
        is never materialised.
        """
        rows = np.arange(scores.shape[0])
        tar = scores[rows, targets]
        pooled = np.sort(scores, axis=None)

        def locate(score: float, mated: bool) -> int:
            v = scores.dtype.type(score)
            if mated:
                return int(np.flatnonzero(tar == v)[0])
            n = scores.shape[1]
            step = max(1, BLOCK_ELEMENTS // n)
            for r0 in range(0, scores.shape[0], step):
                block = scores[r0 : r0 + step] == v
                block[rows[: block.shape[0]], targets[r0 : r0 + step]] = False
                hits = np.flatnonzero(block)
                if hits.size:
                    r, j = divmod(int(hits[0]), n)
                    return (r0 + r) * (n - 1) + j - int(j > targets[r0 + r])
            raise ValueError("score not in the non-target pool")  # pragma: no cover

        step = max(1, BLOCK_ELEMENTS // max(1, scores.shape[1]))
        tar_sorted64 = np.sort(tar.astype(np.float64))

        def count_non_le(thresholds: ArrayLike) -> NDArray[np.int64]:
            x = np.asarray(thresholds, dtype=np.float64).ravel()
            order = np.argsort(x, kind="stable")
            xs = x[order]
            # in the scores' dtype, rounded down: s <= x exactly when s <= xd (no float64 copy
            # of the blocks); +-inf and out-of-range values stay ordered
            with np.errstate(over="ignore"):
                xd = xs.astype(scores.dtype)
            above = xd.astype(np.float64) > xs
            xd[above] = np.nextafter(xd[above], scores.dtype.type(-np.inf))
            # hist[j]: scores s with xd[j-1] < s <= xd[j]; its cumsum counts the scores <= xd[j]
            hist = np.zeros(xs.size + 1, dtype=np.int64)
            for r0 in range(0, scores.shape[0], step):
                block = scores[r0 : r0 + step].ravel()
                hist += np.bincount(np.searchsorted(xd, block, side="left"), minlength=xs.size + 1)
            le = np.cumsum(hist)[:-1] - np.searchsorted(tar_sorted64, xs, side="right")
            out = np.empty(x.size, dtype=np.int64)
            out[order] = le
            return out

        def non_sums(c: float) -> tuple[float, float]:
            # the row blocks of every float sum over a matrix (a Dask worker sums the same)
            total = sq = 0.0
            parts = map_blocks(
                lambda rows: non_block_sums(scores[rows], targets[rows], c),
                row_blocks(*scores.shape),
            )
            for t_b, sq_b in parts:  # in row order
                total += t_b
                sq += sq_b
            return total, sq

        return cls._build(pooled, np.sort(tar), locate, count_non_le, non_sums)

    @classmethod
    def _build(
        cls,
        pooled: NDArray[np.floating],
        tar_sorted: NDArray[np.floating],
        locate: Callable[[float, bool], int],
        count_non_le: Callable[[ArrayLike], NDArray[np.int64]],
        non_sums: Callable[[float], tuple[float, float]],
    ) -> SortedPools:
        n_tar = int(tar_sorted.size)
        n_non = int(pooled.size) - n_tar
        if n_non == 0:
            raise VoxMetricsInputError("`non` is empty; give at least one non-target score.")
        values, tar_at = np.unique(tar_sorted, return_counts=True)
        lo = np.searchsorted(pooled, values, side="left")
        hi = np.searchsorted(pooled, values, side="right")
        tar_below = np.concatenate([[0], np.cumsum(tar_at)[:-1]])
        non_at = (hi - lo) - tar_at
        non_below = lo - tar_below  # non-targets < v_k
        non_upto = non_below + non_at  # non-targets <= v_k
        cells = np.concatenate([non_below, [n_non]]) - np.concatenate([[0], non_upto])
        cell_first = np.full(values.size + 1, np.nan)
        starts = np.concatenate([[0], hi])
        has = cells > 0
        cell_first[has] = pooled[starts[has]]
        cell_last = np.full(values.size + 1, np.nan)
        ends = np.concatenate([lo, [pooled.size]])
        cell_last[has] = pooled[ends[has] - 1]
        n_distinct = 1
        for b0 in range(0, pooled.size - 1, BLOCK_ELEMENTS):  # blockwise: no mask of the whole pool
            seg = pooled[b0 : b0 + BLOCK_ELEMENTS + 1]
            n_distinct += int(np.count_nonzero(seg[1:] != seg[:-1]))
        counts = RunCounts(
            cells=cells.astype(np.float64),
            tar_at=tar_at.astype(np.float64),
            non_at=non_at.astype(np.float64),
        )
        points: dict[str, EERPoint] = {
            ties: _eer_point(pooled, tar_sorted, n_non, attacker=ties == "attacker")
            for ties in TIES
        }
        return cls(
            values,
            counts,
            cell_first,
            cell_last,
            n_distinct,
            n_tar,
            n_non,
            points,
            locate,
            count_non_le,
            non_sums,
        )

    def run_values(self, slots: NDArray[np.intp]) -> NDArray[np.float64]:
        """The lowest score of each run given by its slot."""
        k, kind = np.divmod(slots, 3)
        return np.where(
            kind == 0, self.cell_first[k], self.values[np.minimum(k, self.values.size - 1)]
        )

    def pav(self, *, targets_first: bool, laplace: bool) -> PAVRuns:
        """PAV LLRs of the runs of the full data (see :func:`pav_runs`)."""
        return pav_runs(self.counts, targets_first=targets_first, laplace=laplace)

    def rocch(
        self, *, targets_first: bool = True
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Vertices (pmiss, pfa) of the ROC convex hull, as BOSARIS ``rocch``."""
        return rocch_of_counts(self.counts, targets_first=targets_first)


def rocch_of_counts(
    rc: RunCounts, *, targets_first: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Vertices (pmiss, pfa) of the ROC convex hull of run counts (:meth:`SortedPools.rocch`).

    The counts need not come from a :class:`SortedPools`: any non-targets counted in the cells
    and at the distinct target values give the hull of those scores, e.g. a subsample of the
    non-targets against the same targets.
    """
    r = pav_runs(rc, targets_first=targets_first, laplace=False)
    ends = np.flatnonzero(np.diff(r.posterior) != 0)
    cum_tar = np.cumsum(r.counts * r.labels)
    cum_non = np.cumsum(r.counts * (1.0 - r.labels))
    pmiss = np.concatenate([[0.0], cum_tar[ends] / rc.n_tar, [1.0]])
    pfa = np.concatenate([[1.0], (rc.n_non - cum_non[ends]) / rc.n_non, [0.0]])
    return pmiss, pfa


_BY_MATRIX: weakref.WeakKeyDictionary[Any, SortedPools] = weakref.WeakKeyDictionary()


def _rate32(count: NDArray[np.int64], total: int) -> NDArray[np.float32]:
    """SpeechBrain's rate: the count as float32 divided by the pool size, in float32."""
    return count.astype(np.float32) / np.float32(total)


def _eer_point(
    pooled: NDArray[np.floating], tar_sorted: NDArray[np.floating], n_non: int, *, attacker: bool
) -> EERPoint:
    """The operating point of SpeechBrain's ``EER`` scan, found without scanning every threshold.

    SpeechBrain's candidates are the distinct pooled scores and the midpoints of consecutive
    ones (in the scores' dtype), in ascending order; with FRR = P(tar <= t) and FAR = P(non > t)
    as float32 rates, a candidate replaces the incumbent when |float32(FAR - FRR)| < |FAR_inc -
    FRR_inc| (the latter in float64), and the first candidate is the initial incumbent.

    Why a window suffices: both rates are monotone in t and rounding is monotone, so c(t) =
    |float32(FAR - FRR)| is non-increasing then non-decreasing. Let m = min c. Every candidate
    with c > m also has its float64 gap d > m (c rounds d's real value to the nearest float32,
    so d > m whenever c > m), hence the incumbent is replaced at the first candidate with c = m;
    after that only candidates with c = m can replace it (d of a c = m candidate is below the
    next float32 above m), and they do exactly while the incumbent's d exceeds m. So the scan
    ends on the first c = m candidate with d <= m, or on the last c = m candidate; the c = m
    candidates are contiguous. The window around the sign change of FAR - FRR is widened until
    both of its ends have c > m (or are the ends of the candidate list).

    Under ``attacker`` a score shared by targets and non-targets adds, just before it, the
    operating point that accepts its targets and rejects its non-targets (SpeechBrain's scan on
    the targets raised by an infinitesimal).
    """
    n_tar = int(tar_sorted.size)
    n = int(pooled.size)

    def fr_fa(v: NDArray[np.floating]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        fr = np.searchsorted(tar_sorted, v, side="right").astype(np.int64)
        return fr, n_non - (np.searchsorted(pooled, v, side="right").astype(np.int64) - fr)

    # first position j whose score has FAR <= FRR (exact): the sign change of FAR - FRR
    lo_j, hi_j = 0, n - 1
    while lo_j < hi_j:
        mid = (lo_j + hi_j) // 2
        fr, fa = fr_fa(pooled[mid : mid + 1])
        if int(fa[0]) * n_tar - int(fr[0]) * n_non <= 0:
            hi_j = mid
        else:
            lo_j = mid + 1
    half = 64
    while True:
        a, b = max(0, lo_j - half), min(n, lo_j + half)
        u = np.unique(pooled[a:b])
        fr, fa = fr_fa(u)
        n_at = np.searchsorted(pooled, u, side="right") - np.searchsorted(pooled, u, side="left")
        cand = eer_candidates(u, fr, fa, n_at, tar_sorted, n_non, attacker=attacker)
        if (a == 0 or cand.c[0] > cand.m) and (b == n or cand.c[-1] > cand.m):
            return cand.point()
        half *= 4


@dataclass(frozen=True)
class EERCandidates:
    """SpeechBrain's candidate thresholds over a window of distinct pooled scores."""

    v: NDArray[np.floating]
    """Candidate thresholds in scan order."""
    fr: NDArray[np.int64]
    """Targets rejected at each."""
    fa: NDArray[np.int64]
    """Non-targets accepted at each."""
    c: NDArray[np.float64]
    """|float32(FAR - FRR)| at each."""
    d: NDArray[np.float64]
    """|FAR - FRR| of the float32 rates, in float64."""
    m: float
    """min c over the window."""

    def point(self) -> EERPoint:
        """Where the scan ends (see :func:`_eer_point`), given the window is wide enough."""
        idx = np.flatnonzero(self.c == self.m)
        good = idx[self.d[idx] <= self.m]
        k = int(good[0]) if good.size else int(idx[-1])
        return EERPoint(threshold=float(self.v[k]), n_fr=int(self.fr[k]), n_fa=int(self.fa[k]))


def eer_candidates(
    u: NDArray[np.floating],
    fr: NDArray[np.int64],
    fa: NDArray[np.int64],
    n_at: NDArray[np.int64],
    tar_sorted: NDArray[np.floating],
    n_non: int,
    *,
    attacker: bool,
) -> EERCandidates:
    """The candidates of SpeechBrain's scan over consecutive distinct pooled scores ``u``.

    ``fr`` / ``fa`` are the targets <= and the non-targets > each score, ``n_at`` the pooled
    scores equal to it; candidates are, in scan order, [the attacker point of a tied score],
    the score, the midpoint to the next score. Used on a window of the sorted pools
    (:func:`_eer_point`) and on distinct scores gathered from blocks (blockwise evaluation).
    """
    n_tar = int(tar_sorted.size)
    n_u = u.size
    cand_v = np.empty(3 * n_u, dtype=u.dtype)
    cand_fr = np.empty(3 * n_u, dtype=np.int64)
    cand_fa = np.empty(3 * n_u, dtype=np.int64)
    use = np.zeros(3 * n_u, dtype=bool)
    cand_v[1::3], cand_fr[1::3], cand_fa[1::3] = u, fr, fa
    use[1::3] = True
    if attacker:
        fr_lt = np.searchsorted(tar_sorted, u, side="left").astype(np.int64)
        n_non_eq = n_at - (fr - fr_lt)
        tied = (fr > fr_lt) & (n_non_eq > 0)
        cand_v[0::3], cand_fr[0::3], cand_fa[0::3] = u, fr_lt, fa
        use[0::3] = tied
    if n_u > 1:
        mids = (u[:-1] + u[1:]) / u.dtype.type(2)
        up = mids == u[1:]  # rounded onto the next score: its counts
        nxt_fr = cand_fr[4::3].copy()
        if attacker:  # the next score's first candidate is its attacker point when tied
            nxt_fr = np.where(use[3::3], cand_fr[3::3], nxt_fr)
        cand_v[2:-3:3] = mids
        cand_fr[2:-3:3] = np.where(up, nxt_fr, fr[:-1])
        cand_fa[2:-3:3] = np.where(up, fa[1:], fa[:-1])
        use[2:-3:3] = True
    cv, cfr, cfa = cand_v[use], cand_fr[use], cand_fa[use]
    far32, frr32 = _rate32(cfa, n_non), _rate32(cfr, n_tar)
    c = np.abs(far32 - frr32).astype(np.float64)
    d = np.abs(far32.astype(np.float64) - frr32.astype(np.float64))
    return EERCandidates(cv, cfr, cfa, c, d, float(c.min()))


def ln_to_log10(x: float) -> float:
    """Natural log to base 10."""
    return x / math.log(10.0)
