"""A Kaldi key far larger than its scores: time and peak memory of ``read_scores``.

A VoicePrivacy-style master key (``enrol_id trial_id target|nontarget``) of many millions of
lines is read with a small scores file that uses a few hundred of them (issue: a 10-million-line
key took 3.9 GB and 63 s to use 288 lines). Such a key is read with ``allow_incomplete=True``
(without it, unscored key trials are refused: they are what a scores file cut between two
trials looks like). The key is parsed piece by piece and only the lines of scored trials are
kept, so memory stays near the key's own bytes. Prints one JSON line: lines, the key's size
(MB), seconds, peak RSS of the child process (MB) and its ratio to the key's size, pairs read.

The key's shape: ``--per-trial`` lines per trial, their enrolled ids drawn from ``--enrolled``
ids (the first line of each trial is its target line); ``--per-trial 1 --enrolled 10000`` gives
10 million distinct trials, the hardest case for memory. ``--scored all`` writes a scores file
with a score for every key line (10 million score lines against their full key).

    .venv/bin/python benchmarks/bench_large_key.py                 # 10,000,000 lines
    .venv/bin/python benchmarks/bench_large_key.py --lines 2000000
    .venv/bin/python benchmarks/bench_large_key.py --per-trial 1 --enrolled 10000
    .venv/bin/python benchmarks/bench_large_key.py --scored all
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, sys, time, warnings
    from voxmetrics.data.readers import read_scores
    warnings.simplefilter("ignore")  # the count of unscored key trials (asked for)
    t0 = time.perf_counter()
    c0 = time.process_time()
    sm = read_scores(sys.argv[1], trials=sys.argv[2], allow_incomplete=True)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    with open("/proc/self/status") as f:  # VmHWM: ru_maxrss may hold the parent's, at fork
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
    out = {
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_mb": round(peak),
        "pairs": sm.n_pairs,
    }
    print(json.dumps(out))
    """
)


def _write(
    folder: Path, lines: int, per_trial: int, enrolled: int, scored: int | None
) -> tuple[Path, Path]:
    """The key and the scores of its first ``scored`` trials (every trial when None)."""
    key, scores = folder / "trials", folder / "scores"
    rng = np.random.default_rng(0)
    n_trials = lines // per_trial
    n_scored = n_trials if scored is None else min(scored, n_trials)
    block = 100_000  # trials written at a time
    with key.open("w") as k, scores.open("w") as s:
        for start in range(0, n_trials, block):
            stop = min(n_trials, start + block)
            if enrolled > per_trial:  # the first drawn at random, the others spread from it
                first = rng.integers(0, enrolled, stop - start)
            else:  # every enrolled id in turn, the trial's own first
                first = np.arange(start, stop)
            step = max(1, enrolled // per_trial)
            picks = (first[:, None] + step * np.arange(per_trial)) % enrolled
            key_lines, score_lines = [], []
            for i, row in zip(range(start, stop), picks, strict=True):
                for j, e in enumerate(row):
                    target = j == 0 and (per_trial > 1 or i % 2 == 0)
                    key_lines.append(f"spk{e} utt{i} {'target' if target else 'nontarget'}\n")
                    if i < n_scored:
                        score_lines.append(f"spk{e} utt{i} {0.9 if target else 0.1}\n")
            k.write("".join(key_lines))
            s.write("".join(score_lines))
    return scores, key


def _child(repo: Path, scores: Path, key: Path) -> dict[str, float]:
    """Read ``scores`` with ``key`` in a child process of ``repo``: its time and peak memory."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(scores), str(key)],
        capture_output=True,
        text=True,
        cwd=repo,
        env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=10_000_000)
    p.add_argument("--per-trial", type=int, default=24, help="key lines per trial")
    p.add_argument("--enrolled", type=int, default=24, help="enrolled ids the lines draw from")
    p.add_argument("--scored", default="12", help="trials with scores, or 'all'")
    p.add_argument("--repo", type=Path, default=ROOT, help="checkout to run (before / after)")
    args = p.parse_args()
    scored = None if args.scored == "all" else int(args.scored)
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small"
        small.mkdir()
        # the child's memory before the key: interpreter, pandas, VoxMetrics (a 2-trial key)
        base = _child(args.repo, *_write(small, 48, 24, 24, 1))
        scores, key = _write(Path(tmp), args.lines, args.per_trial, args.enrolled, scored)
        key_mb = key.stat().st_size / 2**20
        scores_mb = scores.stat().st_size / 2**20
        res = _child(args.repo, scores, key)
    files_mb = key_mb + scores_mb
    print(
        json.dumps(
            {
                "lines": args.lines,
                "per_trial": args.per_trial,
                "enrolled": args.enrolled,
                "scored": args.scored,
                "key_mb": round(key_mb),
                "scores_mb": round(scores_mb, 1),
                **res,
                "baseline_rss_mb": base["peak_rss_mb"],
                "peak_over_files": round(res["peak_rss_mb"] / files_mb, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
