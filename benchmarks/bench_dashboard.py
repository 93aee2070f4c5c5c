"""Dashboard pages on the demo study: a cold start, then the page again with its caches warm.

Each page runs in a fresh Python process (nothing cached, nothing imported), through Streamlit's
``AppTest``: the app's home page first (it builds the demo study), then the page, then the page
again (its caches warm). Printed per page, in seconds of wall time: the imports (streamlit's
testing module and voxmetrics), the home page's first run, the page's first run, the cold total
(process start to the page drawn, without the interpreter's own start-up), the warm run, and
the CPU time of the cold start and of the warm run (``time.process_time``, every thread: what
the page costs, less sensitive than the wall time to other jobs on a shared machine).
A page written ``A+B`` is page B visited after page A in the same session (``1_Overview+10_Report``:
the Report page built after the Overview filled the shared cache of condition reports).
``--profile PAGE`` prints the top of a cProfile of that page's cold run instead.
The package's modules are compiled first (``compileall``, as ``bench_scale.py``): the pages'
imports then read bytecode, as from an installed package.

``--speakers N`` puts the demo generator's study with ``n_speakers=N`` into the session before
the first run (``--speakers 1000``: the scale issue's case, five conditions of 8,000 x 1,000 with
embeddings, the default 200 replicates); its simulation is timed apart (``study``) and left out
of the page's CPU time. ``page CPU`` is the CPU time of the page's own first visit (the
``page`` column's run), the number the scale issue's targets are about (<= 20 s for the
Overview, <= 10 s for every other page, warm reruns <= 1 s). ``--pages all`` runs every page
in ``pages/``. ``points``: the most points one figure of the page's first visit sent to the
browser (:func:`voxmetrics.plots.decimate.figure_points`; at most 200,000 once decimated).

    .venv/bin/python benchmarks/bench_dashboard.py
    .venv/bin/python benchmarks/bench_dashboard.py --speakers 1000 --pages all
    .venv/bin/python benchmarks/bench_dashboard.py --pages 1_Overview 10_Report --repeat 3
    .venv/bin/python benchmarks/bench_dashboard.py --profile 1_Overview
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGES = [
    "1_Overview",
    "2_Data",
    "5_ZEBRA",
    "8_Embeddings",
    "10_Report",
    "11_Verification",
    "1_Overview+10_Report",
]

CHILD = r"""
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
from streamlit.testing.v1 import AppTest
import voxmetrics.ui  # noqa: F401
t_import = time.perf_counter() - t0
app, page, profile, click = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
speakers = int(sys.argv[5])
at = AppTest.from_file(app, default_timeout=3600)
import streamlit
from voxmetrics.plots.decimate import figure_points
points, plotly_chart = [0], streamlit.plotly_chart
def counted_chart(fig, *args, **kwargs):  # the points each figure sends to the browser
    points.append(figure_points(fig))
    return plotly_chart(fig, *args, **kwargs)
streamlit.plotly_chart = counted_chart
c_study = 0.0
if speakers:
    from voxmetrics.synth import demo_study
    c = time.process_time()
    at.session_state["vm_study"] = demo_study(n_speakers=speakers)
    c_study = time.process_time() - c
t = time.perf_counter(); at.run(); t_home = time.perf_counter() - t
assert not at.exception, at.exception
*before, page = page.split("+")  # "1_Overview+10_Report": the Report after the Overview
for other in before:
    at.switch_page(f"pages/{other}.py").run()
    assert not at.exception, at.exception
t_before = time.perf_counter() - t0
at.switch_page(f"pages/{page}.py")
if profile:  # the script runs in a thread of its own: profile every thread started now
    import cProfile, pstats, threading
    profiles, thread_run = [], threading.Thread.run
    def run(self):
        p = cProfile.Profile(); profiles.append(p); p.enable()
        try:
            thread_run(self)
        finally:
            p.disable()
    threading.Thread.run = run
t, c = time.perf_counter(), time.process_time()
at.run()
t_cold = time.perf_counter() - t
if click and at.button(key="vm_report_build") is not None:
    t = time.perf_counter(); at.button(key="vm_report_build").click().run()
    t_cold += time.perf_counter() - t
c_page = time.process_time() - c
max_points = max(points)
if profile:
    threading.Thread.run = thread_run
    pstats.Stats(*profiles).sort_stats("cumulative").print_stats(60)
assert not at.exception, at.exception
c_cold = time.process_time() - c0 - c_study
t, c = time.perf_counter(), time.process_time()
at.run()
t_warm, c_warm = time.perf_counter() - t, time.process_time() - c
assert not at.exception, at.exception
print(json.dumps({"import": t_import, "home": t_home, "page": t_cold, "before": t_before,
                  "cold": time.perf_counter() - t0 - t_warm, "warm": t_warm,
                  "cold_cpu": c_cold, "warm_cpu": c_warm, "page_cpu": c_page,
                  "study_cpu": c_study, "points": max_points}))
"""


def run_page(page: str, *, profile: bool = False, speakers: int = 0) -> dict[str, float] | None:
    """One cold process: the timings of ``page`` (None when profiling: the profile is printed)."""
    click = "1" if page.endswith("10_Report") else "0"  # the Report page computes on its button
    flags = ["1" if profile else "0", click, str(speakers)]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(APP), page, *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"{page}: {proc.stderr[-2000:]}")
    if profile:
        print(proc.stdout)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _page_number(stem: str) -> int:
    return int(stem.split("_", 1)[0])


def main() -> None:
    """Time the pages (best of ``--repeat`` cold processes each)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", nargs="+", default=PAGES)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", metavar="PAGE")
    parser.add_argument("--speakers", type=int, default=0, help="demo study of N speakers")
    args = parser.parse_args()
    # voxmetrics as installed: its modules compiled once, not from source in every run (a
    # checkout with PYTHONDONTWRITEBYTECODE=1 would otherwise compile the modules a page imports
    # in its own first visit: several CPU seconds of the Overview's), as bench_scale.py
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "voxmetrics")],
        stdout=subprocess.DEVNULL,
        check=False,
    )
    if args.pages == ["all"]:
        args.pages = sorted((p.stem for p in (ROOT / "pages").glob("*.py")), key=_page_number)
    if args.profile:
        run_page(args.profile, profile=True, speakers=args.speakers)
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    print(
        f"{'page':<22}{'imports':>9}{'home':>8}{'page':>8}{'cold':>8}{'warm':>8}"
        f"{'cold CPU':>10}{'warm CPU':>10}{'page CPU':>10}{'study':>7}  (s)"
    )
    for page in args.pages:
        runs = [run_page(page, speakers=args.speakers) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["cold"])
        warm = min(r["warm"] for r in runs)
        cpu = min(r["cold_cpu"] for r in runs), min(r["warm_cpu"] for r in runs)
        page_cpu = min(r["page_cpu"] for r in runs)
        print(
            f"{page:<22}{best['import']:>9.2f}{best['home']:>8.2f}{best['page']:>8.2f}"
            f"{best['cold']:>8.2f}{warm:>8.2f}{cpu[0]:>10.2f}{cpu[1]:>10.2f}"
            f"{page_cpu:>10.2f}{best['study_cpu']:>7.1f}{best.get('points', 0):>14,}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
