"""The Privacy vs utility page in headless Chromium (style.md 18): ``pytest -m browser``."""

from __future__ import annotations

from .browsing import ARTIFACTS, CHART, DEMO_NAMES, idle


def test_privacy_vs_utility_page_in_a_real_browser(page):
    idle(page)
    page.get_by_role("link", name="Privacy vs utility", exact=True).click()
    page.wait_for_url("**/Privacy_vs_utility")
    page.get_by_role("heading", name="VoicePrivacy ranking", exact=True).wait_for(timeout=90_000)
    idle(page)
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 1', timeout=60_000
    )
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "privacy_vs_utility.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    chart = page.locator(CHART).nth(0)
    chart.screenshot(path=str(ARTIFACTS / "privacy_vs_utility_chart.png"))
    text = chart.inner_text()
    for name in DEMO_NAMES:
        assert name in text  # every condition labelled (plain as the original speech)
    assert "Pareto front" in text and "original speech" in text
    # the auditors' call-out names the leaky system
    warning = page.locator("[data-testid='stAlertContentWarning']")
    assert "leaky" in " ".join(warning.all_inner_texts())
