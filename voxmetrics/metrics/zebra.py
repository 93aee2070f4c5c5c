"""ZEBRA: zero evidence biometric recognition assessment (paper 004; metrics.md section 3).

Scores are mapped to oracle-calibrated LLRs by pool-adjacent-violators (targets before
non-targets at equal scores; the same PAV as ``min_cllr``). From the LLRs without Laplace's
rule come the expected disclosure D_ECE (bits, prior-independent) and the ECE profiles; from the
LLRs with Laplace's rule (every LLR finite) comes the worst case log10 l and its categorical tag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_llr_pools, check_matrix, check_pools
from voxmetrics.metrics.baseline import mated_pools
from voxmetrics.metrics.bootstrap import BootstrapInterval, Progress, speaker_bootstrap
from voxmetrics.metrics.pav import _sorted_labels, _sorted_llrs

__all__ = [
    "TAGS",
    "ECECurves",
    "PAVTransform",
    "ZebraResult",
    "d_ece_from_llrs",
    "ece_curves",
    "pav_transform",
    "zebra",
    "zebra_bootstrap",
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
"""(tag, lo, hi, posterior odds for a flat prior): tag X holds lo < log10 l <= hi (paper 004,
table 1, with the reference code's (lo, hi] intervals; "0" is log10 l = 0)."""


def zebra_tag(log10_l: float) -> str:
    """Categorical tag of a worst-case log10 LR (metrics.md section 3).

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
    tiny = a < 1e-6  # metrics.md: Z = 0 there
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
    """Expected disclosure D_ECE (bits) of calibrated LLRs, closed form (paper 004, eq. 6).

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
    """Expected and worst-case disclosure of mated vs non-mated scores (paper 004)."""

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
        """Plain-language posterior odds of the tag for a flat prior (paper 004, table 1)."""
        return _tag_odds(self.tag)

    @property
    def d_ece_max(self) -> float:
        """1/(2 ln 2): D_ECE of perfectly separated pools (no privacy)."""
        return 1.0 / (2.0 * _LN2)

    def to_dict(self) -> dict[str, float | str]:
        """The ``zebra`` block of the JSON contract (design.md)."""
        return {"d_ece": self.d_ece, "log10_l": self.log10_l, "tag": self.tag, "odds": self.odds}


def zebra(tar: ArrayLike, non: ArrayLike) -> ZebraResult:
    """D_ECE, worst-case log10 l and its tag of target and non-target scores.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores on any monotone scale.

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
    tar, non = check_pools(tar, non)
    order, y = _sorted_labels(tar, non)
    d_ece = _d_ece_sorted(_sorted_llrs(y, tar.size, non.size, laplace=False), y)
    laplace = _sorted_llrs(y, tar.size, non.size, laplace=True)
    k = int(np.argmax(np.abs(laplace)))
    log10_l = float(abs(laplace[k]) / math.log(10.0))
    pos = int(order[k])
    mated = pos < tar.size
    index = pos if mated else pos - tar.size
    return ZebraResult(
        d_ece=d_ece,
        log10_l=log10_l,
        tag=zebra_tag(log10_l),
        worst_is_mated=bool(mated),
        worst_index=index,
        worst_score=float(tar[index] if mated else non[index]),
        n_tar=int(tar.size),
        n_non=int(non.size),
    )


def _d_ece_sorted(llr: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    is_tar = y == 1.0
    return d_ece_from_llrs(llr[is_tar], llr[~is_tar])


@dataclass(frozen=True)
class ECECurves:
    """ECE profiles against the prior log-odds (paper 004, figure 3)."""

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
    tar_llr: NDArray[np.float64], non_llr: NDArray[np.float64], lam: NDArray[np.float64]
) -> NDArray[np.float64]:
    # ECE(pi) = pi mean_tar log2(1 + e^-(l + lam)) + (1 - pi) mean_non log2(1 + e^(l + lam)).
    # Each mean runs over the distinct LLR values weighted by their counts: PAV LLRs take a
    # few hundred values even for millions of scores, so this is fast where it matters.
    pi = 1.0 / (1.0 + np.exp(-lam))
    out = np.zeros_like(lam)
    for llr, sign, weight in ((tar_llr, -1.0, pi), (non_llr, 1.0, 1.0 - pi)):
        values, counts = np.unique(llr, return_counts=True)
        share = counts / llr.size
        for start in range(0, values.size, 4096):  # bounded (priors x values) blocks
            v, c = values[start : start + 4096], share[start : start + 4096]
            out += weight * (np.logaddexp(0.0, sign * (v[None, :] + lam[:, None])) @ c)
    return out / _LN2


def ece_curves(
    tar: ArrayLike,
    non: ArrayLike,
    *,
    scores_are_llrs: bool = False,
    prior_log_odds: ArrayLike | None = None,
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

    Returns
    -------
    ECECurves
    """
    tar, non = check_pools(tar, non)
    lam = (
        np.linspace(-10.0, 10.0, 201)
        if prior_log_odds is None
        else np.asarray(prior_log_odds, dtype=np.float64).ravel()
    )
    _, y = _sorted_labels(tar, non)
    llr = _sorted_llrs(y, tar.size, non.size, laplace=False)
    is_tar = y == 1.0
    zero = np.zeros(1)
    return ECECurves(
        prior_log_odds=lam,
        zero_evidence=_ece(zero, zero, lam),
        minimum=_ece(llr[is_tar], llr[~is_tar], lam),
        actual=_ece(tar, non, lam) if scores_are_llrs else None,
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


def pav_transform(tar: ArrayLike, non: ArrayLike) -> PAVTransform:
    """The PAV score-to-LLR step function at each distinct pooled score.

    Examples
    --------
    >>> t = pav_transform([2.0, 3.0], [0.0, 1.0])
    >>> t.scores.tolist(), t.llr.tolist()
    ([0.0, 1.0, 2.0, 3.0], [-inf, -inf, inf, inf])
    """
    tar, non = check_pools(tar, non)
    order, y = _sorted_labels(tar, non)
    pooled = np.concatenate([tar, non])[order]
    plain = _sorted_llrs(y, tar.size, non.size, laplace=False)
    laplace = _sorted_llrs(y, tar.size, non.size, laplace=True)
    # tied scores share one PAV bin (targets-first sorting pools them), so any member will do
    scores, first = np.unique(pooled, return_index=True)
    return PAVTransform(scores=scores, llr=plain[first], llr_laplace=laplace[first])


def zebra_bootstrap(
    scores: ArrayLike,
    targets: ArrayLike,
    speakers: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of D_ECE and log10 l (metrics.md section 7).

    Each replicate redraws the trial speakers, rebuilds the mated / non-mated pools of their
    rows and recomputes PAV, D_ECE and the Laplace worst case.

    Parameters
    ----------
    scores, targets : array_like
        T x N matrix and target columns.
    speakers : array_like of str, shape (T,)
        Speaker of each trial.
    n_boot, confidence, seed, progress :
        As :func:`~voxmetrics.metrics.bootstrap.speaker_bootstrap`.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys ``d_ece`` and ``log10_l``.
    """
    s, t = check_matrix(scores, targets)

    def statistic(idx: NDArray[np.intp]) -> dict[str, float]:
        r = zebra(*mated_pools(s[idx], t[idx]))
        return {"d_ece": r.d_ece, "log10_l": r.log10_l}

    return speaker_bootstrap(
        statistic, speakers, n_boot=n_boot, confidence=confidence, seed=seed, progress=progress
    )
