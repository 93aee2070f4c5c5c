"""What the browser tests share besides their fixtures (``conftest.py``): paths, names, waits."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"  # screenshots and server logs (ignored by git)
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
CHART = "[data-testid='stPlotlyChart']"


def idle(page: Any, **options: Any) -> None:
    """Wait until the app's script has finished running (``options`` e.g. ``timeout=``)."""
    page.wait_for_selector(IDLE, state="attached", **options)


def free_port() -> int:
    """A TCP port free on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
