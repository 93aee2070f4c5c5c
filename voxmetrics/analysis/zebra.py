"""ZEBRA of a condition: its curves and transform from the matrix, the worst trial, the table.

Everything here derives from the matrix's cached
:class:`~voxmetrics.metrics.pools.SortedPools` (or its rows): the non-mated pool is not built
for a complete matrix. The dashboard's ZEBRA page caches these calls; the numbers are those of
:mod:`voxmetrics.metrics.zebra` (Nautsch et al. 2020).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from voxmetrics._types import Progress
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.zebra import (
    ECECurves,
    PAVTransform,
    ZebraResult,
    ece_curves,
    ece_curves_of_matrix,
    pav_transform_from_pools,
    zebra_bootstrap,
    zebra_from_pools,
)

__all__ = [
    "ZEBRA_COLUMNS",
    "WorstTrial",
    "ece_curves_of",
    "pav_transform_of",
    "worst_trial",
    "worst_trial_frame",
    "zebra_intervals",
    "zebra_of",
    "zebra_table",
]

Intervals = dict[str, BootstrapInterval]


def zebra_of(sm: ScoreMatrix) -> ZebraResult:
    """:func:`~voxmetrics.metrics.zebra.zebra` of the mated / non-mated pools of ``sm``.

    Every listed pair counts (:meth:`~voxmetrics.data.model.ScoreMatrix.pairwise_view`), as in
    the condition's report; so in every function here.
    """
    return zebra_from_pools(SortedPools.of(sm.pairwise_view()))


def ece_curves_of(sm: ScoreMatrix, *, scores_are_llrs: bool = False) -> ECECurves:
    """:func:`~voxmetrics.metrics.zebra.ece_curves` of ``sm`` on the default prior grid.

    The minimum from the matrix's sorted pools; the actual ECE of LLR scores from its rows
    (a sparse trial list: from its listed pairs).
    """
    sm = sm.pairwise_view()
    pools = SortedPools.of(sm)
    if sm.mask is not None:
        return ece_curves(sm.tar, sm.non, scores_are_llrs=scores_are_llrs, pools=pools)
    return ece_curves_of_matrix(sm.scores, sm.targets, pools=pools, scores_are_llrs=scores_are_llrs)


def pav_transform_of(sm: ScoreMatrix) -> PAVTransform:
    """The PAV score-to-LLR step function of ``sm``, from its sorted pools.

    :func:`~voxmetrics.metrics.zebra.pav_transform_from_pools`: every score of ``sm`` looked up
    in it gets the LLR of :func:`~voxmetrics.metrics.zebra.pav_transform`.
    """
    return pav_transform_from_pools(SortedPools.of(sm.pairwise_view()))


def zebra_intervals(
    sm: ScoreMatrix, *, n_boot: int, seed: int, progress: Progress | None = None
) -> Intervals:
    """Speaker-bootstrap 95% intervals of D_ECE and |log10 LR| q95 of ``sm``.

    :func:`~voxmetrics.metrics.zebra.zebra_bootstrap` on the matrix's sorted pools.
    """
    sm = sm.pairwise_view()
    return zebra_bootstrap(
        sm.scores,
        sm.targets,
        sm.trial_speakers,
        n_boot=int(n_boot),
        seed=int(seed),
        progress=progress,
        pools=SortedPools.of(sm),
        mask=sm.mask,
    )


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
    ``transform`` is :func:`pav_transform_of` (or
    :func:`~voxmetrics.metrics.zebra.pav_transform`) of ``sm``.
    """
    sm = sm.pairwise_view()  # the pairs of unenrolled speakers too, as ``result`` counts them
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
    "eer": "EER",
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
    eer: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """One row per condition: D_ECE, log10 l, tag, odds and (when given) their intervals.

    Rows follow ``order`` (default: decreasing D_ECE, the most disclosing first). Interval
    columns appear only when ``intervals`` is given, the EER (beside D_ECE) when ``eer`` is
    (condition -> EER, e.g. :func:`~voxmetrics.analysis.verification.eer_of`).
    """
    names = (
        list(order)
        if order is not None
        else sorted(results, key=lambda n: results[n].d_ece, reverse=True)
    )
    rows = []
    for name in names:
        r = results[name]
        row: dict[str, object] = {"condition": name}
        if eer is not None:
            row["eer"] = eer.get(name)
        row["d_ece"] = r.d_ece
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
