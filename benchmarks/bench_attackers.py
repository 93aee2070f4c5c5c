"""The attacker sweep's CPU time: every back-end of one system, and AS-norm at scale.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_attackers.py [--embeddings 10000] [--dim 192] [--seed 0]
                                                   [--asnorm 1000x10000] [--cohort 5000]

1. **The sweep.** Seeded embeddings of one anonymised system (``--embeddings`` in all, of
   dimension ``--dim``; speakers in a few dimensions, a large nuisance elsewhere, as the tests'
   attack data) with their paired originals: a ``train`` split (40 %: speakers of 10
   utterances), dev and eval (30 % each: speakers of 3 enrolment and 12 trial utterances).
   ``condition_attackers`` tries every back-end (cosine, lda, wccn, plda, snorm, asnorm,
   procrustes, fusion, max), scores dev and eval and chooses the strongest on dev; its CPU time
   (user + system of this process) is printed, then each back-end's alone. Target: within 10
   CPU s. The same without the ``train`` split (trained on dev: every trained back-end fitted
   5 more times for the cross-fitted dev scores) is printed after it.
2. **AS-norm at scale.** A ``--asnorm`` T x N matrix (trials x enrolled identities, one
   enrolment utterance each) normalised with a ``--cohort`` cohort (top 300 per side). Target:
   seconds.

The load average is printed (the machine may be shared). Not a test: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from voxmetrics.analysis.attackers import condition_attackers
from voxmetrics.data import EmbeddingSet
from voxmetrics.embeddings.backends import BACKENDS, NormBackend


def attack_data(n: int, d: int, seed: int, *, train: bool = True) -> tuple[EmbeddingSet, ...]:
    """Anonymised and original embeddings of ``n`` utterances (train / dev / eval)."""
    rng = np.random.default_rng(seed)
    k = 16  # speaker dimensions
    rows, meta = [], []
    shares = (
        (("train", 0.4), ("dev", 0.3), ("eval", 0.3)) if train else (("dev", 0.5), ("eval", 0.5))
    )
    for split, share in shares:
        per = 10 if split == "train" else 15
        for s in range(int(n * share) // per):
            centre = np.zeros(d)
            centre[:k] = rng.standard_normal(k)
            layout = [("trial", 10)] if split == "train" else [("enrol", 3), ("trial", 12)]
            for role, count in layout:
                for i in range(count):
                    rows.append(centre + 0.3 * rng.standard_normal(d))
                    meta.append((f"{split}{s}_{role}{i}", f"{split}{s}", role, split))
    original = np.array(rows)
    anonymised = original + np.concatenate(
        [np.zeros((len(rows), k)), 2.0 * rng.standard_normal((len(rows), d - k))], axis=1
    )
    frame = pd.DataFrame(meta, columns=["utt_id", "speaker", "role", "split"])
    return (
        EmbeddingSet.from_arrays(anonymised, frame, source="anonymised"),
        EmbeddingSet.from_arrays(original, frame.copy(), source="original"),
    )


def cpu() -> float:
    """User + system CPU seconds of this process (all its threads)."""
    t = os.times()
    return t.user + t.system


def sweep(n: int, d: int, seed: int, train: bool) -> None:
    anon, orig = attack_data(n, d, seed, train=train)
    label = "with a train split" if train else "trained on dev (cross-fitted)"
    print(f"\n{len(anon.meta):,} embeddings of dimension {d}, {label}:")
    c0, w0 = cpu(), time.perf_counter()
    result = condition_attackers(anon, originals=orig)
    c1, w1 = cpu(), time.perf_counter()
    print(f"  every back-end: {c1 - c0:.2f} CPU s ({w1 - w0:.2f} s wall); chosen {result.chosen}")
    print(result.frame().to_string(index=False))
    for name in BACKENDS:
        c0 = cpu()
        condition_attackers(anon, originals=orig, backends=[name])
        print(f"  {name:<11} alone: {cpu() - c0:6.2f} CPU s")


def asnorm(t: int, n: int, cohort: int, d: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    enrol, trials = rng.standard_normal((n, d)), rng.standard_normal((t, d))
    speakers = np.array([f"s{j:06d}" for j in range(n)])
    backend = NormBackend(rng.standard_normal((cohort, d)), top_n=300)
    c0, w0 = cpu(), time.perf_counter()
    _, scores = backend(enrol, speakers, trials)
    c1, w1 = cpu(), time.perf_counter()
    print(
        f"\nAS-norm of a {t:,} x {n:,} matrix, cohort {cohort:,} (top 300): "
        f"{c1 - c0:.2f} CPU s ({w1 - w0:.2f} s wall), {scores.shape}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--embeddings", type=int, default=10_000)
    p.add_argument("--dim", type=int, default=192)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--asnorm", default="1000x10000")
    p.add_argument("--cohort", type=int, default=5_000)
    args = p.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    sweep(args.embeddings, args.dim, args.seed, train=True)
    sweep(args.embeddings, args.dim, args.seed, train=False)
    t, n = (int(x) for x in args.asnorm.lower().split("x"))
    asnorm(t, n, args.cohort, args.dim, args.seed)
    print(f"\nload {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
