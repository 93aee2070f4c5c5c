"""CPU and wall time of ``build_study_report`` on the demo study, with a per-part breakdown.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_study_report.py [--bootstrap 200] [--repeat 5]

Builds the demo study (:func:`voxmetrics.synth.demo_study`, 5 conditions, 80 speakers, 480
eval utterances each), runs :func:`voxmetrics.build_study_report` once to warm up (imports,
first calls), then ``repeat`` times with ``bootstrap`` replicates, each cold (the built-in SBLS
attacker, which a process trains once per condition, is forgotten first), printing the CPU time
(``time.process_time``, all threads of the process) and the wall time of each run, and the
median. The breakdown times each part the report calls (every call of it in one report, CPU
and wall): the functions are looked up in :mod:`voxmetrics.report.study` at call time, so they
are wrapped there with a timer for one more run. The goal is under 1 s of CPU at 200
replicates. BLAS threads spin while they wait: run with ``OMP_NUM_THREADS=1`` (and
``OPENBLAS_NUM_THREADS=1``) as well to see the CPU without them. The load average is printed
before and after, because timings on a shared machine vary with it. Not a test: pytest does
not collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]

GOAL_CPU_SECONDS = 1.0

# the parts of a study report, as named in voxmetrics.report.study
PARTS = (
    ("evaluate_condition", "evaluate each condition (metrics, chance levels, replicates)"),
    ("default_attack", "SBLS: train the default attacker (logistic regressions)"),
    ("attack_sbls", "SBLS: the point estimates"),
    ("sbls_intervals", "SBLS: bootstrap intervals"),
    ("ece_curves_from_pools", "ECE curves"),
    ("linkage_inputs", "singling out + similarity matrices (DeID, G_VD)"),
    ("similarity_intervals", "DeID / G_VD intervals"),
    ("_comparisons", "paired comparisons against the first condition"),
    ("report_card", "report card"),
    ("threat_callouts", "threat call-outs"),
)


def forget_trained_attackers() -> None:
    """Empty the process's store of trained SBLS attackers, so that a run trains them."""
    from voxmetrics.analysis import sbls

    sbls._PREDICTIONS.clear()


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def breakdown(study: Any, bootstrap: int) -> tuple[dict[str, list[float]], float, float]:
    """CPU and wall per part of one report (parts wrapped with a timer), and the total."""
    import voxmetrics.report.study as mod

    spent: dict[str, list[float]] = {name: [0.0, 0.0, 0] for name, _ in PARTS}
    originals = {name: getattr(mod, name) for name, _ in PARTS}

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            out, cpu, wall = timed(lambda: fn(*args, **kwargs))
            spent[name][0] += cpu
            spent[name][1] += wall
            spent[name][2] += 1
            return out

        return inner

    try:
        for name, fn in originals.items():
            setattr(mod, name, wrap(name, fn))
        forget_trained_attackers()
        # the evaluator and attacker hooks' defaults were bound when the function was defined
        hooks = {"evaluator": mod.evaluate_condition, "attack_of": mod.default_attack}
        _, cpu, wall = timed(lambda: mod.build_study_report(study, bootstrap=bootstrap, **hooks))
    finally:
        for name, fn in originals.items():
            setattr(mod, name, fn)
    return spent, cpu, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=200, help="replicates (default 200)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (default 5)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO_ROOT))
    warnings.simplefilter("ignore")  # the demo's degenerate SRD fit warns; not timed here

    import voxmetrics as vm
    from voxmetrics.synth import demo_study

    threads = {k: os.environ.get(k, "-") for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}; {threads}")
    study = demo_study()
    vm.build_study_report(study, bootstrap=args.bootstrap)  # warm-up
    cpus, walls = [], []
    for k in range(args.repeat):
        forget_trained_attackers()
        _, cpu, wall = timed(lambda: vm.build_study_report(study, bootstrap=args.bootstrap))
        cpus.append(cpu)
        walls.append(wall)
        print(f"run {k + 1}: CPU {cpu:.3f} s, wall {wall:.3f} s")
    cpu, wall = statistics.median(cpus), statistics.median(walls)
    verdict = "met" if cpu < GOAL_CPU_SECONDS else "NOT met"
    print(
        f"build_study_report(demo_study(), bootstrap={args.bootstrap}): median CPU {cpu:.3f} s, "
        f"wall {wall:.3f} s (goal: CPU < {GOAL_CPU_SECONDS:.0f} s, {verdict})"
    )
    spent, cpu, wall = breakdown(study, args.bootstrap)
    print(f"\nbreakdown (one more run, CPU {cpu:.3f} s, wall {wall:.3f} s):")
    print(f"{'part':<24} {'calls':>5} {'CPU s':>7} {'wall s':>7}  what")
    for name, what in PARTS:
        c, w, n = spent[name]
        print(f"{name:<24} {n:>5} {c:>7.3f} {w:>7.3f}  {what}")
    rest_cpu = cpu - sum(v[0] for v in spent.values())
    rest_wall = wall - sum(v[1] for v in spent.values())
    print(f"{'(the rest)':<24} {'':>5} {rest_cpu:>7.3f} {rest_wall:>7.3f}")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
