"""The Attackers page in headless Chromium (style.md 18). Run with ``pytest -m browser``.

Screenshots go to tests/artifacts/attackers*.png (look at them after a layout change).
"""

from __future__ import annotations

from .browsing import ARTIFACTS, CHART, idle


def _open_attackers(page) -> None:
    idle(page)
    page.get_by_role("link", name="Attackers", exact=True).click()
    page.wait_for_url("**/Attackers")
    page.get_by_role("heading", name="Every back-end side by side").wait_for(timeout=180_000)
    idle(page, timeout=180_000)
    page.wait_for_selector(f"{CHART} .main-svg", timeout=90_000)
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1500)  # let the data grids and the chart settle


def test_attackers_page_in_a_real_browser(page):
    _open_attackers(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "is the strongest of" in body and "chosen on dev" in body
    assert "Weak-attacker checks run" in body
    chart = page.locator(CHART).first
    assert "Dev EER (chosen on)" in chart.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    # Streamlit scrolls inside its main block: a tall viewport shows the whole page at once
    page.set_viewport_size({"width": 1440, "height": 3600})
    page.wait_for_timeout(1500)
    content = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert content is not None
    height = min(3600, int(content["y"] + content["height"]) + 40)
    page.screenshot(
        path=str(ARTIFACTS / "attackers.png"),
        clip={"x": 0, "y": 0, "width": 1440, "height": height},
    )
    page.set_viewport_size({"width": 1440, "height": 1240})
    page.wait_for_timeout(800)
    chart.screenshot(path=str(ARTIFACTS / "attackers_figure.png"))

    # on anon-leaky the strongest is not cosine (the condition's own scores, nothing to add):
    # add its condition, and the Overview's card names the attacker judged
    box = page.get_by_role("combobox", name="Condition")
    box.click()
    box.press("ArrowDown")  # the list opens on the keyboard where a click only focuses it
    page.get_by_role("option", name="anon-leaky", exact=True).click()
    idle(page, timeout=180_000)
    page.wait_for_function(
        "() => document.querySelector(\"[data-testid='stMain']\").innerText"
        ".includes('Attackers of anon-leaky')",
        timeout=180_000,
    )
    page.wait_for_timeout(1000)
    add = page.get_by_role("button", name="Add the strongest")
    assert add.is_enabled()
    add.click()
    idle(page, timeout=180_000)
    page.get_by_role("link", name="Overview", exact=True).click()
    page.wait_for_url("**/Overview")
    page.get_by_text("Which attacker each row is judged against").wait_for(timeout=180_000)
    idle(page, timeout=180_000)
    page.wait_for_timeout(1000)
    assert page.locator("[data-testid='stException']").count() == 0
    overview = page.locator("[data-testid='stMain']").inner_text()
    assert "the strongest of 2 attackers tried" in overview
    page.screenshot(path=str(ARTIFACTS / "attackers_overview.png"))
