"""Standard speaker-verification outputs: DET curve, minDCF / actDCF, APE curve and d'.

The numbers every ASV and VoicePrivacy paper reports, so that published results can be set
beside ours. All are functions of the target (mated) and non-target (non-mated) score pools
``tar`` and ``non`` (the 1-to-1 view of the score matrix).

Conventions
-----------
- **Operating points.** A threshold ``t`` accepts a score ``s`` when ``s > t``:
  P_miss(t) = P(tar <= t), P_fa(t) = P(non > t), as the EER (a tie counts against the
  attacker). The operating points are those of every pooled score taken as threshold plus
  ``t = -inf`` (accept everything: P_miss 0, P_fa 1); the highest score gives (1, 0). Thresholds
  between two consecutive scores give the same point as the lower one, so this is the full set
  of the BOSARIS / PYLLR / SpeechBrain definitions, extremes included.
- **DCF** (NIST SRE): C_det = C_miss P_target P_miss + C_fa (1 - P_target) P_fa, normalised
  by the cost of the best fixed decision, min(C_miss P_target, C_fa (1 - P_target)).
  ``min_dcf`` is the minimum over all operating points (the lowest threshold reaching it is
  reported); ``act_dcf`` (only for scores that are calibrated natural-log LLRs) is the cost at
  the Bayes threshold ``-logit(P_eff)``, P_eff = C_miss P_target / (C_miss P_target + C_fa
  (1 - P_target)), accepting LLRs strictly above it (BOSARIS also accepts an LLR equal to it;
  the two differ only for scores exactly at the threshold).
- **APE curve** (Brümmer & du Preez 2006; PYLLR): the normalised Bayes error rate
  E(P) / min(P, 1 - P) against the prior log-odds logit(P), for the scores as LLRs (actual),
  for the best threshold at each prior (minimum, the ROC convex hull; equal to the error of the
  PAV-calibrated scores) and for the default system that always takes the prior's decision
  (1 everywhere).
- **d'** = (mean_tar - mean_non) / sqrt((var_tar + var_non) / 2), population variances.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._validation import check_pools

__all__ = [
    "DEFAULT_P_TARGETS",
    "APECurve",
    "DCFResult",
    "DETCurve",
    "VerificationResult",
    "ape_curve",
    "d_prime",
    "dcf",
    "det_curve",
    "operating_points",
    "verification",
]

DEFAULT_P_TARGETS: tuple[float, ...] = (0.01, 0.001)
"""Target priors of the reported DCFs (the NIST SRE / VoicePrivacy operating points)."""


def _default_prior_log_odds() -> NDArray[np.float64]:
    """201 natural-log prior odds from -10 to 10 (the ECE profiles' range)."""
    return np.linspace(-10.0, 10.0, 201)


def _readonly(a: ArrayLike) -> NDArray[np.float64]:
    out = np.array(a, dtype=np.float64)
    out.flags.writeable = False
    return out


def _check_costs(
    p_targets: float | Sequence[float], c_miss: float, c_fa: float
) -> NDArray[np.float64]:
    p = np.atleast_1d(np.asarray(p_targets, dtype=np.float64))
    if p.ndim != 1 or p.size == 0 or not np.all((p > 0) & (p < 1)):
        raise VoxMetricsInputError(
            f"p_target values must lie strictly between 0 and 1, got {p.tolist()}; e.g. 0.01."
        )
    for v, nm in ((c_miss, "c_miss"), (c_fa, "c_fa")):
        if not (math.isfinite(v) and v > 0):
            raise VoxMetricsInputError(f"`{nm}` must be a positive number, got {v}.")
    return p


def operating_points(
    tar: ArrayLike, non: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Every (P_miss, P_fa) operating point of the pools, by sorting and searching.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores (finite).

    Returns
    -------
    thresholds, pmiss, pfa : ndarray of float64, shape (K + 1,)
        ``-inf`` then the K unique pooled scores in ascending order; P_miss = P(tar <= t)
        (non-decreasing, 0 then ... 1) and P_fa = P(non > t) (non-increasing, 1 then ... 0).

    Examples
    --------
    >>> t, pmiss, pfa = operating_points([2.0, 3.0], [1.0, 2.0])
    >>> t.tolist(), pmiss.tolist(), pfa.tolist()
    ([-inf, 1.0, 2.0, 3.0], [0.0, 0.0, 0.5, 1.0], [1.0, 0.5, 0.0, 0.0])
    """
    tar, non = check_pools(tar, non)
    st, sn = np.sort(tar), np.sort(non)
    u = np.unique(np.concatenate([st, sn]))
    pmiss = np.searchsorted(st, u, side="right") / st.size
    pfa = 1.0 - np.searchsorted(sn, u, side="right") / sn.size
    return (
        np.concatenate([[-np.inf], u]),
        np.concatenate([[0.0], pmiss]),
        np.concatenate([[1.0], pfa]),
    )


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


@dataclass(frozen=True)
class DCFResult:
    """Normalised minimum and actual detection costs at one or more target priors."""

    p_targets: NDArray[np.float64]
    """Target priors P_target, shape (P,)."""
    min_dcf: NDArray[np.float64]
    """Normalised minDCF at each prior, in [0, 1]."""
    min_thresholds: NDArray[np.float64]
    """Lowest threshold reaching each minDCF (``-inf``: accept everything)."""
    act_dcf: NDArray[np.float64] | None
    """Normalised actDCF at each prior (scores taken as LLRs); None when they are not LLRs."""
    c_miss: float = 1.0
    """Cost of a miss."""
    c_fa: float = 1.0
    """Cost of a false alarm."""

    @property
    def p_effective(self) -> NDArray[np.float64]:
        """Effective target priors C_miss P / (C_miss P + C_fa (1 - P))."""
        a = self.c_miss * self.p_targets
        return a / (a + self.c_fa * (1.0 - self.p_targets))

    def to_dict(self) -> dict[str, dict[str, float | None]]:
        """``{"0.01": {"min_dcf": x, "act_dcf": y or None}, ...}`` (keys: the priors)."""
        act = self.act_dcf
        return {
            f"{p:g}": {
                "min_dcf": float(self.min_dcf[i]),
                "act_dcf": None if act is None else float(act[i]),
            }
            for i, p in enumerate(self.p_targets.tolist())
        }


def dcf(
    tar: ArrayLike,
    non: ArrayLike,
    *,
    p_targets: float | Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
) -> DCFResult:
    """Normalised minDCF (and actDCF for LLRs) at each target prior.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.
    p_targets : float or sequence of float, default (0.01, 0.001)
        Target priors, each in (0, 1).
    c_miss, c_fa : float, default 1
        Costs of a miss and of a false alarm.
    scores_are_llrs : bool, default False
        The scores are calibrated natural-log LLRs: add the actual DCF at the Bayes threshold
        ``-logit(P_eff)`` (accepting scores above it).

    Returns
    -------
    DCFResult

    Examples
    --------
    Hand-computed: with tar = [1, 3], non = [0, 2] and P_target = 0.5 the best thresholds are
    0 (P_miss 0, P_fa 1/2) and 2 (1/2, 0): C = 0.5 * 0.5 = 0.25, normalised by 0.5 gives 0.5;
    the lower one is reported. As LLRs the Bayes threshold is 0, so actDCF = 0.5 too.

    >>> r = dcf([1.0, 3.0], [0.0, 2.0], p_targets=[0.5], scores_are_llrs=True)
    >>> r.min_dcf.tolist(), r.act_dcf.tolist(), r.min_thresholds.tolist()
    ([0.5], [0.5], [0.0])
    >>> r.to_dict()
    {'0.5': {'min_dcf': 0.5, 'act_dcf': 0.5}}
    """
    p = _check_costs(p_targets, c_miss, c_fa)
    return _dcf(_Pools(tar, non), p, float(c_miss), float(c_fa), scores_are_llrs)


def _dcf(
    pools: _Pools, p: NDArray[np.float64], c_miss: float, c_fa: float, scores_are_llrs: bool
) -> DCFResult:
    st, sn = pools.st, pools.sn
    thr, misses, fas = pools.candidates
    pmiss, pfa = misses / st.size, fas / sn.size
    a = c_miss * p
    b = c_fa * (1.0 - p)
    norm = np.minimum(a, b)
    best = np.empty(p.size, dtype=np.intp)
    low = np.empty(p.size)
    for k in range(p.size):  # one pass over the candidates per prior
        cost = a[k] * pmiss + b[k] * pfa
        low[k] = cost.min()
        # the lowest threshold at the minimum; costs equal in exact arithmetic can differ in
        # the last bits, so ties are taken within a relative 1e-12
        best[k] = np.argmax(cost <= low[k] + 1e-12 * low[k])
    accept_all = b <= low + 1e-12 * low  # t = -inf (P_fa = 1): the lowest threshold if tied
    min_thr = np.where(accept_all, -np.inf, thr[best])
    min_dcf = np.minimum(np.minimum(low, b) / norm, 1.0)
    act = None
    if scores_are_llrs:
        bayes = np.log(b) - np.log(a)  # -logit(P_eff)
        act_miss = np.searchsorted(st, bayes, side="right") / st.size
        act_fa = 1.0 - np.searchsorted(sn, bayes, side="right") / sn.size
        act = _readonly((a * act_miss + b * act_fa) / norm)
    return DCFResult(
        p_targets=_readonly(p),
        min_dcf=_readonly(min_dcf),
        min_thresholds=_readonly(min_thr),
        act_dcf=act,
        c_miss=float(c_miss),
        c_fa=float(c_fa),
    )


@dataclass(frozen=True)
class DETCurve:
    """Detection error trade-off: every operating point and the ROC convex hull."""

    thresholds: NDArray[np.float64]
    """Thresholds of the (possibly thinned) operating points, ascending, from ``-inf``."""
    pmiss: NDArray[np.float64]
    """Miss rate at each threshold (the steppy curve)."""
    pfa: NDArray[np.float64]
    """False-alarm rate at each threshold."""
    rocch_pmiss: NDArray[np.float64]
    """Miss rates of the ROC convex hull vertices (ROCCH points)."""
    rocch_pfa: NDArray[np.float64]
    """False-alarm rates of the ROC convex hull vertices."""
    n_points: int
    """Operating points before thinning."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe lists (the ``-inf`` threshold as None)."""
        thr = [None if not math.isfinite(t) else t for t in self.thresholds.tolist()]
        return {
            "thresholds": thr,
            "pmiss": self.pmiss.tolist(),
            "pfa": self.pfa.tolist(),
            "rocch_pmiss": self.rocch_pmiss.tolist(),
            "rocch_pfa": self.rocch_pfa.tolist(),
            "n_points": self.n_points,
        }


def _thin(n: int, max_points: int | None) -> NDArray[np.intp]:
    if max_points is None or n <= max_points:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, max_points)).astype(np.intp))


def det_curve(tar: ArrayLike, non: ArrayLike, *, max_points: int | None = None) -> DETCurve:
    """DET curve: the operating points (steppy curve) and the ROCCH points.

    The ROC convex hull is computed from the points that can minimise a cost (one per unique
    target score) and equals :func:`voxmetrics.metrics.pav.rocch` (tested).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.
    max_points : int, optional
        Keep at most about this many operating points (for figures of very large pools): an
        exact subset, at target and non-target scores evenly spaced in rank, always with both
        ends; None keeps all.

    Returns
    -------
    DETCurve
        Plot ``pfa`` against ``pmiss`` on probit (normal-deviate) axes.

    Examples
    --------
    >>> c = det_curve([1.0, 2.0], [0.0, 3.0])
    >>> c.pmiss.tolist(), c.pfa.tolist()
    ([0.0, 0.0, 0.5, 1.0, 1.0], [1.0, 0.5, 0.5, 0.5, 0.0])
    >>> c.rocch_pmiss.tolist(), c.rocch_pfa.tolist()
    ([0.0, 0.0, 1.0], [1.0, 0.5, 0.0])
    """
    if max_points is not None and max_points < 2:
        raise VoxMetricsInputError(f"`max_points` must be at least 2, got {max_points}.")
    return _det(_Pools(tar, non), max_points)


def _det(pools: _Pools, max_points: int | None) -> DETCurve:
    st, sn = pools.st, pools.sn
    ut = st[np.concatenate([[True], st[1:] != st[:-1]])]
    n_unique_non = 1 + int(np.count_nonzero(sn[1:] != sn[:-1]))  # a bool mask, no copy
    shared = int(np.count_nonzero(sn[np.minimum(np.searchsorted(sn, ut), sn.size - 1)] == ut))
    n_points = ut.size + n_unique_non - shared + 1
    if max_points is None or n_points <= max_points:
        thr = np.concatenate([[-np.inf], np.union1d(ut, sn)])
    else:
        # an exact subset: target and non-target scores evenly spaced in rank, both ends kept
        half = max(2, (max_points - 1) // 2)
        thr = np.concatenate(
            [[-np.inf], np.union1d(ut[_thin(ut.size, half)], sn[_thin(sn.size, half)])]
        )
    pmiss = np.searchsorted(st, thr, side="right") / st.size
    pfa = 1.0 - np.searchsorted(sn, thr, side="right") / sn.size
    h_miss, h_fa = pools.hull
    return DETCurve(
        thresholds=_readonly(thr),
        pmiss=_readonly(pmiss),
        pfa=_readonly(pfa),
        rocch_pmiss=_readonly(h_miss),
        rocch_pfa=_readonly(h_fa),
        n_points=n_points,
    )


@dataclass(frozen=True)
class APECurve:
    """Normalised Bayes error rate against the prior log-odds (APE plot)."""

    prior_log_odds: NDArray[np.float64]
    """logit(P), natural log, ascending."""
    minimum: NDArray[np.float64]
    """Normalised Bayes error of the best threshold at each prior (ROCCH / PAV), in [0, 1]."""
    actual: NDArray[np.float64] | None
    """Normalised Bayes error of the scores taken as LLRs; None when they are not LLRs."""
    default: NDArray[np.float64] = field(repr=False, default=None)  # type: ignore[assignment]
    """The default system (always the prior's decision): 1 everywhere."""

    def __post_init__(self) -> None:
        if self.default is None:
            object.__setattr__(self, "default", _readonly(np.ones_like(self.prior_log_odds)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe lists."""
        return {
            "prior_log_odds": self.prior_log_odds.tolist(),
            "minimum": self.minimum.tolist(),
            "actual": None if self.actual is None else self.actual.tolist(),
            "default": self.default.tolist(),
        }


def ape_curve(
    tar: ArrayLike,
    non: ArrayLike,
    *,
    prior_log_odds: ArrayLike | None = None,
    scores_are_llrs: bool = False,
) -> APECurve:
    """APE / normalised Bayes error-rate curve (Brümmer & du Preez 2006, as PYLLR plots it).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.
    prior_log_odds : array_like, optional
        Natural-log prior odds (default 201 points from -10 to 10).
    scores_are_llrs : bool, default False
        Add the actual curve: decisions at the Bayes threshold ``-prior_log_odds``.

    Returns
    -------
    APECurve

    Examples
    --------
    Separable pools have zero minimum error at every prior:

    >>> c = ape_curve([2.0, 3.0], [0.0, 1.0], prior_log_odds=[-1.0, 0.0, 1.0])
    >>> c.minimum.tolist(), c.default.tolist()
    ([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    """
    pools = _Pools(tar, non)
    if prior_log_odds is None:
        plo = _default_prior_log_odds()
    else:
        plo = np.asarray(prior_log_odds, dtype=np.float64).ravel()
        if plo.size == 0 or not np.isfinite(plo).all():
            raise VoxMetricsInputError("`prior_log_odds` must be finite numbers (natural log).")
    return _ape(pools, plo, scores_are_llrs)


def _ape(pools: _Pools, plo: NDArray[np.float64], scores_are_llrs: bool) -> APECurve:
    st, sn = pools.st, pools.sn
    p = 1.0 / (1.0 + np.exp(-plo))
    norm = np.minimum(p, 1.0 - p)
    h_miss, h_fa = pools.hull  # the minimum over its vertices is the minimum over all points
    ber = np.empty(p.size)
    step = max(1, 4_000_000 // h_miss.size)  # bounded memory: blocks of priors
    for lo in range(0, p.size, step):
        q = p[lo : lo + step, None]
        ber[lo : lo + step] = (q * h_miss[None, :] + (1.0 - q) * h_fa[None, :]).min(axis=1)
    minimum = np.minimum(ber / norm, 1.0)
    actual = None
    if scores_are_llrs:
        pmiss = np.searchsorted(st, -plo, side="right") / st.size
        pfa = 1.0 - np.searchsorted(sn, -plo, side="right") / sn.size
        actual = _readonly((p * pmiss + (1.0 - p) * pfa) / norm)
    return APECurve(prior_log_odds=_readonly(plo), minimum=_readonly(minimum), actual=actual)


def d_prime(tar: ArrayLike, non: ArrayLike) -> float:
    """Sensitivity index d' = (mean_tar - mean_non) / sqrt((var_tar + var_non) / 2).

    Population variances (ddof = 0). When both pools are constant the ratio is +-inf (or 0 for
    equal means), with a :class:`~voxmetrics.errors.DegenerateDataWarning`.

    Examples
    --------
    >>> d_prime([1.0, 3.0], [0.0, 2.0])  # means 2 and 1, variances 1 and 1
    1.0
    """
    tar, non = check_pools(tar, non)
    diff = float(tar.mean() - non.mean())
    spread = math.sqrt((float(tar.var()) + float(non.var())) / 2.0)
    if spread == 0.0:
        warnings.warn(
            "d': both score pools are constant, so d' is infinite (or 0 for equal means).",
            DegenerateDataWarning,
            stacklevel=2,
        )
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff / spread


@dataclass(frozen=True)
class VerificationResult:
    """The standard ASV outputs of one pair of pools."""

    dcf: DCFResult
    """minDCF / actDCF at the target priors."""
    det: DETCurve
    """DET curve and ROCCH points."""
    ape: APECurve
    """APE (normalised Bayes error) curves."""
    d_prime: float
    """Sensitivity index d'."""
    scores_are_llrs: bool
    """Whether the actual (LLR) costs were computed."""

    def to_dict(self) -> dict[str, Any]:
        """``{"dcf": {...}, "d_prime": x}`` (d' None when infinite); curves are left out."""
        return {
            "dcf": self.dcf.to_dict(),
            "d_prime": self.d_prime if math.isfinite(self.d_prime) else None,
        }


def verification(
    tar: ArrayLike,
    non: ArrayLike,
    *,
    p_targets: float | Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
    max_det_points: int | None = 2000,
) -> VerificationResult:
    """DCFs, DET curve, APE curve and d' of the pools in one call (see the functions).

    Examples
    --------
    >>> v = verification([1.0, 3.0], [0.0, 2.0], p_targets=[0.5])
    >>> v.to_dict()
    {'dcf': {'0.5': {'min_dcf': 0.5, 'act_dcf': None}}, 'd_prime': 1.0}
    """
    p = _check_costs(p_targets, c_miss, c_fa)
    if max_det_points is not None and max_det_points < 2:
        raise VoxMetricsInputError(f"`max_det_points` must be at least 2, got {max_det_points}.")
    pools = _Pools(tar, non)  # sorted once for all of them
    return VerificationResult(
        dcf=_dcf(pools, p, float(c_miss), float(c_fa), scores_are_llrs),
        det=_det(pools, max_det_points),
        ape=_ape(pools, _default_prior_log_odds(), scores_are_llrs),
        d_prime=d_prime(tar, non),
        scores_are_llrs=scores_are_llrs,
    )
