"""The real dashboard in headless Chromium (style.md 18). Run with ``pytest -m browser``.

The fixtures (``server``, ``browser``, ``page``) are in ``conftest.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .browsing import ARTIFACTS, DEMO_NAMES, idle


def test_overview_in_a_real_browser(page):
    idle(page)
    page.get_by_role("link", name="Overview", exact=True).click()
    page.wait_for_url("**/Overview")
    page.get_by_role("heading", name="Overview").first.wait_for()
    idle(page)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(800)  # let the data grid and the chart settle before the screenshot
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    chart = page.locator("[data-testid='stPlotlyChart']").first.inner_text()
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    for name in DEMO_NAMES:
        assert name in chart, f"{name} is not labelled in the figure"
        assert name in sidebar, f"{name} is not listed in the sidebar"


@pytest.mark.parametrize(
    ("label", "suffix", "magic"),
    [("Figure (HTML)", ".html", b"<html"), ("Figure (PNG)", ".png", b"\x89PNG")],
)
def test_figure_downloads_work(page, label, suffix, magic):
    page.goto(page.url.rstrip("/") + "/Overview")
    idle(page)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=label).first.click()
    download = info.value
    assert download.suggested_filename == f"eer_vs_linkability{suffix}"
    data = Path(download.path()).read_bytes()
    assert magic in data[:200]
    if suffix == ".html":
        assert b"anon-leaky" in data


def test_garbage_upload_shows_a_message(page):
    page.goto(page.url.rstrip("/") + "/Data")
    idle(page)
    upload = ARTIFACTS / "garbage.csv"
    upload.write_bytes(b"\x00\x01 not scores \xff")
    with page.expect_response("**/_stcore/upload_file/**", timeout=120_000):
        main = page.locator("[data-testid='stMain']")  # not the sidebar's study-file uploader
        shown = main.locator("[data-testid='stFileUploader']:visible").first  # not a hidden tab's
        shown.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(upload)
    page.locator("[data-testid='stFileChipName']", has_text="garbage.csv").wait_for()
    page.wait_for_timeout(500)  # the upload triggers a rerun that sends the widget value
    idle(page)
    page.get_by_role("button", name="Load scores").click()
    alert = page.locator("[data-testid='stAlertContentError']").first
    alert.wait_for()
    page.screenshot(path=str(ARTIFACTS / "data_error.png"))
    assert "garbage.csv" in alert.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0


def test_data_page_in_a_real_browser(page):
    page.goto(page.url.rstrip("/") + "/Data")
    idle(page)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "data.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_role("heading", name="Scores of plain").count() == 1
