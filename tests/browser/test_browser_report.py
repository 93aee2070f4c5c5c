"""The HTML study report in headless Chromium, offline (issue 9). Run with ``pytest -m browser``."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.report.export import write_report
from voxmetrics.report.html import REPORT_SECTIONS
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

from .browsing import ARTIFACTS

NASTY = "<img src=x onerror=alert(1)>"
FIGURES_DRAWN = """() => {
  const divs = [...document.querySelectorAll('.figure .plotly-graph-div')];
  return divs.length > 0 && divs.every(d => d.querySelector('.main-svg'));
}"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    study = demo_study(n_speakers=8, seed=1).renamed("anon-leaky", NASTY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        sr = build_study_report(replace(study, name="browser test"), bootstrap=20)
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(sr, html=path)
    return path


@pytest.fixture
def offline_page(browser):
    """A page that may load file:// only; every other request is aborted and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.blocked, page.errors, page.dialogs = [], [], []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            page.blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    yield page
    context.close()


def test_report_opens_offline_with_every_section_and_figure(offline_page, report_file):
    page = offline_page
    page.goto(report_file.as_uri())
    page.wait_for_function(FIGURES_DRAWN)
    page.wait_for_timeout(500)  # let the figures settle before the screenshot
    for sid in REPORT_SECTIONS:
        section = page.locator(f"section#{sid}")
        assert section.count() == 1, sid
        section.scroll_into_view_if_needed()
        assert section.is_visible(), sid
    n_divs = page.locator(".figure .plotly-graph-div").count()
    n_drawn = page.evaluate(
        "() => [...document.querySelectorAll('.figure .plotly-graph-div')]"
        ".filter(d => d.classList.contains('js-plotly-plot') && d.querySelector('.main-svg'))"
        ".length"
    )
    assert n_divs == page.locator(".figure").count() >= 9
    assert n_drawn == n_divs
    # nothing wider than the window (wide tables scroll inside their own box)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    assert page.blocked == [], f"the report tried to load {page.blocked}"
    assert page.errors == [] and page.dialogs == []
    # the blocks of the verdicts: the card's notes, the ranking's stability, DeID per anonymiser
    for block in ("card-notes", "ranking-stability", "anonymisers"):
        assert page.locator(f"div.block#{block}").is_visible(), block
    assert "--verify" in page.locator("section#provenance pre.command").inner_text()
    assert page.locator("section#exposed table.exposure td.exposed").count() > 0
    # the condition name is shown as text, never run as HTML
    assert NASTY in page.locator("section#report-card").inner_text()
    data = page.evaluate("() => JSON.parse(document.getElementById('voxmetrics-data').textContent)")
    assert data["study"] == "browser test" and NASTY in data["conditions"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)


def test_report_prints_with_each_section_whole(offline_page, report_file):
    page = offline_page
    page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    page.goto(report_file.as_uri())
    page.wait_for_function(FIGURES_DRAWN)
    page.emulate_media(media="print")
    page.wait_for_timeout(500)
    assert page.locator("nav.toc").is_hidden()
    assert page.evaluate("() => getComputedStyle(document.querySelector('#lid')).breakBefore") == (
        "page"
    )
    # the figures fit the printed width
    widths = page.evaluate(
        "() => [...document.querySelectorAll('.figure .main-svg')].map(s => "
        "s.getBoundingClientRect().right)"
    )
    assert max(widths) <= 794
    page.screenshot(path=str(ARTIFACTS / "report_print.png"), full_page=True)
