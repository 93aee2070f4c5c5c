"""A Kaldi key far larger than its scores: time and peak memory of ``read_scores``.

A VoicePrivacy-style master key (``enrol_id trial_id target|nontarget``) of many millions of
lines is read with a small scores file that uses a few hundred of them (issue: a 10-million-line
key took 3.9 GB and 63 s to use 288 lines). Such a key is read with ``allow_incomplete=True``
(without it, unscored key trials are refused: they are what a scores file cut between two
trials looks like); the key's lines whose trial is not scored are then counted and dropped
right after parsing, so memory stays near the parsed columns. Prints one JSON line:
lines, seconds, peak RSS of the child process (MB), pairs read.

    .venv/bin/python benchmarks/bench_large_key.py                 # 10,000,000 lines
    .venv/bin/python benchmarks/bench_large_key.py --lines 2000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time, warnings
    from voxmetrics.data.readers import read_scores
    warnings.simplefilter("ignore")  # the count of unscored key trials (asked for)
    t0 = time.perf_counter()
    sm = read_scores(sys.argv[1], trials=sys.argv[2], allow_incomplete=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": round(seconds, 2), "peak_rss_mb": round(peak), "pairs": sm.n_pairs}
    print(json.dumps(out))
    """
)


def _write(folder: Path, lines: int, n_enrol: int = 24, n_used: int = 12) -> tuple[Path, Path]:
    """The key (``lines`` lines, ``n_enrol`` enrolled) and scores of its first ``n_used`` trials."""
    key, scores = folder / "trials", folder / "scores"
    with key.open("w") as k:
        block = []
        for i in range(lines // n_enrol):
            own = i % n_enrol
            block.extend(
                f"spk{e} utt{i} {'target' if e == own else 'nontarget'}\n" for e in range(n_enrol)
            )
            if len(block) > 200_000:
                k.write("".join(block))
                block = []
        k.write("".join(block))
    with scores.open("w") as s:
        for i in range(n_used):
            s.write(
                "".join(
                    f"spk{e} utt{i} {0.9 if e == i % n_enrol else 0.1}\n" for e in range(n_enrol)
                )
            )
    return scores, key


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=10_000_000)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scores, key = _write(Path(tmp), args.lines)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(scores), str(key)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            check=True,
        )
    print(json.dumps({"lines": args.lines, **json.loads(out.stdout.strip().splitlines()[-1])}))


if __name__ == "__main__":
    main()
