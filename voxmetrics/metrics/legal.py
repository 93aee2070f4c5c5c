"""Legally validated linkage metrics (paper 001; metrics.md section 5)."""

from __future__ import annotations

from numpy.typing import ArrayLike

from voxmetrics.metrics.ranks import target_ranks

__all__ = ["linkability"]


def linkability(scores: ArrayLike, targets: ArrayLike) -> float:
    """Fraction of trials whose mated score is strictly above every non-mated score.

    Linkability = mean_i [s_i,m_i > max_{j != m_i} s_ij] (paper 001, eq. 2; metrics.md
    section 5), i.e. the share of trials whose target has rank 1. A tie with a non-mated score
    counts against the attacker. Chance level is 1/N.

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
    return float((target_ranks(scores, targets) == 1).mean())
