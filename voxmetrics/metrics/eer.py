"""Equal error rates: the VoicePrivacy / SpeechBrain EER and the ROCCH EER (metrics.md 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from voxmetrics.metrics._validation import check_pools
from voxmetrics.metrics.pav import rocch

__all__ = ["EERResult", "eer", "eer_result", "eer_rocch"]


@dataclass(frozen=True)
class EERResult:
    """The EER and its operating point."""

    eer: float
    """(FAR + FRR) / 2 at :attr:`threshold`."""
    threshold: float
    """Lowest candidate threshold minimising |FAR - FRR| (exact arithmetic)."""
    far: float
    """False acceptance rate P(non > threshold)."""
    frr: float
    """False rejection rate P(tar <= threshold)."""

    def to_dict(self) -> dict[str, float]:
        """JSON-safe dictionary of the fields."""
        return {"eer": self.eer, "threshold": self.threshold, "far": self.far, "frr": self.frr}


def eer_result(tar: ArrayLike, non: ArrayLike) -> EERResult:
    """EER with its threshold, FAR and FRR, as the VoicePrivacy 2024 / SpeechBrain definition.

    Candidate thresholds are the unique pooled scores and the midpoints between consecutive
    ones; FRR(t) = P(tar <= t), FAR(t) = P(non > t). The lowest threshold minimising
    |FAR - FRR| is chosen, comparing the integer counts |n_fa N_tar - n_fr N_non| exactly.
    A midpoint between two consecutive unique scores has the counts of the lower one, which
    is a lower threshold, so midpoints never win and only the unique scores are searched.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores (higher = more similar).

    Returns
    -------
    EERResult

    Notes
    -----
    metrics.md section 1. SpeechBrain compares float32 rates and can pick a later tied
    threshold; this function does not, so its threshold can differ from SpeechBrain's on exact
    ties while the rule stays the documented one.

    Examples
    --------
    At t = 0.4, FRR = P(tar <= 0.4) = 1/4 and FAR = P(non > 0.4) = 1/4:

    >>> r = eer_result([0.9, 0.7, 0.6, 0.3], [0.8, 0.4, 0.2, 0.1])
    >>> r.eer, r.threshold
    (0.25, 0.4)
    """
    tar, non = check_pools(tar, non)
    tar_s, non_s = np.sort(tar), np.sort(non)
    thresholds = np.unique(np.concatenate([tar_s, non_s]))
    n_fr = np.searchsorted(tar_s, thresholds, side="right").astype(np.int64)
    n_fa = non.size - np.searchsorted(non_s, thresholds, side="right").astype(np.int64)
    gap = np.abs(n_fa * np.int64(tar.size) - n_fr * np.int64(non.size))
    k = int(np.argmin(gap))  # first minimum = lowest threshold
    far, frr = n_fa[k] / non.size, n_fr[k] / tar.size
    return EERResult(
        eer=float((far + frr) / 2), threshold=float(thresholds[k]), far=float(far), frr=float(frr)
    )


def eer(tar: ArrayLike, non: ArrayLike) -> float:
    """Equal error rate, VoicePrivacy 2024 / SpeechBrain definition (see :func:`eer_result`).

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores.

    Returns
    -------
    float
        EER in [0, 1].

    Examples
    --------
    >>> eer([1.0, 2.0], [1.0, 2.0])
    0.5
    """
    return eer_result(tar, non).eer


def eer_rocch(tar: ArrayLike, non: ArrayLike) -> float:
    """EER of the ROC convex hull (BOSARIS ``rocch2eer``; metrics.md section 1).

    The largest value at which the line of a hull segment crosses Pmiss = Pfa; it equals the
    maximum over priors of the minimum Bayes error rate.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Mated and non-mated scores.

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
    pmiss, pfa = rocch(tar, non)
    x0, x1, y0, y1 = pfa[:-1], pfa[1:], pmiss[:-1], pmiss[1:]
    # The line through (x0, y0), (x1, y1) meets x = y at det / ((x0 - x1) + (y1 - y0)); BOSARIS
    # gives horizontal and vertical segments 0.
    det = x0 * y1 - x1 * y0
    den = (x0 - x1) + (y1 - y0)
    ok = (x0 != x1) & (y0 != y1)
    seg = np.zeros_like(det)
    seg[ok] = det[ok] / den[ok]
    return float(max(0.0, seg.max()))
