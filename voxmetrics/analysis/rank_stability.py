"""How firm a ranking by bands is under resampling of speakers: arrays in, arrays out.

What this is: the replicate-by-replicate arithmetic behind the stability of VoicePrivacy's
ranking (:func:`voxmetrics.analysis.ranking.voiceprivacy_ranking`): which systems enter each
band in each replicate, their ranks there, and Kendall's τ between the point ranking and each
replicate's. What this is not: the ranking's rule or its tables (the ranking module), nor how
the replicates are drawn and paired across systems (:mod:`voxmetrics.evaluation.stability`).

The method follows the literature on the stability of challenge rankings (Maier-Hein et al.
2018, Nature Communications; the challengeR package, Wiesenfarth et al. 2021): rank the systems
again in every bootstrap replicate, then report, per system, the share of replicates in which
it enters a band (``p_band``), the 95 % interval of its rank over the replicates where it is in
the band (``rank_interval``), the share of replicates where it ranks first (``p_rank1``) and,
per band, Kendall's τ between the point ranking and the replicates' rankings.

In a replicate, the systems of a band are ranked exactly as the point ranking ranks them: by
WER (lower first), then UAR (higher first, unknown after every known one); equal keys share a
rank ("1224" competition ranking).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["band_ranks", "kendall_tau_b", "rank_interval", "tau_summary"]

RANK_CONFIDENCE = 0.95
"""Coverage of :func:`rank_interval`."""


def band_ranks(in_band: ArrayLike, wer: ArrayLike, neg_uar: ArrayLike) -> NDArray[np.float64]:
    """The rank of each system within the band in each replicate (NaN when not in the band).

    Parameters
    ----------
    in_band : array_like of bool, shape (B, n)
        Whether system i is in the band in replicate b.
    wer, neg_uar : array_like of float, shape (B, n)
        The ranking keys (WER, and minus the UAR with unknown UARs as +inf).

    Returns
    -------
    ndarray, shape (B, n)
        1 + the number of systems of the band with a strictly smaller (WER, -UAR) key.

    Examples
    --------
    >>> band_ranks([[True, True, False]], [[0.1, 0.1, 0.0]], [[-0.5, -0.6, 0.0]]).tolist()
    [[2.0, 1.0, nan]]
    """
    m = np.asarray(in_band, dtype=bool)
    w = np.asarray(wer, dtype=np.float64)
    u = np.asarray(neg_uar, dtype=np.float64)
    # before[b, i, j]: system j beats system i in replicate b
    before = (w[:, None, :] < w[:, :, None]) | (
        (w[:, None, :] == w[:, :, None]) & (u[:, None, :] < u[:, :, None])
    )
    ranks = 1.0 + (before & m[:, None, :]).sum(axis=2)
    return np.where(m, ranks, np.nan)


def rank_interval(ranks: ArrayLike, point: int) -> tuple[int, int]:
    """The 95 % interval of one system's rank over the replicates where it is ranked.

    The 2.5 and 97.5 percentiles (inverted CDF, so both ends are ranks it took), widened to
    hold the point rank (it never excludes the ranking it qualifies); the point rank alone
    when the system is never in the band.

    Examples
    --------
    >>> rank_interval([1, 1, 2, 1, float("nan")], 1)
    (1, 2)
    >>> rank_interval([2, 2, 2], 1)
    (1, 2)
    """
    r = np.asarray(ranks, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return point, point
    a = (1.0 - RANK_CONFIDENCE) / 2
    lo, hi = np.quantile(r, [a, 1 - a], method="inverted_cdf")
    return min(int(lo), point), max(int(hi), point)


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """Kendall's τ-b between one ranking ``x`` (n,) and each row of ``y`` (B, n).

    Ties count as in :func:`scipy.stats.kendalltau` (τ-b); NaN where either side is constant.

    Examples
    --------
    >>> kendall_tau_b([1, 2, 3], [[1, 2, 3], [3, 2, 1], [1, 3, 2]]).round(4).tolist()
    [1.0, -1.0, 0.3333]
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.atleast_2d(np.asarray(y, dtype=np.float64))
    i, j = np.triu_indices(a.size, k=1)
    sa = np.sign(a[j] - a[i])  # (P,)
    sb = np.sign(b[:, j] - b[:, i])  # (B, P)
    s = (sb * sa).sum(axis=1)
    n0 = i.size
    ta = n0 - np.count_nonzero(sa)
    tb = n0 - np.count_nonzero(sb, axis=1)
    den = np.sqrt((n0 - ta) * (n0 - tb).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, s / np.where(den > 0, den, 1.0), np.nan)


def tau_summary(taus: ArrayLike) -> dict[str, float | None]:
    """Median and 95 % interval of Kendall's τ over the replicates where it is defined.

    Examples
    --------
    >>> tau_summary([1.0, 1.0, 0.5, float("nan")])["median"]
    1.0
    >>> tau_summary([float("nan")])
    {'median': None, 'low': None, 'high': None, 'n': 0}
    """
    t = np.asarray(taus, dtype=np.float64)
    t = t[np.isfinite(t)]
    if t.size == 0:
        return {"median": None, "low": None, "high": None, "n": 0}
    a = (1.0 - RANK_CONFIDENCE) / 2
    lo, hi = np.quantile(t, [a, 1 - a])
    return {"median": float(np.median(t)), "low": float(lo), "high": float(hi), "n": int(t.size)}
