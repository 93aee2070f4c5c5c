"""Time and memory of LID's calibration and evaluation on one large float32 score matrix.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_lid.py [--trials 22024] [--enrolled 4949] [--repeat 1]
                                             [--shift 2.0] [--seed 0]

Builds a seeded float32 T x N matrix (i.i.d. N(0, 1) scores, the mated column of each trial
shifted up by ``shift`` so that the learned w is of the size seen on real data, ~ shift), then
measures separately

(a) ``calibrate_lid`` on it as the dev matrix, and
(b) ``lid`` on it as the eval matrix with that calibration:

the wall time (``time.perf_counter``, best of ``repeat`` runs without tracing), the CPU time
of that run (``time.process_time``, all threads) and the peak memory allocated during the call
on top of what was allocated before it (one more run under ``tracemalloc``, to which numpy
reports its array buffers), as bytes and as a multiple of the matrix's own bytes. The goal
for (b) is under 10 s and under 3x the matrix's bytes on 2 cores. The load average is printed
before and after, because timings on a shared machine vary with it.
Not a test: pytest does not collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]

GOAL_SECONDS = 10.0
GOAL_MEMORY_RATIO = 3.0


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, float]:
    """Return (result of the last call, best wall time, CPU time of that run), in seconds.

    The CPU time (``time.process_time``, all threads of the process) varies less than the
    wall time when other jobs compete for the cores.
    """
    best, cpu = float("inf"), float("nan")
    result = None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return result, best, cpu


def peak_extra_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes traced during ``fn()`` above those already allocated when it started."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def load_average() -> str:
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=22_024, help="T, rows of the matrix")
    parser.add_argument("--enrolled", type=int, default=4_949, help="N, columns of the matrix")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each step")
    parser.add_argument("--shift", type=float, default=2.0, help="mated-score shift (sd units)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.trials < 1 or args.enrolled < 2 or args.repeat < 1:
        parser.error("need --trials >= 1, --enrolled >= 2 and --repeat >= 1")

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from voxmetrics.metrics.lid import calibrate_lid, lid

    load_before = load_average()
    rng = np.random.default_rng(args.seed)
    t, n = args.trials, args.enrolled
    scores = rng.standard_normal((t, n), dtype=np.float32)
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += np.float32(args.shift)
    matrix_bytes = scores.nbytes
    print(
        f"matrix: {t:,} x {n:,} float32 = {matrix_bytes / 2**20:,.1f} MiB (seed {args.seed}, "
        f"mated shift {args.shift}); Python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"load average before: {load_before}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning here would mean a broken benchmark
        cal, t_cal, cpu_cal = best_time(lambda: calibrate_lid(scores, targets), args.repeat)
        res, t_lid, cpu_lid = best_time(lambda: lid(scores, targets, cal), args.repeat)
        m_cal = peak_extra_bytes(lambda: calibrate_lid(scores, targets))
        m_lid = peak_extra_bytes(lambda: lid(scores, targets, cal))

    print(
        f"calibration: w = {cal.w:.6f}, b = {cal.b:.6f}, converged = {cal.converged}; "
        f"ALID = {res.alid:.4f} bits, PDR = {res.pdr:.4f}, LIDmax = {res.lid_max:.4f} bits"
    )
    print()
    header = f"{'step':<26} {'wall (s)':>9} {'CPU (s)':>8} {'peak extra (MiB)':>17} {'x matrix':>9}"
    print(header)
    print("-" * len(header))
    for name, seconds, cpu, extra in (
        ("(a) calibrate_lid (dev)", t_cal, cpu_cal, m_cal),
        ("(b) lid (eval)", t_lid, cpu_lid, m_lid),
    ):
        print(
            f"{name:<26} {seconds:>9.2f} {cpu:>8.2f} {extra / 2**20:>17.1f} "
            f"{extra / matrix_bytes:>9.2f}"
        )
    print()
    ok_time = t_lid < GOAL_SECONDS
    ok_memory = m_lid < GOAL_MEMORY_RATIO * matrix_bytes
    print(
        f"goal for (b): < {GOAL_SECONDS:g} s [{'met' if ok_time else 'NOT met'}], "
        f"< {GOAL_MEMORY_RATIO:g}x matrix bytes [{'met' if ok_memory else 'NOT met'}]"
    )
    print(f"load average after: {load_average()}  (repeat = {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
