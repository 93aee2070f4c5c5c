"""Shared widgets: guarded library calls, table and figure downloads, the metric table."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from voxmetrics.data.study import Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.plots.card import card_legend_html, card_styler
from voxmetrics.report import ConditionReport
from voxmetrics.report.card import REPORT_CARD_THRESHOLDS, ReportCard
from voxmetrics.report.export import find_chromium
from voxmetrics.ui.cache import Outcome, capture, condition_report, png_exporter

__all__ = [
    "call",
    "download_button",
    "download_figure",
    "download_table",
    "safe_call",
    "show_figure",
    "show_report_card",
    "show_table",
    "show_warnings",
    "study_reports",
]

T = TypeVar("T")


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome[Any] | None:
    """Call a library function on user input; show a bad-input message instead of a traceback.

    Returns
    -------
    Outcome or None
        The value with the messages of the VoxMetrics warnings raised (also those carried by a
        cached :class:`Outcome`), or None after showing ``st.error`` for a
        :class:`~voxmetrics.errors.VoxMetricsInputError`.
    """
    try:
        out = capture(fn, *args, **kwargs)
    except VoxMetricsInputError as exc:
        st.error(str(exc), icon=":material/error:")
        return None
    if isinstance(out.value, Outcome):
        inner = out.value
        return Outcome(inner.value, tuple(dict.fromkeys(inner.warnings + out.warnings)))
    return out


def safe_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any | None:
    """:func:`call` that shows the warnings with ``st.warning`` and returns the bare value."""
    out = call(fn, *args, **kwargs)
    if out is None:
        return None
    show_warnings(out.warnings)
    return out.value


def show_warnings(messages: tuple[str, ...] | list[str]) -> None:
    """One ``st.warning`` per message."""
    for m in messages:
        st.warning(m, icon=":material/warning:")


def study_reports(
    study: Study, names: Sequence[str] | None = None, **options: Any
) -> list[ConditionReport]:
    """Evaluate the conditions (cached), with a progress bar while work is being done.

    ``names`` restricts them (kept in study order); by default every condition. ``options``
    go to :func:`~voxmetrics.ui.cache.condition_report` (e.g. the study's
    ``settings.evaluate_options()`` for bootstrap intervals). A condition whose input is bad
    shows its message and is left out.
    """
    bar = st.empty()
    reports = []
    chosen = [c for c in study.conditions if names is None or c.name in names]
    for k, cond in enumerate(chosen):
        bar.progress(k / max(1, len(chosen)), text=f"Evaluating {cond.name}…")
        report = safe_call(condition_report, cond, **options)
        if report is not None:
            reports.append(report)
    bar.empty()
    return reports


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
    download_button(label, df.to_csv(index=False).encode("utf-8"), name, "text/csv")


def figure_html(fig: go.Figure) -> str:
    """The interactive figure as a standalone HTML page (plotly.js inlined: works offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def download_figure(
    fig: go.Figure | Callable[[], go.Figure], filename: str, *, label: str = "Figure"
) -> None:
    """Download buttons for a figure: interactive HTML always, PNG and SVG with Chromium.

    The buttons read "<label> (HTML)", "<label> (PNG)" and "<label> (SVG)". Every file is
    generated only when its button is clicked (deferred download), so pages stay fast; PNG and
    SVG go through a kaleido server kept in ``st.cache_resource``. ``fig`` may be a function
    that builds the figure, for a figure that is only downloaded, not shown: it is then built
    on the click too. Without a Chromium, a caption says so instead.
    """
    built = fig

    def build() -> go.Figure:
        return built() if callable(built) else built

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
                lambda fmt=fmt: png_exporter()(build(), format=fmt),
                f"{stem}.{fmt}",
                mime,
                icon=icon,
                help=f"{what} rendered by kaleido in headless Chromium.",
            )


def show_table(
    df: pd.DataFrame, filename: str, *, decimals: int = 3, column_help: dict[str, str] | None = None
) -> None:
    """``st.dataframe`` with floats shown to ``decimals`` places, and its CSV download."""
    config: dict[str, Any] = {}
    for col in df.columns:
        help_text = (column_help or {}).get(col)
        if pd.api.types.is_float_dtype(df[col]):
            config[col] = st.column_config.NumberColumn(
                col, format=f"%.{decimals}f", help=help_text
            )
        elif help_text:
            config[col] = st.column_config.Column(col, help=help_text)
    st.dataframe(df, hide_index=True, column_config=config)
    download_table(df, filename)


def show_figure(fig: go.Figure, filename: str, *, show_title: bool = True) -> None:
    """``st.plotly_chart`` and the figure's downloads.

    With ``show_title=False`` the page's own heading stands for the title on screen; the
    downloaded files keep it.
    """
    shown = fig if show_title else go.Figure(fig).update_layout(title=None, margin_t=30)
    st.plotly_chart(shown, config={"displaylogo": False})
    download_figure(fig, filename)


def show_report_card(card: ReportCard) -> None:
    """The report card, coloured, with each column's threshold as its help and the legend."""
    st.dataframe(
        card_styler(card),
        hide_index=True,
        column_config={
            t.label: st.column_config.TextColumn(t.label, help=t.explanation)
            for t in REPORT_CARD_THRESHOLDS.values()
        },
    )
    st.markdown(card_legend_html(), unsafe_allow_html=True)
