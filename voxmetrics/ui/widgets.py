"""Shared widgets: the per-condition reports, table and figure downloads, the metric table."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from voxmetrics._types import MISSING
from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import (
    ConditionReport,
    EvaluationOptions,
    check_parts,
    evaluate_condition,
)
from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS, ReportCard
from voxmetrics.evaluation.threat import IDENTITY_PARTS
from voxmetrics.plots.card import card_legend_html, card_styler
from voxmetrics.plots.decimate import decimate_figure
from voxmetrics.report.export import PngExporter, find_chromium
from voxmetrics.ui.computing import (
    Outcome,
    cached,
    compute,
    content_key,
    remember,
    show_warnings,
    stored,
)
from voxmetrics.ui.notes import add_notes

__all__ = [
    "CARD_WIDTHS",
    "KEY_COLUMNS",
    "condition_report",
    "download_button",
    "download_figure",
    "download_table",
    "identity_reports",
    "identity_reports_ready",
    "kept_switch",
    "part_reports",
    "png_exporter",
    "show_figure",
    "show_report_card",
    "show_table",
    "show_warnings",
    "stored_parts",
    "stored_report",
    "study_reports",
]


def condition_report(
    condition: Condition,
    options: EvaluationOptions | Mapping[str, Any] | None = None,
    **overrides: Any,
) -> ConditionReport:
    """:func:`~voxmetrics.evaluation.evaluate_condition`, kept in the store every page shares.

    The key is the condition's content and attacker and the ``options``
    (:class:`~voxmetrics.evaluation.EvaluationOptions` or a mapping of its fields, e.g. the
    study's ``settings.evaluate_options()``, and ``overrides`` of its fields by name; an
    option at its default value is the same entry as one left out), not its name: a renamed
    condition recomputes nothing, and its report carries the new name. The Overview, Threat
    model, LID, SRD, Linkage and Soft biometrics pages evaluate conditions through it
    (:func:`study_reports`, :func:`part_reports`) and the Report page hands it to the study
    report as its ``evaluator``: a condition is evaluated once for all of them. Raises
    :class:`~voxmetrics.errors.VoxMetricsInputError` for bad input; the warnings are raised
    for the enclosing :func:`~voxmetrics.ui.compute`.
    """
    report = cached(evaluate_condition)(condition, EvaluationOptions.of(options, **overrides))
    return _as_condition(report, condition)


def _as_condition(report: ConditionReport, condition: Condition) -> ConditionReport:
    """``report`` under the condition's current name and utility numbers (the key is its data's)."""
    if report.utility != condition.utility:  # the key is the scores': utility may be new
        report = dataclasses.replace(report, utility=condition.utility)
    if report.name == condition.name:
        return report
    renamed = dataclasses.replace(report, name=condition.name)
    remember(renamed, f"{content_key(report)}|name={condition.name!r}")
    return renamed


def stored_report(
    condition: Condition,
    options: EvaluationOptions | Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Outcome[ConditionReport] | None:
    """The :func:`condition_report` of these options if some page already computed it, or None.

    Nothing is computed; the report carries the name it was computed under and its
    warnings are in the outcome.
    """
    return stored(evaluate_condition, condition, EvaluationOptions.of(options, **overrides))


def stored_parts(
    condition: Condition,
    options: EvaluationOptions | Mapping[str, Any] | None,
    parts: Collection[str],
) -> Outcome[ConditionReport] | None:
    """The report of ``parts`` alone that :func:`part_reports` kept under ``options``, or None.

    ``options`` are the full options (e.g. the study's); nothing is computed.
    """
    parts = check_parts(parts)
    key = EvaluationOptions.of(options).for_parts(parts)
    return stored(evaluate_condition, condition, key, parts=parts)


def part_reports(
    study: Study,
    names: Sequence[str],
    *,
    parts: Collection[str],
    label: str,
    topic: str | Collection[str],
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, ConditionReport]:
    """The ``parts`` of each chosen condition's report, by name, in study order.

    Under the study's settings, the page's ``overrides`` replacing some of them (e.g. its own
    bootstrap replicates). While the options that ``parts`` depend on are the study's
    (:meth:`~voxmetrics.evaluation.EvaluationOptions.for_parts`), a condition that another
    page already evaluated in full gives that report; the others are evaluated for ``parts``
    alone (:func:`~voxmetrics.evaluation.evaluate_condition`, a progress bar "``label`` of
    NAME" each), which gives the same numbers. Warnings about ``topic`` (or any of several)
    go to the page's notes; a condition whose input is bad shows its message and is left out.
    """
    topics = {topic} if isinstance(topic, str) else set(topic)
    parts = check_parts(parts)
    every = EvaluationOptions.of(study.settings.evaluate_options())
    options = EvaluationOptions.of(every, **(overrides or {})).for_parts(parts)
    reuse = options == every.for_parts(parts)
    reports = {}
    for cond in study.conditions:
        if cond.name not in names:
            continue
        full = stored_report(cond, every) if reuse else None
        if full is not None:
            out = full
        else:
            out = compute(
                evaluate_condition,
                cond,
                options,
                parts=parts,
                warn=False,
                bar=f"{label} of {cond.name}",
            )
        add_notes(out.warnings, condition=cond.name, topics=topics)
        if out.failed:
            continue
        reports[cond.name] = _as_condition(out.value, cond)
    return reports


def identity_reports(
    study: Study,
    names: Sequence[str] | None = None,
    *,
    topics: Collection[str] = ("LID",),
    lid_options: Mapping[str, Any] | None = None,
) -> dict[str, ConditionReport]:
    """The identity numbers (baseline, linkability, target ranks, LID) of each condition.

    The :data:`~voxmetrics.evaluation.threat.IDENTITY_PARTS` of each condition's report
    (:func:`part_reports`), by name, in study order: under the study's settings,
    ``lid_options`` replacing some of them (a page's own ``cross_calibrate``, ``lid_variant``,
    ``seed``); without the ZEBRA, verification and singling-out parts or the bootstrap.
    ``names`` restricts the conditions (default: every one). Their warnings about ``topics``
    go to the page's notes; a condition whose input is bad shows its message and is left out.
    """
    return part_reports(
        study,
        study.names if names is None else names,
        parts=IDENTITY_PARTS,
        label="EER, linkability and LID",
        topic=topics,
        overrides=lid_options,
    )


def identity_reports_ready(study: Study, names: Sequence[str]) -> bool:
    """Whether :func:`identity_reports` of ``names`` would compute nothing (each one is stored)."""
    every = study.settings.evaluate_options()
    return all(
        stored_report(study.get(n), every) is not None
        or stored_parts(study.get(n), every, IDENTITY_PARTS) is not None
        for n in names
    )


def kept_switch(label: str, key: str, *, default: bool, help: str) -> bool:
    """A switch whose value is kept for the whole session, across page changes.

    ``default`` is its value until the user flips it (e.g. on up to a study size, on request
    beyond). Streamlit drops a widget's state when the user leaves its page, so the value is
    also copied under ``key + "_kept"``, which a page change does not drop.
    """
    kept = f"{key}_kept"
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(kept, default)
    on = st.toggle(label, key=key, help=help)
    st.session_state[kept] = on
    return bool(on)


def study_reports(
    study: Study,
    names: Sequence[str] | None = None,
    *,
    warn: bool = True,
    topics: Collection[str] | None = None,
    **options: Any,
) -> list[ConditionReport]:
    """Each condition's :func:`condition_report`, with a progress bar over the conditions.

    ``names`` restricts them (kept in study order); by default every condition. ``options``
    go to :func:`~voxmetrics.report.evaluate` (e.g. the study's
    ``settings.evaluate_options()`` for bootstrap intervals). A condition whose input is bad
    shows its message and is left out. The warnings go to the page's notes, named after
    their condition (:mod:`voxmetrics.ui.notes`): only those about ``topics`` (e.g.
    ``{"SRD"}``, :func:`~voxmetrics.ui.notes.note_topic`) and the general ones when given,
    none when ``warn`` is False (a page that shows the reports only beside its own numbers).
    """
    bar = st.empty()
    reports = []
    chosen = [c for c in study.conditions if names is None or c.name in names]
    for k, cond in enumerate(chosen):
        bar.progress(k / max(1, len(chosen)), text=f"Evaluating {cond.name}…")
        out = compute(condition_report, cond, options, cache=False, warn=False)
        if warn:
            add_notes(out.warnings, condition=cond.name, topics=topics)
        if not out.failed:
            reports.append(out.value)
    bar.empty()
    return reports


@st.cache_resource(show_spinner=False)
def png_exporter() -> PngExporter:
    """The server-wide :class:`~voxmetrics.report.export.PngExporter`, started on first use."""
    return PngExporter()


# ---------------------------------------------------------------- downloads


def _stem(filename: str) -> str:
    stem = re.sub(r"\.(csv|html|png|svg)$", "", filename)
    return re.sub(r"[^\w.-]+", "_", stem).strip("_") or "download"


def download_button(
    label: str,
    data: bytes | str | Callable[[], bytes | str],
    file_name: str,
    mime: str,
    *,
    key: str | None = None,
    icon: str = ":material/download:",
    help: str | None = None,
) -> None:
    """A download button that does not rerun the page; ``data`` may be a function (deferred).

    A deferred file is generated only when its button is clicked. ``key`` defaults to
    ``vm_dl_<file_name>``.
    """
    st.download_button(
        label,
        data=data,
        file_name=file_name,
        mime=mime,
        key=key or f"vm_dl_{file_name}",
        on_click="ignore",
        icon=icon,
        help=help,
    )


def download_table(df: pd.DataFrame, filename: str, *, label: str = "Download CSV") -> None:
    """A download button for ``df`` as CSV (no index, full precision)."""
    name = f"{_stem(filename)}.csv"
    from voxmetrics.data.writers import spreadsheet_safe

    data = spreadsheet_safe(df).to_csv(index=False).encode("utf-8")  # no live formulas
    download_button(label, data, name, "text/csv")


def figure_html(fig: go.Figure) -> str:
    """The interactive figure as a standalone HTML page (plotly.js inlined: works offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def download_figure(
    fig: go.Figure | Callable[[], go.Figure],
    filename: str,
    *,
    label: str = "Figure",
    image: go.Figure | None = None,
) -> None:
    """Download buttons for a figure: interactive HTML always, PNG and SVG with Chromium.

    The buttons read "<label> (HTML)", "<label> (PNG)" and "<label> (SVG)". Every file is
    generated only when its button is clicked (deferred download), so pages stay fast; PNG and
    SVG go through a kaleido server kept in ``st.cache_resource``. ``fig`` may be a function
    that builds the figure, for a figure that is only downloaded, not shown: it is then built
    on the click too. ``image``, when given, is what the PNG and SVG are drawn from (the
    decimated figure shown on the page: an image has fewer pixels than a decimated figure
    has points); the HTML is always ``fig``, with every point. Without a Chromium, a caption
    says so instead.
    """
    built = fig

    def build() -> go.Figure:
        return built() if callable(built) else built

    def build_image() -> go.Figure:
        return image if image is not None else build()

    def image_file(fmt: str) -> Callable[[], bytes]:
        return lambda: png_exporter()(build_image(), format=fmt)

    stem = _stem(filename)
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        download_button(
            f"{label} (HTML)",
            lambda: figure_html(build()),
            f"{stem}.html",
            "text/html",
            help="Interactive figure, opens offline in any browser.",
        )
        if find_chromium() is None:
            st.caption(
                "PNG and SVG export need Chromium (install it or set BROWSER_PATH); "
                "the HTML figure works without it."
            )
            return
        for fmt, mime, icon, what in (
            ("png", "image/png", ":material/image:", "Static image"),
            ("svg", "image/svg+xml", ":material/shape_line:", "Vector image"),
        ):
            download_button(
                f"{label} ({fmt.upper()})",
                image_file(fmt),
                f"{stem}.{fmt}",
                mime,
                icon=icon,
                help=f"{what} rendered by kaleido in headless Chromium.",
            )


KEY_COLUMNS = ("Condition", "System", "Speaker", "Back-end")
"""A table's first column of one of these names stays in view when it scrolls sideways."""


def show_table(
    df: pd.DataFrame, filename: str, *, decimals: int = 3, column_help: dict[str, str] | None = None
) -> None:
    """``st.dataframe`` with floats shown to ``decimals`` places, and its CSV download.

    A missing value (None, NaN) shows as :data:`~voxmetrics._types.MISSING`; the CSV leaves it
    empty. A first column named as in :data:`KEY_COLUMNS` is pinned, so a wide table keeps its
    key in view.
    """
    config: dict[str, Any] = {}
    for k, col in enumerate(df.columns):
        help_text = (column_help or {}).get(col)
        pinned = True if k == 0 and col in KEY_COLUMNS else None
        if pd.api.types.is_float_dtype(df[col]):
            config[col] = st.column_config.NumberColumn(
                col, format=f"%.{decimals}f", help=help_text, pinned=pinned
            )
        elif help_text or pinned:
            config[col] = st.column_config.Column(col, help=help_text, pinned=pinned)
    st.dataframe(df, hide_index=True, column_config=config, placeholder=MISSING)
    download_table(df, filename)


def show_figure(fig: go.Figure, filename: str, *, show_title: bool = True) -> None:
    """``st.plotly_chart`` and the figure's downloads.

    With ``show_title=False`` the page's own heading stands for the title on screen; the
    downloaded files keep it. A figure of more than
    :data:`~voxmetrics.plots.decimate.MAX_POINTS` points is decimated for the browser
    (:func:`~voxmetrics.plots.decimate.decimate_figure`, with a note saying so); its HTML
    download keeps every point.
    """
    decimated = decimate_figure(fig)
    shown = decimated if show_title else go.Figure(decimated).update_layout(title=None, margin_t=30)
    st.plotly_chart(shown, config={"displaylogo": False})
    download_figure(fig, filename, image=decimated if decimated is not fig else None)


CARD_WIDTHS: dict[str, int] = {
    "eer": 75,
    "lid_max": 170,
    "zebra_tag": 115,
    "linkability_ratio": 180,
    "sbls": 70,
    "wer": 105,
    "uar": 105,
}
"""Column widths of the card on screen (px): with the condition (150 px) pinned, every column
stays in view at 1,440 px (970 px in all); a longer text is cut, the whole of it in the CSV and
the rule's notes below the card."""


def show_report_card(card: ReportCard) -> None:
    """The report card, coloured, with each column's threshold as its help and the legend.

    The condition column is pinned and the columns have fixed widths, so every column fits a
    1,440 px screen whatever a cell's text (the rule's notes are listed below the card).
    """
    config: dict[str, Any] = {
        "Condition": st.column_config.TextColumn("Condition", pinned=True, width=150)
    }
    config.update(
        {
            t.label: st.column_config.TextColumn(
                t.label, help=t.explanation, width=CARD_WIDTHS.get(key)
            )
            for key, t in REPORT_CARD_THRESHOLDS.items()
        }
    )
    st.dataframe(card_styler(card), hide_index=True, placeholder=MISSING, column_config=config)
    st.markdown(card_legend_html(), unsafe_allow_html=True)
