"""Cached standard ASV outputs of one condition (:mod:`voxmetrics.analysis.verification`).

Keyed on the eval matrix's ``content_hash`` plus the options; the matrix is passed as a
``_``-prefixed argument so Streamlit never hashes the scores.
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.analysis.verification import verification_of
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.dcf import VerificationResult
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
        verification_of,
        _sm,
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
    """:func:`~voxmetrics.analysis.verification.verification_of` ``sm``, cached."""
    return _verification(
        sm.content_hash, sm, tuple(p_targets), float(c_miss), float(c_fa), scores_are_llrs
    )


def clear() -> None:
    """Drop the cached results."""
    _verification.clear()
