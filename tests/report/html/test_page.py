"""The study report page (voxmetrics/report/html/page.py): sections, plotly.js once, offline,
escaped, its JSON island, well formed."""

from __future__ import annotations

import html
import html.parser
import json
import re
from dataclasses import replace

import pytest

from voxmetrics.report.html import REPORT_SECTIONS, json_safe, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

from .page_cases import NASTY

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
PLOTLY_MARKER = "* plotly.js v"  # the banner at the top of the plotly.js bundle
PLOTLY_SCRIPT = re.compile(r'<script type="text/javascript" id="plotlyjs">.*?</script>', re.S)


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


def test_title_and_print_css(sr):
    page = study_report_html(sr, title="Audit <2026>")
    assert "<title>Audit &lt;2026&gt;</title>" in page
    assert "@media print" in page and "break-before: page" in page
    assert 'data-figure="ece_profiles"' in page  # the report carries its ECE curves


class _Balance(html.parser.HTMLParser):
    """Every element closed in order (void elements aside), and no id given twice."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "col", "wbr", "source"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.ids += [v for k, v in attrs if k == "id"]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def test_the_page_is_well_formed_with_unique_ids(vpage, page):
    for p in (vpage, page):
        parser = _Balance()
        parser.feed(_without_plotlyjs(p))
        assert parser.errors == [] and parser.stack == []
        assert len(parser.ids) == len(set(parser.ids))
