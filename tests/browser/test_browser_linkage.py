"""The Linkage page in headless Chromium (style.md 18). Run with ``pytest -m browser``.

Screenshots go to ``tests/artifacts/linkage*.png``; look at them after a change to the page.
"""

from __future__ import annotations

import pytest

from .browsing import ARTIFACTS, DEMO_NAMES, idle

# the first view evaluates every condition and its similarity matrices: allow a loaded machine
SLOW = 180_000
CHARTS = "[data-testid='stPlotlyChart']"
N_CHARTS = 7  # linkability vs N', singling out at N and vs N, conversation length,
# Vauquier et al. 2025 figure 1, similarity, mean scores


@pytest.fixture
def page(browser, server):
    # tall enough that a full-page screenshot holds the whole page (Streamlit scrolls inside
    # its main container, which a normal full_page screenshot does not unroll)
    context = browser.new_context(viewport={"width": 1440, "height": 5600})
    pg = context.new_page()
    pg.set_default_timeout(SLOW)
    pg.goto(server)
    yield pg
    context.close()


def _open_linkage(page, server: str) -> None:
    page.goto(f"{server}/Linkage")
    page.get_by_role("heading", name="Linkage: linkability, singling out").wait_for(timeout=SLOW)
    page.get_by_role("heading", name="Summary").wait_for(timeout=SLOW)
    idle(page)
    page.wait_for_function(
        f'document.querySelectorAll("{CHARTS} .main-svg").length >= {N_CHARTS}',
        timeout=SLOW,
    )
    page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=SLOW)
    idle(page)
    page.wait_for_timeout(1000)  # let the grid and the charts settle before a screenshot


def _choose(page, label: str, option: str) -> None:
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option, exact=True).click()
    idle(page)


def test_linkage_page_in_a_real_browser(page, server):
    idle(page)
    page.get_by_role("link", name="Linkage", exact=True).click()
    page.wait_for_url("**/Linkage")
    _open_linkage(page, server)
    top = page.screenshot(clip={"x": 0, "y": 0, "width": 1440, "height": 1240})
    (ARTIFACTS / "linkage_top.png").write_bytes(top)
    _choose(page, "Anonymised voices", "anon-mild")
    page.get_by_text("anon-mild against plain: DeID").wait_for(timeout=SLOW)
    idle(page)
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "linkage.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    charts = page.locator(CHARTS)
    assert charts.count() == N_CHARTS

    curve = charts.nth(0)
    curve.screenshot(path=str(ARTIFACTS / "linkage_vs_n.png"))
    legend = curve.inner_text()
    for name in DEMO_NAMES:
        assert name in legend, f"{name} is missing from the linkability figure"
    assert "chance 1/N'" in legend

    figure_1 = charts.nth(4)  # after linkability, singling out at N and vs N, length
    figure_1.screenshot(path=str(ARTIFACTS / "linkage_figure_1.png"))
    assert "L = 3" in figure_1.inner_text() and "1 - EER" in figure_1.inner_text()
    similarity = charts.nth(5)
    similarity.screenshot(path=str(ARTIFACTS / "linkage_similarity.png"))
    assert "DeID" in similarity.inner_text()
    metrics = page.locator("[data-testid='stMetric']").all_inner_texts()
    assert any(m.startswith("DeID") for m in metrics)
    assert any(m.startswith("G_VD") and "dB" in m for m in metrics)
    assumptions = page.get_by_text("Assumptions", exact=True)
    assert assumptions.count() >= 4  # linkability, singling out, length, similarity, mean


def test_sampled_estimate_and_raw_calibration(page, server):
    _open_linkage(page, server)
    page.get_by_text("Add a sampled estimate").click()
    idle(page)
    page.wait_for_selector(f"{CHARTS} .main-svg")
    curve = page.locator(CHARTS).first
    curve.get_by_text("sampled, 20 draws").first.wait_for(timeout=SLOW)
    page.get_by_text("Raw scores (VoicePAT)").click()
    idle(page)
    page.get_by_text("Now: Raw scores (VoicePAT)").wait_for(timeout=SLOW)
    page.wait_for_timeout(800)
    curve.screenshot(path=str(ARTIFACTS / "linkage_vs_n_sampled.png"))
    assert page.locator("[data-testid='stException']").count() == 0
