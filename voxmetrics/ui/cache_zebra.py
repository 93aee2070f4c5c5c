"""Cached ZEBRA calls and the small data helpers of the ZEBRA page.

Every wrapper is keyed on the eval matrix's ``content_hash`` plus its options, and receives the
matrix itself as a ``_``-prefixed argument, so Streamlit never hashes the scores. The bootstrap
reports progress while it computes, so it cannot live in ``st.cache_data`` (an element updated
inside a cached function would be replayed on a hit): its results go to a bounded LRU store kept
in ``st.cache_resource``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.bootstrap import BootstrapInterval, Progress
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.zebra import (
    ECECurves,
    PAVTransform,
    ZebraResult,
    ece_curves,
    ece_curves_from_pools,
    pav_transform,
    zebra_bootstrap,
    zebra_from_pools,
)
from voxmetrics.ui.cache import Outcome, ResultStore, capture

__all__ = [
    "ZEBRA_COLUMNS",
    "WorstTrial",
    "clear",
    "ece_curves_cached",
    "pav_transform_cached",
    "worst_trial",
    "worst_trial_frame",
    "zebra_intervals",
    "zebra_result",
    "zebra_table",
]

Intervals = dict[str, BootstrapInterval]


@st.cache_data(max_entries=64, show_spinner=False)
def _zebra(key: str, _sm: ScoreMatrix) -> Outcome[ZebraResult]:
    return capture(lambda: zebra_from_pools(SortedPools.of(_sm)))


def zebra_result(sm: ScoreMatrix) -> Outcome[ZebraResult]:
    """:func:`~voxmetrics.metrics.zebra.zebra` of the mated / non-mated pools of ``sm``."""
    return _zebra(sm.content_hash, sm)


@st.cache_data(max_entries=64, show_spinner=False)
def _curves(key: str, _sm: ScoreMatrix, scores_are_llrs: bool) -> Outcome[ECECurves]:
    if not scores_are_llrs:  # from the matrix's sorted pools, no non-mated copy
        return capture(lambda: ece_curves_from_pools(SortedPools.of(_sm)))
    return capture(ece_curves, _sm.tar, _sm.non, scores_are_llrs=True)


def ece_curves_cached(sm: ScoreMatrix, *, scores_are_llrs: bool = False) -> Outcome[ECECurves]:
    """:func:`~voxmetrics.metrics.zebra.ece_curves` of ``sm`` on the default prior grid."""
    return _curves(sm.content_hash, sm, scores_are_llrs)


@st.cache_data(max_entries=32, show_spinner=False)
def _transform(key: str, _sm: ScoreMatrix) -> Outcome[PAVTransform]:
    return capture(pav_transform, _sm.tar, _sm.non)


def pav_transform_cached(sm: ScoreMatrix) -> Outcome[PAVTransform]:
    """:func:`~voxmetrics.metrics.zebra.pav_transform` of ``sm``."""
    return _transform(sm.content_hash, sm)


# ---------------------------------------------------------------- bootstrap (with progress)


@st.cache_resource(show_spinner=False)
def _bootstrap_store() -> ResultStore:
    return ResultStore(max_entries=64)


def zebra_intervals(
    sm: ScoreMatrix, *, n_boot: int, seed: int, progress: Progress | None = None
) -> Outcome[Intervals]:
    """Speaker-bootstrap 95% intervals of D_ECE and |log10 LR| q95, cached on (content, B, seed).

    ``progress(fraction, message)`` is called only when the intervals are computed, not on a
    cache hit.
    """
    key = (sm.content_hash, int(n_boot), int(seed))
    store = _bootstrap_store()
    hit = store.get(key)
    if hit is not None:
        return hit
    out = capture(
        zebra_bootstrap,
        sm.scores,
        sm.targets,
        sm.trial_speakers,
        n_boot=int(n_boot),
        seed=int(seed),
        progress=progress,
        pools=SortedPools.of(sm),
        mask=sm.mask,
    )
    store.put(key, out)
    return out


def clear() -> None:
    """Empty every cache of this module (tests)."""
    _zebra.clear()
    _curves.clear()
    _transform.clear()
    _bootstrap_store().clear()


# ---------------------------------------------------------------- page helpers


@dataclass(frozen=True)
class WorstTrial:
    """The trial and enrolled identity whose score gave a condition's worst case."""

    trial_id: str
    """Identifier of the trial (row)."""
    trial_speaker: str
    """The trial's true speaker."""
    enrolled: str
    """The enrolled identity (column) it was scored against."""
    row: int
    """Row of the trial in the score matrix."""
    column: int
    """Column of the enrolled identity."""
    mated: bool
    """Whether the score is mated (trial speaker == enrolled identity)."""
    score: float
    """The score."""
    log10_lr: float
    """Its LLR after PAV with Laplace's rule, base 10 and signed (|log10_lr| = log10 l)."""


def worst_trial(sm: ScoreMatrix, result: ZebraResult, transform: PAVTransform) -> WorstTrial:
    """Map ``result.worst_index`` back to a (trial, enrolled identity) cell of ``sm``.

    A mated index i is trial i (``sm.tar`` has one score per row); a non-mated index k counts
    ``sm.non`` in row-major order with the target column left out of every row, so the row is
    k // (N - 1) and the column the (k mod (N - 1))-th non-target column of that row.
    """
    n = sm.n_enrolled
    if sm.mask is not None:  # a sparse trial list: the index counts its listed pairs
        if result.worst_is_mated:
            row = int(np.flatnonzero(sm.target_listed)[int(result.worst_index)])
            col = int(sm.targets[row])
        else:
            listed = sm.mask.copy()
            listed[np.arange(sm.n_trials), sm.targets] = False
            row, col = divmod(int(np.flatnonzero(listed)[int(result.worst_index)]), n)
    elif result.worst_is_mated:
        row = int(result.worst_index)
        col = int(sm.targets[row])
    else:
        row, j = divmod(int(result.worst_index), n - 1)
        target = int(sm.targets[row])
        col = j if j < target else j + 1
    score = float(sm.scores[row, col])
    k = int(np.searchsorted(transform.scores, score))
    return WorstTrial(
        trial_id=str(sm.trial_ids[row]),
        trial_speaker=str(sm.trial_speakers[row]),
        enrolled=str(sm.enrol_speakers[col]),
        row=row,
        column=col,
        mated=bool(result.worst_is_mated),
        score=score,
        log10_lr=float(transform.llr_laplace[min(k, transform.scores.size - 1)] / np.log(10.0)),
    )


def worst_trial_frame(name: str, worst: WorstTrial, result: ZebraResult) -> pd.DataFrame:
    """The worst case of one condition as a one-row table."""
    return pd.DataFrame(
        [
            {
                "Condition": name,
                "Trial id": worst.trial_id,
                "Trial speaker": worst.trial_speaker,
                "Enrolled identity": worst.enrolled,
                "Mated": worst.mated,
                "Score": worst.score,
                "log10 LR (Laplace)": worst.log10_lr,
                "Tag": result.tag,
                "Posterior odds (flat prior)": result.odds,
            }
        ]
    )


ZEBRA_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "d_ece": "D_ECE (bits)",
    "d_ece_low": "D_ECE 95% low",
    "d_ece_high": "D_ECE 95% high",
    "log10_l": "log10 l",
    "log10_l_q95": "|log10 LR| q95",
    "log10_l_q95_low": "|log10 LR| q95 95% low",
    "log10_l_q95_high": "|log10 LR| q95 95% high",
    "tag": "Tag",
    "odds": "Posterior odds (flat prior)",
}
"""Columns of :func:`zebra_table` and their display labels."""


def zebra_table(
    results: Mapping[str, ZebraResult],
    intervals: Mapping[str, Intervals] | None = None,
    *,
    order: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per condition: D_ECE, log10 l, tag, odds and (when given) their intervals.

    Rows follow ``order`` (default: decreasing D_ECE, the most disclosing first). Interval
    columns appear only when ``intervals`` is given.
    """
    names = (
        list(order)
        if order is not None
        else sorted(results, key=lambda n: results[n].d_ece, reverse=True)
    )
    rows = []
    for name in names:
        r = results[name]
        row: dict[str, object] = {"condition": name, "d_ece": r.d_ece}
        ci = (intervals or {}).get(name)
        if intervals is not None:
            row["d_ece_low"] = ci["d_ece"].low if ci else None
            row["d_ece_high"] = ci["d_ece"].high if ci else None
        row["log10_l"] = r.log10_l
        if intervals is not None:
            # a maximum has no sound percentile interval: its 0.95 quantile carries one
            q95 = ci.get("log10_l_q95") if ci else None
            row["log10_l_q95"] = q95.estimate if q95 else None
            row["log10_l_q95_low"] = q95.low if q95 else None
            row["log10_l_q95_high"] = q95.high if q95 else None
        row["tag"] = r.tag
        row["odds"] = r.odds
        rows.append(row)
    df = pd.DataFrame(rows, columns=[c for c in ZEBRA_COLUMNS if not rows or c in rows[0]])
    for col in df.columns:
        if col not in ("condition", "tag", "odds"):
            df[col] = df[col].astype(float)
    return df.rename(columns=ZEBRA_COLUMNS)
