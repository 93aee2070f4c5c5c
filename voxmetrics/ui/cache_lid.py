"""Cached LID computations of the LID page.

The computations and tables are :mod:`voxmetrics.analysis.lid`'s; here they are only cached.
Every cached call is keyed on the content hash of the condition's score matrices plus the
options that change the result (:meth:`~voxmetrics.analysis.lid.LIDOptions.key`), never on the
arrays themselves (they are passed as ``_``-prefixed arguments, which Streamlit does not hash).

LID is computed directly, not through :func:`voxmetrics.report.evaluate_condition`: changing
a LID option must not recompute the EER and the rank statistics, which cost far more on a
large matrix. The EER and min Cllr of the page come from
:func:`voxmetrics.ui.cache.condition_report`, shared with the Overview page.

The bootstrap intervals are kept in a small server-wide store rather than ``st.cache_data``,
so that the progress bar is drawn only while replicates are actually computed (a
``st.cache_data`` hit would replay the bar's messages).
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.analysis.lid import (
    LIDOptions,
    condition_calibration_curve,
    condition_chance,
    condition_intervals,
    condition_lid,
)
from voxmetrics.data.study import Condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.lid import CalibrationCurve, LIDResult
from voxmetrics.metrics.uncertainty import ChanceLevels
from voxmetrics.ui.cache import Outcome, ResultStore, capture

__all__ = [
    "calibration_curve_cached",
    "clear_interval_store",
    "lid_chance",
    "lid_intervals",
    "lid_result",
]


@st.cache_data(max_entries=128, show_spinner=False)
def _lid(key: str, _condition: Condition, _options: LIDOptions) -> Outcome[LIDResult | None]:
    return capture(condition_lid, _condition, _options)


def lid_result(condition: Condition, options: LIDOptions) -> Outcome[LIDResult | None]:
    """:func:`~voxmetrics.analysis.lid.condition_lid`, cached on content and options.

    Returns
    -------
    Outcome
        The :class:`~voxmetrics.metrics.lid.LIDResult`, or None for a condition without dev
        set when cross-calibration is off; with the messages of the library's warnings.
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
    """:func:`~voxmetrics.analysis.lid.condition_intervals`, stored per content.

    While replicates are computed a spinner is shown; a stored result is returned at once.
    ``options`` are those ``result`` was computed with (part of the key) and give the seed.
    """
    key = f"{options.key(condition)}|boot{n_boot}|seed{options.seed}|v2"
    store = _interval_store()
    stored = store.get(key)
    if stored is not None:
        return stored
    with st.spinner(f"Bootstrap of {condition.name}…"):
        value = condition_intervals(condition, result, n_boot=n_boot, seed=options.seed)
    store.put(key, value)
    return value


@st.cache_data(max_entries=64, show_spinner=False)
def _chance(key: str, _condition: Condition, _result: LIDResult, seed: int) -> ChanceLevels:
    return condition_chance(_condition, _result, seed=seed)


def lid_chance(condition: Condition, result: LIDResult, options: LIDOptions) -> ChanceLevels:
    """:func:`~voxmetrics.analysis.lid.condition_chance`, cached on content and options."""
    key = f"{options.key(condition)}|chance|seed{options.seed}"
    return _chance(key, condition, result, options.seed)


@st.cache_data(max_entries=64, show_spinner=False)
def _curve(
    key: str, _condition: Condition, _result: LIDResult, bins: int
) -> tuple[CalibrationCurve, str]:
    return condition_calibration_curve(_condition, _result, bins=bins)


def calibration_curve_cached(
    condition: Condition, result: LIDResult, options: LIDOptions, *, bins: int = 30
) -> tuple[CalibrationCurve, str]:
    """:func:`~voxmetrics.analysis.lid.condition_calibration_curve`, cached.

    Keyed on content, options and ``bins``; returns the curve and "dev" or "eval".
    """
    matrix = "dev" if condition.dev is not None else "eval"
    key = f"{options.key(condition)}|curve|{matrix}|{bins}"
    return _curve(key, condition, result, bins)
