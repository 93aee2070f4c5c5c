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

With ``--compare`` it measures the Dask path against the in-memory one on the same matrix (one
that fits in memory, e.g. ``--trials 20000 --speakers 5000``): it writes the embeddings to an
NPZ + CSV file and runs, each in a child process, ``voxmetrics evaluate --embeddings FILE`` and
``voxmetrics evaluate --embeddings FILE --scheduler local --workers W --memory-limit M``,
``--repeat`` times each, alternating. A sampler in this process reads the CPU times (user +
sys) and resident memory of the child and of each of its descendants (``psutil``, every 20 ms):
the client, the forkserver and each worker, with each one's peak RSS against its limit. CPU of
a run is the larger of that sum and user + sys from ``os.wait4`` of the child (its own time
plus that of the descendants it reaped: spawned workers, but not those a forkserver forked). The
JSON outputs must be equal (``==`` on the parsed JSON; exit status 1 if not). ``--repo
PATH`` adds the Dask run of another checkout (e.g. the code before a change) to each round.

``--compare --scores 22024x4949 --chunks 8`` compares on a score matrix instead of embeddings
(the scale issue's case): it writes ``benchmarks/bench_scale.py``'s seeded float32 matrix as one
NPZ and as ``--chunks`` NPZ files of consecutive rows, and a 2,000 x 500 dev matrix
(``--dev``), and runs ``voxmetrics evaluate eval.npz --dev dev.npz`` in memory against
``voxmetrics evaluate CHUNK_FOLDER --dev dev.npz --scheduler local ...``. Both runs use
compiled modules (``compileall`` first, as ``bench_scale.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
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


class _TreeSampler:
    """CPU times and peak RSS of every descendant of ``pid``, sampled every 20 ms."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.cpu: dict[int, float] = {}
        self.peak: dict[int, int] = {}
        self.cmd: dict[int, str] = {}
        self.stop = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self) -> None:
        import psutil

        while not self.stop:
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            for p in procs:
                try:
                    with p.oneshot():
                        t = p.cpu_times()
                        rss = p.memory_info().rss
                        if p.pid not in self.cmd:
                            self.cmd[p.pid] = " ".join(p.cmdline())[-60:]
                except psutil.Error:
                    continue
                self.cpu[p.pid] = t.user + t.system  # own time only, not reaped children
                self.peak[p.pid] = max(self.peak.get(p.pid, 0), rss)
            time.sleep(0.02)

    def finish(self) -> None:
        self.stop = True
        self.thread.join()


def _run_child(cmd: list[str], out: Path, repo: Path) -> dict[str, object]:
    """Run ``cmd`` in ``repo`` (stdout to ``out``); wall, CPU (wait4 and sampled), peaks."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    t0 = time.perf_counter()
    with out.open("wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL, cwd=repo, env=env)
        sampler = _TreeSampler(proc.pid)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        sampler.finish()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit status {proc.returncode}")
    waited = ru.ru_utime + ru.ru_stime
    sampled = sampler.cpu.get(proc.pid, 0.0) + sum(
        c for pid, c in sampler.cpu.items() if pid != proc.pid
    )
    return {
        "wall": wall,
        # wait4 counts the descendants the child reaped (spawned workers); workers forked by a
        # forkserver are not its children: the sampled sum counts them
        "cpu": max(waited, sampled),
        "waited": waited,
        "maxrss_mb": ru.ru_maxrss / 1e3,
        "client_cpu": sampler.cpu.get(proc.pid, 0.0),
        "children": {
            pid: (sampler.cpu[pid], sampler.peak[pid] / 1e6, sampler.cmd.get(pid, ""))
            for pid in sampler.cpu
            if pid != proc.pid
        },
    }


def write_score_chunks(tmp: Path, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """bench_scale's eval matrix as one NPZ and as ``args.chunks`` NPZ chunks, and its dev
    matrix; the in-memory and the Dask commands (without the scheduler options)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scale import write_matrix

    t, n = (int(v) for v in args.scores.split("x"))
    dev_t, dev_n = (int(v) for v in args.dev.split("x"))
    nbytes = write_matrix(tmp / "eval.npz", t, n, seed=args.seed, prefix="")
    write_matrix(tmp / "dev.npz", dev_t, dev_n, seed=args.seed + 1, prefix="dev")
    chunks = tmp / "chunks"
    chunks.mkdir()
    with np.load(tmp / "eval.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    for i, rows in enumerate(np.array_split(np.arange(t), args.chunks)):
        part = {k: (v if k == "enrol_speakers" else v[rows]) for k, v in arrays.items()}
        np.savez(chunks / f"chunk{i:03d}.npz", **part)
    print(
        f"matrix {t:,} x {n:,} float32 = {nbytes / 1e9:.2f} GB in {args.chunks} NPZ chunks, "
        f"dev {dev_t:,} x {dev_n:,}; {args.workers} workers x {args.memory_limit}"
    )
    cmd = [sys.executable, "-m", "voxmetrics", "evaluate"]
    dev = ["--dev", str(tmp / "dev.npz")]
    return [*cmd, str(tmp / "eval.npz"), *dev], [*cmd, str(chunks), *dev]


def compare(args: argparse.Namespace) -> int:
    """In-memory ``evaluate`` vs ``evaluate --scheduler local`` on the same embeddings."""
    from voxmetrics.data.writers import write_embeddings

    # voxmetrics as installed: its modules compiled once, not from source by every process (a
    # checkout with PYTHONDONTWRITEBYTECODE=1 would otherwise compile them in the client and
    # again in the forkserver of the Dask run, once in the in-memory one), as bench_scale.py
    for repo in {Path(__file__).resolve().parents[1], *([Path(args.repo)] if args.repo else [])}:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(repo / "voxmetrics")],
            stdout=subprocess.DEVNULL,
            check=False,
        )
    print(f"load average {open('/proc/loadavg').read().strip()}")
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        dask = ["--scheduler", "local", "--workers", str(args.workers)]
        dask += ["--memory-limit", args.memory_limit]
        if args.scores:
            memory_cmd, dask_cmd = write_score_chunks(Path(tmp), args)
        else:
            es = synthetic(args.trials, args.speakers, args.dim, args.seed)
            cells = args.trials * args.speakers
            print(
                f"matrix {args.trials:,} x {args.speakers:,} float64 = {cells * 8 / 1e9:.2f} GB; "
                f"{args.workers} workers x {args.memory_limit}"
            )
            write_embeddings(es, Path(tmp) / "emb", format="npz")
            del es
            memory_cmd = [sys.executable, "-m", "voxmetrics", "evaluate"]
            memory_cmd += ["--embeddings", f"{tmp}/emb.npz", "--metadata", f"{tmp}/emb.csv"]
            dask_cmd = memory_cmd
        here = Path(__file__).resolve().parents[1]
        runs = [("memory", memory_cmd, here), ("dask", dask_cmd + dask, here)]
        if args.repo:
            runs.append(("dask-base", dask_cmd + dask, Path(args.repo).resolve()))
        results: dict[str, list[dict[str, object]]] = {name: [] for name, _, _ in runs}
        outs = {}
        for rep in range(args.repeat):
            for name, cmd, repo in runs:
                out = Path(tmp) / f"{name}{rep}.json"
                r = _run_child(cmd, out, repo)
                results[name].append(r)
                outs[name] = json.loads(out.read_text())
                line = (
                    f"{name:>9} run {rep + 1}: {r['wall']:7.2f} s wall  {r['cpu']:7.2f} s CPU "
                    f"(wait4 {r['waited']:.2f} s)  max RSS of the client {r['maxrss_mb']:.0f} MB"
                )
                print(line, flush=True)
                if name != "memory":
                    kids = r["children"]
                    own = sum(c for c, _, _ in kids.values())  # type: ignore[union-attr]
                    print(
                        f"         client {r['client_cpu']:.2f} s CPU; descendants (sampled) "
                        f"{own:.2f} s CPU"
                    )
                    for pid, (c, mb, cmd) in sorted(kids.items()):  # type: ignore[union-attr]
                        print(f"           pid {pid}: {c:6.2f} s CPU, peak RSS {mb:5.0f} MB  {cmd}")
        best = {k: min(float(r["cpu"]) for r in v) for k, v in results.items()}
        for name, _, repo in runs[1:]:
            same = outs["memory"] == outs[name]
            print(
                f"best CPU: in memory {best['memory']:.2f} s, {name} ({repo}) {best[name]:.2f} s"
                f" = {best[name] / best['memory']:.2f}x; JSON equal: {same}"
            )
            if not same:
                status = 1
                for key in outs["memory"]:
                    if outs["memory"][key] != outs[name].get(key):
                        print(f"  differs: {key}")
    print(f"load average {open('/proc/loadavg').read().strip()}")
    return status


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=30000)
    ap.add_argument("--speakers", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=192)
    ap.add_argument("--memory-limit", default="400MB")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--subsample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--compare",
        action="store_true",
        help="CPU of evaluate --scheduler local vs the in-memory evaluate (child processes)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs of each with --compare")
    ap.add_argument(
        "--scores", help="with --compare, a T x N score matrix (e.g. 22024x4949) in NPZ chunks"
    )
    ap.add_argument("--chunks", type=int, default=8, help="NPZ chunks of --scores")
    ap.add_argument("--dev", default="2000x500", help="dev matrix of --scores")
    ap.add_argument(
        "--repo", help="with --compare, also run the Dask path of this checkout (a baseline)"
    )
    args = ap.parse_args()
    if args.compare:
        return compare(args)

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
