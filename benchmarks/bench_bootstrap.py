"""The bootstrap of one condition report at dashboard scale, in CPU seconds.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_bootstrap.py [--speakers 1000] [--conditions random]
                                                   [--bootstrap 200] [--repo PATH ...]

For each checkout (this one, then every ``--repo``) and each condition, a child process builds
``demo_study(n_speakers=N)`` (the dashboard's demo generator: at 1,000 speakers five conditions
of 8,000 x 1,000 scores) and evaluates the condition as the dashboard's condition reports do
(``evaluate_condition`` with the study's settings, ``--bootstrap`` replicates). It prints the
CPU time (user + system of every thread, ``time.process_time``) of the bootstrap step (the
replicates of every number: ``evaluation.engine._bootstrap``) and of the whole evaluation, and
a digest of the report's JSON (``to_dict``), equal between checkouts when every number is.
The load average is printed before and after (the machine may be shared). Not a test: pytest
does not collect it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import hashlib, json, sys, time
from voxmetrics.evaluation import engine
from voxmetrics.report import evaluate_condition
from voxmetrics.synth import demo_study

n, name, b = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
study = demo_study(n_speakers=n)
cond = next(c for c in study.conditions if c.name == name)
spent = []
inner = engine._bootstrap


def timed(*args, **kwargs):
    start = time.process_time()
    out = inner(*args, **kwargs)
    spent.append(time.process_time() - start)
    return out


engine._bootstrap = timed
options = {**study.settings.evaluate_options(), "bootstrap": b}
start = time.process_time()
report = evaluate_condition(cond, **options)
total = time.process_time() - start
text = json.dumps(report.to_dict(), sort_keys=True, default=str)
digest = hashlib.sha256(text.encode()).hexdigest()[:16]
print(json.dumps({"bootstrap": sum(spent), "evaluate": total, "digest": digest}))
"""


def run(repo: Path, speakers: int, condition: str, n_boot: int) -> dict[str, float | str]:
    """CPU seconds of the bootstrap and of the evaluation, and the report's digest."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, "-c", CHILD, str(speakers), condition, str(n_boot)]
    out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", type=int, default=1000)
    parser.add_argument("--conditions", default="random", help="comma-separated names")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repo", action="append", default=[], help="another checkout")
    args = parser.parse_args(argv)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"demo_study(n_speakers={args.speakers}), --bootstrap {args.bootstrap}; load {load}")
    print(f"{'checkout':<28} {'condition':<12} {'bootstrap CPU':>13} {'evaluate CPU':>12}  digest")
    for repo in [str(REPO_ROOT), *args.repo]:
        for name in args.conditions.split(","):
            r = run(Path(repo), args.speakers, name, args.bootstrap)
            print(
                f"{repo:<28} {name:<12} {r['bootstrap']:12.2f}s {r['evaluate']:11.2f}s  "
                f"{r['digest']}",
                flush=True,
            )
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
