"""Time ``voxmetrics.eer`` against SpeechBrain's ``EER`` on one large seeded score set.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_eer.py [--n 60000] [--n-tar 1000] [--repeat 5]
                                             [--sb-repeat 1] [--seed 0]

Draws ``n`` scores, ``n_tar`` mated ~ N(1.5, 1) and the rest non-mated ~ N(0, 1) (float64),
times ``voxmetrics.eer`` (best of ``repeat`` runs, time.perf_counter) and SpeechBrain's
``speechbrain.utils.metric_stats.EER`` on float64 tensors (a Python loop over ~2n thresholds,
so it is timed ``sb_repeat`` times only, once by default), checks that the two EERs agree to
1e-6 and prints both values, both times and the speed ratio. Exit status 1 when they disagree.
Not a test: pytest does not collect it (no ``test_`` prefix, work under ``__main__``).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]


def best_time(fn, repeat: int) -> tuple[float, float]:
    """Return (result of the last call, best wall time in seconds over ``repeat`` calls)."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60_000, help="total number of scores")
    parser.add_argument("--n-tar", type=int, default=1_000, help="number of mated scores")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of voxmetrics.eer")
    parser.add_argument("--sb-repeat", type=int, default=1, help="timed runs of SpeechBrain")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.n_tar < args.n:
        parser.error("need 0 < --n-tar < --n")

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from voxmetrics import eer, eer_result

    rng = np.random.default_rng(args.seed)
    tar = rng.normal(1.5, 1.0, args.n_tar)
    non = rng.normal(0.0, 1.0, args.n - args.n_tar)
    print(
        f"scores: {tar.size} target + {non.size} non-target = {args.n} (seed {args.seed}); "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )

    vm_eer, vm_time = best_time(lambda: eer(tar, non), args.repeat)
    print(f"voxmetrics.eer   EER = {vm_eer:.9f}   best of {args.repeat}: {vm_time * 1e3:10.2f} ms")

    try:
        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from speechbrain.utils.metric_stats import EER
    except ImportError as exc:
        print(f"SpeechBrain not available ({exc}); nothing to compare against.")
        return 0

    tar_t = torch.tensor(tar, dtype=torch.float64)
    non_t = torch.tensor(non, dtype=torch.float64)
    (sb_eer, sb_threshold), sb_time = best_time(lambda: EER(tar_t, non_t), args.sb_repeat)
    print(
        f"SpeechBrain EER  EER = {sb_eer:.9f}   best of {args.sb_repeat}: {sb_time * 1e3:10.2f} ms"
        f"   (torch {torch.__version__}, {torch.get_num_threads()} threads)"
    )

    vm_threshold = eer_result(tar, non).threshold
    print(f"thresholds: voxmetrics {vm_threshold!r}, SpeechBrain {sb_threshold!r}")
    diff = abs(vm_eer - sb_eer)
    print(f"|difference| = {diff:.3g} (tolerance 1e-6; SpeechBrain rounds its rates to float32)")
    print(f"speed-up: voxmetrics is {sb_time / vm_time:,.0f}x faster")
    if diff >= 1e-6:
        print("MISMATCH", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
