"""The Verification page in headless Chromium (style.md 18). Run with ``pytest -m browser``."""

from __future__ import annotations

from .browsing import ARTIFACTS, CHART, DEMO_NAMES, idle


def test_verification_page_in_a_real_browser(page):
    idle(page)
    page.get_by_role("link", name="Verification", exact=True).click()
    page.wait_for_url("**/Verification")
    page.get_by_role("heading", name="DET curves", exact=True).wait_for(timeout=90_000)
    idle(page)
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 2', timeout=60_000
    )
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "verification.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    charts = page.locator(CHART)
    assert charts.count() == 2
    charts.nth(0).screenshot(path=str(ARTIFACTS / "verification_det.png"))
    charts.nth(1).screenshot(path=str(ARTIFACTS / "verification_ape.png"))
    det = charts.nth(0).inner_text()
    for name in DEMO_NAMES:
        assert name in det and f"{name} (ROCCH)" in det
    assert "default (prior only)" in charts.nth(1).inner_text()
