"""What the identity numbers of a large demo study cost, condition by condition (CPU s).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_identity.py [--speakers 1000] [--bootstrap 200]

Builds the demo study with ``n_speakers`` speakers (at 1,000: five conditions of 8,000 x 1,000
eval and dev scores) and times, for each condition, in this process (``time.process_time``,
every thread):

- ``calibrate``: ``metrics.lid.calibrate_lid`` on its dev matrix alone, and how it was solved
  (``passes``): ``binned`` (on the pairs' binned moments, one pass over them; beyond 2^18
  pairs), then any Newton passes over all dev pairs and over the warm start's subsample
  (``sub``);
- ``lid report``: ``evaluate_condition(parts=IDENTITY_PARTS)``, what the LID, Threat model and
  Soft biometrics pages compute (the baseline, LID and its chance levels, the target ranks);
- ``full report``: ``evaluation.evaluate_condition`` with ``bootstrap`` replicates, what the
  Overview, Privacy vs utility and Report pages compute.

The sums over the conditions are the least a page that shows them for every condition can
cost at its first visit. The load average is printed before and after (the machine may be
shared). Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.threat import IDENTITY_PARTS
from voxmetrics.synth import demo_study

calibration = importlib.import_module("voxmetrics.metrics.lid.calibration")
solver = importlib.import_module("voxmetrics.metrics.lid.logistic")


def cpu(fn, *args, **kwargs) -> float:
    """CPU seconds of one call (every thread)."""
    start = time.process_time()
    fn(*args, **kwargs)
    return time.process_time() - start


def calibration_passes(dev) -> tuple[float, str]:
    """(CPU s, how it was solved): "binned" (the binned moments, one pass over the pairs), or
    the passes of Newton's method over all dev pairs and over the warm start's subsample."""
    counts = {"full": 0, "sub": 0, "binned": 0}
    fit, block_sums = solver._fit_logistic, solver._block_sums
    fit_binned = calibration.fit_binned
    current = {"fit": "full", "blocks": 1}

    def counted_fit(z_blocks, *args, **kwargs):  # the warm start fits with tol=1e-6
        current["fit"] = "sub" if kwargs.get("tol") == 1e-6 else "full"
        current["blocks"] = len(z_blocks)
        return fit(z_blocks, *args, **kwargs)

    def counted_sums(z, w, b):
        counts[current["fit"]] += 1
        return block_sums(z, w, b)

    def counted_binned(*args, **kwargs):
        counts["binned"] += 1
        return fit_binned(*args, **kwargs)

    solver._fit_logistic, solver._block_sums = counted_fit, counted_sums
    calibration.fit_binned = counted_binned
    try:
        seconds = cpu(calibration.calibrate_lid, dev.scores, dev.targets)
    finally:
        solver._fit_logistic, solver._block_sums = fit, block_sums
        calibration.fit_binned = fit_binned
    full, sub = counts["full"] // current["blocks"], counts["sub"] // current["blocks"]
    how = f"{full} + {sub} sub" if full or sub else ""
    if counts["binned"]:
        how = "binned" + (f", {how}" if how else "")
    return seconds, how


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--speakers", type=int, default=1000)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    study = demo_study(n_speakers=args.speakers)
    evaluate_condition(study.conditions[0])  # imports and first-call costs out of the table
    rows = []
    print(f"{'condition':12s} {'eval':>12s} {'calibrate':>9s} {'passes':>11s} "
          f"{'lid report':>10s} {'full report':>11s}")  # fmt: skip
    for cond in study.conditions:
        cal, how = calibration_passes(cond.dev)
        alone = cpu(evaluate_condition, cond, parts=IDENTITY_PARTS)
        whole = cpu(evaluate_condition, cond, bootstrap=args.bootstrap)
        rows.append((cal, alone, whole))
        shape = "x".join(str(n) for n in cond.eval.scores.shape)
        print(f"{cond.name:12s} {shape:>12s} {cal:9.2f} {how:>11s} "
              f"{alone:10.2f} {whole:11.2f}")  # fmt: skip
    total = [sum(r[k] for r in rows) for k in range(3)]
    print(f"{'sum':12s} {'':>12s} {total[0]:9.2f} {'':>11s} {total[1]:10.2f} {total[2]:11.2f}")
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
