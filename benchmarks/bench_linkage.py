"""Time and memory of linkability vs N' on paper 001's matrix size, and of voice similarity.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_linkage.py [--trials 22024] [--enrolled 4949]
                                                 [--draws 5] [--repeat 1] [--seed 0]
                                                 [--speakers 40] [--utterances 30]

(a) ``linkability_curve`` on a seeded float32 T x N matrix (i.i.d. N(0, 1) scores, the mated
    column of each trial shifted up by 2.0), default T = 22,024 x N = 4,949 (paper 001's score
    matrix); ``--trials 4949 --enrolled 22024`` is the other orientation, the paper's
    linkability curve over N' up to 22,024 enrolled speakers. Timed once with the exact
    expectation only and once with ``--draws`` sampled candidate sets per trial.
(b) ``voice_similarity`` (the three similarity matrices, DeID and G_VD) on a VPC-sized
    utterance set: the demo's generative model (:mod:`voxmetrics.synth`) with ``--speakers``
    eval speakers of ``--utterances`` utterances each (a third enrolment, the rest trials),
    original against anon-mild, with both calibrations.

For each: the wall time (``time.perf_counter``, best of ``repeat`` runs without tracing), the CPU
time of that run (``time.process_time``, all threads) and the peak memory allocated during the
call above what was allocated before it (one more run under ``tracemalloc``, to which numpy
reports its array buffers). The goal for (a) is under 10 s. The load average is printed before
and after, because timings on a shared machine vary with it. Not a test: pytest does not
collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]

GOAL_SECONDS = 10.0


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, float]:
    """Return (result of the last call, best wall time, CPU time of that run), in seconds."""
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


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=22_024, help="rows T of the matrix")
    parser.add_argument("--enrolled", type=int, default=4_949, help="columns N of the matrix")
    parser.add_argument("--draws", type=int, default=5, help="sampled candidate sets per trial")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each call")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speakers", type=int, default=40, help="eval speakers for (b)")
    parser.add_argument("--utterances", type=int, default=30, help="utterances per speaker")
    args = parser.parse_args(argv)

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs; "
        f"load average before: {load_average()}"
    )

    bench_linkability(args)
    bench_similarity(args)
    print(f"\nload average after: {load_average()}")
    return 0


def bench_linkability(args: argparse.Namespace) -> None:
    """(a): the matrix lives only inside this function."""
    from voxmetrics.metrics.legal import linkability, linkability_curve

    rng = np.random.default_rng(args.seed)
    t, n = args.trials, args.enrolled
    scores = rng.standard_normal((t, n), dtype=np.float32)
    targets = rng.integers(0, n, size=t)
    scores[np.arange(t), targets] += np.float32(2.0)
    print(
        f"\n(a) linkability_curve on a {t:,} x {n:,} float32 matrix ({mib(scores.nbytes)}; "
        f"seed {args.seed})"
    )
    for draws in (0, args.draws):
        curve, wall, cpu = best_time(
            lambda d=draws: linkability_curve(scores, targets, n_draws=d, seed=args.seed),
            args.repeat,
        )
        peak = peak_extra_bytes(
            lambda d=draws: linkability_curve(scores, targets, n_draws=d, seed=args.seed)
        )
        what = "exact expectation" if draws == 0 else f"exact + {draws} sampled draws/trial"
        ok = "goal met" if wall < GOAL_SECONDS else "GOAL MISSED"
        print(
            f"  {what:<34} wall {wall:6.2f} s  cpu {cpu:6.2f} s  peak +{mib(peak)} "
            f"({peak / scores.nbytes:.2f}x the matrix)  [{ok}: < {GOAL_SECONDS:.0f} s]"
        )
    print("  N'       " + " ".join(f"{v:>7d}" for v in curve.n))
    print("  expected " + " ".join(f"{v:7.4f}" for v in curve.expected))
    if curve.sampled is not None:
        print("  sampled  " + " ".join(f"{v:7.4f}" for v in curve.sampled))
    full = linkability(scores, targets)
    print(f"  value at N' = N: {curve.expected[-1]:.6f}; linkability: {full:.6f}")


def bench_similarity(args: argparse.Namespace) -> None:
    """(b): voice_similarity on a VPC-sized utterance set, both calibrations."""
    from voxmetrics.metrics.similarity import voice_similarity
    from voxmetrics.synth import DEMO_SYSTEMS, demo_embeddings

    n_enrol = max(1, args.utterances // 3)
    systems = tuple(s for s in DEMO_SYSTEMS if s.name in ("plain", "anon-mild"))
    sets = demo_embeddings(
        seed=args.seed,
        n_speakers=args.speakers,
        n_enrol=n_enrol,
        n_trial=args.utterances - n_enrol,
        systems=systems,
    )
    original, anonymised = sets["plain"], sets["anon-mild"]
    u = int((original.meta["split"] == "eval").sum())
    print(
        f"\n(b) voice_similarity: {args.speakers} speakers x {args.utterances} utterances = "
        f"{u:,} eval utterances per set, d = {original.dim}; 3 matrices of {u:,}^2 pairs"
    )
    for calibration in ("pav", "raw"):
        result, wall, cpu = best_time(
            lambda c=calibration: voice_similarity(original, anonymised, calibration=c),
            args.repeat,
        )
        peak = peak_extra_bytes(
            lambda c=calibration: voice_similarity(original, anonymised, calibration=c)
        )
        d = result.distinctiveness
        print(
            f"  calibration {calibration:<4} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
            f"peak +{mib(peak)}   DeID {d.deid:.4f}  G_VD {d.g_vd:.3f} dB"
        )


if __name__ == "__main__":
    raise SystemExit(main())
