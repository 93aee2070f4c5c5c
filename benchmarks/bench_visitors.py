"""Simultaneous visitors: the server's CPU for one first visit of the demo's Overview vs eight.

Each run starts a fresh dashboard (``python -m voxmetrics app --port P -- --server.headless
true``, on a free loopback port, nothing else reached), waits until it answers, then opens the
Overview page (``/Overview``: a new session on the demo study) in ``N`` headless Chromium tabs
at the same moment, each in its own browser context (its own session), and waits until every
tab has drawn the whole page (its last link shown, the script idle). The server's CPU time
(user + system of its process and every child, from ``psutil``) is read just before the tabs
open and after the last one is drawn: the cost of the visits, without the server's start-up
but with the first import of VoxMetrics, which every run pays. Chromium's own CPU is not
counted (another process tree), but it shares the cores: read the wall times with the load.

Without single flight, visitors who miss the shared result store at the same time each compute
the same reports; with it, one computes and the others wait for its result, so eight first
visitors should cost little more than one first visit and seven warm ones.

    .venv/bin/python benchmarks/bench_visitors.py                # 1 visitor, then 8
    .venv/bin/python benchmarks/bench_visitors.py --visitors 4 --repeat 3

Each repetition is a pair of fresh servers, one visitor then ``--visitors`` at once; printed
per run: the server's CPU seconds, per visitor, the wall time until the last tab was drawn and
each tab's; then the medians and their ratio (the figure to hold to at most 2x), and the load
average before and after (the machine's other jobs slow the visits and inflate CPU times).

Needs the ``playwright`` package and Debian's ``chromium`` (as the browser tests).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
IDLE = "[data-test-script-state='notRunning']"
LAST_LINK = "LID: trial by trial"  # the Overview's last element: the script got to its end


def free_port() -> int:
    """A TCP port free on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_cpu(proc: psutil.Process) -> float:
    """CPU seconds (user + system) of ``proc`` and every child it has or had waited for."""
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


@contextlib.contextmanager
def serve(log: Path, timeout: float = 120) -> Iterator[tuple[str, psutil.Process]]:
    """A fresh dashboard on a free loopback port until the block ends: its URL and process."""
    port = free_port()
    cmd = [sys.executable, "-m", "voxmetrics", "app", "--port", str(port)]
    cmd += ["--", "--server.headless", "true", "--server.address", "127.0.0.1"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    sys.exit(f"the server exited with status {proc.returncode}; see {log}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                        if resp.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline:
                        sys.exit(f"the server did not answer within {timeout} s; see {log}")
                    time.sleep(0.3)
            yield url, psutil.Process(proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def visit(browser, url: str, timeout_ms: float) -> float:
    """Open the Overview in a new context (a new session); the seconds until it is drawn."""
    context = await browser.new_context(viewport={"width": 1440, "height": 1240})
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        t = time.perf_counter()
        await page.goto(f"{url}/Overview")
        await page.get_by_role("link", name=LAST_LINK).wait_for()
        await page.wait_for_selector(IDLE, state="attached")
        return time.perf_counter() - t
    finally:
        await context.close()


async def visitors(url: str, n: int, proc: psutil.Process, timeout_ms: float) -> dict:
    """``n`` simultaneous first visits: the server's CPU seconds and each visit's wall time."""
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            cpu = server_cpu(proc)
            t = time.perf_counter()
            walls = await asyncio.gather(*(visit(browser, url, timeout_ms) for _ in range(n)))
            wall = time.perf_counter() - t
            cpu = server_cpu(proc) - cpu
        finally:
            await browser.close()
    return {"cpu": cpu, "wall": wall, "walls": sorted(walls)}


def run(n: int, timeout: float) -> dict:
    """``n`` simultaneous first visits on a fresh server."""
    logs = ROOT / "tests" / "artifacts"
    logs.mkdir(parents=True, exist_ok=True)
    with serve(logs / f"bench_visitors_{n}.log") as (url, proc):
        return asyncio.run(visitors(url, n, proc, timeout * 1000))


def main() -> None:
    """Pairs of fresh servers: one visitor, then ``--visitors`` at once; the CPU ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visitors", type=int, default=8, help="simultaneous visitors")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of runs")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a visit may take")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing (apt-get install chromium)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'visitors':>8}{'server CPU':>12}{'per visitor':>13}{'wall':>8}  visits (s)")
    ones, manys = [], []
    for _ in range(args.repeat):
        for n, into in ((1, ones), (args.visitors, manys)):
            r = run(n, args.timeout)
            into.append(r["cpu"])
            walls = " ".join(f"{w:.1f}" for w in r["walls"])
            ratio = f"  ({r['cpu'] / ones[-1]:.2f}x the one visitor above)" if n > 1 else ""
            print(
                f"{n:>8}{r['cpu']:>12.2f}{r['cpu'] / n:>13.2f}{r['wall']:>8.1f}  {walls}{ratio}",
                flush=True,
            )
    one, many = statistics.median(ones), statistics.median(manys)
    print(
        f"median: 1 visitor {one:.2f} CPU s, {args.visitors} visitors {many:.2f} CPU s: "
        f"{many / one:.2f}x"
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
