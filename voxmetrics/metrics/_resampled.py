"""What the speaker replicates, the chance levels and the paired comparisons share.

The disclosure statistics of rank histograms, one per row (:func:`srd_from_hist`), the keys
of the numbers that are sample maxima (:data:`MAXIMA`) and per-speaker sums of per-trial values
(:func:`speaker_sums`), which the replicate weights multiply.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

MAXIMA = ("lid_max", "max_d", "log10_l")
"""Sample maxima: reported with their q95 neighbour's interval, no interval of their own."""


def row_weighted_quantile(
    values: NDArray[np.float64], weights: NDArray[np.float64], q: float
) -> NDArray[np.float64]:
    """:func:`weighted_quantile` with different values per row (B, n) (zero weights ignored)."""
    order = np.argsort(values, axis=1, kind="stable")
    sv = np.take_along_axis(values, order, axis=1)
    cum = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    total = cum[:, -1]
    k = (cum < q * total[:, None] * (1 - 1e-12)).sum(axis=1)
    out = sv[np.arange(sv.shape[0]), np.minimum(k, sv.shape[1] - 1)]
    return np.where(total > 0, out, np.nan)


def srd_from_hist(h: NDArray[np.float64], q: float) -> dict[str, NDArray[np.float64]]:
    """MeanD, IdR, MaxD and the q-quantile of the per-trial disclosure of rank histograms."""
    n = h.shape[1]
    p = h / h.sum(axis=1, keepdims=True)
    pos = p > 0
    with np.errstate(divide="ignore"):
        e = np.where(pos, np.log2(n * np.where(pos, p, 1.0)), -np.inf)
    mean_d = np.where(pos, p * np.where(pos, e, 0.0), 0.0).sum(axis=1)
    return {
        "mean_d": mean_d,
        "idr": p[:, 0],
        "max_d": e.max(axis=1),
        "max_d_q95": row_weighted_quantile(e, p, q),
    }


def speaker_sums(values: NDArray[np.float64], inv: NDArray[np.intp], s: int) -> NDArray[np.float64]:
    """Per-speaker sums of per-trial values (T,) or (T, G) -> (S,) or (S, G)."""
    if values.ndim == 1:
        # float64 with float weights: numpy's stub types every bincount as intp
        return np.bincount(inv, weights=values, minlength=s)  # type: ignore[return-value]
    out = np.zeros((s, values.shape[1]))
    np.add.at(out, inv, values)
    return out
