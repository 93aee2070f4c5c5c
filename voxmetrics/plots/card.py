"""The report card (:mod:`voxmetrics.evaluation.card`) for the screen and for downloads.

Presentation only: the texts and levels come from
:class:`~voxmetrics.evaluation.card.ReportCard`, the colours from
:data:`~voxmetrics.plots.style.LEVEL_COLOURS`; nothing here compares a number with a threshold.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go

from voxmetrics.evaluation import card as _card_module
from voxmetrics.evaluation.card import LEVELS, REPORT_CARD_THRESHOLDS, ReportCard
from voxmetrics.plots.style import LEVEL_COLOURS, LEVEL_TEXT_COLOURS, base_layout

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = [
    "LEVEL_LABELS",
    "card_legend_html",
    "card_notes_markdown",
    "card_rationale",
    "card_stability_table",
    "card_styler",
    "card_table",
    "level_css",
    "report_card_figure",
    "thresholds_markdown",
]

LEVEL_LABELS: dict[str, str] = {
    "ok": "ok",
    "caution": "caution",
    "risk": "risk",
    "uninformative": "uninformative at this N",
    "n/a": "not available",
}
"""How each level is named in legends."""

_COLUMN_WIDTHS = {
    "eer": 0.7,
    "lid_max": 1.3,
    "zebra_tag": 1.3,
    "linkability_ratio": 1.8,
    "sbls": 0.7,
    "wer": 0.9,
    "uar": 0.9,
}
"""Relative column widths of :func:`report_card_figure` (the condition column is 1.1)."""


def level_css(level: str) -> str:
    """CSS of a card cell at ``level`` (background, text colour; risk in bold).

    Examples
    --------
    >>> level_css("risk")
    'background-color: #E8906F; color: #2B0D00; font-weight: bold'
    """
    css = f"background-color: {LEVEL_COLOURS[level]}; color: {LEVEL_TEXT_COLOURS[level]}"
    return css + ("; font-weight: bold" if level == "risk" else "")


def card_styler(card: ReportCard) -> Styler:
    """The card's texts with every metric cell coloured by its level, for ``st.dataframe``.

    Examples
    --------
    >>> from voxmetrics.evaluation.card import CardCell
    >>> row = (CardCell(0.5, "0.500", "ok"),) + (CardCell(None, "–", "n/a"),) * 6
    >>> card = ReportCard(("x",), (row,))
    >>> card_styler(card).data.columns[:2].tolist()
    ['Condition', 'EER']
    """
    text = card.frame("text")
    levels = card.frame("level")

    def colours(frame: pd.DataFrame) -> pd.DataFrame:
        css = levels.drop(columns="Condition").map(level_css)
        css.insert(0, "Condition", "")
        return css.set_axis(frame.index, axis=0)

    return text.style.apply(colours, axis=None).hide(axis="index")


def card_table(card: ReportCard) -> pd.DataFrame:
    """The card as one flat table: each metric's text followed by its level (the CSV).

    Examples
    --------
    >>> from voxmetrics.evaluation.card import CardCell
    >>> row = (CardCell(0.5, "0.500", "ok"),) + (CardCell(None, "–", "n/a"),) * 6
    >>> card = ReportCard(("x",), (row,))
    >>> card_table(card).columns[:3].tolist()
    ['Condition', 'EER', 'EER level']
    """
    text = card.frame("text")
    levels = card.frame("level")
    out = pd.DataFrame({"Condition": text["Condition"]})
    for label in text.columns[1:]:
        out[label] = text[label]
        out[f"{label} level"] = levels[label]
    return out


def card_legend_html() -> str:
    """A one-line HTML legend: a coloured chip per level (for ``st.markdown``, HTML allowed).

    Examples
    --------
    >>> "caution" in card_legend_html()
    True
    """
    chips = [
        f'<span style="{level_css(level)}; padding: 0.1em 0.6em; border-radius: 0.4em; '
        f'margin-right: 0.5em; white-space: nowrap">{html.escape(LEVEL_LABELS[level])}</span>'
        for level in LEVELS
    ]
    return "".join(chips)


def card_notes_markdown(card: ReportCard) -> str:
    """Why some cells are not read off their thresholds, and which levels flip, as Markdown.

    One bullet per cell whose level the rule set ("≈ chance", "uninformative at N = n") and
    per cell that fewer than 80 % of the replicates keep (marked ⇅ in the card); empty when
    there is none.

    Examples
    --------
    >>> from voxmetrics.evaluation.card import CardCell
    >>> row = (CardCell(0.5, "0.500", "ok", "≈ chance"),) + (CardCell(None, "–", "n/a"),) * 6
    >>> card_notes_markdown(ReportCard(("x",), (row,)))
    '- **x**, EER: ≈ chance'
    """
    lines = [f"- **{_md(name)}**, {label}: {_md(note)}" for name, label, note in card.notes()]
    lines += [
        f"- **{_md(name)}**, {label}: {_card_module.FLIP_MARK} the level "
        f"({cell.level}) holds in {cell.stability:.0%} of {cell.n_replicates} replicates"
        for name, label, cell in card.flipping()
    ]
    return "\n".join(lines)


def _md(text: str) -> str:
    """Text safe inside Markdown (its asterisks, underscores and brackets escaped)."""
    return re.sub(r"([*_\[\]`])", r"\\\1", str(text))


def card_stability_table(card: ReportCard) -> pd.DataFrame:
    """Each cell's share of replicates keeping its level, as percentages ("—" without one).

    Examples
    --------
    >>> from voxmetrics.evaluation.card import CardCell
    >>> row = (CardCell(0.5, "0.500", "ok", "", 0.75, 200),) + (CardCell(None, "–", "n/a"),) * 6
    >>> card_stability_table(ReportCard(("x",), (row,))).iloc[0, 1]
    '75%'
    """
    frame = card.frame("stability")
    for col in frame.columns[1:]:
        frame[col] = [None if v is None or pd.isna(v) else f"{v:.0%}" for v in frame[col]]
    return frame


def thresholds_markdown() -> str:
    """The card's thresholds as a Markdown list, one metric a line.

    Examples
    --------
    >>> thresholds_markdown().splitlines()[0]
    '- **EER**: ok >= 0.45, caution 0.30-0.45, risk < 0.30 (higher is safer)'
    """
    return "\n".join(f"- **{t.label}**: {t.explanation}" for t in REPORT_CARD_THRESHOLDS.values())


def card_rationale() -> str:
    """Why the thresholds are where they are, as Markdown.

    The paragraphs of :mod:`voxmetrics.evaluation.card`'s docstring after its table, with roles
    such as ``:mod:`` unwrapped, so the dashboard quotes the library instead of repeating it.

    Examples
    --------
    >>> card_rationale().startswith("Why these values")
    True
    """
    doc = _card_module.__doc__ or ""
    paragraphs = [p.strip() for p in doc.split("\n\n")]
    start = next((k for k, p in enumerate(paragraphs) if p.startswith("Why these values")), None)
    if start is None:
        return ""
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs[start:] if p)
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)


def report_card_figure(card: ReportCard, *, title: str = "Report card") -> go.Figure:
    """The card as a Plotly table with coloured cells (for PNG / SVG downloads).

    Examples
    --------
    >>> from voxmetrics.evaluation.card import CardCell
    >>> row = (CardCell(0.5, "0.500", "ok"),) + (CardCell(None, "–", "n/a"),) * 6
    >>> card = ReportCard(("x",), (row,))
    >>> report_card_figure(card).data[0].type
    'table'
    """
    text = card.frame("text")
    levels = card.frame("level")
    metrics = list(text.columns[1:])
    n = len(text)
    fills = [["#FFFFFF"] * n] + [[LEVEL_COLOURS[v] for v in levels[c]] for c in metrics]
    fonts = [["#222222"] * n] + [[LEVEL_TEXT_COLOURS[v] for v in levels[c]] for c in metrics]
    values = [[html.escape(str(v)) for v in text[c]] for c in text.columns]
    header = ["Condition"] + [REPORT_CARD_THRESHOLDS[k].label for k in card.keys]
    row_height, header_height = 30, 34
    fig = go.Figure(
        go.Table(
            columnwidth=[1.1] + [_COLUMN_WIDTHS.get(k, 1.0) for k in card.keys],
            header={
                "values": [f"<b>{html.escape(h)}</b>" for h in header],
                "fill_color": "#F4F4F4",
                "line_color": "#D0D0D0",
                "align": "left",
                "height": header_height,
                "font": {"size": 13, "color": "#222222"},
            },
            cells={
                "values": values,
                "fill_color": fills,
                "font": {"size": 13, "color": fonts},
                "line_color": "#FFFFFF",
                "align": "left",
                "height": row_height,
            },
        )
    )
    # the legend: one chip per level, right-aligned in the top margin, beside the title
    offset = 0.0
    for level in reversed(LEVELS):
        label = LEVEL_LABELS[level]
        fig.add_annotation(
            text=html.escape(label),
            xref="paper",
            yref="paper",
            x=1,
            y=1,
            xanchor="right",
            yanchor="bottom",
            xshift=-offset,
            yshift=8,
            showarrow=False,
            bgcolor=LEVEL_COLOURS[level],
            font={"size": 12, "color": LEVEL_TEXT_COLOURS[level]},
            borderpad=4,
        )
        offset += 7 * len(label) + 24  # the chip's approximate width at 12 px, and a gap
    return fig.update_layout(
        base_layout(
            title={"text": title, "x": 0.015, "xanchor": "left"},
            height=header_height + row_height * n + 90,
            margin={"l": 20, "r": 20, "t": 60, "b": 10},
        )
    )
