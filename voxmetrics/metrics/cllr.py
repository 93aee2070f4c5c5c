"""Cost of log-likelihood ratio, actual and minimum."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_llr_pools
from voxmetrics.metrics.pools import SortedPools, Ties, check_ties

__all__ = ["cllr", "min_cllr", "min_cllr_from_pools"]


def _cllr(tar_llr: NDArray[np.float64], non_llr: NDArray[np.float64]) -> float:
    # log2(1 + e^-l) via logaddexp: exact at +-inf and no overflow for large |l|
    c_tar = np.logaddexp(0.0, -tar_llr).mean()
    c_non = np.logaddexp(0.0, non_llr).mean()
    return float(0.5 * (c_tar + c_non) / np.log(2.0))


def cllr(tar: ArrayLike, non: ArrayLike) -> float:
    """Cllr of scores taken as given as natural-log LLRs.

    Cllr = 1/2 [mean_tar log2(1 + e^-l) + mean_non log2(1 + e^l)] (bits). Meaningful only when
    the scores are calibrated LLRs; cosine similarities give numbers near 1 that mean little.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target LLRs (natural log); +-inf allowed.

    Returns
    -------
    float
        Cllr in bits; 1 for LLRs that are all 0, >= 0 always.

    Examples
    --------
    >>> cllr([0.0], [0.0])
    1.0
    """
    tar, non = check_llr_pools(tar, non)
    return _cllr(tar, non)


def min_cllr(tar: ArrayLike, non: ArrayLike, *, ties: Ties = "reference") -> float:
    """Minimum Cllr: Cllr after PAV calibration, no Laplace rule.

    Parameters
    ----------
    tar, non : array_like, 1-D
        Target and non-target scores on any monotone scale.
    ties : {"reference", "attacker"}
        PAV with targets before (reference, as PYLLR) or after (attacker) non-targets at
        equal scores.

    Returns
    -------
    float
        min Cllr in bits, in [0, 1]: 0 for separable pools, 1 for identical pools (under the
        reference tie rule).

    Examples
    --------
    >>> min_cllr([2.0, 3.0], [0.0, 1.0])
    0.0
    >>> min_cllr([1.0, 2.0], [1.0, 2.0])
    1.0
    """
    return min_cllr_from_pools(SortedPools.from_pools(tar, non), ties=ties)


def min_cllr_from_pools(pools: SortedPools, *, ties: Ties = "reference") -> float:
    """:func:`min_cllr` of already sorted pools (PAV on the label runs, weighted by length)."""
    r = pools.pav(targets_first=check_ties(ties) == "reference", laplace=False)
    is_tar = r.labels == 1.0
    # NumPy's pairwise sums, not a BLAS dot (whose last bits depend on its thread count)
    c_tar = (r.counts[is_tar] * np.logaddexp(0.0, -r.llr[is_tar])).sum() / pools.n_tar
    c_non = (r.counts[~is_tar] * np.logaddexp(0.0, r.llr[~is_tar])).sum() / pools.n_non
    # The constant LLR 0 is a monotone calibration with Cllr 1, so the minimum is <= 1; the
    # clip only removes rounding of the PAV means.
    return min(float(0.5 * (c_tar + c_non) / np.log(2.0)), 1.0)
