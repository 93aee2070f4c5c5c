"""Blockwise evaluation on Dask of a score matrix larger than the workers' memory.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_dask.py [--trials 30000] [--speakers 5000] [--dim 192]
                                              [--memory-limit 400MB] [--workers 2]
                                              [--subsample 2000] [--seed 0]

It draws a seeded synthetic embedding set (``--speakers`` speakers with one enrolment and about
``trials / speakers`` trial utterances each, ``--dim``-dimensional, float32), whose eval score
matrix (trials x speakers, float64 as cosine scores are) is several times the memory limit of
each worker, and evaluates it with :func:`voxmetrics.distributed.evaluate_blockwise` on a local
cluster of ``--workers`` single-threaded worker processes, each with ``--memory-limit`` (Dask
pauses a worker at 80 % of it and restarts it at 95 %). It prints the wall time, each worker's
peak resident memory (sampled every 5 ms on the worker), the matrix size, and checks equality
with the in-memory :func:`voxmetrics.report.evaluate` on the first ``--subsample`` trials (the
same blockwise path on that subsample against the in-memory one; exit status 1 if any number
differs: singling out, the verification block and the chance levels included). Not a test:
pytest does not collect it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from voxmetrics.data import EmbeddingSet
from voxmetrics.distributed import dask_client, evaluate_blockwise
from voxmetrics.report import evaluate


def synthetic(trials: int, speakers: int, dim: int, seed: int) -> EmbeddingSet:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((speakers, dim)).astype(np.float32)
    owner = np.concatenate([np.arange(speakers), rng.integers(0, speakers, trials)])
    emb = centres[owner] + 2.0 * rng.standard_normal((owner.size, dim)).astype(np.float32)
    role = np.where(np.arange(owner.size) < speakers, "enrol", "trial")
    meta = pd.DataFrame(
        {
            "utt_id": [f"u{i}" for i in range(owner.size)],
            "speaker": [f"s{j}" for j in owner],
            "role": role,
            "split": "eval",
        }
    )
    return EmbeddingSet.from_arrays(emb, meta, source="synthetic")


def subsample(es: EmbeddingSet, speakers: int, n_trials: int) -> EmbeddingSet:
    keep = np.arange(len(es.meta)) < speakers + n_trials
    return EmbeddingSet.from_arrays(
        es.embeddings[keep], es.meta[keep].reset_index(drop=True), source="subsample"
    )


def start_sampler(dask_worker) -> None:
    """Sample this worker's resident memory every 5 ms (``ru_maxrss`` would not do: it keeps
    the client's size from the fork that starts a worker process)."""
    import threading

    import psutil

    def loop() -> None:
        proc = psutil.Process()
        while not dask_worker.vxm_stop:
            dask_worker.vxm_peak = max(dask_worker.vxm_peak, proc.memory_info().rss)
            time.sleep(0.005)

    dask_worker.vxm_peak, dask_worker.vxm_stop = 0, False
    threading.Thread(target=loop, daemon=True).start()


def stop_sampler(dask_worker) -> float:
    dask_worker.vxm_stop = True
    return dask_worker.vxm_peak / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=30000)
    ap.add_argument("--speakers", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=192)
    ap.add_argument("--memory-limit", default="400MB")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--subsample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from dask.utils import parse_bytes

    es = synthetic(args.trials, args.speakers, args.dim, args.seed)
    matrix_bytes = args.trials * args.speakers * 8
    limit = parse_bytes(args.memory_limit)
    print(f"load average {os.getloadavg()}")
    print(
        f"matrix {args.trials:,} x {args.speakers:,} float64 = {matrix_bytes / 1e9:.2f} GB; "
        f"{args.workers} workers x {args.memory_limit} "
        f"(matrix / one worker's limit = {matrix_bytes / limit:.1f}, "
        f"/ all workers' = {matrix_bytes / (limit * args.workers):.1f})"
    )
    status = 0
    with dask_client("local", n_workers=args.workers, memory_limit=args.memory_limit) as client:
        client.run(start_sampler)
        t0 = time.perf_counter()
        report = evaluate_blockwise(es, client=client)
        wall = time.perf_counter() - t0
        peaks = client.run(stop_sampler)
        print(f"blockwise evaluate: {wall:.1f} s")
        for worker, mb in sorted(peaks.items()):
            print(f"  worker {worker}: peak RSS {mb:.0f} MB (limit {limit / 1e6:.0f} MB)")
        b = report.baseline
        print(
            f"  eer {b.eer:.6f}  eer_rocch {b.eer_rocch:.6f}  min_cllr {b.min_cllr:.6f}  "
            f"linkability {b.linkability:.6f}  d_ece {report.zebra.d_ece:.6f}"
        )
        print(
            f"  singling_out {report.singling_out.value:.6f}  d_prime "
            f"{report.verification.d_prime:.6f}  min_dcf(0.01) "
            f"{report.verification.dcf.to_dict()['0.01']['min_dcf']:.6f}  chance linkability "
            f"{report.chance.values['linkability']:.6f}"
        )
        small = subsample(es, args.speakers, args.subsample)
        ref = evaluate(small.score_matrix("eval"), embeddings=small).to_dict()
        got = evaluate_blockwise(small, client=client).to_dict()
        same = ref == got  # every number of the JSON, singling out and verification included
        print(f"subsample of {args.subsample:,} trials: blockwise == in-memory: {same}")
        status = 0 if same else 1
    print(f"load average {os.getloadavg()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
