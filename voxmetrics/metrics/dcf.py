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
- **TAR at FAR** (VoxGuard, 2025: the low false-positive regime the EER hides): at each FAR
  level f, the highest true-accept rate 1 - P_miss(t) over the operating points with
  P_fa(t) <= f, and the lowest threshold reaching it; always defined (the "reject all" point has
  P_fa 0).
- **d'** = (mean_tar - mean_non) / sqrt((var_tar + var_non) / 2), population variances.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._validation import check_pools
from voxmetrics.metrics.pools import SortedPools

__all__ = [
    "DEFAULT_FAR_LEVELS",
    "DEFAULT_P_TARGETS",
    "APECurve",
    "DCFResult",
    "DETCurve",
    "TARAtFAR",
    "VerificationResult",
    "ape_curve",
    "ape_curve_from_pools",
    "d_prime",
    "d_prime_from_pools",
    "dcf",
    "dcf_from_pools",
    "det_curve",
    "det_curve_from_pools",
    "operating_points",
    "tar_at_far",
    "tar_at_far_from_pools",
    "verification",
    "verification_from_pools",
]

DEFAULT_P_TARGETS: tuple[float, ...] = (0.01, 0.001)
"""Target priors of the reported DCFs (the NIST SRE / VoicePrivacy operating points)."""

DEFAULT_FAR_LEVELS: tuple[float, ...] = (0.01, 0.001)
"""False-accept rates at which the true-accept rate is reported (1 % and 0.1 %)."""


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
    pools: SortedPools,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """The operating points that can minimise a detection cost, from the runs of the pools.

    Between two consecutive target scores P_miss is constant and P_fa can only fall as the
    threshold rises, so every minimum of C_miss P P_miss + C_fa (1 - P) P_fa is reached just
    below a target score or after the last one. For each distinct target score v_k this returns
    the point just below it (P_miss = P(tar < v_k), P_fa = P(non >= v_k)) and its lowest
    threshold (the largest pooled score below v_k: the highest non-target of the cell below
    v_k, else v_{k-1}, else -inf), then the "reject all" point (1, 0) at the highest score.
    O(K) from the run counts. The rates are returned as counts (misses out of Nt, false
    alarms out of Nn), exact integers.
    """
    c = pools.counts
    tar_at = c.tar_at.astype(np.int64)
    cells = c.cells.astype(np.int64)
    non_at = c.non_at.astype(np.int64)
    misses = np.concatenate([[0], np.cumsum(tar_at)])  # targets < v_k, then all of them
    # non-targets < v_k: cells 0..k and the non-targets at v_0..v_{k-1}
    non_below = np.cumsum(cells)[:-1] + np.concatenate([[0], np.cumsum(non_at)[:-1]])
    values = pools.values.astype(np.float64)
    prev = np.concatenate([[-np.inf], values[:-1]])
    thr = np.where(cells[:-1] > 0, pools.cell_last[:-1], prev)
    top = pools.cell_last[-1] if cells[-1] > 0 else values[-1]
    return (
        np.concatenate([thr, [top]]),
        misses,
        np.concatenate([pools.n_non - non_below, [0]]).astype(np.int64),
    )


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
    return dcf_from_pools(
        SortedPools.from_pools(tar, non),
        p_targets=p_targets,
        c_miss=c_miss,
        c_fa=c_fa,
        scores_are_llrs=scores_are_llrs,
    )


def dcf_from_pools(
    pools: SortedPools,
    *,
    p_targets: float | Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
) -> DCFResult:
    """:func:`dcf` of already sorted pools (e.g. ``SortedPools.of(matrix)``)."""
    p = _check_costs(p_targets, c_miss, c_fa)
    return _dcf(pools, p, float(c_miss), float(c_fa), scores_are_llrs)


def _dcf(
    pools: SortedPools,
    p: NDArray[np.float64],
    c_miss: float,
    c_fa: float,
    scores_are_llrs: bool,
    count_non_le: Callable[[ArrayLike], NDArray[np.int64]] | None = None,
) -> DCFResult:
    count_non_le = count_non_le or pools.count_non_le
    thr, misses, fas = _candidates(pools)
    pmiss, pfa = misses / pools.n_tar, fas / pools.n_non
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
        act_miss = pools.count_tar_le(bayes) / pools.n_tar
        act_fa = 1.0 - count_non_le(bayes) / pools.n_non
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
class TARAtFAR:
    """The true-accept rate at low false-accept rates (the attacker's high-precision regime)."""

    far_levels: NDArray[np.float64]
    """The FAR levels f asked for, shape (F,)."""
    tar: NDArray[np.float64]
    """The highest true-accept rate 1 - P_miss over the operating points with P_fa <= f."""
    far: NDArray[np.float64]
    """The false-accept rate reached at that point (<= f)."""
    thresholds: NDArray[np.float64]
    """The lowest threshold reaching it (accept scores above it; ``-inf``: accept all)."""

    def to_dict(self) -> dict[str, float]:
        """``{"0.01": tar, "0.001": tar}`` (keys: the FAR levels)."""
        return {f"{f:g}": float(t) for f, t in zip(self.far_levels, self.tar, strict=True)}


def _check_far_levels(far_levels: float | Sequence[float]) -> NDArray[np.float64]:
    f = np.atleast_1d(np.asarray(far_levels, dtype=np.float64))
    if f.ndim != 1 or f.size == 0 or not np.all((f >= 0) & (f < 1)):
        raise VoxMetricsInputError(
            f"FAR levels must lie in [0, 1), got {f.tolist()}; e.g. 0.01 and 0.001."
        )
    return f


def tar_at_far(
    tar: ArrayLike, non: ArrayLike, *, far_levels: float | Sequence[float] = DEFAULT_FAR_LEVELS
) -> TARAtFAR:
    """True-accept rate at each false-accept rate level (VoxGuard, 2025).

    A threshold ``t`` accepts scores above it (the EER's convention); the TAR at FAR f is the
    highest ``P(tar > t)`` among the thresholds with ``P(non > t) <= f``. It is reached just
    below a target score (or by rejecting everything), so it is read from the cost candidates
    of the sorted pools with exact counts.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.
    far_levels : float or sequence of float, default (0.01, 0.001)
        False-accept rates, each in [0, 1).

    Returns
    -------
    TARAtFAR

    Examples
    --------
    With non-targets 0..9 and targets 5.5 and 9.5: accepting above 9 takes the target 9.5 and
    no non-target (TAR 0.5 at FAR 0); taking the target 5.5 too (above 5) lets 6, 7, 8 and 9
    through (FAR 0.4), within a FAR of 0.5 but not of 0.1.

    >>> r = tar_at_far([5.5, 9.5], np.arange(10.0), far_levels=[0.1, 0.5, 0.0])
    >>> r.tar.tolist(), r.far.tolist(), r.thresholds.tolist()
    ([0.5, 1.0, 0.5], [0.0, 0.4, 0.0], [9.0, 5.0, 9.0])
    """
    return tar_at_far_from_pools(SortedPools.from_pools(tar, non), far_levels=far_levels)


def tar_at_far_from_pools(
    pools: SortedPools, *, far_levels: float | Sequence[float] = DEFAULT_FAR_LEVELS
) -> TARAtFAR:
    """:func:`tar_at_far` of already sorted pools (e.g. ``SortedPools.of(matrix)``)."""
    return _tar_at_far(pools, _check_far_levels(far_levels))


def _tar_at_far(pools: SortedPools, f: NDArray[np.float64]) -> TARAtFAR:
    thr, misses, fas = _candidates(pools)
    far = fas / pools.n_non  # non-increasing along the candidates, 0 at the last one
    # the first candidate within the level has the fewest misses of those within it
    best = np.argmax(far[None, :] <= f[:, None], axis=1)
    return TARAtFAR(
        far_levels=_readonly(f),
        tar=_readonly(1.0 - misses[best] / pools.n_tar),
        far=_readonly(far[best]),
        thresholds=_readonly(thr[best]),
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
    """DET curve: the corners of the steppy curve and the ROCCH points.

    Within the non-target scores between two consecutive target scores P_miss is constant,
    so their operating points lie on one vertical segment of the curve; the curve keeps its
    ends (the highest non-target score there and the target score below it). The points kept
    are thus ``-inf``, every distinct target score and the highest non-target score below
    each (and the highest overall): every operating point is one of them or lies on the
    segment between two consecutive ones, so the drawn curve is the full one. The ROC convex
    hull is computed from the points that can minimise a cost (one per unique target score)
    and equals :func:`voxmetrics.metrics.pav.rocch` (tested).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores.
    max_points : int, optional
        Keep at most about this many of those points (for figures of very large pools): an
        exact subset, evenly spaced in rank, always with both ends; None keeps all.

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
    return det_curve_from_pools(SortedPools.from_pools(tar, non), max_points=max_points)


def det_curve_from_pools(pools: SortedPools, *, max_points: int | None = None) -> DETCurve:
    """:func:`det_curve` of already sorted pools (e.g. ``SortedPools.of(matrix)``)."""
    if max_points is not None and max_points < 2:
        raise VoxMetricsInputError(f"`max_points` must be at least 2, got {max_points}.")
    return _det(pools, max_points)


def _det(pools: SortedPools, max_points: int | None) -> DETCurve:
    c = pools.counts
    k = pools.values.size
    tar_le = np.cumsum(c.tar_at)  # targets <= v_k
    non_le = np.cumsum(c.cells[:-1] + c.non_at)  # non-targets <= v_k
    tar_lt = np.concatenate([[0.0], tar_le])  # targets below cell k
    non_upto_cell = np.cumsum(c.cells) + np.concatenate([[0.0], np.cumsum(c.non_at)])
    # slots in ascending order: cell k's highest non-target (2k), then v_k (2k + 1)
    thr = np.empty(2 * k + 1)
    n_miss = np.empty(2 * k + 1)
    n_le = np.empty(2 * k + 1)
    thr[0::2], n_miss[0::2], n_le[0::2] = pools.cell_last, tar_lt, non_upto_cell
    thr[1::2], n_miss[1::2], n_le[1::2] = pools.values, tar_le, non_le
    keep = np.ones(2 * k + 1, dtype=bool)
    keep[0::2] = c.cells > 0
    thr = np.concatenate([[-np.inf], thr[keep]])
    pmiss = np.concatenate([[0.0], n_miss[keep]]) / pools.n_tar
    pfa = 1.0 - np.concatenate([[0.0], n_le[keep]]) / pools.n_non
    idx = _thin(thr.size, max_points)
    h_miss, h_fa = pools.rocch()
    return DETCurve(
        thresholds=_readonly(thr[idx]),
        pmiss=_readonly(pmiss[idx]),
        pfa=_readonly(pfa[idx]),
        rocch_pmiss=_readonly(h_miss),
        rocch_pfa=_readonly(h_fa),
        n_points=pools.n_distinct + 1,
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
    default: NDArray[np.float64] = field(init=False, repr=False)
    """The default system (always the prior's decision): 1 everywhere."""

    def __post_init__(self) -> None:
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
    return ape_curve_from_pools(
        SortedPools.from_pools(tar, non),
        prior_log_odds=prior_log_odds,
        scores_are_llrs=scores_are_llrs,
    )


def ape_curve_from_pools(
    pools: SortedPools,
    *,
    prior_log_odds: ArrayLike | None = None,
    scores_are_llrs: bool = False,
) -> APECurve:
    """:func:`ape_curve` of already sorted pools (e.g. ``SortedPools.of(matrix)``)."""
    if prior_log_odds is None:
        plo = _default_prior_log_odds()
    else:
        plo = np.asarray(prior_log_odds, dtype=np.float64).ravel()
        if plo.size == 0 or not np.isfinite(plo).all():
            raise VoxMetricsInputError("`prior_log_odds` must be finite numbers (natural log).")
    return _ape(pools, plo, scores_are_llrs)


def _ape(
    pools: SortedPools,
    plo: NDArray[np.float64],
    scores_are_llrs: bool,
    count_non_le: Callable[[ArrayLike], NDArray[np.int64]] | None = None,
) -> APECurve:
    count_non_le = count_non_le or pools.count_non_le
    p = 1.0 / (1.0 + np.exp(-plo))
    norm = np.minimum(p, 1.0 - p)
    h_miss, h_fa = pools.rocch()  # the minimum over its vertices is the minimum over all points
    ber = np.empty(p.size)
    step = max(1, 4_000_000 // h_miss.size)  # bounded memory: blocks of priors
    for lo in range(0, p.size, step):
        q = p[lo : lo + step, None]
        ber[lo : lo + step] = (q * h_miss[None, :] + (1.0 - q) * h_fa[None, :]).min(axis=1)
    minimum = np.minimum(ber / norm, 1.0)
    actual = None
    if scores_are_llrs:
        pmiss = pools.count_tar_le(-plo) / pools.n_tar
        pfa = 1.0 - count_non_le(-plo) / pools.n_non
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
    return d_prime_from_pools(SortedPools.from_pools(tar, non))


def d_prime_from_pools(pools: SortedPools) -> float:
    """:func:`d_prime` of already sorted pools: float64 sums, no non-target pool built."""
    mean_tar, var_tar, mean_non, var_non = pools.moments
    diff = mean_tar - mean_non
    spread = math.sqrt((var_tar + var_non) / 2.0)
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
    tar_at_far: TARAtFAR | None = None
    """The true-accept rate at low false-accept rates (reported beside the EER; not in
    :meth:`to_dict`, the report's JSON has it as ``tar_at_far``)."""

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
    far_levels: float | Sequence[float] = DEFAULT_FAR_LEVELS,
) -> VerificationResult:
    """DCFs, DET curve, APE curve, d' and the TAR at low FARs of the pools in one call.

    Examples
    --------
    >>> v = verification([1.0, 3.0], [0.0, 2.0], p_targets=[0.5])
    >>> v.to_dict()
    {'dcf': {'0.5': {'min_dcf': 0.5, 'act_dcf': None}}, 'd_prime': 1.0}
    """
    return verification_from_pools(
        SortedPools.from_pools(tar, non),  # sorted once for all of them
        p_targets=p_targets,
        c_miss=c_miss,
        c_fa=c_fa,
        scores_are_llrs=scores_are_llrs,
        max_det_points=max_det_points,
        far_levels=far_levels,
    )


def verification_from_pools(
    pools: SortedPools,
    *,
    p_targets: float | Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
    max_det_points: int | None = 2000,
    far_levels: float | Sequence[float] = DEFAULT_FAR_LEVELS,
) -> VerificationResult:
    """:func:`verification` of already sorted pools (e.g. ``SortedPools.of(matrix)``)."""
    p = _check_costs(p_targets, c_miss, c_fa)
    f = _check_far_levels(far_levels)
    if max_det_points is not None and max_det_points < 2:
        raise VoxMetricsInputError(f"`max_det_points` must be at least 2, got {max_det_points}.")
    plo = _default_prior_log_odds()
    count = None
    if scores_are_llrs:  # one pass for the actual DCFs' and the APE curve's thresholds
        a, b = float(c_miss) * p, float(c_fa) * (1.0 - p)
        x = np.concatenate([np.log(b) - np.log(a), -plo])
        known = dict(zip(x.tolist(), pools.count_non_le(x).tolist(), strict=True))

        def count(v: ArrayLike) -> NDArray[np.int64]:
            return np.array([known[u] for u in np.asarray(v).ravel().tolist()], dtype=np.int64)

    return VerificationResult(
        dcf=_dcf(pools, p, float(c_miss), float(c_fa), scores_are_llrs, count),
        det=_det(pools, max_det_points),
        ape=_ape(pools, plo, scores_are_llrs, count),
        d_prime=d_prime_from_pools(pools),
        scores_are_llrs=scores_are_llrs,
        tar_at_far=_tar_at_far(pools, f),
    )
