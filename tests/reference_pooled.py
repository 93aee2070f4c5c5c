"""The pooled metrics as they were before the sorted-runs fast path: the slow reference.

A copy of the element-by-element implementations (one stable sort of every pooled score per
metric), kept only so the tests can prove the fast paths equal to them. The one addition is
``targets_first`` (False: non-targets before targets at equal scores). Not part of the library.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import isotonic_regression

from voxmetrics.metrics._validation import check_pools

_LN2 = math.log(2.0)


def _sorted_labels(
    tar: NDArray[np.float64], non: NDArray[np.float64], targets_first: bool = True
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    ot, on = np.argsort(tar, kind="stable"), np.argsort(non, kind="stable")
    side = "left" if targets_first else "right"
    pos_tar = np.arange(tar.size) + np.searchsorted(non[on], tar[ot], side=side)
    y = np.zeros(tar.size + non.size)
    y[pos_tar] = 1.0
    order = np.empty(y.size, dtype=np.intp)
    order[pos_tar] = ot
    order[y == 0.0] = on + tar.size
    return order, y


def _sorted_llrs(y, n_tar, n_non, *, laplace):
    if laplace:
        y = np.concatenate([[1.0, 0.0], y, [1.0, 0.0]])
    p = isotonic_regression(y).x
    if laplace:
        p = p[2:-2]
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p) - np.log(n_tar / n_non)


def pav_llrs(tar, non, *, laplace=False, targets_first=True):
    tar, non = check_pools(tar, non)
    order, y = _sorted_labels(tar, non, targets_first)
    llr_sorted = _sorted_llrs(y, tar.size, non.size, laplace=laplace)
    llr = np.empty_like(llr_sorted)
    llr[order] = llr_sorted
    return llr[: tar.size], llr[tar.size :]


def rocch(tar, non, targets_first=True):
    tar, non = check_pools(tar, non)
    _, y = _sorted_labels(tar, non, targets_first)
    p = isotonic_regression(y).x
    ends = np.flatnonzero(np.diff(p) != 0)
    cum_tar = np.cumsum(y)
    cum_non = np.cumsum(1.0 - y)
    pmiss = np.concatenate([[0.0], cum_tar[ends] / tar.size, [1.0]])
    pfa = np.concatenate([[1.0], (non.size - cum_non[ends]) / non.size, [0.0]])
    return pmiss, pfa


def eer_lowest(tar, non):
    """The former EER rule: the lowest threshold minimising |FAR - FRR| exactly."""
    tar, non = check_pools(tar, non)
    tar_s, non_s = np.sort(tar), np.sort(non)
    thresholds = np.unique(np.concatenate([tar_s, non_s]))
    n_fr = np.searchsorted(tar_s, thresholds, side="right").astype(np.int64)
    n_fa = non.size - np.searchsorted(non_s, thresholds, side="right").astype(np.int64)
    gap = np.abs(n_fa * np.int64(tar.size) - n_fr * np.int64(non.size))
    k = int(np.argmin(gap))
    far, frr = n_fa[k] / non.size, n_fr[k] / tar.size
    return float((far + frr) / 2), float(thresholds[k])


def eer_rocch(tar, non, targets_first=True):
    pmiss, pfa = rocch(tar, non, targets_first)
    x0, x1, y0, y1 = pfa[:-1], pfa[1:], pmiss[:-1], pmiss[1:]
    det = x0 * y1 - x1 * y0
    den = (x0 - x1) + (y1 - y0)
    ok = (x0 != x1) & (y0 != y1)
    seg = np.zeros_like(det)
    seg[ok] = det[ok] / den[ok]
    return float(max(0.0, seg.max()))


def _cllr(tar_llr, non_llr):
    c_tar = np.logaddexp(0.0, -tar_llr).mean()
    c_non = np.logaddexp(0.0, non_llr).mean()
    return float(0.5 * (c_tar + c_non) / np.log(2.0))


def min_cllr(tar, non, targets_first=True):
    tar, non = check_pools(tar, non)
    return min(_cllr(*pav_llrs(tar, non, targets_first=targets_first)), 1.0)


def _z(x, llr):
    out = np.empty_like(llr)
    inf = np.isinf(x)
    a = np.abs(llr)
    tiny = a < 1e-6
    series = (a >= 1e-6) & (a < 1e-2)
    mid = (a >= 1e-2) & (a <= 300.0) & ~inf
    big = (a > 300.0) & ~inf
    s = llr[series]
    out[series] = s * (
        1 / 6 + s * (-1 / 24 + s * (1 / 360 + s * (1 / 1440 + s * (-1 / 10080 - s / 60480))))
    )
    xm1 = np.expm1(llr[mid])
    out[mid] = ((xm1 - 2.0) * xm1 + 2.0 * llr[mid]) / (4.0 * xm1**2)
    with np.errstate(over="ignore"):
        xm1 = np.expm1(llr[big])
        out[big] = ((xm1 - 2.0) / xm1 + 2.0 * llr[big] / xm1**2) / 4.0
    out[inf] = 0.25
    out[tiny] = 0.0
    return out


def d_ece_from_llrs(t, n):
    with np.errstate(over="ignore"):
        zt = _z(np.exp(t), t)
        zn = _z(np.exp(-n), -n)
    return float((zt.mean() + zn.mean()) / _LN2)


def zebra(tar, non, targets_first=False):
    """(d_ece, log10_l, worst_is_mated, worst_index, worst_score)."""
    tar, non = check_pools(tar, non)
    order, y = _sorted_labels(tar, non, targets_first)
    llr = _sorted_llrs(y, tar.size, non.size, laplace=False)
    d_ece = d_ece_from_llrs(llr[y == 1.0], llr[y == 0.0])
    laplace = _sorted_llrs(y, tar.size, non.size, laplace=True)
    k = int(np.argmax(np.abs(laplace)))
    log10_l = float(abs(laplace[k]) / math.log(10.0))
    pos = int(order[k])
    mated = pos < tar.size
    index = pos if mated else pos - tar.size
    return d_ece, log10_l, bool(mated), index, float(tar[index] if mated else non[index])


def _ece(tar_llr, non_llr, lam):
    pi = 1.0 / (1.0 + np.exp(-lam))
    out = np.zeros_like(lam)
    for llr, sign, weight in ((tar_llr, -1.0, pi), (non_llr, 1.0, 1.0 - pi)):
        values, counts = np.unique(llr, return_counts=True)
        share = counts / llr.size
        for start in range(0, values.size, 4096):
            v, c = values[start : start + 4096], share[start : start + 4096]
            out += weight * (np.logaddexp(0.0, sign * (v[None, :] + lam[:, None])) @ c)
    return out / _LN2


def ece_minimum(tar, non, lam, targets_first=False):
    tar, non = check_pools(tar, non)
    _, y = _sorted_labels(tar, non, targets_first)
    llr = _sorted_llrs(y, tar.size, non.size, laplace=False)
    return _ece(llr[y == 1.0], llr[y == 0.0], lam)


def mated_pools(s, t):
    rows = np.arange(s.shape[0])
    mask = np.ones(s.shape, dtype=bool)
    mask[rows, t] = False
    return s[rows, t], s[mask]
