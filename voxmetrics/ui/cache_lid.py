"""Cached LID computations and tables of the LID page.

Every cached call is keyed on the content hash of the condition's score matrices plus the
options that change the result, never on the arrays themselves (they are passed as
``_``-prefixed arguments, which Streamlit does not hash).

LID is computed here directly from :mod:`voxmetrics.metrics.lid`, not through
:func:`voxmetrics.report.evaluate_condition`: changing a LID option must not recompute the EER
and the rank statistics, which cost far more on a large matrix. The EER and min Cllr of the
page come from :func:`voxmetrics.ui.cache.condition_report`, shared with the Overview page.

The bootstrap intervals are kept in a small server-wide store rather than ``st.cache_data``,
so that the progress bar is drawn only while replicates are actually computed (a
``st.cache_data`` hit would replay the bar's messages).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from voxmetrics.data.study import Condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.lid import CalibrationCurve, LIDResult, calibration_curve, posterior
from voxmetrics.metrics.uncertainty import ChanceLevels, chance_levels
from voxmetrics.metrics.uncertainty import lid_intervals as speaker_lid_intervals
from voxmetrics.report import ConditionReport, evaluate_lid
from voxmetrics.ui.cache import Outcome, ResultStore, capture

__all__ = [
    "CHANCE_METRICS",
    "INTERVAL_METRICS",
    "NEEDS_CALIBRATION",
    "LIDOptions",
    "LIDRow",
    "calibration_curve_cached",
    "calibration_frame",
    "chance_frame",
    "interval_frame",
    "interval_table",
    "lid_chance",
    "lid_intervals",
    "lid_result",
    "lid_summary_frame",
    "trial_frame",
    "trial_posterior",
    "trial_table_key",
]

NEEDS_CALIBRATION = "no dev set: LID needs calibration"
"""Calibration label of a condition without dev set when cross-calibration is off."""

INTERVAL_METRICS: dict[str, tuple[str, str]] = {
    "alid": ("ALID", "bits"),
    "pdr": ("PDR", "%"),
    "ndr": ("NDR", "%"),
    "lid_plus": ("LID+", "bits"),
    "lid_minus": ("LID-", "bits"),
    "lid_q95": ("LID q95", "bits"),
}
"""Bootstrapped metrics: key of :func:`~voxmetrics.metrics.uncertainty.lid_intervals` to
(column label, unit). LIDmax, a maximum, has no sound percentile interval: its 0.95 quantile
(``lid_q95``) carries the interval instead."""


@dataclass(frozen=True)
class LIDOptions:
    """What the LID of a condition depends on besides its data."""

    cross_calibrate: int | None = None
    """k of the k-fold cross-calibration on eval for conditions without dev set (None = off)."""
    variant: str = "maximum-likelihood"
    """LID calibration variant: "maximum-likelihood" or "reference-code" (the authors' code)."""
    seed: int = 0
    """Seed of the cross-calibration folds and of the bootstrap."""

    @property
    def reference_code(self) -> bool:
        """Whether the authors' reference-code calibration is used."""
        return self.variant == "reference-code"

    def key(self, condition: Condition) -> str:
        """Cache key: the data's content hash and the options that change its LID."""
        variant = self.variant
        if condition.dev is not None:  # folds and their seed play no part
            return f"{condition.content_hash}|dev|{variant}"
        return f"{condition.content_hash}|cv{self.cross_calibrate}|{variant}|{self.seed}"


@dataclass(frozen=True, eq=False)
class LIDRow:
    """One condition of the LID page: its baseline report, LID and intervals."""

    condition: Condition
    """The condition."""
    report: ConditionReport | None
    """Its report with the default options (EER, min Cllr); None when it failed."""
    lid: LIDResult | None
    """Its LID under the page's options; None without calibration."""
    intervals: dict[str, BootstrapInterval] | None = None
    """Bootstrap intervals of ALID, PDR, LID+ and LIDmax (None when off)."""
    status: str = ""
    """Calibration label shown next to its numbers."""

    @property
    def name(self) -> str:
        """The condition's name."""
        return self.condition.name


# ---------------------------------------------------------------- LID


def _compute_lid(condition: Condition, options: LIDOptions) -> LIDResult | None:
    return evaluate_lid(
        condition.eval,
        dev=condition.dev,
        cross_calibrate=options.cross_calibrate,
        variant=options.variant,
        seed=options.seed,
    )


@st.cache_data(max_entries=128, show_spinner=False)
def _lid(key: str, _condition: Condition, _options: LIDOptions) -> Outcome[LIDResult | None]:
    return capture(_compute_lid, _condition, _options)


def lid_result(condition: Condition, options: LIDOptions) -> Outcome[LIDResult | None]:
    """LID of a condition, calibrated on its dev set or cross-calibrated on eval.

    Parameters
    ----------
    condition : Condition
        The condition.
    options : LIDOptions
        Calibration variant, cross-calibration and seed.

    Returns
    -------
    Outcome
        The :class:`~voxmetrics.metrics.lid.LIDResult`, or None for a condition without dev
        set when cross-calibration is off; with the messages of the library's warnings.
        Cached on the content hash of the condition's matrices and the options.
    """
    with st.spinner(f"Calibrating and computing LID of {condition.name}…", show_time=True):
        return _lid(options.key(condition), condition, options)


@st.cache_resource(show_spinner=False)
def _interval_store() -> ResultStore:
    return ResultStore(max_entries=128)


def clear_interval_store() -> None:
    """Forget every stored bootstrap interval (for tests)."""
    _interval_store().clear()


def lid_intervals(
    condition: Condition, result: LIDResult, options: LIDOptions, *, n_boot: int
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of the LID numbers, stored per content.

    While replicates are computed a spinner is shown; a stored result is returned at once.

    Parameters
    ----------
    condition : Condition
        The condition (its eval trial speakers are resampled).
    result : LIDResult
        Its LID under ``options`` (calibration held fixed).
    options : LIDOptions
        The options ``result`` was computed with (part of the key) and the seed.
    n_boot : int
        Replicates (>= 1).

    Returns
    -------
    dict of str to BootstrapInterval
        Keys ``alid``, ``pdr``, ``ndr``, ``lid_plus``, ``lid_minus``, ``lid_max`` (no
        bounds) and ``lid_q95``.
    """
    key = f"{options.key(condition)}|boot{n_boot}|seed{options.seed}|v2"
    store = _interval_store()
    stored = store.get(key)
    if stored is not None:
        return stored
    with st.spinner(f"Bootstrap of {condition.name}…"):
        value = speaker_lid_intervals(
            result.lid, condition.eval.trial_speakers, n_boot=n_boot, seed=options.seed
        )
    store.put(key, value)
    return value


@st.cache_data(max_entries=64, show_spinner=False)
def _chance(key: str, _scores: NDArray[Any], _result: LIDResult, seed: int) -> ChanceLevels:
    return chance_levels(_scores, calibration=_result.calibration, seed=seed)


def lid_chance(condition: Condition, result: LIDResult, options: LIDOptions) -> ChanceLevels:
    """Chance levels of the LID numbers on the condition's own eval scores, cached.

    :func:`~voxmetrics.metrics.uncertainty.chance_levels` under the result's calibration
    (the mean of the folds' for a cross-calibrated result).
    """
    key = f"{options.key(condition)}|chance|seed{options.seed}"
    return _chance(key, condition.eval.scores, result, options.seed)


CHANCE_METRICS: dict[str, tuple[str, str]] = {
    "alid": ("ALID", "bits"),
    "pdr": ("PDR", "%"),
    "lid_plus": ("LID+", "bits"),
    "lid_max": ("LIDmax", "bits"),
}
"""Numbers of :func:`chance_frame`: key to (label, unit)."""


def chance_frame(rows: Sequence[LIDRow], chances: dict[str, ChanceLevels]) -> pd.DataFrame:
    """Each condition's LID numbers beside their chance levels and the excess over chance.

    Columns: Condition, Number, Value, Chance, Excess over chance (PDR in %).
    """
    records = []
    for row in rows:
        chance = chances.get(row.name)
        if row.lid is None or chance is None:
            continue
        for key, (label, unit) in CHANCE_METRICS.items():
            value = getattr(row.lid, key)
            c = chance.values.get(key)
            scale = 100.0 if unit == "%" else 1.0
            records.append(
                {
                    "Condition": row.name,
                    "Number": f"{label} ({unit})",
                    "Value": None if value is None else value * scale,
                    "Chance": None if c is None else c * scale,
                    "Excess over chance": None
                    if value is None or c is None
                    else (value - c) * scale,
                }
            )
    columns = ["Condition", "Number", "Value", "Chance", "Excess over chance"]
    return pd.DataFrame.from_records(records, columns=columns).astype(
        {"Value": "float64", "Chance": "float64", "Excess over chance": "float64"}
    )


# ---------------------------------------------------------------- calibration curve and trials


@st.cache_data(max_entries=64, show_spinner=False)
def _curve(key: str, _scores: NDArray[Any], _targets: NDArray[Any], _result: LIDResult, bins: int):
    return calibration_curve(_scores, _targets, _result.calibration, bins=bins)


def calibration_curve_cached(
    condition: Condition, result: LIDResult, options: LIDOptions, *, bins: int = 30
) -> tuple[CalibrationCurve, str]:
    """The calibration curve of a condition's LID and the matrix it was binned on.

    Dev-calibrated conditions are binned on their dev matrix; cross-calibrated ones on eval,
    with the mean of the folds' calibrations.

    Parameters
    ----------
    condition : Condition
        The condition.
    result : LIDResult
        Its LID (carries the calibration).
    options : LIDOptions
        The options ``result`` was computed with (part of the cache key).
    bins : int
        z bins.

    Returns
    -------
    curve : CalibrationCurve
        From :func:`~voxmetrics.metrics.lid.calibration_curve`.
    matrix : str
        "dev" or "eval".
    """
    sm, matrix = (condition.dev, "dev") if condition.dev is not None else (condition.eval, "eval")
    key = f"{options.key(condition)}|curve|{matrix}|{bins}"
    return _curve(key, sm.scores, sm.targets, result, bins), matrix


def trial_posterior(condition: Condition, result: LIDResult, index: int) -> NDArray[np.float64]:
    """Posterior over the enrolled identities of one eval trial under the result's calibration.

    For a cross-calibrated result this is the mean of the folds' calibrations, not the one of
    the trial's own fold.
    """
    return posterior(condition.eval.scores[index], result.calibration)


def trial_table_key(condition: Condition, options: LIDOptions) -> str:
    """Widget key of a condition's trial table: it follows the data and the LID options.

    The table is sorted by LID, so a selection stored under one calibration would point at
    another trial under the next; a new key starts from the default selection instead.
    """
    digest = hashlib.sha256(f"{condition.name}|{options.key(condition)}".encode()).hexdigest()
    return f"vm_lid_trials_{digest[:16]}"


def trial_frame(condition: Condition, result: LIDResult) -> pd.DataFrame:
    """One row per eval trial, largest LID first; the index is the trial's row in the matrix.

    Columns: Trial, Speaker, Rank, p(target), LID (bits), then the trial attributes.
    """
    ev = condition.eval
    df = pd.DataFrame(
        {
            "Trial": ev.trial_ids,
            "Speaker": ev.trial_speakers,
            "Rank": np.asarray(result.rank, dtype=np.int64),
            "p(target)": np.asarray(result.p_target, dtype=np.float64),
            "LID (bits)": np.asarray(result.lid, dtype=np.float64),
        }
    )
    for name, values in ev.attributes.items():
        if name not in df.columns:
            df[name] = values
    return df.sort_values("LID (bits)", ascending=False, kind="stable")


# ---------------------------------------------------------------- tables


def _ci(interval: BootstrapInterval | None, scale: float, digits: int) -> str | None:
    if interval is None or interval.low is None or interval.high is None:
        return None if interval is None else "undefined"
    low, high = (round(v * scale, digits) + 0.0 for v in (interval.low, interval.high))
    return f"[{low:.{digits}f}, {high:.{digits}f}]"  # + 0.0: no "-0.00"


def lid_summary_frame(rows: Sequence[LIDRow]) -> pd.DataFrame:
    """The summary table of Šterns et al.'s (2025) Table 4, one row per condition.

    Columns: Condition, Calibration, N, T, EER, min Cllr, ALID (bits), PDR (%), NDR (%),
    LID+ (bits), LID- (bits), LIDmax (bits), w, b. LID cells are empty for conditions without
    LID.
    """
    records = []
    for row in rows:
        b = row.report.baseline if row.report is not None else None
        r = row.lid
        records.append(
            {
                "Condition": row.name,
                "Calibration": row.status,
                "N": row.condition.eval.n_enrolled,
                "T": row.condition.eval.n_trials,
                "EER": b.eer if b is not None else None,
                "min Cllr": b.min_cllr if b is not None else None,
                "ALID (bits)": r.alid if r else None,
                "PDR (%)": 100 * r.pdr if r else None,
                "NDR (%)": 100 * r.ndr if r else None,
                "LID+ (bits)": r.lid_plus if r else None,
                "LID- (bits)": r.lid_minus if r else None,
                "LIDmax (bits)": r.lid_max if r else None,
                "w": r.w if r else None,
                "b": r.b if r else None,
            }
        )
    df = pd.DataFrame.from_records(records)
    for col in df.columns[4:]:
        df[col] = df[col].astype("float64")
    return df


def interval_table(rows: Sequence[LIDRow]) -> pd.DataFrame:
    """The bootstrapped metrics next to their 95 % intervals, one row per condition with LID.

    Columns: Condition, Calibration, then for ALID, PDR, NDR, LID+, LID- and LID q95 the
    estimate ("ALID (bits)") and its interval as "[low, high]" text ("ALID 95% CI (bits)");
    PDR and NDR in %.
    Rows without intervals are left out.
    """
    records = []
    for row in rows:
        if not row.intervals:
            continue
        rec: dict[str, Any] = {"Condition": row.name, "Calibration": row.status}
        for key, (label, unit) in INTERVAL_METRICS.items():
            iv = row.intervals.get(key)
            scale, digits = (100.0, 1) if unit == "%" else (1.0, 2)
            estimate = iv.estimate if iv is not None else None
            rec[f"{label} ({unit})"] = None if estimate is None else estimate * scale
            rec[f"{label} 95% CI ({unit})"] = _ci(iv, scale, digits)
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    for col in df.columns:
        if col.endswith(("(bits)", "(%)")) and "95% CI" not in col:
            df[col] = df[col].astype("float64")
    return df


def interval_frame(rows: Sequence[LIDRow]) -> pd.DataFrame:
    """The bootstrap intervals as numbers: one row per (condition, metric).

    Columns: condition, calibration, metric, unit, estimate, low, high, confidence, n_boot,
    n_valid (PDR in %, the others in bits).
    """
    records = []
    for row in rows:
        for key, (label, unit) in INTERVAL_METRICS.items():
            iv = (row.intervals or {}).get(key)
            if iv is None:
                continue
            scale = 100.0 if unit == "%" else 1.0

            def scaled(v: float | None, scale: float = scale) -> float | None:
                return None if v is None else v * scale

            records.append(
                {
                    "condition": row.name,
                    "calibration": row.status,
                    "metric": label,
                    "unit": unit,
                    "estimate": scaled(iv.estimate),
                    "low": scaled(iv.low),
                    "high": scaled(iv.high),
                    "confidence": iv.confidence,
                    "n_boot": iv.n_boot,
                    "n_valid": iv.n_valid,
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "condition",
            "calibration",
            "metric",
            "unit",
            "estimate",
            "low",
            "high",
            "confidence",
            "n_boot",
            "n_valid",
        ],
    )


def calibration_frame(rows: Sequence[LIDRow]) -> pd.DataFrame:
    """The calibration (w, b) of each calibrated condition, how and on what it was learned.

    Columns: Condition, Calibration, Variant, w, b, Prior log-odds, Pairs, Converged, Fold w
    (the folds' w of a cross-calibrated condition, else empty).
    """
    records = []
    for row in rows:
        if row.lid is None:
            continue
        c = row.lid.calibration
        records.append(
            {
                "Condition": row.name,
                "Calibration": row.status,
                "Variant": c.variant,
                "w": c.w,
                "b": c.b,
                "Prior log-odds": c.prior_log_odds,
                "Pairs": c.n_pairs,
                "Converged": c.converged,
                "Fold w": ", ".join(f"{w:.3f}" for w in row.lid.fold_w),
            }
        )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "Condition",
            "Calibration",
            "Variant",
            "w",
            "b",
            "Prior log-odds",
            "Pairs",
            "Converged",
            "Fold w",
        ],
    )
