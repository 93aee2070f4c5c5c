"""The tables of a condition's LID, its intervals and calibration curve (one condition).

The engine computes a condition's LID (the ``lid`` part of
:func:`voxmetrics.evaluation.evaluate`: calibrated on the dev set, else k-fold
cross-calibrated on eval, else none); the dashboard's LID page, the report and the CLI build
their tables from it here. The math is :mod:`voxmetrics.metrics.lid`, the bootstrap and
chance levels :mod:`voxmetrics.metrics.uncertainty`, the figures :mod:`voxmetrics.plots.lid`.
LID is defined by Šterns et al. (2025); see the documentation's Methods > LID.

Examples
--------
>>> from voxmetrics.metrics.lid import calibrate_lid, lid
>>> from voxmetrics.synth import demo_study
>>> cond = demo_study(n_speakers=6).get("anon-mild")
>>> result = lid(cond.eval.scores, cond.eval.targets, calibrate_lid(cond.dev.scores,
...     cond.dev.targets))
>>> lid_status(result, failed=False), round(result.ceiling, 3)
('dev', 2.585)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics._types import DEFAULT_LID_VARIANT, LID_DISPLAY_FLOOR
from voxmetrics.analysis._result import ConditionResult
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.metrics.baseline import BaselineResult
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels
from voxmetrics.metrics.lid import (
    LIDResult,
    clamp_lid_number,
    posterior,
)
from voxmetrics.metrics.uncertainty import lid_intervals

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "CALIBRATION_HELP",
    "CHANCE_HELP",
    "CHANCE_METRICS",
    "INTERVAL_HELP",
    "INTERVAL_METRICS",
    "LID_COLUMNS",
    "LID_FAILED",
    "NEEDS_CALIBRATION",
    "SUMMARY_HELP",
    "TRIAL_COLUMNS",
    "LIDOptions",
    "LIDRow",
    "calibration_frame",
    "chance_frame",
    "condition_intervals",
    "interval_frame",
    "interval_table",
    "lid_status",
    "lid_summary_frame",
    "lid_table",
    "lid_trials",
    "localised_vulnerabilities",
    "trial_frame",
    "trial_posterior",
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
    variant: str = DEFAULT_LID_VARIANT
    """LID calibration variant: "reference-code" (the authors' code, default) or
    "maximum-likelihood"."""
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
    report: ConditionResult | None
    """Its report with the default options (EER, min Cllr); None when it failed."""
    lid: LIDResult | None
    """Its LID under the page's options; None without calibration."""
    intervals: dict[str, BootstrapInterval] | None = None
    """Bootstrap intervals of ALID, PDR, LID+ and LIDmax (None when off)."""
    status: str = ""
    """Calibration label shown next to its numbers."""
    baseline: BaselineResult | None = None
    """Its 1-to-1 baseline alone (EER, min Cllr) when no report is given (the LID page's)."""

    @property
    def name(self) -> str:
        """The condition's name."""
        return self.condition.name

    @property
    def one_to_one(self) -> BaselineResult | None:
        """:attr:`baseline`, else the report's; None when neither is known."""
        if self.baseline is not None:
            return self.baseline
        return None if self.report is None else self.report.baseline


LID_FAILED = "LID failed (see the message above)"
"""Calibration label of a condition whose LID raised an input error."""


def lid_status(result: LIDResult | None, *, failed: bool) -> str:
    """The calibration label shown next to a condition's LID numbers.

    The result's own label (where its calibration was learned), else
    :data:`LID_FAILED` when computing it raised, else :data:`NEEDS_CALIBRATION`.

    Examples
    --------
    >>> lid_status(None, failed=False) == NEEDS_CALIBRATION, lid_status(None, failed=True)
    (True, 'LID failed (see the message above)')
    """
    if result is not None:
        return result.label
    return LID_FAILED if failed else NEEDS_CALIBRATION


def condition_intervals(
    condition: Condition, result: LIDResult, *, n_boot: int, seed: int = 0
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of a condition's LID numbers, calibration held fixed.

    :func:`~voxmetrics.metrics.uncertainty.lid_intervals` of the per-trial LID resampled by
    the eval trial speakers. Keys ``alid``, ``pdr``, ``ndr``, ``lid_plus``, ``lid_minus``,
    ``lid_max`` (no bounds) and ``lid_q95``.
    """
    return lid_intervals(result.lid, condition.eval.trial_speakers, n_boot=n_boot, seed=seed)


def localised_vulnerabilities(
    rows: Sequence[LIDRow], *, eer: float, lid_max: float
) -> list[LIDRow]:
    """The rows whose EER looks private (>= ``eer``) while their LIDmax is >= ``lid_max``."""
    return [
        row
        for row in rows
        if row.lid is not None
        and row.one_to_one is not None
        and row.one_to_one.eer >= eer
        and row.lid.lid_max >= lid_max
    ]


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
            n = row.lid.n_enrolled  # shown within [-64 bits, log2 N]
            value = clamp_lid_number(key, getattr(row.lid, key), n)
            c = clamp_lid_number(key, chance.values.get(key), n)
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


# ---------------------------------------------------------------- trials


def trial_posterior(condition: Condition, result: LIDResult, index: int) -> NDArray[np.float64]:
    """Posterior over the enrolled identities of one eval trial under the result's calibration.

    For a cross-calibrated result this is the mean of the folds' calibrations, not the one of
    the trial's own fold.
    """
    return posterior(condition.eval.scores[index], result.calibration)


def lid_trials(
    sm: ScoreMatrix | Sequence[ScoreMatrix], result: LIDResult, *, ranks: ArrayLike | None = None
) -> pd.DataFrame:
    """One row per trial of ``sm`` in matrix order, with its LID.

    Columns: trial_id, speaker, rank, p_target, lid_bits. ``rank`` is the result's (by raw
    score, ties against the attacker) unless ``ranks`` are given (the report gives the SRD
    ranks of its tie rule). ``sm`` is the matrix ``result`` was computed on (for a sparse
    trial list: its complete rows; pooled over complete groups: the groups' lists, in order).
    ``lid_bits`` is shown within [-64 bits, log2 N], as every display and export shows LID
    (:func:`~voxmetrics.metrics.lid.clamp_lid_bits`).

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration, lid
    >>> sm = ScoreMatrix.from_arrays([[1.0, -1.0], [-1.0, 1.0]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["A", "A"], enrol_speakers=["A", "B"])
    >>> cal = LIDCalibration(w=1.0, b=0.0, prior_log_odds=0.0, n_pairs=4)
    >>> lid_trials(sm, lid(sm.scores, sm.targets, cal)).round(3).values.tolist()
    [['t1', 'A', 1, 0.881, 0.817], ['t2', 'A', 2, 0.119, -2.069]]
    """
    lists = [sm] if isinstance(sm, ScoreMatrix) else list(sm)
    return pd.DataFrame(
        {
            "trial_id": np.concatenate([m.trial_ids for m in lists]),
            "speaker": np.concatenate([m.trial_speakers for m in lists]),
            "rank": np.asarray(result.rank if ranks is None else ranks, dtype=np.int64),
            "p_target": np.asarray(result.p_target, dtype=np.float64),
            "lid_bits": np.maximum(np.asarray(result.lid, dtype=np.float64), LID_DISPLAY_FLOOR),
        }
    )


TRIAL_COLUMNS: dict[str, str] = {
    "trial_id": "Trial",
    "speaker": "Speaker",
    "rank": "Rank",
    "p_target": "p(target)",
    "lid_bits": "LID (bits)",
}
"""Column names of :func:`trial_frame`, by those of :func:`lid_trials`."""


def trial_frame(condition: Condition, result: LIDResult) -> pd.DataFrame:
    """One row per eval trial, largest LID first; the index is the trial's row in the matrix.

    :func:`lid_trials` renamed by :data:`TRIAL_COLUMNS` (Trial, Speaker, Rank, p(target),
    LID (bits)), then the trial attributes.
    """
    ev = condition.eval
    df = lid_trials(ev, result).rename(columns=TRIAL_COLUMNS)
    for name, values in ev.attributes.items():
        if name not in df.columns:
            df[name] = values
    return df.sort_values("LID (bits)", ascending=False, kind="stable")


# ---------------------------------------------------------------- tables


LID_COLUMNS: dict[str, str] = {
    "alid": "ALID (bits)",
    "pdr": "PDR",
    "ndr": "NDR",
    "lid_plus": "LID+ (bits)",
    "lid_minus": "LID− (bits)",
    "lid_max": "LIDmax (bits)",
}
"""The LID numbers of :func:`lid_table`: attribute of :class:`~voxmetrics.metrics.lid.LIDResult`
(and key of its intervals) to column."""


def lid_table(
    results: Mapping[str, LIDResult | None] | Iterable[tuple[str, LIDResult | None]],
) -> pd.DataFrame:
    """The LID numbers of each condition, one row each (the report's LID table, as numbers).

    ``results`` maps each condition's name to its LID (or gives (name, LID) pairs, in order).

    Columns: Condition, Calibration, w, b, ALID (bits), PDR, NDR, LID+ (bits), LID− (bits),
    LIDmax (bits) (:data:`LID_COLUMNS`; PDR and NDR as fractions), Ceiling log2 N (bits) and
    Rows without evidence. A condition without LID (None) has empty cells. The numbers in bits
    are shown within [-64 bits, log2 N] (:func:`~voxmetrics.metrics.lid.clamp_lid_bits`).

    Examples
    --------
    >>> from voxmetrics.metrics.lid import LIDCalibration, lid
    >>> cal = LIDCalibration(w=1.0, b=0.0, prior_log_odds=0.0, n_pairs=4)
    >>> r = lid([[1.0, -1.0], [-1.0, 1.0]], [0, 0], cal)
    >>> t = lid_table({"a": r, "b": None})
    >>> t.loc[0, ["ALID (bits)", "PDR", "LIDmax (bits)"]].round(3).tolist()
    [-0.626, 0.5, 0.817]
    >>> bool(t.loc[1, ["ALID (bits)", "w"]].isna().all())
    True
    """
    records = []
    pairs = results.items() if isinstance(results, Mapping) else results
    for name, r in pairs:
        record: dict[str, Any] = {
            "Condition": name,
            "Calibration": r.label if r else None,
            "w": r.w if r else None,
            "b": r.b if r else None,
        }
        for key, column in LID_COLUMNS.items():  # shown within [-64 bits, log2 N]
            record[column] = clamp_lid_number(key, getattr(r, key), r.n_enrolled) if r else None
        record["Ceiling log2 N (bits)"] = r.ceiling if r else None
        record["Rows without evidence"] = r.n_degenerate if r else None
        records.append(record)
    columns = [
        "Condition", "Calibration", "w", "b", *LID_COLUMNS.values(), "Ceiling log2 N (bits)",
        "Rows without evidence",
    ]  # fmt: skip
    df = pd.DataFrame.from_records(records, columns=columns)
    floats = ["w", "b", *LID_COLUMNS.values(), "Ceiling log2 N (bits)"]
    return df.astype(dict.fromkeys(floats, "float64"))


def lid_summary_frame(rows: Sequence[LIDRow]) -> pd.DataFrame:
    """The summary table of Šterns et al.'s (2025) Table 4, one row per condition.

    Columns: Condition, Calibration, N, T, EER, min Cllr, ALID (bits), PDR (%), NDR (%),
    LID+ (bits), LID- (bits), LIDmax (bits), w, b: the numbers of :func:`lid_table` (PDR and
    NDR in %) after the condition's size and 1-to-1 baseline. LID cells are empty for
    conditions without LID.
    """
    t = lid_table([(row.name, row.lid) for row in rows])
    df = pd.DataFrame(
        {
            "Condition": [row.name for row in rows],
            "Calibration": [row.status for row in rows],
            "N": [row.condition.eval.n_enrolled for row in rows],
            "T": [row.condition.eval.n_trials for row in rows],
            "EER": [row.one_to_one.eer if row.one_to_one else None for row in rows],
            "min Cllr": [row.one_to_one.min_cllr if row.one_to_one else None for row in rows],
        }
    )
    df["EER"] = df["EER"].astype("float64")
    df["min Cllr"] = df["min Cllr"].astype("float64")
    df["ALID (bits)"] = t["ALID (bits)"]
    df["PDR (%)"] = 100 * t["PDR"]
    df["NDR (%)"] = 100 * t["NDR"]
    df["LID+ (bits)"] = t["LID+ (bits)"]
    df["LID- (bits)"] = t["LID− (bits)"]
    df["LIDmax (bits)"] = t["LIDmax (bits)"]
    df["w"] = t["w"]
    df["b"] = t["b"]
    return df


def _shown(row: LIDRow, key: str, iv: BootstrapInterval | None) -> BootstrapInterval | None:
    """``iv`` as displays show it: LID bits within [-64, log2 N], PDR and NDR in %.

    The JSON keeps the raw numbers.
    """
    if iv is None:
        return None
    if row.lid is not None:
        n = row.lid.n_enrolled
        iv = iv.map(lambda x: clamp_lid_number(key, x, n))
    return iv.map(lambda x: 100.0 * x) if INTERVAL_METRICS[key][1] == "%" else iv


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
            iv = _shown(row, key, row.intervals.get(key))
            if iv is None:
                rec[f"{label} ({unit})"] = rec[f"{label} 95% CI ({unit})"] = None
                continue
            rec[f"{label} ({unit})"] = iv.estimate
            # "z": no "-0.00"; "undefined": too few replicates defined the bounds
            ci = iv.bounds_text("z.1f" if unit == "%" else "z.2f")
            rec[f"{label} 95% CI ({unit})"] = ci or "undefined"
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
            iv = _shown(row, key, (row.intervals or {}).get(key))
            if iv is None:
                continue
            records.append(
                {
                    "condition": row.name,
                    "calibration": row.status,
                    "metric": label,
                    "unit": unit,
                    "estimate": iv.estimate,
                    "low": iv.low,
                    "high": iv.high,
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


# ---------------------------------------------------------------- what each column means

SUMMARY_HELP: dict[str, str] = {
    "Calibration": "Where w, b were learned: dev, or k-fold cross-calibration on eval.",
    "N": "Enrolled identities: the attacker's 1-in-N guess.",
    "T": "Trials (anonymised utterances) evaluated.",
    "EER": "1-to-1 verification equal error rate (0.5 = chance).",
    "min Cllr": "Cllr after optimal (PAV) calibration; 1 = no discrimination.",
    "ALID (bits)": "Average LID over all trials (lower = more private).",
    "PDR (%)": "Positive disclosure rate: share of trials with LID > 0.",
    "NDR (%)": "Negative disclosure rate: share of trials with LID ≤ 0 (100 − PDR).",
    "LID+ (bits)": "Average LID of the trials that disclose (LID > 0).",
    "LID- (bits)": "Average LID of the trials that mislead or say nothing (LID ≤ 0).",
    "LIDmax (bits)": "Worst case: the largest disclosure of a single trial (≤ log₂ N).",
    "w": "Calibration weight on the row z-score (0 = scores carry no identity).",
    "b": "Calibration bias (reported; it cancels in the posterior).",
}
"""What each column of :func:`lid_summary_frame` means (the dashboard's column help)."""

INTERVAL_HELP: dict[str, str] = {
    "LID q95 95% CI (bits)": "The worst case: the LID exceeded by 5 % of trials. A "
    "maximum (LIDmax) has no sound bootstrap interval, its 0.95 quantile has.",
}
"""Help of the columns of :func:`interval_table` that need one."""

CHANCE_HELP: dict[str, str] = {
    "Chance": "The number when the scores carry no speaker information: each trial's "
    "identity replaced by a random column of its own scores, same calibration.",
    "Excess over chance": "What the scores actually disclose beyond chance.",
}
"""Help of the columns of :func:`chance_frame` that need one."""

CALIBRATION_HELP: dict[str, str] = {
    "w": "Weight on the row z-score: how strongly a relatively high score points to the "
    "speaker. Larger w means larger |LID|.",
    "b": "Bias; it cancels in the posterior.",
    "Prior log-odds": "ln(N_mated / N_non-mated) of the calibration pairs; cancels too.",
    "Pairs": "(trial, enrolled identity) pairs the fit used.",
    "Converged": "False when the fit did not converge (e.g. separable dev pools).",
    "Fold w": "Cross-calibration: the w learned for each fold (w above is their mean).",
}
"""Help of the columns of :func:`calibration_frame`."""
