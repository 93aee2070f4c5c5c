"""Long scores (CSV or Parquet): one row per (trial, enrolled) pair, pivoted to T x N.

Columns ``trial_id, trial_speaker, enrol_speaker, score`` plus optional per-trial attribute
columns. Trials and enrolled identities keep their order of first appearance; pairs that are
not listed make a sparse matrix with a ``mask``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.readers._common import (
    NAN_WORDS,
    SCORE_COLUMNS,
    Where,
    as_str_array,
    attribute_array,
    incomplete,
)
from voxmetrics.data.readers.tables import labels_of, missing_columns, numeric_scores
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "Pivot",
    "drop_nan_rows",
    "scores_from_long",
]


class Pivot:
    """Long (trial, enrolled, score) rows pivoted to T x N, orders of first appearance."""

    def __init__(
        self, trial: pd.Series, enrol: pd.Series, scores: NDArray[np.float64], where: Where
    ) -> None:
        tcodes, tuniq = pd.factorize(trial, sort=False)
        ecodes, euniq = pd.factorize(enrol, sort=False)
        t, n = len(tuniq), len(euniq)
        self.trial_ids = as_str_array(tuniq)
        self.enrol_speakers = as_str_array(euniq)
        self.tcodes = tcodes
        self.ecodes = ecodes
        # Row of the first appearance of each trial; factorize numbers trials in that order.
        self.first = np.flatnonzero(~pd.Series(tcodes).duplicated().to_numpy())
        key = tcodes.astype(np.int64) * n + ecodes
        if t * n <= key.size:  # complete unless a pair repeats: a bitmap of at most one per row
            filled = np.zeros(t * n, dtype=bool)
            filled[key] = True
            complete = key.size == t * n and bool(filled.all())
            del filled
        else:  # sparse for sure; no T x N bitmap before the cell limit (a file may imply 10^10)
            complete = False
        dup = np.zeros(0, dtype=bool) if complete else pd.Series(key).duplicated().to_numpy()
        if dup.any():  # some pair appears twice
            j = int(np.argmax(dup))
            i = int(np.flatnonzero(key == key[j])[0])
            raise VoxMetricsInputError(
                f"{where.name}: {where(j)}: duplicate (trial, enrolled) pair: trial "
                f"'{self.trial_ids[tcodes[j]]}' x enrolled '{self.enrol_speakers[ecodes[j]]}' "
                f"already appears on {where(i)} ({int(dup.sum())} duplicate row(s) in all); "
                "keep one score per pair."
            )
        check_count(
            where.name,
            f"score cells ({t:,} trials x {n:,} enrolled"
            + ("" if complete else f", {key.size:,} of them listed")
            + ")",
            t * n,
            "max_cells",
        )
        # Fill through a flat view so the matrix owns its memory (from_arrays need not copy it).
        # A sparse trial list (some pairs not listed): NaN in the unlisted cells and a mask.
        self.scores = np.empty((t, n), dtype=np.float64)
        self.mask: NDArray[np.bool_] | None = None
        if not complete:
            self.scores.fill(np.nan)
            self.mask = np.zeros((t, n), dtype=bool)
            self.mask.reshape(-1)[key] = True
        self.scores.reshape(-1)[key] = scores

    def check_truncated(self, where: Where, allow_incomplete: bool) -> None:
        """Refuse a file that lists its pairs in grid order and stops inside a trial / speaker.

        A long or Kaldi file written trial by trial (every trial against all enrolled, in one
        order) or enrolled speaker by speaker, whose last group is cut short, is a file cut at
        a line boundary, not a sparse trial list.
        """
        if self.mask is None:
            return
        t, n = self.scores.shape
        rows = np.arange(self.tcodes.size, dtype=np.int64)
        for outer, inner, size, what in (
            (self.tcodes, self.ecodes, n, "trial"),
            (self.ecodes, self.tcodes, t, "enrolled speaker"),
        ):
            if (
                size > 1
                and rows.size % size
                and np.array_equal(outer, rows // size)
                and np.array_equal(inner, rows % size)
            ):
                last = (
                    self.trial_ids[self.tcodes[-1]]
                    if what == "trial"
                    else self.enrol_speakers[self.ecodes[-1]]
                )
                msg = (
                    f"{where.name}: the rows end early: the file lists its pairs {what} by "
                    f"{what}, each against all {size:,}, but stops after {where(rows.size - 1)} "
                    f"inside {what} '{last}' ({rows.size:,} listed pairs of T x N = {t:,} x "
                    f"{n:,} = {t * n:,}), so it looks truncated"
                )
                incomplete(msg, t * n - rows.size, allow_incomplete)
                return

    def per_trial(self, col: pd.Series, column: str, where: Where) -> NDArray[Any]:
        """Values of a column that must be constant within each trial, one per trial."""
        codes, _ = pd.factorize(col, sort=False)
        firsts = codes[self.first]
        bad = codes != firsts[self.tcodes]
        if bad.any():
            j = int(np.argmax(bad))
            i = int(self.first[self.tcodes[j]])
            raise VoxMetricsInputError(
                f"{where.name}: {where(j)}: trial '{self.trial_ids[self.tcodes[j]]}' has "
                f"{column} '{col.iloc[j]}' but {where(i)} gives '{col.iloc[i]}'; '{column}' "
                "describes the trial, so give it the same value on all the trial's rows."
            )
        return col.iloc[self.first].to_numpy()


def _infer_numbers(values: NDArray[Any]) -> NDArray[Any]:
    """Text values that are all numbers (or missing) become a numeric array, as in read_csv."""
    try:
        return pd.to_numeric(pd.Series(values, dtype=object)).to_numpy()
    except (ValueError, TypeError):
        return values


def drop_nan_rows(df: pd.DataFrame, column: Any, where: Where) -> tuple[pd.DataFrame, Where]:
    """Rows whose score is empty or NaN left out, with a warning (``allow_incomplete``)."""
    col = df[column]
    if pd.api.types.is_numeric_dtype(col):
        nan = col.isna().to_numpy()
    else:
        text = col.astype(object).where(col.notna(), "nan").astype(str).str.strip().str.lower()
        nan = text.isin(NAN_WORDS).to_numpy()
    if nan.any() and not nan.all():
        i = int(np.argmax(nan))
        incomplete(
            f"{where.name}: {int(nan.sum()):,} of {nan.size:,} rows have an empty or NaN score "
            f"(first: {where(i)})",
            int(nan.sum()),
            True,
        )
        keep = ~nan
        df = df.loc[keep].reset_index(drop=True)
        where = Where(where.name, where.unit, where.numbers[keep])
    return df, where


def scores_from_long(
    df: pd.DataFrame, where: Where, *, text: bool = True, allow_incomplete: bool = False
) -> ScoreMatrix:
    """Validate and pivot a long frame; ``text``: it came from CSV (attributes may be numbers)."""
    missing_columns(df, SCORE_COLUMNS, where, "a long scores file")
    if df.empty:
        raise VoxMetricsInputError(
            f"{where.name}: has a header but no data rows; add one row per (trial, enrolled) pair."
        )
    for c in SCORE_COLUMNS[:3]:
        labels_of(df[c], c, where)
    if allow_incomplete:
        df, where = drop_nan_rows(df, "score", where)
    scores = numeric_scores(df["score"], where)
    pv = Pivot(df["trial_id"], df["enrol_speaker"], scores, where)
    pv.check_truncated(where, allow_incomplete)
    speakers = as_str_array(pv.per_trial(df["trial_speaker"], "trial_speaker", where))
    attrs = {}
    for c in df.columns:
        if c not in SCORE_COLUMNS:
            values = pv.per_trial(df[c], c, where)
            if text and isinstance(df[c].dtype, pd.CategoricalDtype):  # CSV: infer numbers
                values = _infer_numbers(values)
            attrs[c] = attribute_array(values)
    return ScoreMatrix.from_arrays(
        pv.scores,
        trial_ids=pv.trial_ids,
        trial_speakers=speakers,
        enrol_speakers=pv.enrol_speakers,
        attributes=attrs,
        source=where.name,
        copy=False,  # the pivot's own array
        mask=pv.mask,
    )
