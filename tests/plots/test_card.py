"""Presentation of the report card (voxmetrics/plots/card.py): styler, table, legend, figure."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from voxmetrics.evaluation.card import LEVELS, REPORT_CARD_THRESHOLDS, CardCell, ReportCard
from voxmetrics.plots.card import (
    LEVEL_LABELS,
    card_legend_html,
    card_rationale,
    card_styler,
    card_table,
    level_css,
    report_card_figure,
    thresholds_markdown,
)
from voxmetrics.plots.style import LEVEL_COLOURS, LEVEL_TEXT_COLOURS


def _card() -> ReportCard:
    """Two conditions; the second has a risky LIDmax and no SBLS."""
    a = (
        CardCell(0.47, "0.470", "ok"),
        CardCell(0.3, "0.30 [0.20, 0.30]", "ok"),
        CardCell("B", "B (log10 l = 1.50)", "caution"),
        CardCell(1.2, "3.0% (1.2x chance 2.5%)", "ok"),
        CardCell(0.8, "0.800", "caution"),
        CardCell(0.05, "0.050", "ok"),
        CardCell(0.6, "0.600", "ok"),
    )
    b = (
        CardCell(0.46, "0.460", "ok"),
        CardCell(1.8, "1.80 [1.60, 1.80]", "risk"),
        CardCell("D", "D (log10 l = 4.10)", "risk"),
        CardCell(5.0, "12.5% (5.0x chance 2.5%)", "risk"),
        CardCell(None, "–", "n/a"),
        CardCell(None, "utility unknown", "n/a"),
        CardCell(None, "utility unknown", "n/a"),
    )
    return ReportCard(("quiet", "leaky <b>"), (a, b))


def _relative_luminance(hex_colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_relative_luminance(a), _relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_has_readable_colours(level):
    assert level in LEVEL_COLOURS and level in LEVEL_TEXT_COLOURS and level in LEVEL_LABELS
    assert _contrast(LEVEL_COLOURS[level], LEVEL_TEXT_COLOURS[level]) >= 4.5  # WCAG AA


def test_styler_colours_each_metric_cell_by_its_level():
    styler = card_styler(_card())
    assert styler.data.equals(_card().frame("text"))
    ctx = styler._compute().ctx
    assert ("background-color", LEVEL_COLOURS["risk"]) in ctx[1, 2]  # leaky's LIDmax
    assert ("background-color", LEVEL_COLOURS["caution"]) in ctx[0, 5]  # quiet's SBLS
    assert ("background-color", LEVEL_COLOURS["n/a"]) in ctx[1, 5]
    assert not [p for p in ctx.get((0, 0), []) if p[0] == "background-color" and p[1]]


def test_level_css_marks_risk_in_bold_as_well():
    assert "font-weight: bold" in level_css("risk")
    assert "font-weight" not in level_css("ok")


def test_card_table_interleaves_texts_and_levels():
    table = card_table(_card())
    labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
    assert list(table.columns) == ["Condition"] + [x for lb in labels for x in (lb, f"{lb} level")]
    assert table.loc[1, "LIDmax (bits) level"] == "risk"
    assert table.loc[1, "LIDmax (bits)"] == "1.80 [1.60, 1.80]"
    assert table.loc[1, "SBLS level"] == "n/a"


def test_legend_names_every_level():
    legend = card_legend_html()
    for level in LEVELS:
        assert LEVEL_LABELS[level] in legend
        assert LEVEL_COLOURS[level] in legend


def test_thresholds_and_rationale_quote_the_library():
    md = thresholds_markdown()
    for t in REPORT_CARD_THRESHOLDS.values():
        assert f"**{t.label}**: {t.explanation}" in md
    why = card_rationale()
    assert why.startswith("Why these values")
    assert "Nautsch et al. 2020" in why and ":mod:" not in why
    assert "`voxmetrics.evaluation.threat`" in why


def test_figure_is_a_coloured_table_with_a_legend():
    fig = report_card_figure(_card(), title="Card")
    assert isinstance(fig, go.Figure)
    table = fig.data[0]
    assert table.type == "table"
    assert tuple(table.header.values[:2]) == ("<b>Condition</b>", "<b>EER</b>")
    # names are escaped: Plotly table cells render HTML
    assert tuple(table.cells.values[0]) == ("quiet", "leaky &lt;b&gt;")
    fills = table.cells.fill.color
    assert tuple(fills[2]) == (LEVEL_COLOURS["ok"], LEVEL_COLOURS["risk"])  # LIDmax column
    assert [a.text for a in fig.layout.annotations] == [LEVEL_LABELS[k] for k in reversed(LEVELS)]
    assert fig.layout.title.text == "Card"
    assert fig.layout.height > 100
