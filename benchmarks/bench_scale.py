"""``voxmetrics evaluate`` at real scale: wall time and peak memory against one sort.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_scale.py [--sizes 4000x1000,11000x2500,22024x4949]
                                               [--dev 2000x500] [--tmp /tmp] [--seed 0]
                                               [--repo PATH] [--bootstrap B]

For each size T x N it writes, into a temporary folder, a seeded float32 eval score matrix as an
NPZ (T trials of N enrolled speakers, about T / N trials each; scores ~ N(0, 0.1), the mated
column shifted up by 0.3, the scale of cosine similarities) and a dev matrix of other speakers
(``--dev``), then runs ``python -m voxmetrics evaluate eval.npz --dev dev.npz --json out.json``
as a user would, in a child process, and reports its wall time and peak resident memory
(``os.wait4``'s ``ru_maxrss``). In the same run it times one ``np.sort`` of the T x N float32
scores (the pooled scores: every target and non-target) in this process, the first run and the
best of three, and prints evaluate / best sort and peak memory / matrix bytes; the same ratio
in CPU time (user + system: ``os.wait4`` for the child, ``time.process_time`` for the sort),
which depends much less on other jobs sharing the machine. Targets of the
scale issue: evaluate <= 3x the sort, peak memory <= 3x the matrix, both growing no faster
than the sort. The load average is printed before and after (the machine may be shared).
``--repo`` runs another checkout's voxmetrics (before / after comparisons).

After each size it also runs the scale issue's floor in a child process (start Python, import
numpy, read the NPZ, sort the pooled scores once, take one exp of every score) and prints
evaluate / floor in CPU and wall time (target: <= 3x). With ``--bootstrap B`` it then runs
``evaluate ... --bootstrap B`` and prints its CPU time against the point estimate's and its peak
memory against the matrix (targets: <= 3x each). Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]


def write_matrix(path: Path, t: int, n: int, *, seed: int, prefix: str) -> int:
    """Write a seeded float32 score NPZ; return the matrix's bytes."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((t, n), dtype=np.float32)
    scores *= np.float32(0.1)
    targets = np.arange(t) % n
    scores[np.arange(t), targets] += np.float32(0.3)
    enrol = np.array([f"{prefix}spk{j:05d}" for j in range(n)])
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array([f"{prefix}utt{i:06d}" for i in range(t)]),
        trial_speakers=enrol[targets],
        enrol_speakers=enrol,
    )
    return int(scores.nbytes)


def time_sort(path: Path) -> tuple[float, float, float]:
    """(first, best of three) wall times of one np.sort of every score of the NPZ's matrix,
    and the CPU time (user + system) of the best one.

    The first sort of a process also pays the page faults of its output buffer (the copy of
    the matrix that ``np.sort(axis=None)`` sorts); later ones reuse the memory.
    """
    with np.load(path, allow_pickle=False) as npz:
        scores = npz["scores"]
    times = []
    for _ in range(3):
        start, cpu = time.perf_counter(), time.process_time()
        out = np.sort(scores, axis=None)
        times.append((time.perf_counter() - start, time.process_time() - cpu))
        del out
    best = min(times)
    return times[0][0], best[0], best[1]


FLOOR = """
import sys
import numpy as np
with np.load(sys.argv[1], allow_pickle=False) as npz:
    scores = npz["scores"]
np.sort(scores, axis=None)
np.exp(scores)
"""


def run_floor(eval_path: Path) -> tuple[float, float, int, int]:
    """The issue's floor, in a child: start Python, import numpy, read the NPZ, sort the pooled
    scores once and take one exp of every score. (wall, CPU, peak RSS, exit status)."""
    return run_child([sys.executable, "-c", FLOOR, str(eval_path)], REPO_ROOT)


def run_child(cmd: list[str], repo: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS bytes, exit status) of ``cmd``."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, int(usage.ru_maxrss) * 1024, os.waitstatus_to_exitcode(status)


def run_evaluate(
    eval_path: Path, dev_path: Path, out: Path, repo: Path = REPO_ROOT, *extra: str
) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS bytes, exit status) of the
    evaluate command in a child (``extra``: more options, e.g. ``--bootstrap 200``)."""
    cmd = [sys.executable, "-m", "voxmetrics", "evaluate", str(eval_path), "--dev", str(dev_path)]
    return run_child([*cmd, "--json", str(out), *extra], repo)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4000x1000,11000x2500,22024x4949")
    parser.add_argument("--dev", default="2000x500", help="dev matrix size")
    parser.add_argument("--tmp", default=None, help="folder for the NPZ files (default: /tmp)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repo", default=str(REPO_ROOT), help="checkout whose voxmetrics runs (for before/after)"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        help="also run evaluate --bootstrap B and compare it with the point estimate",
    )
    args = parser.parse_args(argv)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    # voxmetrics as installed: its modules compiled once, not from source in every child (a
    # checkout with PYTHONDONTWRITEBYTECODE=1 set would otherwise compile them on each run)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(args.repo) / "voxmetrics")],
        stdout=subprocess.DEVNULL,
        check=False,
    )
    dev_t, dev_n = (int(v) for v in args.dev.split("x"))

    print(
        f"voxmetrics from {args.repo}; Python {platform.python_version()}, numpy "
        f"{np.__version__}, {os.cpu_count()} CPUs; "
        f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    header = (
        f"{'eval T x N':>14} {'matrix':>9} {'sort 1st':>8} {'best':>6} {'evaluate':>9} "
        f"{'/best':>6} {'sort CPU':>8} {'eval CPU':>8} {'/sort':>6} {'peak RSS':>9} "
        f"{'/matrix':>8}  EER      D_ECE    tag"
    )
    print(header)
    print("-" * len(header))
    failed = False
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        d = Path(tmp)
        dev_path = d / "dev.npz"
        write_matrix(dev_path, dev_t, dev_n, seed=args.seed + 1, prefix="dev")
        for t, n in sizes:
            eval_path = d / "eval.npz"
            nbytes = write_matrix(eval_path, t, n, seed=args.seed, prefix="")
            sort_first, sort_s, sort_cpu = time_sort(eval_path)
            wall, cpu, rss, status = run_evaluate(
                eval_path, dev_path, d / "out.json", Path(args.repo)
            )
            if status != 0:
                print(f"{t} x {n}: evaluate exited with status {status}", file=sys.stderr)
                failed = True
                continue
            res = json.loads((d / "out.json").read_text())
            print(
                f"{f'{t:,} x {n:,}':>14} {nbytes / 2**20:7.0f}MB {sort_first:7.2f}s "
                f"{sort_s:5.2f}s {wall:8.2f}s "
                f"{wall / sort_s:5.1f}x {sort_cpu:7.2f}s {cpu:7.2f}s {cpu / sort_cpu:5.1f}x "
                f"{rss / 2**20:7.0f}MB {rss / nbytes:7.2f}x  "
                f"{res['eer']:.5f}  {res['zebra']['d_ece']:.5f}  {res['zebra']['tag']}"
            )
            floor_wall, floor_cpu, floor_rss, _ = run_floor(eval_path)
            print(
                f"{'':>14} floor (python + numpy + read + sort + exp): {floor_wall:.2f}s wall, "
                f"{floor_cpu:.2f}s CPU, {floor_rss / 2**20:.0f}MB; evaluate / floor: "
                f"{cpu / floor_cpu:.2f}x CPU, {wall / floor_wall:.2f}x wall"
            )
            if args.bootstrap:
                b = str(args.bootstrap)
                b_wall, b_cpu, b_rss, b_status = run_evaluate(
                    eval_path, dev_path, d / "boot.json", Path(args.repo), "--bootstrap", b
                )
                if b_status != 0:
                    print(f"{t} x {n}: --bootstrap exited with status {b_status}", file=sys.stderr)
                    failed = True
                else:
                    print(
                        f"{'':>14} --bootstrap {b}: {b_wall:.2f}s wall, {b_cpu:.2f}s CPU = "
                        f"{b_cpu / cpu:.2f}x the point estimate's CPU; peak RSS "
                        f"{b_rss / 2**20:.0f}MB = {b_rss / nbytes:.2f}x the matrix"
                    )
            eval_path.unlink()
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(
        "targets: evaluate <= 3x the sort, peak RSS <= 3x the matrix (CPU columns: user + "
        "system time, less sensitive to other jobs on the machine than the wall times)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
