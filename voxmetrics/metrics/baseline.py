"""The 1-to-1 baselines and linkability of one score matrix, as one result (metrics.md 1, 5)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.cllr import _cllr, min_cllr
from voxmetrics.metrics.eer import eer_result, eer_rocch
from voxmetrics.metrics.legal import linkability

__all__ = ["BaselineResult", "baseline_metrics", "mated_pools"]


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
    """Threshold at which :attr:`eer` is reached (lowest of the tied ones)."""
    eer_rocch: float
    """EER of the ROC convex hull."""
    cllr: float
    """Cllr of the scores taken as natural-log LLRs (meaningful only for LLR scores)."""
    min_cllr: float
    """Cllr after PAV calibration, in [0, 1]."""
    linkability: float
    """Fraction of trials whose mated score beats every other score (chance 1/N)."""

    @property
    def chance_linkability(self) -> float:
        """Linkability of a random guess, 1/N."""
        return 1.0 / self.n_enrolled

    def to_dict(self) -> dict[str, float | int]:
        """JSON-safe dictionary of the fields."""
        return asdict(self)


def mated_pools(
    scores: ArrayLike, targets: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Split a T x N matrix into its T mated and T(N-1) non-mated scores (metrics.md section 0).

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


def baseline_metrics(scores: ArrayLike, targets: ArrayLike) -> BaselineResult:
    """Compute every 1-to-1 baseline and linkability of a score matrix.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.

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
    s, t = check_matrix(scores, targets)
    tar, non = mated_pools(s, t)
    e = eer_result(tar, non)
    return BaselineResult(
        n_trials=int(s.shape[0]),
        n_enrolled=int(s.shape[1]),
        eer=e.eer,
        eer_threshold=e.threshold,
        eer_rocch=eer_rocch(tar, non),
        cllr=_cllr(tar, non),
        min_cllr=min_cllr(tar, non),
        linkability=linkability(s, t),
    )
