"""Singling out on the demo generator's 1,000-speaker conditions (8,000 x 1,000 embeddings).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_singling_out.py [--speakers 1000] [--conditions 3]
                                                      [--repo PATH]

Simulates ``demo_study(n_speakers=N)`` and times ``singling_out_embeddings`` (the paper's
10 embeddings per speaker, 5 draws, 10 folds) on the eval split of the first ``--conditions``
conditions, in CPU seconds (``time.process_time``) and wall seconds, in a child process per
checkout: this one and, with ``--repo``, another (before / after). It prints each value, so a
before / after pair shows the same numbers. Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
from voxmetrics.metrics.legal import singling_out_embeddings
from voxmetrics.synth import demo_study
study = demo_study(n_speakers=int(sys.argv[1]))
rows = []
for name in study.names[: int(sys.argv[2])]:
    es = study.get(name).embeddings
    w, c = time.perf_counter(), time.process_time()
    r = singling_out_embeddings(es)
    rows.append([name, time.process_time() - c, time.perf_counter() - w, r.value])
print(json.dumps(rows))
"""


def run(repo: Path, speakers: int, conditions: int) -> list[list]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(speakers), str(conditions)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speakers", type=int, default=1000)
    ap.add_argument("--conditions", type=int, default=3)
    ap.add_argument("--repo", help="another checkout to time as well (before / after)")
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for repo in [ROOT, *([Path(args.repo)] if args.repo else [])]:
        for name, cpu, wall, value in run(repo, args.speakers, args.conditions):
            print(f"{repo!s:<24} {name:<12} {cpu:7.2f}s CPU {wall:7.2f}s wall  value {value!r}")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
