"""Rank of the target among a trial's scores, ties against the attacker."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_matrix

__all__ = ["row_blocks", "target_ranks"]

BLOCK_ELEMENTS = 1 << 22
"""Row-wise metrics process about this many scores at a time, so memory stays bounded."""


def row_blocks(n_rows: int, n_cols: int) -> list[slice]:
    """Slices of consecutive rows holding about :data:`BLOCK_ELEMENTS` scores each."""
    step = max(1, BLOCK_ELEMENTS // max(1, n_cols))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def target_ranks(scores: ArrayLike, targets: ArrayLike) -> NDArray[np.int64]:
    """Rank of each trial's target: r_i = 1 + #{j != m_i : s_ij >= s_i,m_i}, in 1..N.

    A non-mated score equal to the mated one ranks above it (ties count against the attacker).

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.

    Returns
    -------
    ndarray of int64, shape (T,)

    Examples
    --------
    >>> target_ranks([[0.9, 0.8, 0.1], [0.5, 0.5, 0.1], [0.1, 0.2, 0.3]], [0, 0, 0]).tolist()
    [1, 2, 3]
    """
    s, t = check_matrix(scores, targets)
    out = np.empty(s.shape[0], dtype=np.int64)
    for rows in row_blocks(*s.shape):
        block = s[rows]
        mated = block[np.arange(block.shape[0]), t[rows]]
        # the target itself is counted by >=, so the count is already 1 + #others
        out[rows] = (block >= mated[:, None]).sum(axis=1)
    return out
