"""Time the study report of the demo with the interval of every number, and one comparison.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_uncertainty.py [--bootstrap 200] [--repeat 3]

Times (best of ``repeat``, ``time.perf_counter``, after one warm-up run)

1. ``build_study_report(demo_study(), bootstrap=B)``: every condition evaluated with the
   speaker-level replicates of every headline number, the chance levels and the paired
   comparisons of every condition against the first;
2. the same with ``bootstrap=0`` (no intervals), for the cost of the intervals;
3. ``compare_conditions`` of two demo conditions at B replicates (the Overview's Compare panel),
   without and with the original voices (``original=plain``: DeID and G_VD compared too).

Not a test: pytest does not collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int) -> float:
    fn()  # warm-up: imports and caches
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_ROOT))
    from voxmetrics.report.study import build_study_report
    from voxmetrics.synth import demo_study

    warnings.simplefilter("ignore")
    study = demo_study()
    with_b = best(lambda: build_study_report(study, bootstrap=args.bootstrap), args.repeat)
    without = best(lambda: build_study_report(study, bootstrap=0), args.repeat)
    print(f"build_study_report(demo, bootstrap={args.bootstrap}): {with_b * 1e3:8.1f} ms")
    print(f"build_study_report(demo, bootstrap=0):   {without * 1e3:8.1f} ms")
    try:
        from voxmetrics.report import compare_conditions
    except ImportError:  # before the comparison existed
        return
    a, b = study.get("anon-mild"), study.get("anon-strong")
    cmp_t = best(lambda: compare_conditions(a, b, n_boot=args.bootstrap), args.repeat)
    print(f"compare_conditions(anon-mild, anon-strong, {args.bootstrap}): {cmp_t * 1e3:8.1f} ms")
    try:
        compare_conditions(a, b, n_boot=2, original=study.get("plain"))
    except TypeError:  # before DeID and G_VD were compared
        return
    orig = study.get("plain")
    cmp_o = best(
        lambda: compare_conditions(a, b, n_boot=args.bootstrap, original=orig), args.repeat
    )
    print(f"compare_conditions(..., original=plain):       {cmp_o * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
