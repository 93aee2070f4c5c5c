"""Time the SRD beta-binomial fits on the demo study: five losses per condition, LL per speaker.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_srd.py [--seed 0] [--repeat 3] [--n-speakers 40]

For each condition of the demo study (``voxmetrics.synth.demo_study``: 40 eval speakers x 8
trials = 320 trials, N = 40 enrolled) it computes the target ranks once, then times
``fit_beta_binomial`` with each of the five losses on the condition's rank histogram (best of
``repeat`` runs, time.perf_counter) and ``srd_per_speaker`` (one LL fit per speaker, timed
once), and prints the times, whether each fit converged, and the totals. Goal (the SRD issue):
all five losses on a 40-speaker study in under 2 s in total; both readings (the whole study, or
one condition) are reported. Not a test: pytest does not
collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]

GOAL_S = 2.0


def best_time(fn, repeat: int):
    """(result of the last call, best wall time in seconds over ``repeat`` calls)."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the demo study")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each loss")
    parser.add_argument("--n-speakers", type=int, default=40, help="speakers per split")
    args = parser.parse_args(argv)

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    import scipy

    from voxmetrics.errors import DegenerateDataWarning
    from voxmetrics.metrics.srd import LOSSES, fit_beta_binomial, srd, srd_per_speaker
    from voxmetrics.synth import demo_study

    study = demo_study(seed=args.seed, n_speakers=args.n_speakers)
    first = study.conditions[0].eval
    print(
        f"demo study (seed {args.seed}): {len(study)} conditions, T = {first.n_trials} trials x "
        f"N = {first.n_enrolled} enrolled, {len(np.unique(first.trial_speakers))} speakers; "
        f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"{os.cpu_count()} CPUs"
    )
    header = "  ".join(f"{loss:>12}" for loss in LOSSES)
    print(f"{'condition':<12} {header}  {'5 losses':>9}  {'per speaker (LL)':>24}")
    all_losses = 0.0
    all_speakers = 0.0
    worst = 0.0
    for cond in study.conditions:
        sm = cond.eval
        result = srd(sm.scores, sm.targets)
        cells = []
        total = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            for loss in LOSSES:
                h = result.histogram
                fit, t = best_time(
                    lambda h=h, loss=loss: fit_beta_binomial(h, loss=loss), args.repeat
                )
                total += t
                cells.append(f"{t * 1e3:8.0f} ms{'' if fit.converged else '*':1}")
        start = time.perf_counter()
        speakers = srd_per_speaker(result.ranks, sm.trial_speakers, result.n_enrolled)
        t_spk = time.perf_counter() - start
        failed = sum(not f.converged for f in speakers.fits)
        all_losses += total
        worst = max(worst, total)
        all_speakers += t_spk
        per = t_spk / len(speakers.fits)
        print(
            f"{cond.name:<12} {'  '.join(cells)}  {total:7.2f} s  "
            f"{t_spk:6.2f} s ({per * 1e3:4.0f} ms/spk, {failed:2d} failed)"
        )

    def verdict(t: float) -> str:
        return "met" if t < GOAL_S else "NOT met"

    print(
        f"five losses, whole study ({len(study)} histograms): {all_losses:.2f} s "
        f"(goal < {GOAL_S:.0f} s: {verdict(all_losses)}); slowest condition "
        f"{worst:.2f} s ({verdict(worst)} if the goal is per condition)"
    )
    print(
        f"per-speaker LL fits: {all_speakers:.2f} s for {len(study)} x {args.n_speakers} "
        "speakers (not part of the goal)"
    )
    print("* = did not converge (a DegenerateDataWarning in normal use)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
