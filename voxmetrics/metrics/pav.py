"""Pool-adjacent-violators calibration and the ROC convex hull (metrics.md sections 1 and 3).

Pooled scores are sorted ascending with **targets before non-targets at equal scores**, so a
tie never counts for the attacker (metrics.md section 0, as PYLLR does). The isotonic fit is
``scipy.optimize.isotonic_regression``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import isotonic_regression

from voxmetrics.metrics._validation import check_pools

__all__ = ["pav_llrs", "rocch"]


def _sorted_labels(
    tar: NDArray[np.float64], non: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Order of the pooled scores (ascending, targets first at ties) and the sorted 0/1 labels.

    ``order`` indexes ``concatenate([tar, non])``. Each pool is sorted on its own (stable) and
    the two are merged by ``searchsorted``: a target goes before every non-target that is not
    strictly smaller, i.e. before the equal ones. Faster than one sort of the pooled scores.
    """
    ot, on = np.argsort(tar, kind="stable"), np.argsort(non, kind="stable")
    pos_tar = np.arange(tar.size) + np.searchsorted(non[on], tar[ot], side="left")
    y = np.zeros(tar.size + non.size)
    y[pos_tar] = 1.0
    order = np.empty(y.size, dtype=np.intp)
    order[pos_tar] = ot
    order[y == 0.0] = on + tar.size
    return order, y


def _sorted_llrs(
    y: NDArray[np.float64], n_tar: int, n_non: int, *, laplace: bool
) -> NDArray[np.float64]:
    """PAV LLRs of sorted labels ``y`` (optionally with Laplace's dummies), in sorted order."""
    if laplace:
        y = np.concatenate([[1.0, 0.0], y, [1.0, 0.0]])
    p = isotonic_regression(y).x
    if laplace:
        p = p[2:-2]
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p) - np.log(n_tar / n_non)


def pav_llrs(
    tar: ArrayLike, non: ArrayLike, *, laplace: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """PAV-calibrated natural-log LLRs of every target and non-target score.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target (mated) and non-target (non-mated) scores; any monotone scale.
    laplace : bool, default False
        Apply Laplace's rule (metrics.md section 3): two dummy trials (a target, then a
        non-target) below the lowest and two above the highest score, so every LLR is finite.

    Returns
    -------
    tar_llr, non_llr : ndarray of float64
        LLR = logit(P) - ln(N_tar / N_non) for each input score, in the input order. Without
        Laplace they may be +-inf.

    Examples
    --------
    >>> t, n = pav_llrs([2.0, 3.0], [0.0, 1.0])
    >>> t.tolist(), n.tolist()
    ([inf, inf], [-inf, -inf])
    >>> t, n = pav_llrs([2.0, 3.0], [0.0, 1.0], laplace=True)
    >>> bool(np.isfinite(t).all() and np.isfinite(n).all())
    True
    """
    tar, non = check_pools(tar, non)
    order, y = _sorted_labels(tar, non)
    llr_sorted = _sorted_llrs(y, tar.size, non.size, laplace=laplace)
    llr = np.empty_like(llr_sorted)
    llr[order] = llr_sorted
    return llr[: tar.size], llr[tar.size :]


def rocch(tar: ArrayLike, non: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Vertices of the ROC convex hull, as BOSARIS ``rocch``.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.

    Returns
    -------
    pmiss, pfa : ndarray of float64
        Miss and false-alarm rates at the hull vertices, from (pmiss 0, pfa 1) to (1, 0):
        pmiss non-decreasing, pfa non-increasing.

    Examples
    --------
    >>> pmiss, pfa = rocch([1.0, 2.0], [0.0, 3.0])
    >>> pmiss.tolist(), pfa.tolist()
    ([0.0, 0.0, 1.0], [1.0, 0.5, 0.0])
    """
    tar, non = check_pools(tar, non)
    _, y = _sorted_labels(tar, non)
    p = isotonic_regression(y).x
    # last sorted index of every PAV bin: the hull's vertices sit between bins
    ends = np.flatnonzero(np.diff(p) != 0)
    cum_tar = np.cumsum(y)
    cum_non = np.cumsum(1.0 - y)
    pmiss = np.concatenate([[0.0], cum_tar[ends] / tar.size, [1.0]])
    pfa = np.concatenate([[1.0], (non.size - cum_non[ends]) / non.size, [0.0]])
    return pmiss, pfa
