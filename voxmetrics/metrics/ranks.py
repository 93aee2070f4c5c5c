"""Rank of the target among a trial's scores, with a stated tie convention.

``ties="reference"`` (default): a non-mated score equal to the mated one ranks above it, so a
tie counts against the attacker (the target takes the worst rank among equal scores). No public
implementation of similarity rank disclosure (Bäckström et al. 2025) states a convention, so the
reference is the project's own. ``ties="attacker"``: the target takes the best rank among equal
scores, r_i = 1 + #{j != m_i : s_ij > s_i,m_i}, the conservative audit view.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.pools import Ties, check_ties

__all__ = ["row_blocks", "target_ranks"]

BLOCK_ELEMENTS = 1 << 22
"""Row-wise metrics process about this many scores at a time, so memory stays bounded."""


def row_blocks(n_rows: int, n_cols: int) -> list[slice]:
    """Slices of consecutive rows holding about :data:`BLOCK_ELEMENTS` scores each."""
    step = max(1, BLOCK_ELEMENTS // max(1, n_cols))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def target_ranks(
    scores: ArrayLike, targets: ArrayLike, *, ties: Ties = "reference"
) -> NDArray[np.int64]:
    """Rank of each trial's target: r_i = 1 + #{j != m_i : s_ij >= s_i,m_i}, in 1..N.

    With ``ties="reference"`` a non-mated score equal to the mated one ranks above it (ties
    count against the attacker); with ``ties="attacker"`` it does not (>= becomes >).

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Trial x enrolled-identity scores.
    targets : array_like of int, shape (T,)
        Column of each trial's own speaker.
    ties : {"reference", "attacker"}
        Tie convention (module docstring).

    Returns
    -------
    ndarray of int64, shape (T,)

    Examples
    --------
    >>> target_ranks([[0.9, 0.8, 0.1], [0.5, 0.5, 0.1], [0.1, 0.2, 0.3]], [0, 0, 0]).tolist()
    [1, 2, 3]
    >>> target_ranks([[0.5, 0.5, 0.1]], [0], ties="attacker").tolist()
    [1]
    """
    s, t = check_matrix(scores, targets)
    check_ties(ties)
    out = np.empty(s.shape[0], dtype=np.int64)
    for rows in row_blocks(*s.shape):
        block = s[rows]
        mated = block[np.arange(block.shape[0]), t[rows]]
        if ties == "reference":
            # the target itself is counted by >=, so the count is already 1 + #others
            out[rows] = (block >= mated[:, None]).sum(axis=1)
        else:
            out[rows] = 1 + (block > mated[:, None]).sum(axis=1)
    return out
