"""Time voxmetrics' minDCF / DET / APE / d' against SpeechBrain's ``minDCF``.

Usage: ``python benchmarks/bench_dcf.py [--n-tar 22024] [--n-non 10000000] [--sb-n 6000]``.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def main() -> int:
    from voxmetrics.metrics.dcf import dcf, verification

    ap = argparse.ArgumentParser()
    ap.add_argument("--n-tar", type=int, default=22_024)
    ap.add_argument("--n-non", type=int, default=10_000_000)
    ap.add_argument("--sb-n", type=int, default=6_000, help="pool size of the SpeechBrain check")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tar = rng.normal(1.5, 1, args.n_tar)
    non = rng.normal(0, 1, args.n_non)
    print(f"Python {platform.python_version()}, numpy {np.__version__}")
    r, t = best_of(lambda: dcf(tar, non), args.repeat)
    print(f"dcf          {args.n_tar:,} tar + {args.n_non:,} non: minDCF {r.to_dict()}  "
          f"best of {args.repeat}: {1000 * t:9.1f} ms")  # fmt: skip
    v, t = best_of(lambda: verification(tar, non, scores_are_llrs=True), args.repeat)
    print(f"verification (dcf + DET + APE + d'):                best of {args.repeat}: "
          f"{1000 * t:9.1f} ms; {v.det.n_points:,} operating points, "
          f"{v.det.rocch_pmiss.size} hull vertices")  # fmt: skip
    try:
        import torch
        from speechbrain.utils.metric_stats import minDCF
    except ImportError:
        print("SpeechBrain not installed: no comparison")
        return 0
    n_tar = max(1, args.sb_n // 10)
    tar, non = tar[:n_tar], non[: args.sb_n - n_tar]
    ours, t_ours = best_of(lambda: dcf(tar, non, p_targets=0.01), args.repeat)
    (sb, _), t_sb = best_of(lambda: minDCF(torch.tensor(tar), torch.tensor(non)), 1)
    sb_norm = min(sb, 0.99) / 0.01  # SpeechBrain: unnormalised, never "accept all"
    print(f"{n_tar:,} tar + {non.size:,} non, P_target 0.01: voxmetrics "
          f"{ours.min_dcf[0]:.9f} in {1000 * t_ours:.2f} ms; SpeechBrain (normalised) "
          f"{sb_norm:.9f} in {1000 * t_sb:.1f} ms")  # fmt: skip
    ok = abs(ours.min_dcf[0] - sb_norm) < 1e-4
    print("agree to 1e-4" if ok else "DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
