"""The Overview's report card and the Report page in headless Chromium (style.md 18).

Run with ``pytest -m browser``. Screenshots go to tests/artifacts/overview_card*.png and
report_page*.png; look at them after a layout change.
"""

from __future__ import annotations

from pathlib import Path

from .browsing import ARTIFACTS, DEMO_NAMES, idle

GRID = "[data-testid='stDataFrame']"


def test_overview_card_and_report_page(page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(page.url.rstrip("/") + "/Overview")
    idle(page)
    page.get_by_role("heading", name="Report card").wait_for()
    page.wait_for_selector(f"{GRID} canvas")
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    page.wait_for_timeout(1500)  # let the grids settle
    assert page.locator("[data-testid='stException']").count() == 0
    page.screenshot(path=str(ARTIFACTS / "overview_card.png"))
    page.locator(GRID).first.screenshot(path=str(ARTIFACTS / "overview_card_table.png"))
    main = page.locator("[data-testid='stMain']").inner_text()
    assert "not available" in main and "informed attacker" in main
    assert page.get_by_role("button", name="Report card (CSV)").count() == 1
    # the card as a vector image, through the kaleido server
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Report card (SVG)").click()
    assert info.value.suggested_filename == "report_card.svg"
    svg = Path(info.value.path()).read_bytes()
    assert b"<svg" in svg[:200] and b"anon-leaky" in svg
    # the sidebar's study files: save, and load in an expander
    sidebar = page.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_role("button", name="Save study").count() == 1
    sidebar.get_by_text("Load a study file").click()
    sidebar.get_by_role("button", name="Load study").wait_for()
    page.wait_for_timeout(500)
    sidebar.screenshot(path=str(ARTIFACTS / "overview_card_sidebar.png"))

    # the Report page: settings, then the built report and its downloads
    page.get_by_role("link", name="Report", exact=True).click()
    page.wait_for_url("**/Report")
    page.get_by_role("heading", name="Study settings").wait_for()
    idle(page)
    page.get_by_role("button", name="Build report").click()
    page.get_by_role("heading", name="Downloads").wait_for(timeout=120_000)
    idle(page)
    page.wait_for_selector(f"{GRID} canvas")
    page.wait_for_timeout(1200)
    assert page.locator("[data-testid='stException']").count() == 0
    for label in ("HTML report", "JSON (every number)", "HTML + JSON + CSVs (zip)", "PDF"):
        assert page.get_by_role("button", name=label).count() == 1, label
    # in the page itself: the sidebar's study-file uploader, left open above, bears the label too
    main = page.locator("[data-testid='stMain']")
    assert main.get_by_role("button", name="Study file (.vxm)").count() == 1
    page.set_viewport_size({"width": 1440, "height": 2400})
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "report_page.png"), full_page=True)
    text = page.locator("[data-testid='stMain']").inner_text()
    assert "anon-leaky" in text  # its threat call-out (the grid itself is a canvas)

    # the JSON download is a file with every condition
    with page.expect_download() as info:
        page.get_by_role("button", name="JSON (every number)").click()
    body = Path(info.value.path()).read_text(encoding="utf-8")
    for name in DEMO_NAMES:
        assert f'"{name}"' in body
