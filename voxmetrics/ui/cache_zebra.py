"""Cached ZEBRA calls of the ZEBRA page (the computations are :mod:`voxmetrics.analysis.zebra`).

Every wrapper is keyed on the eval matrix's ``content_hash`` plus its options, and receives the
matrix itself as a ``_``-prefixed argument, so Streamlit never hashes the scores. The bootstrap
reports progress while it computes, so it cannot live in ``st.cache_data`` (an element updated
inside a cached function would be replayed on a hit): its results go to a bounded LRU store kept
in ``st.cache_resource``.
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.analysis import zebra as az
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.bootstrap import BootstrapInterval, Progress
from voxmetrics.metrics.zebra import ECECurves, PAVTransform, ZebraResult
from voxmetrics.ui.cache import Outcome, ResultStore, capture

__all__ = [
    "clear",
    "ece_curves_cached",
    "pav_transform_cached",
    "zebra_intervals",
    "zebra_result",
]


@st.cache_data(max_entries=64, show_spinner=False)
def _zebra(key: str, _sm: ScoreMatrix) -> Outcome[ZebraResult]:
    return capture(az.zebra_of, _sm)


def zebra_result(sm: ScoreMatrix) -> Outcome[ZebraResult]:
    """:func:`~voxmetrics.analysis.zebra.zebra_of` ``sm``, cached."""
    return _zebra(sm.content_hash, sm)


@st.cache_data(max_entries=64, show_spinner=False)
def _curves(key: str, _sm: ScoreMatrix, scores_are_llrs: bool) -> Outcome[ECECurves]:
    return capture(az.ece_curves_of, _sm, scores_are_llrs=scores_are_llrs)


def ece_curves_cached(sm: ScoreMatrix, *, scores_are_llrs: bool = False) -> Outcome[ECECurves]:
    """:func:`~voxmetrics.analysis.zebra.ece_curves_of` ``sm``, cached."""
    return _curves(sm.content_hash, sm, scores_are_llrs)


@st.cache_data(max_entries=32, show_spinner=False)
def _transform(key: str, _sm: ScoreMatrix) -> Outcome[PAVTransform]:
    return capture(az.pav_transform_of, _sm)


def pav_transform_cached(sm: ScoreMatrix) -> Outcome[PAVTransform]:
    """:func:`~voxmetrics.analysis.zebra.pav_transform_of` ``sm``, cached."""
    return _transform(sm.content_hash, sm)


@st.cache_resource(show_spinner=False)
def _bootstrap_store() -> ResultStore:
    return ResultStore(max_entries=64)


def zebra_intervals(
    sm: ScoreMatrix, *, n_boot: int, seed: int, progress: Progress | None = None
) -> Outcome[dict[str, BootstrapInterval]]:
    """:func:`~voxmetrics.analysis.zebra.zebra_intervals`, cached on (content, B, seed).

    ``progress(fraction, message)`` is called only when the intervals are computed, not on a
    cache hit.
    """
    key = (sm.content_hash, int(n_boot), int(seed))
    store = _bootstrap_store()
    hit = store.get(key)
    if hit is not None:
        return hit
    out = capture(az.zebra_intervals, sm, n_boot=n_boot, seed=seed, progress=progress)
    store.put(key, out)
    return out


def clear() -> None:
    """Empty every cache of this module (tests)."""
    _zebra.clear()
    _curves.clear()
    _transform.clear()
    _bootstrap_store().clear()
