"""The Soft biometrics page in headless Chromium (style.md 18). Run with ``pytest -m browser``.

Screenshots go to tests/artifacts/sbls*.png; look at them after a layout change. The page's
bootstrap (default 200 replicates of every demo condition, about a minute on a quiet machine)
is turned down to 40 replicates here; the intervals are then kept server-wide, so the second
test reuses them.
"""

from __future__ import annotations

from .browsing import ARTIFACTS, CHART, DEMO_NAMES, IDLE

SLOW = 900_000  # ms: the first run bootstraps 5 conditions on a shared machine
BOOT = 40  # bootstrap replicates asked for in the browser


def _open_sbls(page, replicates: int = BOOT) -> None:
    page.goto(page.url.rstrip("/") + "/Soft_biometrics")
    page.get_by_role("heading", name="Soft biometrics: SBLS").wait_for()
    # fewer replicates than the default 200 keep the test short on a shared machine; the
    # change interrupts the first run's bootstrap
    box = page.get_by_role("spinbutton", name="Bootstrap replicates")
    box.wait_for()
    if box.input_value() != str(replicates):
        box.fill(str(replicates))
        box.press("Enter")
    # the bootstrap runs last and fills the component table; wait for its caption
    page.get_by_text(f"speaker-level bootstrap, {replicates} replicates").wait_for(timeout=SLOW)
    page.wait_for_selector(IDLE, state="attached", timeout=SLOW)
    # every figure is drawn: components, confusion, AUC matrix, subgroups, identity
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 5', timeout=120_000
    )
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1500)  # let the data grids and the charts settle


def test_sbls_page_in_a_real_browser(page):
    _open_sbls(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "sbls_top.png"))
    assert page.locator("[data-testid='stException']").count() == 0
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "higher = more protection" in body
    assert "Attacker:" in body and "plain" in body
    # the component table and bars with their intervals in one view
    page.get_by_role("heading", name="Protection per condition").evaluate("h => h.scrollIntoView()")
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / "sbls_components_view.png"))
    # Streamlit scrolls inside its main block: a tall viewport shows the whole page at once
    page.set_viewport_size({"width": 1440, "height": 6000})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "sbls.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 1240})
    page.wait_for_timeout(800)
    charts = page.locator(CHART)
    assert charts.count() == 5
    components = charts.nth(0)
    components.screenshot(path=str(ARTIFACTS / "sbls_components.png"))
    text = components.inner_text()
    for name in DEMO_NAMES:
        assert name in text, f"{name} is missing from the component chart"
    assert "SBLS" in text and "P_subgroup" in text
    charts.nth(1).screenshot(path=str(ARTIFACTS / "sbls_confusion.png"))
    charts.nth(2).screenshot(path=str(ARTIFACTS / "sbls_auc_matrix.png"))
    assert "chosen alignment" in charts.nth(2).inner_text()
    charts.nth(3).screenshot(path=str(ARTIFACTS / "sbls_subgroups.png"))
    assert "uniform guess 1/6" in charts.nth(3).inner_text()
    identity = charts.nth(4)
    identity.screenshot(path=str(ARTIFACTS / "sbls_identity.png"))
    assert "LIDmax" in identity.inner_text() and "anon-leaky" in identity.inner_text()
    page.locator("[data-testid='stDataFrame']").first.screenshot(
        path=str(ARTIFACTS / "sbls_table.png")
    )


def test_sbls_garbage_upload_shows_a_message(page):
    _open_sbls(page)  # the intervals are stored server-wide by now: a fast run
    page.get_by_text("Use your own attacker: upload attribute predictions").click()
    upload = ARTIFACTS / "junk.csv"
    upload.write_bytes(b"\x00\x01 not predictions \xff")
    with page.expect_response("**/_stcore/upload_file/**", timeout=120_000):
        main = page.locator("[data-testid='stMain']")  # not the sidebar's study-file uploader
        main.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(upload)
    page.locator("[data-testid='stFileChipName']", has_text="junk.csv").wait_for()
    page.wait_for_timeout(500)  # the upload triggers a rerun that sends the widget value
    page.wait_for_selector(IDLE, state="attached", timeout=120_000)
    page.get_by_role("button", name="Use these predictions").click()
    alert = page.locator("[data-testid='stAlertContentError']").first
    alert.wait_for(timeout=120_000)
    page.wait_for_selector(IDLE, state="attached", timeout=120_000)
    alert.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "sbls_upload_error.png"))
    assert "junk.csv" in alert.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
