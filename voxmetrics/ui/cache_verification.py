"""Cached standard ASV outputs (minDCF / actDCF, DET and APE curves, d') of one condition.

Keyed on the eval matrix's ``content_hash`` plus the options; the matrix is passed as a
``_``-prefixed argument so Streamlit never hashes the scores.
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.dcf import VerificationResult, verification_from_pools
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.ui.cache import Outcome, capture

__all__ = ["clear", "verification_cached"]


@st.cache_data(max_entries=64, show_spinner=False)
def _verification(
    key: str,
    _sm: ScoreMatrix,
    p_targets: tuple[float, ...],
    c_miss: float,
    c_fa: float,
    scores_are_llrs: bool,
) -> Outcome[VerificationResult]:
    return capture(
        verification_from_pools,
        SortedPools.of(_sm),  # shared with the other pages' 1-to-1 metrics of this matrix
        p_targets=p_targets,
        c_miss=c_miss,
        c_fa=c_fa,
        scores_are_llrs=scores_are_llrs,
    )


def verification_cached(
    sm: ScoreMatrix,
    *,
    p_targets: tuple[float, ...],
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
) -> Outcome[VerificationResult]:
    """:func:`~voxmetrics.metrics.dcf.verification` of the pools of ``sm``.

    Computed on the matrix's cached :class:`~voxmetrics.metrics.pools.SortedPools`: the
    non-target pool is not built.
    """
    return _verification(
        sm.content_hash, sm, tuple(p_targets), float(c_miss), float(c_fa), scores_are_llrs
    )


def clear() -> None:
    """Drop the cached results."""
    _verification.clear()
