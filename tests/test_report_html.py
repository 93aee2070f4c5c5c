"""The study report page (issue 9): sections, plotly.js once, offline, escaped, its JSON island."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace

import pytest

from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS
from voxmetrics.report.export import report_html
from voxmetrics.report.html import REPORT_SECTIONS, json_safe, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
NASTY = '<script>alert("x")</script>&amp'
PLOTLY_MARKER = "* plotly.js v"  # the banner at the top of the plotly.js bundle
PLOTLY_SCRIPT = re.compile(r'<script type="text/javascript" id="plotlyjs">.*?</script>', re.S)


@pytest.fixture(scope="module")
def sr():
    study = demo_study(n_speakers=8).renamed("plain", NASTY)
    return build_study_report(replace(study, name="<b>my study</b>"), bootstrap=0)


@pytest.fixture(scope="module")
def page(sr) -> str:
    return report_html(sr)


def _without_plotlyjs(page: str) -> str:
    stripped, n = PLOTLY_SCRIPT.subn("", page)
    assert n == 1
    return stripped


def test_every_section_is_there_in_order(page):
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == list(REPORT_SECTIONS)
    for sid in REPORT_SECTIONS:  # and linked from the table of contents
        assert f'href="#{sid}"' in page


def test_sbls_section_only_with_sbls():
    study = demo_study(n_speakers=8)
    no_embeddings = replace(
        study, conditions=tuple(replace(c, embeddings=None) for c in study.conditions)
    )
    page = study_report_html(build_study_report(no_embeddings, bootstrap=0))
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == [s for s in REPORT_SECTIONS if s != "sbls"]
    assert 'href="#sbls"' not in page
    assert "Without singling out" in page  # says which conditions lack it


def test_plotly_js_embedded_exactly_once(page):
    assert page.count(PLOTLY_MARKER) == 1
    assert page.count('id="plotlyjs"') == 1
    body = _without_plotlyjs(page)
    n_figures = body.count('<div class="figure"')
    assert n_figures >= 9
    assert body.count("Plotly.newPlot(") == n_figures
    assert body.count('class="plotly-graph-div"') == n_figures
    assert 'data-figure="ece_profiles"' in body  # ECE profiles passed in by export.report_html


def test_loads_nothing_from_the_network(page):
    body = _without_plotlyjs(page)
    assert not re.search(r"""\bsrc\s*=\s*["']?\s*(https?:)?//""", body, re.I)
    assert "@import" not in body and "url(" not in body
    assert not re.search(r"mathjax|cdn\.|fonts\.googleapis", body, re.I)
    # the only external addresses: plain links to the papers
    for m in re.finditer(r"""\bhref\s*=\s*["']?\s*(https?:)?//""", body, re.I):
        tag = body[body.rfind("<", 0, m.start()) : m.start()]
        assert tag.startswith('<a class="paper"'), tag
    assert len(re.findall(r'<a class="paper" href="https://', body)) >= 5


def test_user_strings_are_escaped(page):
    assert NASTY not in page
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp" in page
    assert "<b>my study</b>" not in page
    assert "<title>VoxMetrics report: &lt;b&gt;my study&lt;/b&gt;</title>" in page
    # no script element but the two JSON / JS ones of the page and plotly's per figure
    body = _without_plotlyjs(page)
    assert body.count("<script") == body.count("</script>")


def test_json_island_is_every_number(sr, page):
    m = re.search(
        r'<script type="application/json" id="voxmetrics-data">(.*?)</script>', page, re.S
    )
    assert m is not None
    assert "<" not in m.group(1)  # nothing that could close the element early
    data = json.loads(m.group(1), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert data == json.loads(json.dumps(json_safe(sr.to_dict()), allow_nan=False))
    assert list(data["conditions"]) == [r.name for r in sr.reports]
    assert data["conditions"][NASTY]["eer"] == sr.reports[0].baseline.eer


def test_card_cells_carry_their_level(sr, page):
    levels = [c.level for row in sr.card.cells for c in row]
    cells = re.findall(r'<td class="lvl lvl-([a-z]+)"', page)
    assert cells == [lv.replace("/", "") for lv in levels]
    for t in REPORT_CARD_THRESHOLDS.values():  # the legend quotes the thresholds
        assert html.escape(t.explanation) in page


def test_threat_section_names_the_thresholds_when_none_is_called_out(sr, page):
    assert sr.callouts == ()
    section = page[page.index('<section id="threat">') : page.index('<section id="overview">')]
    assert "No condition crossed the call-out thresholds" in section
    assert "0.45" in section and "1 bit" in section and "2x" in section


def test_summary_states_the_settings_used(page):
    summary = page[page.index('<section id="summary">') : page.index('<section id="report-card">')]
    assert "no bootstrap intervals, seed 0" in summary  # the override, not the study's 200
    assert "Verdict" in summary and "at risk on at least one metric" in summary


def test_title_and_print_css(sr):
    page = study_report_html(sr, title="Audit <2026>")
    assert "<title>Audit &lt;2026&gt;</title>" in page
    assert "@media print" in page and "break-before: page" in page
    assert 'data-figure="ece_profiles"' in page  # the report carries its ECE curves


def test_json_safe_turns_non_finite_into_null():
    assert json_safe({"a": [float("nan"), float("inf"), 1.0], "b": (1, "x")}) == {
        "a": [None, None, 1.0],
        "b": [1, "x"],
    }
