"""The ZEBRA page in headless Chromium (style.md 18). Run with ``pytest -m browser``."""

from __future__ import annotations

from .browsing import ARTIFACTS, CHART, DEMO_NAMES, idle


def _open_zebra(page) -> None:
    idle(page)
    page.get_by_role("link", name="ZEBRA", exact=True).click()
    page.wait_for_url("**/ZEBRA")
    page.get_by_role("heading", name="ECE profiles").wait_for(timeout=90_000)
    idle(page)
    page.wait_for_selector(f"{CHART} .main-svg")
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 2', timeout=60_000
    )
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1000)  # let the data grids and the charts settle


def test_zebra_page_in_a_real_browser(page):
    _open_zebra(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "zebra.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    charts = page.locator(CHART)
    assert charts.count() == 2
    profiles = charts.nth(0)
    profiles.screenshot(path=str(ARTIFACTS / "zebra_profiles.png"))
    charts.nth(1).screenshot(path=str(ARTIFACTS / "zebra_pav.png"))
    legend = profiles.inner_text()
    assert "zero evidence" in legend
    for name in DEMO_NAMES:
        assert f"{name} (" in legend, f"{name} is not in the legend"
    page.get_by_role(
        "heading", name="Expected and worst-case disclosure"
    ).scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "zebra_table.png"))
    worst = page.get_by_role("heading", name="The worst case")
    worst.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "zebra_worst.png"))
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "the strongest evidence comes from trial" in body


def test_zebra_llr_checkbox_in_a_real_browser(page):
    _open_zebra(page)
    page.get_by_text("My scores are calibrated LLRs").click()
    page.get_by_text("Dashed: the actual ECE").wait_for(timeout=60_000)
    idle(page)
    page.wait_for_selector(f"{CHART} .main-svg")
    page.wait_for_timeout(800)
    page.locator(CHART).nth(0).screenshot(path=str(ARTIFACTS / "zebra_profiles_llr.png"))
    assert page.locator("[data-testid='stException']").count() == 0
    assert "actual ECE" in page.locator(CHART).nth(0).inner_text()
