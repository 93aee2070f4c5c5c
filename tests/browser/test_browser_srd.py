"""The SRD page in headless Chromium (style.md 18). Run with ``pytest -m browser``.

Screenshots go to ``tests/artifacts/srd*.png``; look at them after a change to the page. The
server is the shared fixture of ``conftest.py`` (one per test process, log
``tests/artifacts/streamlit_<worker>.log``).
"""

from __future__ import annotations

import pytest

from .browsing import ARTIFACTS, DEMO_NAMES, idle

# the first view fits every condition and 40 speakers: allow for a loaded machine
SLOW = 240_000
CHARTS = "[data-testid='stPlotlyChart']"
N_CHARTS = 4  # rank distributions, MeanD bars, one speaker, MeanD per speaker


@pytest.fixture
def page(browser, server):
    # tall enough that the whole page is in view: Streamlit scrolls an inner container, so a
    # full-page screenshot only holds what the viewport shows
    context = browser.new_context(viewport={"width": 1440, "height": 4400})
    pg = context.new_page()
    pg.set_default_timeout(SLOW)
    pg.goto(server)
    yield pg
    context.close()


def _settled(page) -> None:
    """Wait until the script has finished and every chart is drawn."""
    idle(page)
    page.get_by_role("heading", name="Per speaker").wait_for()
    drawn = f'document.querySelectorAll("{CHARTS} .main-svg").length >= {N_CHARTS}'
    page.wait_for_function(drawn)
    idle(page)
    page.wait_for_timeout(1500)  # let the grids and charts settle before a screenshot


def test_srd_page_in_a_real_browser(page):
    idle(page)
    page.get_by_role("link", name="SRD", exact=True).click()
    page.wait_for_url("**/SRD")
    _settled(page)
    page.screenshot(path=str(ARTIFACTS / "srd.png"), full_page=True)
    # the first screen, as a user sees it (the picture for assets/srd.png)
    top = {"x": 0, "y": 0, "width": 1440, "height": 1240}
    page.screenshot(path=str(ARTIFACTS / "srd_top.png"), clip=top)
    assert page.locator("[data-testid='stException']").count() == 0
    charts = page.locator(CHARTS)
    assert charts.count() == N_CHARTS
    charts.nth(0).screenshot(path=str(ARTIFACTS / "srd_ranks.png"))
    charts.nth(2).screenshot(path=str(ARTIFACTS / "srd_speaker.png"))
    charts.nth(3).screenshot(path=str(ARTIFACTS / "srd_speaker_mean_d.png"))
    legend = charts.nth(0).inner_text()
    for name in DEMO_NAMES:
        assert f"{name}: data" in legend, f"{name} is missing from the rank figure"
    assert "chance 1/N" in legend
    assert "Cumulative distribution" in charts.nth(2).inner_text()


def test_srd_linear_axes_and_another_condition(page):
    page.goto(page.url.rstrip("/") + "/SRD")
    _settled(page)
    page.get_by_text("Log-log axes", exact=True).click()
    idle(page)
    page.locator("[data-testid='stMain'] [data-testid='stSelectbox']", has_text="Condition").click()
    page.get_by_role("option", name="anon-leaky").click()
    page.get_by_text("anon-leaky: mean disclosure per speaker").wait_for()
    _settled(page)
    page.screenshot(path=str(ARTIFACTS / "srd_linear_leaky.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    page.locator(CHARTS).nth(0).screenshot(path=str(ARTIFACTS / "srd_ranks_linear.png"))
