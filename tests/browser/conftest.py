"""Fixtures of the browser tests: the dashboard served by ``voxmetrics app``, Chromium, a page.

Every test in this folder drives the real dashboard in headless Chromium (style.md 18): it is
marked ``browser`` (``pytest -m browser`` runs them, ``-m "not browser"`` leaves them out) and
skipped without Debian's ``chromium``; without the playwright package none is collected.
Shared names and waits are in ``browsing.py``.

One dashboard server and one Chromium serve every module of a test process (each
pytest-xdist worker has its own, on its own port): a page's caches are filled once, not once
per module.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .browsing import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ROOT, free_port

try:
    from playwright import sync_api
except ImportError:  # pip install playwright (requirements-dev.txt)
    sync_api = None

HERE = Path(__file__).resolve().parent
collect_ignore_glob = ["test_*.py"] if sync_api is None else []


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    missing = None
    if not Path(CHROMIUM).exists():
        missing = pytest.mark.skip(reason=f"{CHROMIUM} is missing (apt-get install chromium)")
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.browser)
            if missing is not None:
                item.add_marker(missing)


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


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def worker_name() -> str:
    """This test process's pytest-xdist worker ("gw0", "gw1"...), "main" without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


@contextlib.contextmanager
def serve_app(options: list[str], log_name: str, attempts: int = 3) -> Iterator[str]:
    """``voxmetrics app OPTIONS`` on a free loopback port until the block ends, its log in
    the artifacts (no file watcher: edits elsewhere never rerun it mid-test).

    A port found free can be taken by another process (another pytest-xdist worker) before
    the app binds it; the app then exits, and it is started again on another port, up to
    ``attempts`` times.
    """
    env = {**os.environ, "BROWSER_PATH": CHROMIUM}
    ARTIFACTS.mkdir(exist_ok=True)
    for attempt in range(attempts):
        port = free_port()
        out = (ARTIFACTS / log_name).open("w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "voxmetrics", "app", "--port", str(port), *options],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(url, proc)
            break
        except RuntimeError:  # it exited (e.g. its port was taken): try another port
            _stop(proc)
            out.close()
            if attempt == attempts - 1:
                raise
        except BaseException:
            _stop(proc)
            out.close()
            raise
    try:
        yield url
    finally:
        _stop(proc)
        out.close()


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """The app on a free port, one per test process, shared by every module (its caches fill
    once), started by ``voxmetrics app`` (no file watcher: edits elsewhere never rerun it
    mid-test); its log is ``streamlit_<worker>.log`` in the artifacts."""
    options = ["--", "--server.headless", "true", "--server.address", "127.0.0.1"]
    with serve_app(options, f"streamlit_{worker_name()}.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Chromium, one per test process."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, server):
    """A fresh browser tab on the dashboard's home page."""
    context = browser.new_context(viewport={"width": 1440, "height": 1240}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(90_000)  # a 2-core CI machine rendering every page
    pg.goto(server)
    yield pg
    context.close()
