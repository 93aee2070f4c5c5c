"""Legally validated linkage metrics (paper 001; metrics.md section 5)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from voxmetrics.metrics._validation import check_matrix

__all__ = ["linkability"]

_BLOCK_ELEMENTS = 1 << 22  # rows are processed in blocks of about 4M scores (32 MB in float64)


def linkability(scores: ArrayLike, targets: ArrayLike) -> float:
    """Fraction of trials whose mated score is strictly above every non-mated score.

    Linkability = mean_i [s_i,m_i > max_{j != m_i} s_ij] (paper 001, eq. 2; metrics.md
    section 5). A tie with a non-mated score counts against the attacker. Chance level is 1/N.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.

    Returns
    -------
    float
        Linkability in [0, 1].

    Examples
    --------
    >>> linkability([[0.9, 0.8], [0.5, 0.5]], [0, 1])
    0.5
    """
    s, t = check_matrix(scores, targets)
    n_rows = max(1, _BLOCK_ELEMENTS // s.shape[1])
    linked = 0
    for start in range(0, s.shape[0], n_rows):
        block = s[start : start + n_rows]
        tb = t[start : start + n_rows]
        rows = np.arange(block.shape[0])
        mated = block[rows, tb]
        # a trial is linked when exactly one score (its own) reaches the mated score
        linked += int(((block >= mated[:, None]).sum(axis=1) == 1).sum())
    return linked / s.shape[0]
