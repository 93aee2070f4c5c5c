"""SRD test cases shared by the analysis and figure tests: score rows with chosen target ranks."""

from __future__ import annotations

import warnings

import numpy as np

from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.srd import fit_beta_binomial, srd


def rank_scores(ranks, n, seed=0):
    """A T x n matrix whose trial i has its target (column 0) at rank ranks[i], no ties."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in ranks:
        row = np.sort(rng.uniform(0, 1, n))[::-1].copy()  # distinct, descending
        target = row[r - 1]
        row = np.delete(row, r - 1)
        rows.append(np.concatenate([[target], rng.permutation(row)]))
    return np.array(rows), np.zeros(len(ranks), dtype=int)


def two_conditions():
    """Two conditions, N = 8: one with ranks spread out, one concentrated at rank 1.

    Returns their SRD results and their LL and CLL beta-binomial fits.
    """
    spread_ranks = [1, 1, 1, 2, 2, 3, 4, 5, 6, 8, 1, 2]  # rank 7 never reached
    sharp_ranks = [1] * 9 + [2, 2, 3]  # ranks 4..8 never reached
    results = {
        "spread": srd(*rank_scores(spread_ranks, 8)),
        "sharp": srd(*rank_scores(sharp_ranks, 8, seed=1)),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        fits = {
            name: [fit_beta_binomial(r.histogram, loss=loss) for loss in ("LL", "CLL")]
            for name, r in results.items()
        }
    return results, fits
