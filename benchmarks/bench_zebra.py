"""Time ``voxmetrics.zebra`` and ``ece_curves`` on ten million pooled scores.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_zebra.py [--n-tar 100000] [--n-non 9900000]
                                               [--repeat 3] [--seed 0] [--skip-ece]

Draws seeded float64 scores, ``n_tar`` mated ~ N(2, 1) and ``n_non`` non-mated ~ N(0, 1) (the
pools of a 100,000 x 100 score matrix by default), then

1. times ``zebra(tar, non)`` (best of ``repeat`` runs, ``time.perf_counter``) and measures its
   peak traced memory in one more run under ``tracemalloc`` (numpy reports its buffers to
   tracemalloc, so this is the extra memory the call allocates, inputs excluded);
2. times ``ece_curves(tar, non)`` once (201 priors; it evaluates the ECE of all n scores at
   each prior) and, for comparison, the same minimum-ECE curve computed from the distinct PAV
   LLRs and their counts (a PAV step function has far fewer distinct values than scores), and
   checks that the two curves agree.

Goal: ``zebra`` under 10 s. Not a test: pytest does not collect it (no ``test_`` prefix, work
under ``__main__``).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

# run from a checkout without installing: make the repository root importable
REPO_ROOT = Path(__file__).resolve().parents[1]


def best_time(fn, repeat: int) -> tuple[object, float]:
    """Return (result of the last call, best wall time in seconds over ``repeat`` calls)."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def peak_memory(fn) -> float:
    """Peak memory (MiB) traced by tracemalloc while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def ece_from_counts(tar_llr, non_llr, lam):
    """Minimum ECE from the distinct LLR values and their counts (same formula, fewer terms)."""
    tv, tc = np.unique(tar_llr, return_counts=True)
    nv, nc = np.unique(non_llr, return_counts=True)
    pi = 1.0 / (1.0 + np.exp(-lam))
    c_tar = np.logaddexp(0.0, -(tv[None, :] + lam[:, None])) @ tc / tc.sum()
    c_non = np.logaddexp(0.0, nv[None, :] + lam[:, None]) @ nc / nc.sum()
    return (pi * c_tar + (1.0 - pi) * c_non) / math.log(2.0), tv.size + nv.size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-tar", type=int, default=100_000, help="mated scores")
    parser.add_argument("--n-non", type=int, default=9_900_000, help="non-mated scores")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of zebra")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-ece", action="store_true", help="do not time ece_curves")
    args = parser.parse_args(argv)
    if args.n_tar < 1 or args.n_non < 1:
        parser.error("need --n-tar >= 1 and --n-non >= 1")

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from voxmetrics import ece_curves, pav_llrs, zebra

    rng = np.random.default_rng(args.seed)
    tar = rng.normal(2.0, 1.0, args.n_tar)
    non = rng.normal(0.0, 1.0, args.n_non)
    n = tar.size + non.size
    print(
        f"scores: {tar.size:,} target + {non.size:,} non-target = {n:,} (seed {args.seed}); "
        f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs"
    )

    result, t_zebra = best_time(lambda: zebra(tar, non), args.repeat)
    mem = peak_memory(lambda: zebra(tar, non))
    print(
        f"zebra        best of {args.repeat}: {t_zebra:8.2f} s   peak traced memory "
        f"{mem:,.0f} MiB ({mem * 2**20 / n:.0f} bytes/score)   goal < 10 s: "
        f"{'met' if t_zebra < 10 else 'NOT met'}"
    )
    print(
        f"             D_ECE = {result.d_ece:.6f} bits, log10 l = {result.log10_l:.4f}, "
        f"tag {result.tag} ({'mated' if result.worst_is_mated else 'non-mated'} "
        f"score {result.worst_score:.4f})"
    )
    if args.skip_ece:
        return 0

    start = time.perf_counter()
    curves = ece_curves(tar, non)
    t_ece = time.perf_counter() - start
    lam = curves.prior_log_odds
    print(
        f"ece_curves   1 run:       {t_ece:8.2f} s   ({lam.size} priors x {n:,} scores; "
        f"{t_ece / lam.size * 1e3:.0f} ms per prior)"
    )
    start = time.perf_counter()
    t_llr, n_llr = pav_llrs(tar, non)
    t_pav = time.perf_counter() - start
    start = time.perf_counter()
    fast, distinct = ece_from_counts(t_llr, n_llr, lam)
    t_fast = time.perf_counter() - start
    diff = float(np.max(np.abs(fast - curves.minimum)))
    print(
        f"counts path  PAV {t_pav:.2f} s + ECE {t_fast:.3f} s over {distinct:,} distinct "
        f"LLR values; max |difference| to ece_curves.minimum = {diff:.2e} bits"
    )
    return 0 if diff < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
