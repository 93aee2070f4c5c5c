"""Attribute predictions of an external attacker, for SBLS.

Two CSV layouts, one row per (utterance, attribute[, class]):
``utt_id, attribute, class, score`` (soft scores, one row per class) or
``utt_id, attribute, predicted`` (hard predictions). They are joined to the true labels of an
:class:`~voxmetrics.EmbeddingSet`'s metadata (or any table with ``utt_id`` and the attribute
columns); every mismatch is an error that names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.readers import Source, read_table
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = ["AttributePrediction", "join_predictions"]


@dataclass(frozen=True)
class AttributePrediction:
    """An attacker's output for one attribute: soft class scores or hard predictions."""

    classes: tuple[str, ...]
    """The attacker's class labels: the columns of ``scores`` (or the values it predicts)."""
    scores: NDArray[np.float64] | None = field(default=None, repr=False)
    """n x K class scores (higher = more likely), or None for hard predictions."""
    predicted: NDArray[np.str_] | None = field(default=None, repr=False)
    """n hard predictions, used when ``scores`` is None."""


def _example(values: list[str]) -> str:
    return ", ".join(f"'{v}'" for v in values[:3]) + (" ..." if len(values) > 3 else "")


def _check_not_empty(df: pd.DataFrame, utt_ids: np.ndarray, where: str) -> None:
    """Refuse a predictions table with a header and no rows, and labels with no rows."""
    if df.empty:
        raise VoxMetricsInputError(
            f"{where}: the predictions file has a header but no rows; add one row per "
            "utterance and attribute (and class, for class scores)."
        )
    if len(utt_ids) == 0:
        raise VoxMetricsInputError(
            f"the labels (metadata) have no rows, so the predictions of {where} have no "
            "utterance to join to; give labels with one row per utterance."
        )


def join_predictions(
    source: Source | pd.DataFrame,
    utt_ids: np.ndarray,
    attributes: list[str],
    *,
    name: str | None = None,
) -> dict[str, AttributePrediction]:
    """Read attacker predictions and align them to ``utt_ids`` for each attribute.

    Parameters
    ----------
    source : path, bytes or DataFrame
        The predictions CSV / Parquet (or an already read table).
    utt_ids : ndarray of str
        Utterances to evaluate, in the order of the true labels.
    attributes : list of str
        Attributes with true labels (metadata columns).
    name : str, optional
        File name for messages.

    Returns
    -------
    dict of str to AttributePrediction
        One entry per attribute of ``attributes`` present in the file.

    Raises
    ------
    VoxMetricsInputError
        Missing columns, a file or labels without rows, an attribute without true labels,
        unknown or missing utterances, an utterance missing a class score, non-numeric scores.
    """
    where = name or "predictions"
    if isinstance(source, pd.DataFrame):
        df = source
    else:
        try:
            df = read_table(source, name=name)
        except VoxMetricsInputError as exc:
            raise VoxMetricsInputError(
                f"{where}: not a readable predictions table ({exc}). Give a CSV or Parquet with "
                "columns utt_id, attribute, class, score (class scores) or utt_id, attribute, "
                "predicted (hard predictions)."
            ) from None
    cols = set(df.columns)
    soft = {"utt_id", "attribute", "class", "score"} <= cols
    hard = {"utt_id", "attribute", "predicted"} <= cols
    if not soft and not hard:
        raise VoxMetricsInputError(
            f"{where}: needs columns utt_id, attribute, class, score (class scores) or utt_id, "
            f"attribute, predicted (hard predictions); found {', '.join(map(str, df.columns))}."
        )
    _check_not_empty(df, utt_ids, where)
    for c in ("utt_id", "attribute"):
        blank = (df[c].isna() | (df[c].astype(object) == "")).to_numpy()
        if blank.any():
            raise VoxMetricsInputError(
                f"{where}: data row {int(np.argmax(blank)) + 1} has an empty {c}; fill in "
                "utt_id and attribute on every row."
            )
    df = df.astype({"utt_id": str, "attribute": str})
    unknown_attr = sorted(set(df["attribute"]) - set(attributes))
    if unknown_attr:
        raise VoxMetricsInputError(
            f"{where}: attribute(s) {_example(unknown_attr)} have no true labels in the metadata "
            f"(it has: {', '.join(attributes) or 'none'}); add the column or drop those rows."
        )
    ids = pd.Index(np.asarray(utt_ids).astype(str))
    out: dict[str, AttributePrediction] = {}
    for attr, rows in df.groupby("attribute", sort=False):
        unknown = sorted(set(rows["utt_id"]) - set(ids))
        if unknown:
            raise VoxMetricsInputError(
                f"{where}: {len(unknown)} utterance(s) of attribute '{attr}' are not in the "
                f"metadata, e.g. {_example(unknown)}; predictions must use the metadata's utt_id."
            )
        if soft:
            blank = rows["class"].isna() | (rows["class"].astype(object) == "")
            if blank.any():
                raise VoxMetricsInputError(
                    f"{where}: utterance '{rows['utt_id'][blank].iloc[0]}' has a score without a "
                    f"class for attribute '{attr}'; fill in the class column on every row."
                )
            rows = rows.astype({"class": str})
            scores = pd.to_numeric(rows["score"], errors="coerce")
            if scores.isna().any() or not np.isfinite(scores.to_numpy()).all():
                bad = int(np.flatnonzero(~np.isfinite(scores.to_numpy(dtype=float)))[0])
                raise VoxMetricsInputError(
                    f"{where}: attribute '{attr}' has a non-numeric or infinite score "
                    f"('{rows['score'].iloc[bad]}' for utterance '{rows['utt_id'].iloc[bad]}')."
                )
            if rows.duplicated(["utt_id", "class"]).any():
                dup = rows[rows.duplicated(["utt_id", "class"])].iloc[0]
                raise VoxMetricsInputError(
                    f"{where}: utterance '{dup['utt_id']}' has two scores for class "
                    f"'{dup['class']}' of attribute '{attr}'."
                )
            n_classes = rows["class"].nunique()  # before the pivot allocates utterances x classes
            check_count(f"{where}: attribute '{attr}'", "classes", n_classes, "max_classes")
            wide = rows.assign(score=scores).pivot(index="utt_id", columns="class", values="score")
            missing_utt = ids.difference(wide.index)
            if len(missing_utt):
                raise VoxMetricsInputError(
                    f"{where}: {len(missing_utt)} utterance(s) have no '{attr}' scores, e.g. "
                    f"{_example(list(missing_utt))}; give scores for every utterance."
                )
            if wide.isna().any().any():
                utt, cls = next(
                    (u, c) for u, row in wide.iterrows() for c, v in row.items() if pd.isna(v)
                )
                raise VoxMetricsInputError(
                    f"{where}: utterance '{utt}' has no score for class '{cls}' of attribute "
                    f"'{attr}'; every utterance needs a score for every class."
                )
            wide = wide.loc[ids]
            out[str(attr)] = AttributePrediction(
                classes=tuple(map(str, wide.columns)), scores=wide.to_numpy(dtype=np.float64)
            )
        else:
            if rows["utt_id"].duplicated().any():
                dup = rows["utt_id"][rows["utt_id"].duplicated()].iloc[0]
                raise VoxMetricsInputError(
                    f"{where}: utterance '{dup}' has two '{attr}' predictions; give one."
                )
            blank = rows["predicted"].isna() | (rows["predicted"].astype(object) == "")
            if blank.any():
                raise VoxMetricsInputError(
                    f"{where}: utterance '{rows['utt_id'][blank].iloc[0]}' has an empty "
                    f"'{attr}' prediction ({int(blank.sum())} empty in all); give a predicted "
                    "class on every row, or drop the rows of utterances not attacked."
                )
            pred = rows.set_index("utt_id")["predicted"].astype(str)
            missing_utt = ids.difference(pred.index)
            if len(missing_utt):
                raise VoxMetricsInputError(
                    f"{where}: {len(missing_utt)} utterance(s) have no '{attr}' prediction, e.g. "
                    f"{_example(list(missing_utt))}."
                )
            values = pred.loc[ids].to_numpy()
            check_count(f"{where}: attribute '{attr}'", "classes", len(set(values)), "max_classes")
            out[str(attr)] = AttributePrediction(
                classes=tuple(sorted(set(values.tolist()))), predicted=values
            )
    return out
