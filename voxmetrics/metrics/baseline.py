"""The 1-to-1 baselines and linkability of one score matrix, as one result."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.cllr import min_cllr_from_pools
from voxmetrics.metrics.eer import eer_from_pools, eer_rocch_from_pools
from voxmetrics.metrics.legal import linkability
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.pools import SortedPools, Ties, check_ties
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks

__all__ = [
    "BaselineResult",
    "baseline_metrics",
    "cllr_from_sums",
    "mated_pools",
    "matrix_cllr",
    "matrix_cllr_sums",
    "pairs_baseline",
    "pairs_cllr",
    "pairs_cllr_sums",
    "softplus_sum",
]


@dataclass(frozen=True)
class BaselineResult:
    """EER, ROCCH-EER, Cllr, min Cllr and linkability of one T x N score matrix."""

    n_trials: int
    """T, trials scored."""
    n_enrolled: int
    """N, enrolled identities."""
    eer: float
    """VPC 2024 / SpeechBrain EER of the mated vs non-mated pools."""
    eer_threshold: float
    """Threshold at which :attr:`eer` is reached (SpeechBrain's)."""
    eer_rocch: float | None
    """EER of the ROC convex hull (None when not asked for: an evaluation without its
    ``pairwise`` part)."""
    cllr: float | None
    """Cllr of the scores taken as natural-log LLRs (meaningful only for LLR scores; None when
    not asked for)."""
    min_cllr: float | None
    """Cllr after PAV calibration, in [0, 1] (None when not asked for)."""
    linkability: float | None
    """Fraction of trials whose mated score beats every other score (chance 1/N); None for a
    sparse trial list with no complete trial, or when not asked for (an evaluation without its
    ``linkability`` part)."""

    @property
    def chance_linkability(self) -> float:
        """Linkability of a random guess, 1/N."""
        return 1.0 / self.n_enrolled

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-safe dictionary of the fields."""
        return asdict(self)


def softplus_sum(x: NDArray[np.floating]) -> float:
    """Sum of ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|), accumulated in float64.

    Evaluated in the scores' dtype: float32 scores use float32 (vectorised) transcendentals,
    float64 ones float64 ``logaddexp``. A 2-D ``x`` (a block of rows) is summed in cache-sized
    chunks of rows (:data:`~voxmetrics.metrics.ranks.CHUNK_ELEMENTS`), added in row order:
    the Cllr terms of :func:`matrix_cllr`, per row block
    (:func:`~voxmetrics.metrics.ranks.row_blocks`), here and on Dask workers alike.

    Examples
    --------
    >>> round(softplus_sum(np.zeros(2)), 6)  # 2 ln 2
    1.386294
    """
    if x.ndim != 2:
        return _softplus_terms_sum(x)
    total = 0.0
    for ch in row_blocks(x.shape[0], x.shape[1], CHUNK_ELEMENTS):
        total += _softplus_terms_sum(x[ch])
    return total


def _softplus_terms_sum(x: NDArray[np.floating]) -> float:
    if x.dtype == np.float32:
        return float((np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).sum(dtype=np.float64))
    return float(np.logaddexp(0.0, x).sum())


def cllr_from_sums(c_tar: float, c_non: float, n_tar: int, n_non: int) -> float:
    """Cllr from its two sums over ``n_tar`` mated and ``n_non`` non-mated scores.

    c_tar = sum ln(1 + e^-s) over the mated scores, c_non = sum ln(1 + e^s) over the non-mated
    ones; Cllr = (c_tar / n_tar + c_non / n_non) / (2 ln 2). Every Cllr of this module ends
    here, and so does the blockwise (Dask) evaluation's.

    Examples
    --------
    >>> cllr_from_sums(2 * np.log(2.0), 4 * np.log(2.0), 2, 4)
    1.0
    """
    return float(0.5 * (c_tar / n_tar + c_non / n_non) / np.log(2.0))


def matrix_cllr_sums(
    scores: NDArray[np.floating], targets: NDArray[np.intp]
) -> tuple[float, float]:
    """The sums of :func:`cllr_from_sums` of a T x N matrix's pools, in row blocks.

    c_non is the sum over every score less that over the mated ones (no pools built). For
    float32 scores the terms are float32 (as the pools themselves), summed in float64. The row
    blocks run on parallel threads (:func:`~voxmetrics.metrics.parallel.map_blocks`) and are
    added in row order, as the blockwise (Dask) evaluation adds its blocks. ``scores`` and
    ``targets`` are taken as checked (:func:`baseline_metrics` checks them).

    Examples
    --------
    >>> c_tar, c_non = matrix_cllr_sums(np.zeros((2, 3)), np.array([0, 1]))
    >>> round(c_tar, 6), round(c_non, 6)  # 2 ln 2, 4 ln 2
    (1.386294, 2.772589)
    """
    n_rows, n = scores.shape
    tar = scores[np.arange(n_rows), targets]
    c_all = 0.0
    for part in map_blocks(lambda rows: softplus_sum(scores[rows]), row_blocks(n_rows, n)):
        c_all += part  # in row order
    return softplus_sum(-tar), c_all - softplus_sum(tar)


def matrix_cllr(scores: NDArray[np.floating], targets: NDArray[np.intp]) -> float:
    """Cllr of a matrix's pools taken as natural-log LLRs, in row blocks (no pools built).

    For float32 scores the terms are float32 (as the pools themselves), summed in float64.
    The row blocks run on parallel threads (:func:`~voxmetrics.metrics.parallel.map_blocks`).

    Examples
    --------
    >>> matrix_cllr(np.zeros((2, 3)), np.array([0, 1]))
    1.0
    """
    n_rows, n = scores.shape
    return cllr_from_sums(*matrix_cllr_sums(scores, targets), n_rows, n_rows * (n - 1))


def mated_pools(
    scores: ArrayLike, targets: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Split a T x N matrix into its T mated and T(N-1) non-mated scores.

    Examples
    --------
    >>> tar, non = mated_pools([[0.9, 0.1], [0.2, 0.8]], [0, 1])
    >>> tar.tolist(), non.tolist()
    ([0.9, 0.8], [0.1, 0.2])
    """
    s, t = check_matrix(scores, targets)
    rows = np.arange(s.shape[0])
    mask = np.ones(s.shape, dtype=bool)
    mask[rows, t] = False
    return s[rows, t], s[mask]


def baseline_metrics(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
) -> BaselineResult:
    """Compute every 1-to-1 baseline and linkability of a score matrix.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.
    ties : {"reference", "attacker"}
        Tie rule of the pooled metrics (see :mod:`voxmetrics.metrics.pools`).
    pools : SortedPools, optional
        The matrix's sorted pools, when already built (they are built otherwise).

    Returns
    -------
    BaselineResult

    Examples
    --------
    >>> S = [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]]
    >>> r = baseline_metrics(S, [0, 0, 1, 2])
    >>> r.eer, r.eer_rocch, r.linkability
    (0.5, 0.375, 1.0)
    """
    check_ties(ties)
    s, t = check_matrix(scores, targets)
    if pools is None:
        pools = SortedPools.from_matrix(s, t)
    e = eer_from_pools(pools, ties=ties)
    return BaselineResult(
        n_trials=int(s.shape[0]),
        n_enrolled=int(s.shape[1]),
        eer=e.eer,
        eer_threshold=e.threshold,
        eer_rocch=eer_rocch_from_pools(pools, ties=ties),
        cllr=matrix_cllr(s, t),
        min_cllr=min_cllr_from_pools(pools, ties=ties),
        linkability=linkability(s, t),
    )


def pairs_cllr(tar: NDArray[np.floating], non: NDArray[np.floating]) -> float:
    """Cllr of listed pairs taken as natural-log LLRs.

    In the scores' dtype as :func:`matrix_cllr`, which it equals on the pools of a complete
    matrix.

    Examples
    --------
    >>> pairs_cllr(np.zeros(2), np.zeros(4))
    1.0
    """
    return cllr_from_sums(*pairs_cllr_sums(tar, non), tar.size, non.size)


def pairs_cllr_sums(tar: NDArray[np.floating], non: NDArray[np.floating]) -> tuple[float, float]:
    """The sums of :func:`cllr_from_sums` of listed mated and non-mated scores.

    Examples
    --------
    >>> [round(c, 6) for c in pairs_cllr_sums(np.zeros(2), np.zeros(4))]
    [1.386294, 2.772589]
    """
    return softplus_sum(-tar), softplus_sum(non)


def pairs_baseline(
    pools: SortedPools,
    tar: NDArray[np.floating],
    non: NDArray[np.floating],
    *,
    n_trials: int,
    n_enrolled: int,
    linkability: float | None,
    ties: Ties = "reference",
) -> BaselineResult:
    """The baselines of a sparse trial list: the pooled metrics on its listed pairs.

    ``tar`` and ``non`` are the listed mated and non-mated scores, ``pools`` their sorted
    pools; ``linkability`` comes from the complete trials (None when there are none).

    Examples
    --------
    >>> tar, non = np.array([0.9, 0.7]), np.array([0.8, 0.1, 0.2])
    >>> r = pairs_baseline(SortedPools.from_pools(tar, non), tar, non, n_trials=2,
    ...                    n_enrolled=3, linkability=None)
    >>> r.eer, r.linkability
    (0.5, None)
    """
    check_ties(ties)
    e = eer_from_pools(pools, ties=ties)
    return BaselineResult(
        n_trials=int(n_trials),
        n_enrolled=int(n_enrolled),
        eer=e.eer,
        eer_threshold=e.threshold,
        eer_rocch=eer_rocch_from_pools(pools, ties=ties),
        cllr=pairs_cllr(tar, non),
        min_cllr=min_cllr_from_pools(pools, ties=ties),
        linkability=linkability,
    )
