"""The real dashboard in headless Chromium (style.md 18). Run with ``pytest -m browser``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
IDLE = "[data-test-script-state='notRunning']"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
    ),
]
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install playwright)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout} s")


@pytest.fixture(scope="module")
def server(request) -> Iterator[str]:
    """The app on a free port, one per test module, its log named after the module, started
    by ``voxmetrics app`` (no file watcher: edits elsewhere never rerun it mid-test)."""
    port = _free_port()
    env = {**os.environ, "BROWSER_PATH": CHROMIUM}
    log = ARTIFACTS / f"streamlit_{request.module.__name__}.log"
    ARTIFACTS.mkdir(exist_ok=True)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "voxmetrics", "app", "--port", str(port), "--",
                "--server.headless", "true",
                "--server.address", "127.0.0.1",
            ],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until_up(url, proc)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1440, "height": 1240}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(90_000)  # a 2-core CI machine rendering every page
    pg.goto(server)
    yield pg
    context.close()


def _idle(page) -> None:
    page.wait_for_selector(IDLE, state="attached")


def test_overview_in_a_real_browser(page):
    _idle(page)
    page.get_by_role("link", name="Overview", exact=True).click()
    page.wait_for_url("**/Overview")
    page.get_by_role("heading", name="Overview").first.wait_for()
    _idle(page)
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
    _idle(page)
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
    _idle(page)
    upload = ARTIFACTS / "garbage.csv"
    upload.write_bytes(b"\x00\x01 not scores \xff")
    with page.expect_response("**/_stcore/upload_file/**", timeout=120_000):
        main = page.locator("[data-testid='stMain']")  # not the sidebar's study-file uploader
        main.locator("[data-testid='stFileUploaderDropzoneInput']").first.set_input_files(upload)
    page.locator("[data-testid='stFileChipName']", has_text="garbage.csv").wait_for()
    page.wait_for_timeout(500)  # the upload triggers a rerun that sends the widget value
    _idle(page)
    page.get_by_role("button", name="Load scores").click()
    alert = page.locator("[data-testid='stAlertContentError']").first
    alert.wait_for()
    page.screenshot(path=str(ARTIFACTS / "data_error.png"))
    assert "garbage.csv" in alert.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0


def test_data_page_in_a_real_browser(page):
    page.goto(page.url.rstrip("/") + "/Data")
    _idle(page)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "data.png"), full_page=True)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_role("heading", name="Scores of plain").count() == 1
