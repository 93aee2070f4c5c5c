"""The building blocks of the HTML report (voxmetrics/report/html/blocks.py)."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from voxmetrics._types import MISSING
from voxmetrics.evaluation import evaluate_study
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.report import report_html
from voxmetrics.report.html import json_safe
from voxmetrics.report.html.blocks import (
    Figures,
    esc,
    interval_cell,
    json_name,
    names_of,
    section,
    swatch,
    table_html,
)
from voxmetrics.synth import demo_study


def test_the_html_report_draws_a_decimated_figure():
    from voxmetrics.report.html.blocks import Figures

    x = np.arange(250_000, dtype=np.float64)
    div = Figures()(go.Figure(go.Scatter(x=x, y=np.cos(x / 500.0))), "big")
    assert "Decimated for display" in div and "JSON and CSV files have every number" in div
    assert "250,000 points" in div


def test_json_safe_turns_non_finite_into_null():
    assert json_safe({"a": [float("nan"), float("inf"), 1.0], "b": (1, "x")}) == {
        "a": [None, None, 1.0],
        "b": [1, "x"],
    }


def test_the_pages_texts_and_style_are_package_data():
    """The style sheet, the download script and the method definitions are files of
    voxmetrics/report/assets, read with importlib.resources; the module holds code only."""
    from voxmetrics.report.html import PAPERS
    from voxmetrics.report.html.blocks import asset, method_definitions

    defs = method_definitions()
    assert len(defs) == 9 and all(t and d for t, d, _ in defs)
    assert {p for _, _, p in defs} - {None} <= set(PAPERS)
    assert all("\n" not in d and "  " not in d for _, d, _ in defs)  # one line each
    page = report_html(evaluate_study(demo_study(n_speakers=6)))
    assert f"<style>\n{asset('report.css')}</style>" in page
    assert f"<script>\n{asset('download.js')}</script>" not in page  # the study report's only
    for term, _, _ in defs:
        assert f"<dt>{html.escape(term)}</dt>" in page


# ---------------------------------------------------------------- small blocks, by hand


def test_json_safe_turns_numpy_and_pandas_values_into_python_ones():
    got = json_safe(
        {1: np.array([1.5, np.nan]), "n": np.int64(3), "na": pd.NA, "t": pd.NaT, "ok": True}
    )
    assert got == {"1": [1.5, None], "n": 3, "na": None, "t": None, "ok": True}
    assert type(got["n"]) is int
    assert json.loads(json.dumps(got, allow_nan=False)) == got


def test_json_name_of_the_download():
    assert json_name("my study") == "my study_report.json"
    assert json_name("") == "study_report.json"


def test_esc_escapes_markup_and_quotes():
    assert esc('<a href="x">&\'</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;"
    assert esc(0.5) == "0.5"


def test_table_html_escapes_formats_and_marks_missing_values():
    df = pd.DataFrame(
        {
            "Condition": ["a<b>", "plain"],
            "EER": [0.47123, np.nan],
            "N": [np.int64(12), 3],
            "Singled out": [True, False],
            "Note": ["x & y", None],
        }
    )
    out = table_html(df, colors={"plain": "#0072B2"}, formats={"EER": ".1%"}, wide=True)
    assert out.startswith('<div class="table-wrap"><table class="wide"><thead><tr>')
    assert "<th>Condition</th><th>EER</th><th>N</th><th>Singled out</th><th>Note</th>" in out
    rows = out.split("<tbody>")[1].split("</tr>")
    assert rows[0] == (
        '<tr><td>a&lt;b&gt;</td><td class="num">47.1%</td><td class="num">12</td>'
        "<td>yes</td><td>x &amp; y</td>"
    )  # a name without a colour gets no swatch
    assert rows[1] == (
        f'<tr><td>{swatch("#0072B2")}plain</td><td class="num">{MISSING}</td>'
        f'<td class="num">3</td><td>no</td><td class="num">{MISSING}</td>'
    )
    assert 'class="wide"' not in table_html(df)


def test_swatch_and_names_in_prose():
    assert swatch(None) == ""
    assert swatch("#D55E00") == '<span class="swatch" style="background:#D55E00"></span>'
    colors = {"a": "#111111"}
    assert names_of([], colors) == ""
    assert names_of(["a"], colors) == f"{swatch('#111111')}<strong>a</strong>"
    assert names_of(["b", "c<", "d"], {}) == (
        "<strong>b</strong>, <strong>c&lt;</strong> and <strong>d</strong>"
    )


def test_interval_cell_reads_the_bounds_and_clamps_lid_bits():
    ivs = {
        "eer": BootstrapInterval(0.47, 0.44, 0.505, 0.95, 200, 200),
        "lid_minus": BootstrapInterval(-80.0, -7525.0, -10.0, 0.95, 200, 200),
        "alid": BootstrapInterval(1.0, None, 2.0, 0.95, 200, 200),
    }
    assert interval_cell(ivs, "eer", 3) == "[0.440, 0.505]"
    assert interval_cell(ivs, "eer", 1) == "[0.4, 0.5]"
    assert interval_cell(ivs, "lid_minus", 2) == "[-7525.00, -10.00]"
    assert interval_cell(ivs, "lid_minus", 2, n_enrolled=8) == "[-64.00, -10.00]"
    assert interval_cell(ivs, "alid", 2) == MISSING  # a bound is missing
    assert interval_cell(ivs, "cllr", 2) == MISSING
    assert interval_cell(None, "eer", 2) == MISSING


def test_section_has_its_anchor_and_heading():
    assert section("provenance", "<p>x</p>") == (
        '<section id="provenance"><h2>Provenance</h2><p>x</p></section>'
    )
    with pytest.raises(KeyError):
        section("no-such-section", "")


def test_figures_get_unique_ids_and_no_plotly_js():
    figures = Figures()
    fig = go.Figure(go.Scatter(x=[0, 1], y=[1, 0]))
    first, second = figures(fig, "a<b"), figures(fig, "a<b")
    assert first.startswith('<div class="figure" data-figure="a&lt;b">')
    assert 'id="vx-fig-1-a<b"' in first and 'id="vx-fig-2-a<b"' in second
    assert figures.n == 2
    assert "plotly.js v" not in first and "Decimated for display" not in first
