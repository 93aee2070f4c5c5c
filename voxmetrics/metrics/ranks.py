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

from voxmetrics.metrics._validation import Ties, check_matrix, check_ties
from voxmetrics.metrics.parallel import map_blocks

__all__ = [
    "BLOCK_ELEMENTS",
    "CHUNK_ELEMENTS",
    "entry_ranks",
    "entry_ranks_and_max",
    "row_blocks",
    "target_ranks",
]

BLOCK_ELEMENTS = 1 << 22
"""Row-wise metrics process about this many scores at a time, so memory stays bounded."""

CHUNK_ELEMENTS = 1 << 18
"""Purely row-wise work (each row's result depends on that row only) runs in chunks of about
this many scores: their float64 temporaries (2 MB) stay in the processor's cache and are
reused by the allocator, where a block's (32 MB) are mapped afresh each time. Sums over whole
blocks keep :data:`BLOCK_ELEMENTS`, so the numbers do not depend on the chunk size."""


def row_blocks(n_rows: int, n_cols: int, elements: int | None = None) -> list[slice]:
    """Slices of consecutive rows holding about ``elements`` scores each.

    ``elements`` defaults to :data:`BLOCK_ELEMENTS`; :data:`CHUNK_ELEMENTS` for row-wise work.
    """
    size = BLOCK_ELEMENTS if elements is None else elements
    step = max(1, size // max(1, n_cols))
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

    def one(blk: slice) -> NDArray[np.int64]:
        out = np.empty(blk.stop - blk.start, dtype=np.int64)
        n_rows = blk.stop - blk.start
        for rows in row_blocks(n_rows, s.shape[1], CHUNK_ELEMENTS):  # one count per row
            block = s[blk][rows]
            mated = block[np.arange(block.shape[0]), t[blk][rows]]
            if ties == "reference":
                # the target itself is counted by >=, so the count is already 1 + #others
                out[rows] = (block >= mated[:, None]).sum(axis=1)
            else:
                out[rows] = 1 + (block > mated[:, None]).sum(axis=1)
        return out

    parts = map_blocks(one, row_blocks(*s.shape))  # row blocks on parallel threads
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def entry_ranks(
    block: NDArray[np.floating], cols: ArrayLike, *, ties: Ties = "reference"
) -> NDArray[np.int64]:
    """Rank of chosen entries within their rows: rank of ``block[i, cols[d, i]]`` in row i.

    ``ties="reference"``: #{k : s_ik >= s_ij} (the worst rank among equal scores, SciPy's
    ``rankdata(-row, method="max")``); ``ties="attacker"``: 1 + #{k : s_ik > s_ij} (the best,
    ``method="min"``). Each row is sorted once and every chosen entry is located in its
    sorted row by binary search (``np.searchsorted``), O(N log N) per row plus O(log N) per
    entry, instead of ranking every entry of the row.

    Parameters
    ----------
    block : ndarray, shape (R, N)
        Finite scores (float32 or float64; compared in their own dtype).
    cols : array_like of int, shape (D, R)
        Column of each chosen entry, D per row.
    ties : {"reference", "attacker"}
        Tie convention (module docstring).

    Returns
    -------
    ndarray of int64, shape (D, R)

    Examples
    --------
    >>> s = np.array([[0.5, 0.9, 0.5, 0.1]])
    >>> entry_ranks(s, [[0], [1], [3]]).ravel().tolist()
    [3, 1, 4]
    >>> entry_ranks(s, [[0], [1], [3]], ties="attacker").ravel().tolist()
    [2, 1, 4]
    """
    return entry_ranks_and_max(block, cols, ties=ties)[0]


def entry_ranks_and_max(
    block: NDArray[np.floating], cols: ArrayLike, *, ties: Ties = "reference"
) -> tuple[NDArray[np.int64], NDArray[np.floating]]:
    """:func:`entry_ranks` and the maximum of each row (R x 1), the last of its sorted scores.

    Examples
    --------
    >>> ranks, top = entry_ranks_and_max(np.array([[0.5, 0.9, 0.5, 0.1]]), [[0], [1]])
    >>> ranks.ravel().tolist(), top.tolist()
    ([3, 1], [[0.9]])
    """
    check_ties(ties)
    b = np.asarray(block)
    c = np.asarray(cols, dtype=np.intp)
    n_rows, n = b.shape
    rows = np.arange(n_rows)
    query = b[rows[:, None], c.T]  # (R, D): each row's chosen scores
    ordered = np.sort(b, axis=1)
    # count of the row's scores below each query (strictly: "reference"; or equal: "attacker"),
    # by NumPy's binary search in the row's sorted scores, compared in their own dtype
    side = "left" if ties == "reference" else "right"
    lo = np.empty(query.shape, dtype=np.int64)
    for i in range(n_rows):  # the method (np.searchsorted's wrapper costs ~2 us a call)
        lo[i] = ordered[i].searchsorted(query[i], side=side)
    # reference: #{>= q} = n - #{< q}; attacker: 1 + #{> q} = 1 + n - #{<= q}
    ranks = np.ascontiguousarray((n - lo if ties == "reference" else 1 + n - lo).T)
    return ranks, ordered[:, -1:].copy()
