"""The LID page in headless Chromium (style.md 18). Run with ``pytest -m browser``.

Screenshots go to tests/artifacts/lid*.png; look at them after a layout change.
"""

from __future__ import annotations

import re

from .browsing import ARTIFACTS, CHART, DEMO_NAMES, IDLE


def _open_lid(page) -> None:
    page.goto(page.url.rstrip("/") + "/LID")
    page.wait_for_selector(IDLE, state="attached")
    page.get_by_role("heading", name="LID: local information disclosure").wait_for()
    page.wait_for_selector(f"{CHART} .main-svg")
    # every figure of the page is drawn: CCDF, two histograms, calibration, trial
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 5', timeout=60_000
    )
    page.wait_for_selector("[data-testid='stDataFrame']")
    page.wait_for_timeout(1200)  # let the data grids and the charts settle


def test_lid_page_in_a_real_browser(page):
    _open_lid(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lid_top.png"))
    # the summary, the localised-vulnerability line, the intervals and the CCDF in one view
    page.set_viewport_size({"width": 1440, "height": 2000})
    page.wait_for_timeout(800)
    page.get_by_role("heading", name="Summary").evaluate("h => h.scrollIntoView()")
    page.wait_for_timeout(800)
    page.screenshot(path=str(ARTIFACTS / "lid_summary_view.png"))
    # Streamlit scrolls inside its main block: a tall viewport shows the whole page at once
    page.set_viewport_size({"width": 1440, "height": 6400})
    page.wait_for_timeout(1500)
    page.screenshot(path=str(ARTIFACTS / "lid.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 1240})
    page.wait_for_timeout(800)
    assert page.locator("[data-testid='stException']").count() == 0
    body = page.locator("[data-testid='stMain']").inner_text()
    assert "localised vulnerability" in body
    assert "anon-leaky" in body
    charts = page.locator(CHART)
    ccdf = charts.nth(0)
    ccdf.screenshot(path=str(ARTIFACTS / "lid_ccdf.png"))
    legend = ccdf.inner_text()
    for name in DEMO_NAMES:
        assert name in legend, f"{name} is missing from the CCDF legend"
    assert "log" in legend and "N = 40" in legend
    charts.nth(1).screenshot(path=str(ARTIFACTS / "lid_p_target.png"))
    charts.nth(2).screenshot(path=str(ARTIFACTS / "lid_histogram.png"))
    charts.nth(3).screenshot(path=str(ARTIFACTS / "lid_calibration.png"))
    charts.nth(4).screenshot(path=str(ARTIFACTS / "lid_trial.png"))
    page.locator("[data-testid='stDataFrame']").first.screenshot(
        path=str(ARTIFACTS / "lid_summary.png")
    )
    # the trial explorer opens on the flagged condition with its largest-LID trial
    assert "Trial " in charts.nth(4).inner_text()


def test_lid_log_axis_and_trial_click(page):
    _open_lid(page)
    trial_chart = page.locator(CHART).nth(4)
    before = trial_chart.inner_text()
    # log y of the CCDF
    page.get_by_text("Logarithmic y axis").first.click()
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, state="attached")
    page.wait_for_selector(f"{CHART} .main-svg")
    page.locator(CHART).nth(0).screenshot(path=str(ARTIFACTS / "lid_ccdf_log.png"))
    assert "log scale" in page.locator(CHART).nth(0).inner_text()
    # click the third row of the trial table (the grid is a canvas: click by position)
    grid = page.locator("[data-testid='stDataFrame']").last
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    header, row_height = 35, 35
    page.mouse.click(box["x"] + 12, box["y"] + header + 2.5 * row_height)
    page.wait_for_timeout(500)
    page.wait_for_selector(IDLE, state="attached")
    page.wait_for_function(
        "(before) => { const c = document.querySelectorAll(\"[data-testid='stPlotlyChart']\");"
        " return c.length >= 5 && c[4].innerText !== before; }",
        arg=before,
        timeout=30_000,
    )
    after = page.locator(CHART).nth(4).inner_text()
    assert re.search(r"Trial \S+ of speaker", after)
    assert after != before
    page.screenshot(path=str(ARTIFACTS / "lid_trial_clicked.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0


def test_overview_has_the_eer_lidmax_figure(page):
    page.goto(page.url.rstrip("/") + "/Overview")
    page.wait_for_selector(IDLE, state="attached")
    page.wait_for_function(
        f'document.querySelectorAll("{CHART} .main-svg").length >= 2', timeout=60_000
    )
    page.wait_for_timeout(1000)
    chart = page.locator(CHART).nth(1)
    chart.scroll_into_view_if_needed()
    chart.screenshot(path=str(ARTIFACTS / "lid_overview_scatter.png"))
    text = chart.inner_text()
    for name in DEMO_NAMES:
        assert name in text, f"{name} is not labelled in the EER-vs-LIDmax figure"
    assert "LIDmax" in text
    assert page.locator("[data-testid='stException']").count() == 0
