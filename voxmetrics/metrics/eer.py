"""Equal error rates: the VoicePrivacy / SpeechBrain EER and the ROCCH EER.

Both derive from :class:`~voxmetrics.metrics.pools.SortedPools` (one sort of the pooled
scores); ``ties`` picks the tie rule (see :mod:`voxmetrics.metrics.pools`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics.pools import RunCounts, SortedPools, Ties, check_ties, rocch_of_counts

__all__ = [
    "EERResult",
    "eer",
    "eer_from_pools",
    "eer_result",
    "eer_rocch",
    "eer_rocch_from_counts",
    "eer_rocch_from_pools",
]


@dataclass(frozen=True)
class EERResult:
    """The EER and its operating point."""

    eer: float
    """(FAR + FRR) / 2 at :attr:`threshold`."""
    threshold: float
    """The threshold SpeechBrain's ``EER`` reports (a pooled score or a midpoint)."""
    far: float
    """False acceptance rate P(non > threshold)."""
    frr: float
    """False rejection rate P(tar <= threshold)."""

    def to_dict(self) -> dict[str, float]:
        """JSON-safe dictionary of the fields."""
        return {"eer": self.eer, "threshold": self.threshold, "far": self.far, "frr": self.frr}


def eer_result(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> EERResult:
    """EER with its threshold, FAR and FRR, as SpeechBrain's ``EER`` (VoicePrivacy 2024).

    Candidate thresholds are the unique pooled scores and the midpoints between consecutive
    ones, in the scores' dtype; FRR(t) = P(tar <= t), FAR(t) = P(non > t). The operating point
    is the one SpeechBrain's sequential scan ends on (it compares float32 rates; on tied scores
    that is not always the lowest threshold minimising |FAR - FRR|), found without a loop over
    thresholds. The threshold is SpeechBrain's; FAR, FRR and the EER = (FAR + FRR) / 2 are
    computed from the exact counts in float64 (SpeechBrain's float32 rates differ from them by
    less than 1e-7).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores (higher = more similar).
    ties : {"reference", "attacker"}
        "attacker" also considers, at a score shared by targets and non-targets, the operating
        point that accepts those targets and rejects those non-targets.

    Returns
    -------
    EERResult

    Examples
    --------
    At t = 0.4, FRR = P(tar <= 0.4) = 1/4 and FAR = P(non > 0.4) = 1/4:

    >>> r = eer_result([0.9, 0.7, 0.6, 0.3], [0.8, 0.4, 0.2, 0.1])
    >>> r.eer, r.threshold
    (0.25, 0.4)
    """
    return eer_from_pools(SortedPools.from_pools(tar, non), ties=ties)


def eer_from_pools(pools: SortedPools, *, ties: Ties = "reference") -> EERResult:
    """:func:`eer_result` of already sorted pools."""
    p = pools.eer_points[check_ties(ties)]
    far, frr = p.n_fa / pools.n_non, p.n_fr / pools.n_tar
    return EERResult(eer=float((far + frr) / 2), threshold=p.threshold, far=far, frr=frr)


def eer(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> float:
    """Equal error rate, VoicePrivacy 2024 / SpeechBrain definition (see :func:`eer_result`).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores.
    ties : {"reference", "attacker"}
        Tie rule.

    Returns
    -------
    float
        EER in [0, 1].

    Examples
    --------
    >>> eer([1.0, 2.0], [1.0, 2.0])
    0.5
    """
    return eer_result(tar, non, ties=ties).eer


def eer_rocch(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> float:
    """EER of the ROC convex hull (BOSARIS ``rocch2eer``).

    The largest value at which the line of a hull segment crosses Pmiss = Pfa; it equals the
    maximum over priors of the minimum Bayes error rate. The hull sorts targets before
    non-targets at equal scores, as BOSARIS and PYLLR (``ties="attacker"``: after them).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores.
    ties : {"reference", "attacker"}
        Tie rule.

    Returns
    -------
    float
        ROCCH-EER in [0, 0.5].

    Examples
    --------
    The hull vertices (Pfa, Pmiss) are (1, 0), (.5, 0), (.25, .25), (0, .75), (0, 1):

    >>> eer_rocch([0.9, 0.7, 0.6, 0.3], [0.8, 0.4, 0.2, 0.1])
    0.25
    """
    return eer_rocch_from_pools(SortedPools.from_pools(tar, non), ties=ties)


def eer_rocch_from_pools(pools: SortedPools, *, ties: Ties = "reference") -> float:
    """:func:`eer_rocch` of already sorted pools."""
    pmiss, pfa = pools.rocch(targets_first=check_ties(ties) == "reference")
    return _rocch_eer(pmiss, pfa)


def eer_rocch_from_counts(counts: RunCounts, *, ties: Ties = "reference") -> float:
    """:func:`eer_rocch` of run counts: the non-targets counted against the target values.

    Equal to :func:`eer_rocch` of the scores counted (the hull depends on nothing else), so a
    subsample of the non-targets costs a count of its scores' cells, not a sort.

    Examples
    --------
    The pools of :func:`eer_rocch`'s example: targets 0.3, 0.6, 0.7, 0.9; non-targets 0.1 and
    0.2 below them all, 0.4 between 0.3 and 0.6, 0.8 between 0.7 and 0.9.

    >>> rc = RunCounts(cells=np.array([2.0, 1.0, 0.0, 1.0, 0.0]), tar_at=np.ones(4),
    ...                non_at=np.zeros(4))
    >>> eer_rocch_from_counts(rc)
    0.25
    """
    return _rocch_eer(*rocch_of_counts(counts, targets_first=check_ties(ties) == "reference"))


def _rocch_eer(pmiss: NDArray[np.float64], pfa: NDArray[np.float64]) -> float:
    x0, x1, y0, y1 = pfa[:-1], pfa[1:], pmiss[:-1], pmiss[1:]
    # The line through (x0, y0), (x1, y1) meets x = y at det / ((x0 - x1) + (y1 - y0)); BOSARIS
    # gives horizontal and vertical segments 0.
    det = x0 * y1 - x1 * y0
    den = (x0 - x1) + (y1 - y0)
    ok = (x0 != x1) & (y0 != y1)
    seg = np.zeros_like(det)
    seg[ok] = det[ok] / den[ok]
    return float(max(0.0, seg.max()))
