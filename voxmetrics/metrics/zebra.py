"""ZEBRA: zero evidence biometric recognition assessment (Nautsch et al. 2020).

Scores are mapped to oracle-calibrated LLRs by pool-adjacent-violators on the label runs of
:class:`~voxmetrics.metrics.pools.SortedPools`, in the two tie orders of the ZEBRA reference
code: the expected disclosure D_ECE (bits, prior-independent) and the minimum-ECE profile come
from PAV without Laplace's rule with targets before non-targets at equal scores (its
``rocch_pava``, as BOSARIS ``rocch``); the worst case log10 l and its categorical tag come from
PAV with Laplace's rule (every LLR finite) with non-targets before targets at equal scores (its
``optimal_llr``, ported from BOSARIS ``opt_loglr``). Under ``ties="attacker"`` D_ECE and the
profile also put non-targets first (every tie resolved for the attacker); the worst case is the
same under both rules. Both orders are read from the same sorted runs. A speaker-level
bootstrap replicate reweights the runs; nothing is re-sorted.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import Progress
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._scipy import sparse
from voxmetrics.metrics._validation import check_llr_pools, check_matrix, check_scores
from voxmetrics.metrics.bootstrap import (
    BootstrapInterval,
    percentile_interval,
    speaker_resample_counts,
    weighted_quantile,
)
from voxmetrics.metrics.pools import (
    PAVRuns,
    RunCounts,
    SortedPools,
    Ties,
    check_ties,
    pav_runs,
)
from voxmetrics.metrics.ranks import BLOCK_ELEMENTS

__all__ = [
    "TAGS",
    "ECECurves",
    "PAVTransform",
    "ZebraResult",
    "d_ece_from_llrs",
    "d_ece_from_runs",
    "ece_curves",
    "ece_curves_from_pools",
    "ece_curves_of_matrix",
    "pav_transform",
    "pav_transform_from_pools",
    "zebra",
    "zebra_bootstrap",
    "zebra_from_pools",
    "zebra_tag",
]

_LN2 = math.log(2.0)

TAGS: tuple[tuple[str, float, float, str], ...] = (
    ("0", 0.0, 0.0, "50:50 (flat posterior)"),
    ("A", 0.0, 1.0, "more disclosure than 50:50"),
    ("B", 1.0, 2.0, "one wrong in 10 to 100"),
    ("C", 2.0, 4.0, "one wrong in 100 to 10 000"),
    ("D", 4.0, 5.0, "one wrong in 10 000 to 100 000"),
    ("E", 5.0, 6.0, "one wrong in 100 000 to 1 000 000"),
    ("F", 6.0, math.inf, "one wrong in at least 1 000 000"),
)
"""(tag, lo, hi, posterior odds for a flat prior): tag X holds lo < log10 l <= hi
(Nautsch et al. 2020, table 1, with the reference code's (lo, hi] intervals; "0" is log10 l = 0)."""


def zebra_tag(log10_l: float) -> str:
    """Categorical tag of a worst-case log10 LR (docs, Methods > ZEBRA).

    Examples
    --------
    >>> [zebra_tag(v) for v in (0.0, 0.6, 1.0, 1.5, 4.0, 6.0, 7.0)]
    ['0', 'A', 'A', 'B', 'C', 'E', 'F']
    """
    v = abs(float(log10_l))
    if v == 0.0:
        return "0"
    for tag, lo, hi, _ in TAGS[1:]:
        if lo < v <= hi:
            return tag
    return "F"


def _tag_odds(tag: str) -> str:
    return next(odds for t, _, _, odds in TAGS if t == tag)


def _z(x: NDArray[np.float64], llr: NDArray[np.float64]) -> NDArray[np.float64]:
    """Z(x) = ((x-3)(x-1) + 2 ln x) / (4 (x-1)^2), x = e^llr; Z(1) = 0, Z(inf) = 1/4."""
    out = np.empty_like(llr)
    inf = np.isinf(x)
    a = np.abs(llr)
    tiny = a < 1e-6  # as documented: Z = 0 there
    series = (a >= 1e-6) & (a < 1e-2)
    mid = (a >= 1e-2) & (a <= 300.0) & ~inf
    big = (a > 300.0) & ~inf
    # near 0 the closed form cancels: Taylor series of Z(e^l), truncation error < l^7 / 10^5
    s = llr[series]
    out[series] = s * (
        1 / 6 + s * (-1 / 24 + s * (1 / 360 + s * (1 / 1440 + s * (-1 / 10080 - s / 60480))))
    )
    xm1 = np.expm1(llr[mid])  # x - 1 without cancellation
    out[mid] = ((xm1 - 2.0) * xm1 + 2.0 * llr[mid]) / (4.0 * xm1**2)
    # large |l|: divided through by (x - 1)^2 first, so no term overflows
    with np.errstate(over="ignore"):
        xm1 = np.expm1(llr[big])
        out[big] = ((xm1 - 2.0) / xm1 + 2.0 * llr[big] / xm1**2) / 4.0
    out[inf] = 0.25
    out[tiny] = 0.0
    return out


def d_ece_from_llrs(tar_llr: ArrayLike, non_llr: ArrayLike) -> float:
    """Expected disclosure D_ECE (bits) of calibrated LLRs, closed form (Nautsch et al. 2020 eq. 6).

    D_ECE = [mean_tar Z(e^l) + mean_non Z(e^-l)] / ln 2; equals the integral over the prior of
    H2(pi) - ECE(pi). For PAV LLRs it lies in [0, 1/(2 ln 2)].

    Examples
    --------
    >>> round(d_ece_from_llrs([np.inf], [-np.inf]), 6)  # perfectly separated: 1 / (2 ln 2)
    0.721348
    >>> d_ece_from_llrs([0.0], [0.0])
    0.0
    """
    t, n = check_llr_pools(tar_llr, non_llr)
    with np.errstate(over="ignore"):
        zt = _z(np.exp(t), t)
        zn = _z(np.exp(-n), -n)
    return float((zt.mean() + zn.mean()) / _LN2)


@dataclass(frozen=True)
class ZebraResult:
    """Expected and worst-case disclosure of mated vs non-mated scores (Nautsch et al. 2020)."""

    d_ece: float
    """Expected disclosure D_ECE in bits, in [0, 1/(2 ln 2) = 0.7213]."""
    log10_l: float
    """Worst case: max |LLR| over all scores after PAV with Laplace's rule, base 10."""
    tag: str
    """Categorical tag of log10_l: "0", A, B, C, D, E or F."""
    worst_is_mated: bool
    """Whether the worst-case score is a mated (target) one."""
    worst_index: int
    """Index of the worst-case score in ``tar`` (if mated) or ``non``."""
    worst_score: float
    """The raw score that produced the worst case."""
    n_tar: int
    """Mated scores."""
    n_non: int
    """Non-mated scores."""

    @property
    def odds(self) -> str:
        """Posterior odds of the tag for a flat prior, in words (Nautsch et al. 2020, table 1)."""
        return _tag_odds(self.tag)

    @property
    def d_ece_max(self) -> float:
        """1/(2 ln 2): D_ECE of perfectly separated pools (no privacy)."""
        return 1.0 / (2.0 * _LN2)

    def to_dict(self) -> dict[str, float | str]:
        """The ``zebra`` block of the JSON contract."""
        return {"d_ece": self.d_ece, "log10_l": self.log10_l, "tag": self.tag, "odds": self.odds}


def zebra(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> ZebraResult:
    """D_ECE, worst-case log10 l and its tag of target and non-target scores.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores on any monotone scale.
    ties : {"reference", "attacker"}
        ``"reference"``: D_ECE with targets before non-targets at equal scores (the ZEBRA
        reference code's ``rocch_pava``); ``"attacker"``: non-targets first (a tie discloses).
        The worst case puts non-targets first under both (the reference code's
        ``optimal_llr``).

    Returns
    -------
    ZebraResult

    Examples
    --------
    Three targets above three non-targets: with Laplace's rule every target gets LR 4.

    >>> r = zebra([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    >>> round(r.log10_l, 6), r.tag, round(r.d_ece, 6)
    (0.60206, 'A', 0.721348)
    """
    return zebra_from_pools(SortedPools.from_pools(tar, non), ties=ties)


def zebra_from_pools(pools: SortedPools, *, ties: Ties = "reference") -> ZebraResult:
    """:func:`zebra` of already sorted pools."""
    first = check_ties(ties) == "reference"
    d_ece = d_ece_from_runs(pools.pav(targets_first=first, laplace=False), pools.n_tar, pools.n_non)
    lap = pools.pav(targets_first=False, laplace=True)
    k = int(np.argmax(np.abs(lap.llr)))  # first run of the worst bin, as argmax over scores
    log10_l = float(abs(lap.llr[k]) / math.log(10.0))
    mated = bool(lap.labels[k] == 1.0)
    score = float(pools.run_values(lap.slots[k : k + 1])[0])
    return ZebraResult(
        d_ece=d_ece,
        log10_l=log10_l,
        tag=zebra_tag(log10_l),
        worst_is_mated=mated,
        worst_index=pools.locate(score, mated),
        worst_score=score,
        n_tar=pools.n_tar,
        n_non=pools.n_non,
    )


def d_ece_from_runs(r: PAVRuns, n_tar: float, n_non: float) -> float:
    """D_ECE (bits) of the PAV LLRs of sorted pools, from their runs.

    :func:`d_ece_from_llrs` of the per-score LLRs, with the means over the scores written as
    length-weighted sums over the runs (``r.counts``, possibly the reweighted lengths of a
    bootstrap replicate, which then gives ``n_tar`` and ``n_non``).

    Examples
    --------
    >>> from voxmetrics.metrics.pools import SortedPools
    >>> p = SortedPools.from_pools([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    >>> round(d_ece_from_runs(p.pav(targets_first=True, laplace=False), p.n_tar, p.n_non), 6)
    0.721348
    """
    is_tar = r.labels == 1.0
    with np.errstate(over="ignore"):  # Z once per PAV bin (the same floats, see per_run)
        zt = r.counts[is_tar] @ r.per_run(lambda t: _z(np.exp(t), t))[is_tar]
        zn = r.counts[~is_tar] @ r.per_run(lambda n: _z(np.exp(-n), -n))[~is_tar]
    return float((zt / n_tar + zn / n_non) / _LN2)


@dataclass(frozen=True)
class ECECurves:
    """ECE profiles against the prior log-odds (Nautsch et al. 2020, figure 3)."""

    prior_log_odds: NDArray[np.float64] = field(repr=False)
    """lambda = logit(pi), natural log."""
    zero_evidence: NDArray[np.float64] = field(repr=False)
    """H2(pi): the ECE of LLRs that are all 0 (perfect privacy)."""
    minimum: NDArray[np.float64] = field(repr=False)
    """ECE of the PAV-calibrated LLRs (the adversary's, oracle calibration)."""
    actual: NDArray[np.float64] | None = field(default=None, repr=False)
    """ECE of the scores taken as LLRs (only when they are)."""

    @property
    def log10_prior_odds(self) -> NDArray[np.float64]:
        """The x axis in base 10."""
        return self.prior_log_odds / math.log(10.0)


def _ece(
    tar: tuple[NDArray[np.float64], NDArray[np.float64]],
    non: tuple[NDArray[np.float64], NDArray[np.float64]],
    lam: NDArray[np.float64],
) -> NDArray[np.float64]:
    # ECE(pi) = pi mean_tar log2(1 + e^-(l + lam)) + (1 - pi) mean_non log2(1 + e^(l + lam)).
    # Each mean runs over the distinct LLR values weighted by their counts (tar and non are
    # (llr values, counts) pairs): PAV LLRs take a few hundred values even for millions of
    # scores.
    pi = 1.0 / (1.0 + np.exp(-lam))
    out = np.zeros_like(lam)
    for (llr, count), sign, weight in ((tar, -1.0, pi), (non, 1.0, 1.0 - pi)):
        values, inverse = np.unique(llr, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=count, minlength=values.size)
        share = counts / count.sum()
        for start in range(0, values.size, 4096):  # bounded (priors x values) blocks
            v, c = values[start : start + 4096], share[start : start + 4096]
            out += weight * (np.logaddexp(0.0, sign * (v[None, :] + lam[:, None])) @ c)
    return out / _LN2


def _ones(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return x, np.ones(x.size)


def ece_curves(
    tar: ArrayLike,
    non: ArrayLike,
    *,
    scores_are_llrs: bool = False,
    prior_log_odds: ArrayLike | None = None,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
) -> ECECurves:
    """ECE profiles: zero evidence, minimum (PAV) and, for LLR scores, actual.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores.
    scores_are_llrs : bool
        Also compute the actual ECE of the scores taken as natural-log LLRs.
    prior_log_odds : array_like, optional
        Grid of lambda = logit(pi); default 201 points from -10 to 10 nats.
    ties : {"reference", "attacker"}
        The tie order of the minimum's PAV, as D_ECE in :func:`zebra`: targets first
        (``"reference"``, the ZEBRA reference code's ``rocch_pava``) or non-targets first.
    pools : SortedPools, optional
        ``tar`` and ``non`` already sorted (saves the sort).

    Returns
    -------
    ECECurves
    """
    if pools is None:
        pools = SortedPools.from_pools(tar, non)
    curves = ece_curves_from_pools(pools, prior_log_odds=prior_log_odds, ties=ties)
    if not scores_are_llrs:
        return curves
    t, n = check_scores(tar, "tar"), check_scores(non, "non")
    actual = _ece(_ones(t.astype(np.float64)), _ones(n.astype(np.float64)), curves.prior_log_odds)
    return ECECurves(curves.prior_log_odds, curves.zero_evidence, curves.minimum, actual)


def ece_curves_from_pools(
    pools: SortedPools, *, prior_log_odds: ArrayLike | None = None, ties: Ties = "reference"
) -> ECECurves:
    """Zero-evidence and minimum ECE profiles of already sorted pools (no actual ECE).

    The minimum's PAV puts targets first at equal scores under ``ties="reference"`` (the ZEBRA
    reference code's ``rocch_pava``), non-targets first under ``"attacker"``.
    """
    first = check_ties(ties) == "reference"
    lam = (
        np.linspace(-10.0, 10.0, 201)
        if prior_log_odds is None
        else np.asarray(prior_log_odds, dtype=np.float64).ravel()
    )
    r = pools.pav(targets_first=first, laplace=False)
    is_tar = r.labels == 1.0
    zero = _ones(np.zeros(1))
    return ECECurves(
        prior_log_odds=lam,
        zero_evidence=_ece(zero, zero, lam),
        minimum=_ece((r.llr[is_tar], r.counts[is_tar]), (r.llr[~is_tar], r.counts[~is_tar]), lam),
    )


@dataclass(frozen=True)
class PAVTransform:
    """The monotone map score -> LLR that PAV learned (a step function)."""

    scores: NDArray[np.float64] = field(repr=False)
    """Distinct pooled scores, ascending."""
    llr: NDArray[np.float64] = field(repr=False)
    """LLR (natural log) at each score, without Laplace's rule (may be +-inf)."""
    llr_laplace: NDArray[np.float64] = field(repr=False)
    """LLR with Laplace's rule (finite)."""


def pav_transform(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> PAVTransform:
    """The PAV score-to-LLR step function at each distinct pooled score.

    As :func:`zebra`: ``llr`` (no Laplace) puts targets before non-targets at equal scores
    under ``ties="reference"`` (then a score shared by targets and non-targets carries one LLR)
    and non-targets first under ``"attacker"``; ``llr_laplace`` (the worst case's) always puts
    non-targets first, so a shared score can carry two LLRs: the transform gives it the
    targets' one.

    Examples
    --------
    >>> t = pav_transform([2.0, 3.0], [0.0, 1.0])
    >>> t.scores.tolist(), t.llr.tolist()
    ([0.0, 1.0, 2.0, 3.0], [-inf, -inf, inf, inf])
    """
    first = check_ties(ties) == "reference"
    t, n = check_scores(tar, "tar"), check_scores(non, "non")
    pools = SortedPools.from_pools(t, n)
    scores = np.unique(np.concatenate([t, n]).astype(np.float64))
    v = pools.values.astype(np.float64)
    pos = np.searchsorted(v, scores, side="left")
    at = (pos < v.size) & (v[np.minimum(pos, v.size - 1)] == scores)
    at_tar = pools.counts.tar_at[np.minimum(pos, v.size - 1)] > 0
    slot = np.where(at, np.where(at_tar, 3 * pos + 1, 3 * pos + 2), 3 * pos)
    out = []
    for laplace in (False, True):
        r = pools.pav(targets_first=first and not laplace, laplace=laplace)
        by_slot = np.zeros(3 * v.size + 1)
        by_slot[r.slots] = r.llr
        out.append(by_slot[slot])
    return PAVTransform(scores=scores, llr=out[0], llr_laplace=out[1])


def pav_transform_from_pools(pools: SortedPools, *, ties: Ties = "reference") -> PAVTransform:
    """:func:`pav_transform` of already sorted pools, at the scores where its LLR can change.

    The non-targets between two consecutive distinct target scores form one PAV run, so they
    share one LLR: this keeps the lowest and the highest of them and every distinct target
    score (no non-target pool is needed). Looked up with ``np.searchsorted(scores, s)`` (the
    first point at or above ``s``), it gives every pooled score ``s`` the LLR that
    :func:`pav_transform` gives it, and its step function draws the same.

    Examples
    --------
    >>> sp = SortedPools.from_pools([2.0, 3.0], [0.0, 0.5, 1.0])
    >>> t = pav_transform_from_pools(sp)
    >>> t.scores.tolist(), t.llr.tolist()
    ([0.0, 1.0, 2.0, 3.0], [-inf, -inf, inf, inf])
    """
    k = pools.values.size
    cells = pools.counts.cells
    v = np.append(pools.values.astype(np.float64), np.nan)  # no target score above cell K
    # per cell k: its lowest and highest non-target, then the target score v_k
    points = np.stack([pools.cell_first, pools.cell_last, v], axis=1)
    slots = np.stack([3 * np.arange(k + 1)] * 2 + [3 * np.arange(k + 1) + 1], axis=1)
    keep = np.stack([cells > 0, (cells > 0) & (pools.cell_last != pools.cell_first)], axis=1)
    keep = np.concatenate([keep, np.arange(k + 1)[:, None] < k], axis=1)
    scores, slot = points[keep], slots[keep]
    first = check_ties(ties) == "reference"
    out = []
    for laplace in (False, True):
        r = pools.pav(targets_first=first and not laplace, laplace=laplace)
        by_slot = np.zeros(3 * k + 1)
        by_slot[r.slots] = r.llr
        out.append(by_slot[slot])
    return PAVTransform(scores=scores, llr=out[0], llr_laplace=out[1])


def ece_curves_of_matrix(
    scores: NDArray[np.floating],
    targets: NDArray[np.intp],
    *,
    pools: SortedPools | None = None,
    scores_are_llrs: bool = False,
    prior_log_odds: ArrayLike | None = None,
    ties: Ties = "reference",
) -> ECECurves:
    """:func:`ece_curves` of a T x N matrix and its target columns, without the non-mated pool.

    The minimum from ``pools`` (built from the matrix when not given); for LLR scores, the
    actual ECE from row blocks of the matrix. Equal to :func:`ece_curves` of its mated and
    non-mated pools up to rounding (the sums run in another order).
    """
    if pools is None:
        pools = SortedPools.from_matrix(scores, targets)
    curves = ece_curves_from_pools(pools, prior_log_odds=prior_log_odds, ties=ties)
    if not scores_are_llrs:
        return curves
    lam = curves.prior_log_odds
    tar = scores[np.arange(scores.shape[0]), targets].astype(np.float64)
    sums = {-1.0: _logaddexp_sum(tar, np.ones(tar.size), -1.0, lam), 1.0: np.zeros_like(lam)}
    step = max(1, BLOCK_ELEMENTS // max(1, scores.shape[1]))
    for r0 in range(0, scores.shape[0], step):
        block = scores[r0 : r0 + step]
        keep = np.ones(block.shape, dtype=bool)
        keep[np.arange(block.shape[0]), targets[r0 : r0 + step]] = False
        values, counts = np.unique(block[keep].astype(np.float64), return_counts=True)
        sums[1.0] += _logaddexp_sum(values, counts.astype(np.float64), 1.0, lam)
    pi = 1.0 / (1.0 + np.exp(-lam))
    n_non = scores.size - tar.size
    actual = (pi * sums[-1.0] / tar.size + (1.0 - pi) * sums[1.0] / n_non) / _LN2
    return ECECurves(curves.prior_log_odds, curves.zero_evidence, curves.minimum, actual)


def _logaddexp_sum(
    values: NDArray[np.float64], counts: NDArray[np.float64], sign: float, lam: NDArray[np.float64]
) -> NDArray[np.float64]:
    """sum_i counts_i ln(1 + e^(sign (values_i + lam))) at each lam, in bounded blocks."""
    out = np.zeros_like(lam)
    for start in range(0, values.size, 4096):
        v, c = values[start : start + 4096], counts[start : start + 4096]
        out += np.logaddexp(0.0, sign * (v[None, :] + lam[:, None])) @ c
    return out


_BUCKETS_PER_VALUE = 16
"""Buckets of :class:`_LeftIndex` per distinct target value (most buckets hold none or one)."""
_MAX_BUCKETS = 1 << 20
_SPEAKER_BINS = 1 << 20
"""Most (speakers x slots) counters of one block of :func:`speaker_run_counts` (8 MB)."""


class _LeftIndex:
    """``np.searchsorted(values, x, side="left")`` of many ``x`` through a table of buckets.

    ``values`` are sorted, distinct and finite. The bucket of a score, ``(x - v_0) * scale``
    clipped and truncated, is a non-decreasing function of x (every step rounds
    monotonically), and the values are put into buckets by the same arithmetic, so every value
    of a lower bucket is below x and every value of a higher bucket above it: x's position is
    its bucket's first value's, plus one when the bucket's only value is below x. Scores in a
    bucket of two or more values go through ``np.searchsorted`` itself, NaN to the end (as
    ``np.searchsorted``), and so do scores of another dtype than the values'. The same
    positions, about one table read per score instead of log2(K) comparisons.
    """

    def __init__(self, values: NDArray[np.floating]) -> None:
        v = values
        self.values = v
        self.padded = np.concatenate([v, np.array([np.nan], dtype=v.dtype)])  # nothing at K
        g = int(min(_MAX_BUCKETS, max(1, _BUCKETS_PER_VALUE * v.size)))
        self.lo = v.dtype.type(v[0])
        span = float(v[-1]) - float(v[0])
        with np.errstate(over="ignore", divide="ignore"):
            self.scale = v.dtype.type(g / span if span > 0 else 0.0)
        self.top = float(g - 1)
        first = np.searchsorted(self.bucket(v), np.arange(g + 1), side="left")
        self.crowded = np.diff(first) > 1
        # each bucket's first value, or -1 where it holds several (looked up apart)
        self.table = np.where(self.crowded, -1, first[:-1]).astype(np.intp)

    def bucket(self, x: NDArray[np.floating]) -> NDArray[np.intp]:
        """Bucket of each score (NaN -> 0: those are placed apart)."""
        with np.errstate(invalid="ignore", over="ignore"):
            f = x - self.lo
            f *= self.scale
        np.fmax(f, 0.0, out=f)  # fmax / fmin: a NaN becomes a bound
        np.fmin(f, self.top, out=f)
        return f.astype(np.intp)

    def __call__(self, x: NDArray[np.floating]) -> NDArray[np.intp]:
        """Positions of ``x`` (any shape) among the values, left side."""
        if x.dtype != self.values.dtype:  # the buckets assume the values' arithmetic
            return np.searchsorted(self.values, x, side="left")
        pos = np.take(self.table, self.bucket(x))
        slow = pos < 0
        if slow.any():  # exact already: the step below adds nothing to them
            pos[slow] = np.searchsorted(self.values, x[slow], side="left")
        pos += np.take(self.padded, pos) < x
        nan = np.isnan(x)
        if nan.any():
            pos[nan] = self.values.size
        return pos


def _score_slots(
    index: _LeftIndex, block: NDArray[np.floating], targets: NDArray[np.intp]
) -> NDArray[np.integer]:
    """Run slot of every score of a row block (its mated score at 3k + 1, see below)."""
    pos = index(block)
    slot = 3 * pos
    slot += 2 * (np.take(index.padded, pos) == block)  # at v_k: slot 3k + 2
    # the mated score equals some v_k: move it from slot 3k + 2 to 3k + 1
    slot[np.arange(block.shape[0]), targets] -= 1
    return slot


def speaker_run_counts(
    pools: SortedPools,
    scores: NDArray[np.floating],
    targets: NDArray[np.intp],
    speaker_index: NDArray[np.intp],
    n_speakers: int,
    mask: NDArray[np.bool_] | None = None,
) -> sparse.csr_array:
    """Run counts of every speaker's trials: a sparse (S, 3K + 1) integer matrix in slot order.

    Row s, slot 3k: speaker s's non-mated scores in cell k; 3k + 1: their mated scores equal to
    ``v_k``; 3k + 2: their non-mated scores equal to ``v_k``. Rows sum to the run counts of the
    full data; a bootstrap replicate's counts are a weighted sum of rows
    (:func:`replicate_run_counts`). Counted a few speakers at a time (their trials' scores
    looked up in a table of the distinct target values, :class:`_LeftIndex`), straight into
    the rows of a CSR matrix of int32 counts and indices (int64 counts past 2**31 scores).
    With ``mask`` (a sparse trial list), only the listed pairs are counted.
    """
    v = pools.values
    n_slots = 3 * v.size + 1
    n = scores.shape[1]
    index = _LeftIndex(v)
    order = np.argsort(speaker_index, kind="stable")
    ends = np.cumsum(np.bincount(speaker_index, minlength=n_speakers))  # in ``order``
    step = max(1, BLOCK_ELEMENTS // n)
    per = max(1, _SPEAKER_BINS // n_slots)  # speakers per block
    count_type = np.int32 if scores.size < 2**31 else np.int64
    indptr = np.zeros(n_speakers + 1, dtype=np.int64)
    slot_parts, count_parts = [], []
    for s0 in range(0, n_speakers, per):
        s1 = min(n_speakers, s0 + per)
        r0, r1 = int(ends[s0 - 1]) if s0 else 0, int(ends[s1 - 1])
        counts = None
        for c0 in range(r0, r1, step):  # a speaker's rows may take several row blocks
            rows = order[c0 : min(r1, c0 + step)]
            slot = _score_slots(index, scores[rows], targets[rows])
            keys = (speaker_index[rows] - s0)[:, None] * n_slots + slot
            keys = keys.ravel() if mask is None else keys[mask[rows]]  # listed cells only
            part = np.bincount(keys, minlength=(s1 - s0) * n_slots)
            counts = part if counts is None else counts + part
        if counts is None:
            continue
        hit = np.flatnonzero(counts)
        spk, slot = np.divmod(hit, n_slots)
        indptr[s0 + 1 : s1 + 1] = np.bincount(spk, minlength=s1 - s0)
        slot_parts.append(slot.astype(np.int32))
        count_parts.append(counts[hit].astype(count_type))
    np.cumsum(indptr, out=indptr)
    if indptr[-1] < 2**31:  # int32 indices (scipy takes the wider of indices and indptr)
        indptr = indptr.astype(np.int32)
    data = np.concatenate(count_parts) if count_parts else np.zeros(0, dtype=count_type)
    indices = np.concatenate(slot_parts) if slot_parts else np.zeros(0, dtype=np.int32)
    return sparse.csr_array((data, indices, indptr), shape=(n_speakers, n_slots))


def replicate_run_counts(
    per_speaker: sparse.csr_array, counts: NDArray[np.integer], *, chunk: int = 64
) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """The run counts of bootstrap replicates: ``(start, rows)`` per chunk of ``counts``' rows.

    ``rows[i]`` are the (3K + 1) slot counts of replicate ``start + i``: the sum of the rows of
    :func:`speaker_run_counts` weighted by how often the replicate drew each speaker. Computed
    slot by slot (the transposed matrix in CSR) in float64: every count and every partial sum
    is an integer below 2**53, so exact, as the integer product.
    """
    by_slot = per_speaker.T.tocsr().astype(np.float64)  # (3K + 1, S): each slot's speakers
    for start in range(0, counts.shape[0], chunk):
        w = np.ascontiguousarray(counts[start : start + chunk].T, dtype=np.float64)  # (S, c)
        yield start, np.ascontiguousarray((by_slot @ w).T)


def zebra_bootstrap(
    scores: ArrayLike,
    targets: ArrayLike,
    speakers: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Progress | None = None,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
    mask: ArrayLike | None = None,
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of D_ECE and of the q95 of |log10 LR| (log10 l: none).

    log10 l is a maximum, whose percentile bootstrap is not valid; the 0.95
    quantile of |log10 LR| over the pooled scores (PAV with Laplace's rule), ``log10_l_q95``,
    carries the worst case's interval instead, and ``log10_l`` has ``low = high = None``.

    Each replicate redraws the trial speakers with replacement; its pooled scores are the full
    data's label runs reweighted by how often each speaker was drawn, so a replicate costs one
    weighted sum and one PAV over at most 3K + 1 runs (K distinct mated scores), no sort. The
    result equals recomputing :func:`zebra` on the resampled rows.

    Parameters
    ----------
    scores, targets : array_like
        T x N matrix and target columns.
    speakers : array_like of str, shape (T,)
        Speaker of each trial.
    n_boot, confidence, seed, progress :
        As :func:`~voxmetrics.metrics.bootstrap.speaker_bootstrap` (the same seed draws the
        same replicates).
    ties : {"reference", "attacker"}
        As :func:`zebra`.
    pools : SortedPools, optional
        The matrix's pools, when already built.
    mask : array_like of bool, shape (T, N), optional
        A sparse trial list's listed pairs (the other scores are ignored, e.g. NaN): each
        replicate uses the listed pairs of the resampled trials.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys ``d_ece``, ``log10_l`` (no bounds) and ``log10_l_q95``.
    """
    first = check_ties(ties) == "reference"
    m = None
    if mask is None:
        s, t = check_matrix(scores, targets)
    else:
        m = np.asarray(mask, dtype=bool)
        s = np.asarray(scores)
        if m.shape != s.shape:
            raise VoxMetricsInputError(
                f"`mask` has shape {m.shape} but the scores {s.shape}; give one per score."
            )
        if not np.isfinite(s[m]).all():
            raise VoxMetricsInputError("`scores` has NaN or infinite listed values.")
        t = np.asarray(targets)
        if (
            t.shape != (s.shape[0],)
            or t.dtype.kind not in "iu"
            or (t < 0).any()
            or (t >= s.shape[1]).any()
        ):
            raise VoxMetricsInputError(
                f"`targets` must hold one column index in [0, {s.shape[1]}) per trial."
            )
        t = t.astype(np.intp)
    spk = np.asarray(speakers).astype(str).ravel()
    if spk.shape != (s.shape[0],):
        raise VoxMetricsInputError(
            f"`speakers` must give one speaker per trial ({s.shape[0]}), got {spk.size}."
        )
    if n_boot < 1 or not 0 < confidence < 1:
        raise VoxMetricsInputError("`n_boot` must be >= 1 and `confidence` in (0, 1).")
    if pools is None:
        if m is None:
            pools = SortedPools.from_matrix(s, t)
        else:
            own = np.zeros(m.shape, dtype=bool)
            own[np.arange(s.shape[0]), t] = True
            pools = SortedPools.from_pools(s[m & own], s[m & ~own])
    counts, inverse, n_spk = speaker_resample_counts(
        spk, n_boot=n_boot, rng=np.random.default_rng(seed)
    )
    per_speaker = speaker_run_counts(pools, s, t, inverse, n_spk, mask=m)
    full = zebra_from_pools(pools, ties=ties)
    reps = {k: np.empty(n_boot) for k in ("d_ece", "log10_l", "log10_l_q95")}
    for start, weighted in replicate_run_counts(per_speaker, counts):
        for i, row in enumerate(weighted):
            rc = RunCounts(cells=row[0::3], tar_at=row[1::3], non_at=row[2::3])
            n_tar, n_non = rc.n_tar, rc.n_non
            reps["d_ece"][start + i] = d_ece_from_runs(
                pav_runs(rc, targets_first=first, laplace=False), n_tar, n_non
            )
            lap = pav_runs(rc, targets_first=False, laplace=True)
            mag = np.abs(lap.llr) / math.log(10.0)
            reps["log10_l"][start + i] = float(mag.max())
            reps["log10_l_q95"][start + i] = float(weighted_quantile(mag, lap.counts, 0.95)[0])
        if progress is not None:
            done = start + weighted.shape[0]
            progress(done / n_boot, f"Bootstrap {done}/{n_boot}")
    lap = pools.pav(targets_first=False, laplace=True)
    q95 = float(weighted_quantile(np.abs(lap.llr) / math.log(10.0), lap.counts, 0.95)[0])
    return {
        "d_ece": percentile_interval(full.d_ece, reps["d_ece"], confidence, n_boot),
        "log10_l": BootstrapInterval(full.log10_l, None, None, confidence, n_boot, 0),
        "log10_l_q95": percentile_interval(q95, reps["log10_l_q95"], confidence, n_boot),
    }
