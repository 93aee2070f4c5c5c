"""The pooled metrics as they were before the sorted-runs fast path: the slow reference.

A copy of the element-by-element implementations (one stable sort of every pooled score per
metric), kept only so the tests can prove the fast paths equal to them. The one addition is
``targets_first`` (False: non-targets before targets at equal scores). Not part of the library.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
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


def _candidates(
    st: NDArray[np.float64], sn: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """The operating points that can minimise a detection cost, from sorted pools.

    Between two consecutive target scores P_miss is constant and P_fa can only fall as the
    threshold rises, so every minimum of C_miss P P_miss + C_fa (1 - P) P_fa is reached just
    below a target score or after the last one. For each unique target score u this returns the
    point just below it (P_miss = P(tar < u), P_fa = P(non >= u)) and its lowest threshold (the
    largest pooled score below u, -inf if none), then the "reject all" point (1, 0) at the
    highest score. O(Nt log Nn) after sorting: no pass over all pooled scores. The rates
    are returned as counts (misses out of Nt, false alarms out of Nn), exact integers.
    """
    u = np.concatenate([st[:1], st[1:][np.diff(st) != 0]])
    i = np.searchsorted(st, u, side="left")
    j = np.searchsorted(sn, u, side="left")
    below_t = np.where(i > 0, st[np.maximum(i - 1, 0)], -np.inf)
    below_n = np.where(j > 0, sn[np.maximum(j - 1, 0)], -np.inf)
    top = max(st[-1], sn[-1])
    return (
        np.concatenate([np.maximum(below_t, below_n), [top]]),
        np.concatenate([i, [st.size]]).astype(np.int64),
        np.concatenate([sn.size - j, [0]]).astype(np.int64),
    )


def _lower_hull(
    misses: NDArray[np.int64], fas: NDArray[np.int64], n_tar: int, n_non: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower-left convex hull of count points sorted by misses ascending, false alarms descending.

    Andrew's monotone chain over the candidate points (one per unique target score), with
    the chord end (0 misses, all false alarms) prepended: the ROC convex hull, as BOSARIS
    ``rocch``. Cross products of integer counts (scaled by the other pool's size) are exact,
    so collinear points are always dropped. Returns the rates (P_miss, P_fa).
    """
    xs = np.concatenate([[0], misses]).astype(np.int64) * n_non  # common denominator
    ys = np.concatenate([[n_non], fas]).astype(np.int64) * n_tar
    xs_l, ys_l = xs.tolist(), ys.tolist()  # Python ints: no overflow
    hull: list[int] = []
    for k in range(xs.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (xs_l[b] - xs_l[a]) * (ys_l[k] - ys_l[a]) - (ys_l[b] - ys_l[a]) * (
                xs_l[k] - xs_l[a]
            )
            if cross <= 0:  # b is not strictly below the chord a-k: drop it
                hull.pop()
            else:
                break
        hull.append(k)
    idx = np.asarray(hull)
    return xs[idx] / (n_tar * n_non), ys[idx] / (n_tar * n_non)


class _Pools:
    """Sorted target and non-target pools, validated once, with the cost candidates and hull."""

    def __init__(self, tar: ArrayLike, non: ArrayLike) -> None:
        tar, non = check_pools(tar, non)
        self.st, self.sn = np.sort(tar), np.sort(non)

    @cached_property
    def candidates(self) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
        return _candidates(self.st, self.sn)

    @cached_property
    def hull(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        _, misses, fas = self.candidates
        return _lower_hull(misses, fas, self.st.size, self.sn.size)


def _thin(n: int, max_points: int | None) -> NDArray[np.intp]:
    if max_points is None or n <= max_points:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, max_points)).astype(np.intp))


# --- DET / minDCF / actDCF / APE / d' as they were before the sorted-runs path ---------------


def dcf_reference(tar, non, p_targets, c_miss=1.0, c_fa=1.0, scores_are_llrs=False):
    """(min_dcf, min_thresholds, act_dcf or None) by sorting copies of both pools."""
    pools = _Pools(tar, non)
    st, sn = pools.st, pools.sn
    p = np.atleast_1d(np.asarray(p_targets, dtype=np.float64))
    thr, misses, fas = pools.candidates
    pmiss, pfa = misses / st.size, fas / sn.size
    a = c_miss * p
    b = c_fa * (1.0 - p)
    norm = np.minimum(a, b)
    best = np.empty(p.size, dtype=np.intp)
    low = np.empty(p.size)
    for k in range(p.size):
        cost = a[k] * pmiss + b[k] * pfa
        low[k] = cost.min()
        best[k] = np.argmax(cost <= low[k] + 1e-12 * low[k])
    accept_all = b <= low + 1e-12 * low
    min_thr = np.where(accept_all, -np.inf, thr[best])
    min_dcf = np.minimum(np.minimum(low, b) / norm, 1.0)
    act = None
    if scores_are_llrs:
        bayes = np.log(b) - np.log(a)
        act_miss = np.searchsorted(st, bayes, side="right") / st.size
        act_fa = 1.0 - np.searchsorted(sn, bayes, side="right") / sn.size
        act = (a * act_miss + b * act_fa) / norm
    return min_dcf, min_thr, act


def det_reference(tar, non):
    """(thresholds, pmiss, pfa, rocch_pmiss, rocch_pfa): every operating point, unthinned."""
    pools = _Pools(tar, non)
    st, sn = pools.st, pools.sn
    thr = np.concatenate([[-np.inf], np.union1d(st, sn)])
    pmiss = np.searchsorted(st, thr, side="right") / st.size
    pfa = 1.0 - np.searchsorted(sn, thr, side="right") / sn.size
    h_miss, h_fa = pools.hull
    return thr, pmiss, pfa, h_miss, h_fa


def ape_reference(tar, non, plo, scores_are_llrs=False):
    """(minimum, actual or None) of the APE curve at the prior log-odds ``plo``."""
    pools = _Pools(tar, non)
    st, sn = pools.st, pools.sn
    plo = np.asarray(plo, dtype=np.float64)
    p = 1.0 / (1.0 + np.exp(-plo))
    norm = np.minimum(p, 1.0 - p)
    h_miss, h_fa = pools.hull
    ber = (p[:, None] * h_miss[None, :] + (1.0 - p[:, None]) * h_fa[None, :]).min(axis=1)
    minimum = np.minimum(ber / norm, 1.0)
    actual = None
    if scores_are_llrs:
        pmiss = np.searchsorted(st, -plo, side="right") / st.size
        pfa = 1.0 - np.searchsorted(sn, -plo, side="right") / sn.size
        actual = (p * pmiss + (1.0 - p) * pfa) / norm
    return minimum, actual


def d_prime_reference(tar, non):
    """d' from float64 copies of both pools (nan when both are constant)."""
    tar, non = check_pools(tar, non)
    spread = math.sqrt((float(tar.var()) + float(non.var())) / 2.0)
    if spread == 0.0:
        return math.nan
    return float(tar.mean() - non.mean()) / spread


def chance_levels_reference(s, calibration=None, n_draws=200, seed=0, q=0.95, ties="reference"):
    """``chance_levels`` as it was: every entry of every row ranked by SciPy's rankdata."""
    from scipy.special import log_softmax
    from scipy.stats import rankdata

    from voxmetrics.metrics._resampled import srd_from_hist
    from voxmetrics.metrics.chance import MAX_DRAWN
    from voxmetrics.metrics.legal import linkability_grid
    from voxmetrics.metrics.lid import row_znorm

    s = np.asarray(s)
    n_trials, n = s.shape
    n_draws = max(1, min(n_draws, max(20, MAX_DRAWN // n_trials)))
    cols = np.random.default_rng(seed).integers(0, n, size=(n_draws, n_trials))
    sb = s.astype(np.float64)
    r = np.arange(n_trials)
    ranks = rankdata(-sb, method="max" if ties == "reference" else "min", axis=1)
    drawn = ranks.astype(np.int32)[r, cols]
    values = {"linkability": int((rankdata(-sb, method="min", axis=1) == 1).sum()) / s.size}
    h = np.zeros((n_draws, n))
    np.add.at(h, (np.repeat(np.arange(n_draws), n_trials), drawn.ravel() - 1), 1.0)
    for k, v in srd_from_hist(h, q).items():
        values[k] = float(np.mean(v))
    if calibration is not None:
        z, _ = row_znorm(sb, ddof=calibration.ddof)
        lid_all = (math.log(n) + log_softmax(calibration.w * z, axis=1)) / _LN2
        values["alid"] = float(lid_all.sum()) / s.size
        values["pdr"] = int((lid_all > 0).sum()) / s.size
        x = lid_all[r, cols]
        values["lid_max"] = float(x.max(axis=1).mean())
    grid = linkability_grid(n)
    return values, grid
