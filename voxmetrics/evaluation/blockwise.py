"""The blockwise executor: evaluation on a Dask cluster, never holding the T x N score matrix.

It produces the intermediate products of :mod:`voxmetrics.evaluation.steps` from per-block
summaries, and the step the in-memory :func:`~voxmetrics.evaluation.engine.evaluate` shares
turns them into the report: every metric of ``evaluate``, wired once.

The trials are cut into row blocks of about 4 M scores; a task scores one block (from the
embeddings, or by reading it from score chunk files or a Zarr store:
:mod:`voxmetrics.evaluation.sources`) and returns small summaries:

* pass 1 (row-wise): the mated score and the target rank of every trial (SRD, linkability and
  its curve), the per-trial LID under a calibration learned in memory on dev, the block's
  sum of ln(1 + e^s) (Cllr) and its share of the chance levels
  (:func:`~voxmetrics.metrics.chance.chance_block` at columns drawn on the client);
* pass 2 (pooled): for the non-mated scores, the counts below and at each distinct mated score
  and the lowest score of each cell between them. Added over blocks these are exactly the run
  counts of :class:`~voxmetrics.metrics.pools.SortedPools`, from which EER, ROCCH-EER, min Cllr,
  ZEBRA, minDCF and the DET and APE curves follow;
* the EER operating point (SpeechBrain's scan, whose thresholds include non-mated scores and
  midpoints) needs the distinct pooled scores around the sign change of FAR - FRR: a third pass
  fetches them, with their multiplicities, for a value range fixed by the counts (first
  narrowed by histogram passes when more than ``WINDOW_CAP`` scores lie in it);
* d' needs two sums of the non-mated scores (the mean, then the squared deviations from it):
  they ride passes 1 and 2 when the verification part is asked for; for LLR scores, the
  actual DCFs take one pass of counts at the Bayes thresholds;
* singling out (from embeddings) runs blocks of predicates (enrolment profiles) against every
  trial embedding (:func:`~voxmetrics.metrics.legal.singling_out_isolations`), which each
  worker holds once as float64: T x d x 8 bytes.

Every number equals the in-memory path bit for bit: blocks are cut on the same row boundaries as
the in-memory loops (score chunks of ``SCORE_CHUNK_ROWS`` rows, float sums over
:func:`~voxmetrics.metrics.ranks.row_blocks`), and all counts are integers; only the DET curve's
``n_points`` is an upper bound (see :func:`evaluate_blockwise`). Memory per task is a few
times one block; each task carries its block's trial embeddings (or file names), so a task of a
lost worker is rerun elsewhere. The client holds O(T + K) numbers (K distinct mated scores).

Finished blocks are reduced on the client as they arrive; a failed task is retried by Dask
(``retries``) without recomputing the others. Needs the ``dask`` extra
(``pip install "voxmetrics[dask]"``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import uuid
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lru import LRU
from voxmetrics._types import Progress
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import check_disjoint_speakers
from voxmetrics.data.utility import Utility
from voxmetrics.errors import BadInputResult, VoxMetricsInputError, raise_bad_input
from voxmetrics.errors import returning_bad_input as _run_task
from voxmetrics.evaluation.options import ALL_PARTS, EvaluationOptions, check_parts
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.sources import (
    BlockSource,
    ChunkedScores,
    EmbeddingBlocks,
    ZarrScores,
    block_scores,
)
from voxmetrics.evaluation.steps import (
    Products,
    assemble,
    singling_out_of,
    subset_reports,
)
from voxmetrics.metrics.baseline import softplus_sum
from voxmetrics.metrics.chance import (
    chance_block,
    chance_columns,
    chance_levels_from_blocks,
    lid_from_blocks,
)
from voxmetrics.metrics.legal import SinglingOutResult
from voxmetrics.metrics.lid import LIDCalibration, calibrate_lid
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import (
    TIES,
    EERPoint,
    RunCounts,
    SortedPools,
    Ties,
    eer_candidates,
    non_block_sums,
)
from voxmetrics.metrics.ranks import row_blocks

__all__ = [
    "BlockSource",
    "ChunkedScores",
    "EmbeddingBlocks",
    "ZarrScores",
    "dask_client",
    "evaluate_blockwise",
]

WINDOW_CAP = 20_000_000
"""Most pooled scores the EER window fetches; a wider range is first narrowed by histograms."""
_WINDOW_MARGIN = 1 << 14
"""Pooled positions first fetched on either side of where FAR - FRR changes sign."""
_BINS = 1024
"""Bins of a histogram pass that narrows the EER window when it holds too many scores."""


# --------------------------------------------------------------------------- tasks


def _task_rows(piece: tuple[Any, ...], shared: Any, arg: Any) -> dict[str, Any]:
    """Pass 1: mated scores, ranks, Cllr sum, LID and chance-level work of a block.

    ``arg`` is (LID calibration or None, tie rule, the block's chance columns, whether to sum
    the non-mated scores for d').
    """
    cal, ties, columns, sums = arg
    s, t = _block(piece, shared)
    mated = s[np.arange(s.shape[0]), t]
    out: dict[str, Any] = {
        "tar": mated,
        "rank": (s >= mated[:, None]).sum(axis=1).astype(np.int64),  # ties count against
        "rank_gt": 1 + (s > mated[:, None]).sum(axis=1).astype(np.int64),  # ties to the target
        "softplus": softplus_sum(s),
    }
    # with a calibration, the chance block also holds each row's LID (one pass for both)
    out["chance"] = chance_block(s, columns, calibration=cal, ties=ties, targets=t)
    if sums:  # d': the non-mated scores' sum (their mean), as in memory
        out["non_sum"] = non_block_sums(s, t, math.nan)[0]
    return out


def _nonmated_sorted(s: NDArray[np.floating], t: NDArray[np.intp]) -> NDArray[np.floating]:
    mask = np.ones(s.shape, dtype=bool)
    mask[np.arange(s.shape[0]), t] = False
    non = s[mask]
    non.sort()
    return non


def _task_pools(
    piece: tuple[Any, ...], shared: Any, values: Any, *, mean: float | None = None
) -> dict[str, Any]:
    """Pass 2: non-mated counts below / up to each distinct mated score, and cell minima.

    With the non-mated ``mean`` (pass 1's sums), also their squared deviations from it (d').
    """
    s, t = _block(piece, shared)
    sq = None if mean is None else non_block_sums(s, t, mean)[1]
    non = _nonmated_sorted(s, t)
    lo = np.searchsorted(non, values, side="left")
    hi = np.searchsorted(non, values, side="right")
    starts = np.concatenate([[0], hi])
    ends = np.concatenate([lo, [non.size]])
    first = np.full(starts.size, np.inf)
    last = np.full(starts.size, -np.inf)
    has = ends > starts
    first[has] = non[starts[has]]
    last[has] = non[ends[has] - 1]
    n_distinct = int(np.count_nonzero(non[1:] != non[:-1])) + 1 if non.size else 0
    return {
        "n_distinct": n_distinct - int(np.count_nonzero(hi > lo)),  # not at a mated score
        "lo": lo.astype(np.int64),
        "hi": hi.astype(np.int64),
        "first": first,
        "last": last,
        "min": float(non[0]) if non.size else np.inf,
        "max": float(non[-1]) if non.size else -np.inf,
        "non_sq": sq,
    }


def _task_window(piece: tuple[Any, ...], shared: Any, bounds: Any) -> dict[str, Any]:
    """Pass 3: distinct non-mated scores in [low, high] with their counts."""
    low, high = np.float64(bounds[0]), np.float64(bounds[1])  # compared as float64, exactly
    s, t = _block(piece, shared)
    keep = np.ones(s.shape, dtype=bool)
    keep[np.arange(s.shape[0]), t] = False
    keep &= (s >= low) & (s <= high)
    u, c = np.unique(s[keep], return_counts=True)  # only the range is sorted, not the block
    return {"u": u, "c": c.astype(np.int64)}


def _task_histogram(piece: tuple[Any, ...], shared: Any, edges: Any) -> NDArray[np.int64]:
    """Refining pass: non-mated counts in the bins [e_i, e_i+1) of ``edges`` (last bin closed)."""
    s, t = _block(piece, shared)
    keep = np.ones(s.shape, dtype=bool)
    keep[np.arange(s.shape[0]), t] = False
    return _bin_counts(s[keep], edges)


def _bin_counts(x: NDArray[np.floating], edges: NDArray[np.float64]) -> NDArray[np.int64]:
    """Counts of ``x`` in [e_i, e_i+1) for each bin, the last bin closed; outside ignored."""
    x = x[(x >= edges[0]) & (x <= edges[-1])]
    idx = np.minimum(np.searchsorted(edges, x, side="right") - 1, edges.size - 2)
    return np.bincount(idx, minlength=edges.size - 1).astype(np.int64)


def _task_count_le(piece: tuple[Any, ...], shared: Any, x: Any) -> NDArray[np.int64]:
    """Non-mated scores <= each float64 threshold ``x`` in one block."""
    non = _nonmated_sorted(*_block(piece, shared)).astype(np.float64)
    return np.searchsorted(non, np.asarray(x, dtype=np.float64), side="right").astype(np.int64)


def _task_sums(piece: tuple[Any, ...], shared: Any, c: float) -> tuple[float, float]:
    """Sum of a block's non-mated scores and of their squared deviations from ``c``."""
    scores, targets = _block(piece, shared)
    return non_block_sums(scores, targets, c)  # as in memory


def _task_locate(piece: tuple[Any, ...], shared: Any, value: Any) -> int:
    """Index (block-local, row-major without the mated cells) of the first non-mated == value."""
    s, t = _block(piece, shared)
    hit = s == value
    hit[np.arange(s.shape[0]), t] = False
    idx = np.flatnonzero(hit)
    if idx.size == 0:
        return -1
    r, j = divmod(int(idx[0]), s.shape[1])
    return r * (s.shape[1] - 1) + j - int(j > t[r])


# --------------------------------------------------------------------------- worker cache

_CACHE: LRU[tuple[str, int], tuple[NDArray[Any], NDArray[np.intp]]] = LRU()
"""A worker's scored blocks of the runs under way, by (run token, block index): the passes after
the first take a block's scores from here instead of scoring (or reading) it again. Bounded by
memory, not by count (:func:`_room_for` drops other runs' blocks, least recently used first)."""
_CACHE_FRACTION = 0.5
"""A block is kept while the worker's resident memory with it stays under this fraction of its
memory limit (Dask pauses a worker at 80 %), or of the memory available when it has none."""


@dataclass(frozen=True)
class _Piece:
    """A block's piece (:meth:`BlockSource.pieces`) with its key in the workers' caches."""

    key: tuple[str, int]
    """(run token, block index)."""
    piece: tuple[Any, ...]


def _block(piece: _Piece | tuple[Any, ...], shared: Any) -> tuple[NDArray[Any], Any]:
    """The block's scores and targets: from this worker's cache, else scored (and kept).

    The cached arrays are those :func:`block_scores` returned (made read-only), so every pass
    computes on the same floats as the first: the result is the same whether a block was
    cached, dropped for room, or its task moved to another worker.
    """
    if not isinstance(piece, _Piece):
        return block_scores(piece, shared)
    hit = _CACHE.get(piece.key)
    if hit is not None:
        return hit
    s, t = block_scores(piece.piece, shared)
    if _room_for(s.nbytes + t.nbytes, piece.key[0]):
        s.setflags(write=False)
        _CACHE.put(piece.key, (s, t))
    return s, t


def _room_for(nbytes: int, token: str) -> bool:
    """Whether ``nbytes`` more fit in this worker's cache (other runs' blocks dropped first)."""
    import psutil

    limit = None
    with contextlib.suppress(ImportError, ValueError, AttributeError):  # not on a worker
        from distributed import get_worker

        limit = get_worker().memory_manager.memory_limit
    budget = _CACHE_FRACTION * (limit or psutil.virtual_memory().available)
    rss = psutil.Process().memory_info().rss
    for key in [k for k in _CACHE.keys() if k[0] != token]:  # a run that never dropped its blocks
        if rss + nbytes <= budget:
            break
        dropped = _CACHE.pop(key)
        if dropped is not None:  # (unless another task of this worker dropped it meanwhile)
            rss -= dropped[0].nbytes + dropped[1].nbytes
    return rss + nbytes <= budget


def _drop_cache(token: str) -> int:
    """Drop a run's blocks from this worker's cache (run on every worker at the end)."""
    keys = [k for k in _CACHE.keys() if k[0] == token]
    return sum(_CACHE.pop(k) is not None for k in keys)


def _run_block(fn: Callable[..., Any], piece: _Piece, *args: Any) -> Any:
    """:func:`_run_task` of a block's task, with the address of the worker that ran it."""
    value = _run_task(fn, piece, *args)
    if isinstance(value, BadInputResult):
        return value
    where = None
    with contextlib.suppress(ImportError, ValueError):  # not on a worker
        from distributed import get_worker

        where = str(get_worker().address)
    return value, where


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def dask_client(
    scheduler: Any = "local",
    *,
    n_workers: int = 2,
    memory_limit: str | int | None = None,
    processes: bool = True,
) -> Iterator[Any]:
    """A ``dask.distributed`` client for ``scheduler``.

    ``"local"`` starts a local cluster, an address (``"tcp://host:8786"``) connects to a running
    scheduler, and an existing ``Client`` is used as is.

    The local cluster has ``n_workers`` single-threaded workers with ``memory_limit`` each
    (Dask's default when None) and is closed on exit. Its worker processes are forked from a
    forkserver that imported the tasks' code once (where there is one and Dask's start method
    is its default), and it runs without the dashboard's profiler and monitors
    (:func:`_local_cluster_settings`). A script that starts one must guard its entry point
    (``if __name__ == "__main__":``), as with Dask's default start method.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise VoxMetricsInputError(
            "blockwise evaluation needs Dask: pip install 'voxmetrics[dask]' (dask[distributed])."
        ) from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler == "local":
        with (
            _local_cluster_settings(processes),
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=processes,
                memory_limit=memory_limit if memory_limit is not None else "auto",
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = Client(str(scheduler), timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc}); give its "
            "address as tcp://HOST:PORT, or 'local' for a cluster on this machine."
        ) from None
    with client:
        yield client


_WORKER_IMPORTS = ("distributed", "numpy", "voxmetrics.evaluation.blockwise")
"""What a local cluster's worker processes import before they start (once, in the forkserver).

Not pandas nor SciPy's optimize, special and sparse (about 1 s together): the tasks never use
them (a Parquet chunk's reader imports pandas where it runs)."""

_QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.scheduler.work-stealing": False,
}
"""Dask's settings for a local cluster without a dashboard: no statistical profiler sampling
every worker every 10 ms, the event loops' watchdog and the system monitor (the dashboard's
plots) at 1 and 2 s instead of 20 and 500 ms, and no work stealing (a block's later tasks go
to the worker that holds its scores). Their callbacks cost about 13 % of a core on 2 idle
workers (client and workers together), 2 % with these settings. The memory monitor, which
pauses and restarts workers at their limit, keeps its 100 ms."""


@contextlib.contextmanager
def _local_cluster_settings(processes: bool) -> Iterator[None]:
    """:data:`_QUIET_CLUSTER`, and worker processes forked from one server (a forkserver).

    Dask's default start method, spawn, starts every worker as a new interpreter that imports
    Dask, NumPy and VoxMetrics itself: seconds of CPU per worker, on every run. A
    forkserver imports them once and forks each worker from itself (never from this process,
    whose threads a fork would copy in whatever state they are). Spawn is kept where there is
    no forkserver (Windows) or Dask's configuration names another start method.
    """
    import multiprocessing

    import dask

    settings: dict[str, Any] = dict(_QUIET_CLUSTER)
    key = "distributed.worker.multiprocessing-method"
    forkserver = (
        processes
        and "forkserver" in multiprocessing.get_all_start_methods()
        and dask.config.get(key) == "spawn"
    )
    if forkserver:
        settings[key] = "forkserver"
    with dask.config.set(settings):
        if forkserver:
            from distributed.utils import get_mp_context

            get_mp_context().set_forkserver_preload(list(_WORKER_IMPORTS))  # after Dask's list
        yield


class _Runner:
    """Maps one task over every block, reducing results as they arrive, with progress."""

    def __init__(
        self,
        client: Any,
        source: BlockSource,
        blocks: list[slice],
        progress: Progress | None,
        retries: int,
    ) -> None:
        self.client = client
        self.blocks = blocks
        self.retries = retries
        self.progress = progress
        # each block's piece travels inside its tasks (not scattered): a task of a lost worker
        # is then rerun elsewhere from its own description; scattered data would be lost too.
        # The worker that scored a block keeps its scores while they fit (_block) and is asked
        # to run the block's later tasks (anywhere else the block is scored again, the same)
        self.token = uuid.uuid4().hex
        self.pieces = [_Piece((self.token, i), p) for i, p in enumerate(source.pieces(blocks))]
        self.where: list[str | None] = [None] * len(self.pieces)
        shared = source.shared()
        self.shared = None if shared is None else client.scatter(shared, broadcast=True, hash=False)
        self.fraction = 0.0

    def run(
        self,
        fn: Callable[..., Any],
        arg: Any,
        label: str,
        weight: tuple[float, float],
        *,
        per_block: bool = False,
    ) -> list[Any]:
        """Results of ``fn(piece, shared, arg)`` for every block, in block order.

        With ``per_block``, ``arg`` is a list: block i gets ``arg[i]``.
        """
        if isinstance(arg, np.ndarray) and arg.size > 100_000:
            arg = self.client.scatter(arg, broadcast=True, hash=False)
        args = arg if per_block else [arg] * len(self.pieces)
        futures = [
            self.client.submit(
                _run_block,
                fn,
                p,
                self.shared,
                a,
                retries=self.retries,
                pure=False,
                **({} if w is None else {"workers": [w], "allow_other_workers": True}),
            )
            for p, a, w in zip(self.pieces, args, self.where, strict=True)
        ]
        out = _gather_in_order(futures, label, weight, self)
        self.where = [w for _, w in out]
        return [value for value, _ in out]

    def close(self) -> None:
        """Drop this run's blocks from the workers' caches."""
        with contextlib.suppress(Exception):  # a worker gone or the client closing: nothing held
            self.client.run(_drop_cache, self.token)

    def report(self, done: int, total: int, label: str, weight: tuple[float, float]) -> None:
        """Progress: ``done`` of ``total`` tasks of a pass spanning ``weight`` of the run."""
        if self.progress is not None:
            a, b = weight
            self.fraction = max(self.fraction, a + (b - a) * done / total)
            self.progress(self.fraction, f"{label}: block {done}/{total}")


def _gather_in_order(
    futures: list[Any], label: str, weight: tuple[float, float], runner: _Runner | None
) -> list[Any]:
    """Results of ``futures`` in their order, each released as it arrives, with progress.

    A task's bad input (:class:`~voxmetrics.errors.BadInputResult`) cancels the others and is
    raised here as one :class:`VoxMetricsInputError`.
    """
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futures)}
    out: list[Any] = [None] * len(futures)
    done = 0
    for fut in as_completed(futures):
        out[index[fut.key]] = raise_bad_input(fut.result(), futures)
        fut.release()
        done += 1
        if runner is not None:
            runner.report(done, len(futures), label, weight)
    return out


def _row_blocks(n_rows: int, n_cols: int) -> list[slice]:
    """The row blocks of the in-memory loops (:func:`~voxmetrics.metrics.ranks.row_blocks`).

    Float sums over blocks (Cllr, the chance ALID) then add the same terms in the same order.
    """
    return row_blocks(n_rows, n_cols)


@single_blas_thread()  # as evaluate: float results of BLAS calls do not follow its threads
def evaluate_blockwise(
    source: BlockSource | EmbeddingSet,
    *,
    client: Any,
    dev: ScoreMatrix | None = None,
    name: str = "condition",
    attacker: str = "semi-informed",
    split: str = "eval",
    parts: Collection[str] = ALL_PARTS,
    options: EvaluationOptions | None = None,
    progress: Progress | None = None,
    retries: int = 3,
    utility: Utility | None = None,
    **overrides: Any,
) -> ConditionReport:
    """The metrics of :func:`~voxmetrics.evaluation.engine.evaluate`, block by block on Dask.

    Parameters
    ----------
    source : EmbeddingSet, EmbeddingBlocks, ChunkedScores or ZarrScores
        The evaluated trials: embeddings (scored per block; ``split`` picks the split) or a
        score matrix stored as row chunks (files, or a Zarr store).
    client : distributed.Client
        Where the blocks run (see :func:`dask_client`).
    dev : ScoreMatrix, optional
        In-memory calibration scores of disjoint speakers; LID is computed when given (for an
        EmbeddingSet with a dev split and no ``dev``, its dev split is scored in memory).
    name, attacker, parts, options :
        As in :func:`~voxmetrics.evaluation.engine.evaluate` (``seed`` seeds the chance
        levels' draws). ``options.by`` needs embeddings (a metadata column, e.g. ``"sex"``):
        each of its values is evaluated on its own trials and enrolled identities
        (:meth:`EmbeddingBlocks.subset_attribute`; ``dev`` is split likewise when it has the
        attribute); score chunks carry no attributes. The bootstrap and cross-calibration are
        not computed blockwise (refused).
    progress : callable(fraction, message), optional
        Called as blocks finish.
    retries : int
        Times Dask retries a failed block (a lost worker) before giving up.
    utility : Utility, optional
        The condition's utility numbers (WER, UAR, rho_F0), carried into the report as
        :func:`~voxmetrics.evaluation.engine.evaluate_condition` carries the condition's.
    **overrides
        Fields of :class:`~voxmetrics.evaluation.options.EvaluationOptions` by name.

    Returns
    -------
    ConditionReport
        Equal to ``evaluate(matrix, dev=dev, embeddings=..., ...)`` on the in-memory matrix,
        every number of its JSON bit for bit: the baselines, LID, SRD, ZEBRA, linkability and
        its curve, the chance levels, the verification block (DCF, d', the DET and APE curves)
        and, from an EmbeddingSet, singling out (its predicates in blocks on the workers). Only
        the DET curve's ``n_points`` (operating points before thinning) is an upper bound:
        the distinct scores of different blocks are not compared. Bootstrap intervals,
        cross-calibrated LID are not computed.
    """
    opts = EvaluationOptions.of(options, **overrides)
    parts = check_parts(parts)
    if opts.bootstrap or opts.cross_calibrate:
        raise VoxMetricsInputError(
            "the blockwise evaluation computes no bootstrap intervals and no cross-calibrated "
            "LID; evaluate in memory for those (bootstrap=0, cross_calibrate=None here)."
        )
    es = None
    if isinstance(source, EmbeddingSet):
        es = source
        source = EmbeddingBlocks.from_embeddings(es, split)
        if dev is None and split == "eval" and "dev" in es.splits():
            dev = es.score_matrix("dev")
    by = None
    if opts.by is not None:
        by = {opts.by: _subsets(source, opts.by, dev, name, client, attacker, parts, opts, retries)}
    cal = _dev_calibration(source, dev, opts.lid_variant, calibrate="lid" in parts)
    # singling out first: the workers then hold no scored blocks while they hold its embeddings
    singled = None
    if es is not None and "singling_out" in parts:
        singled = _singling_out_blockwise(client, es, split, retries)
    runner = _Runner(client, source, _row_blocks(*source.shape), progress, retries)
    try:
        products = _products(runner, source, cal, ties=opts.ties, seed=opts.seed,
                             linkability_rule=opts.linkability_rule,
                             sums="verification" in parts)  # fmt: skip
        # the actual DCFs of LLR scores and the place of ZEBRA's worst non-mated score still
        # read the blocks (the workers' caches)
        report = assemble(
            replace(products, singling_out=singled),
            name=name,
            attacker=attacker,
            has_dev=dev is not None,
            options=opts,
            parts=parts,
            by=by,
            utility=utility,
        )
    finally:
        runner.close()
    if progress is not None:
        progress(1.0, "done")
    return report


def _subsets(
    source: BlockSource,
    by: str,
    dev: ScoreMatrix | None,
    name: str,
    client: Any,
    attacker: str,
    parts: frozenset[str],
    options: EvaluationOptions,
    retries: int,
) -> dict[str, ConditionReport]:
    """The report of each value of the per-trial attribute ``by`` of embeddings."""
    if not isinstance(source, EmbeddingBlocks):
        raise VoxMetricsInputError(
            f"--by {by}: score chunks carry no per-trial attributes; evaluate embeddings "
            "(--embeddings with a metadata column) to split by an attribute on Dask."
        )
    if by not in source.attributes:
        source.subset_attribute(by, "")  # the error naming the attributes there are
    sub_options = replace(options, by=None)
    return subset_reports(
        by,
        sorted(set(source.attributes[by].tolist())),
        lambda value: source.subset_attribute(by, value),
        dev,
        name,
        lambda sub, **kw: evaluate_blockwise(
            sub, client=client, **kw, attacker=attacker, parts=parts,
            options=sub_options, retries=retries,
        ),
    )  # fmt: skip


def _dev_calibration(
    source: BlockSource, dev: ScoreMatrix | None, lid_variant: str, *, calibrate: bool = True
) -> LIDCalibration | None:
    """LID's calibration, learned in memory on ``dev`` (None without one, or not ``calibrate``).

    ``dev``'s speakers are checked to be disjoint from the blocks' either way.
    """
    if dev is None:
        return None
    labels = SimpleNamespace(
        trial_speakers=source.trial_speakers,
        enrol_speakers=source.enrol_speakers,
        source="the blockwise eval set",
    )
    check_disjoint_speakers(dev, labels)  # type: ignore[arg-type]
    if not calibrate:
        return None
    return calibrate_lid(dev.scores, dev.targets, variant=lid_variant)


def _products(
    runner: _Runner,
    source: BlockSource,
    cal: LIDCalibration | None,
    *,
    ties: Ties,
    seed: int,
    linkability_rule: str = "code",
    sums: bool = True,
) -> Products:
    """The blockwise executor's products: two passes over the blocks, reduced on the client.

    Pass 1 gives each trial's mated score, its target ranks under both tie rules, its LID and
    the chance levels' work, and each block's Cllr sum; pass 2 (and the EER window's passes)
    the pooled counts of :class:`~voxmetrics.metrics.pools.SortedPools`. With ``sums`` (d'),
    pass 1 also sums the non-mated scores and pass 2 their squared deviations from the mean.
    """
    n_rows, n_cols = source.shape
    blocks = runner.blocks
    columns = chance_columns(n_rows, n_cols, seed=seed)  # the chance levels' draws
    args = [(cal, ties, columns[:, b], sums) for b in blocks]
    rows = runner.run(_task_rows, args, "scores and ranks", (0.0, 0.4), per_block=True)
    tar = np.concatenate([r["tar"] for r in rows])
    ranks = np.concatenate([r["rank"] for r in rows])  # target_ranks(ties="reference")
    ranks_gt = np.concatenate([r["rank_gt"] for r in rows])  # target_ranks(ties="attacker")
    c_all = 0.0
    for r in rows:  # in block order, as the in-memory loop
        c_all += r["softplus"]
    values = np.unique(tar)
    n_non = n_rows * (n_cols - 1)
    mean = None
    if sums:
        total = 0.0
        for r in rows:  # in block order, as the in-memory loop
            total += r["non_sum"]
        mean = total / n_non  # SortedPools.moments' mean of the non-mated scores
    pools_parts = runner.run(
        functools.partial(_task_pools, mean=mean), values, "pooled counts", (0.4, 0.8)
    )
    known = None
    if mean is not None:
        sq = 0.0
        for p in pools_parts:
            sq += p["non_sq"]
        known = (total, mean, sq)
    sizes = [(b.stop - b.start) * (n_cols - 1) for b in blocks]
    pools = _pools_from_counts(runner, tar, values, pools_parts, n_non, sizes, known)
    chance_parts = [r["chance"] for r in rows]
    lid_out = None
    if cal is not None:  # with a calibration, the chance blocks hold each row's LID
        lid_out = lid_from_blocks(chance_parts, ranks.copy(), n_enrolled=n_cols, calibration=cal)
    return Products(  # a complete matrix: every pair, every trial
        pools=pools,
        cllr_sums=(softplus_sum(-tar), c_all - softplus_sum(tar)),
        n_trials=n_rows,
        n_enrolled=n_cols,
        n_pairs=n_rows * n_cols,
        n_excluded_trials=source.n_excluded_trials,
        ranks=ranks.copy() if ties == "reference" else ranks_gt.copy(),
        # the linkability rule's ranks: ties to the target (the code's) or against it (strict)
        ranks_attacker=ranks_gt if linkability_rule == "code" else ranks.copy(),
        one_to_n_enrolled=n_cols,
        one_to_n_trials=n_rows,
        lid=lid_out,
        chance=chance_levels_from_blocks(chance_parts, n_cols),
    )


def _pools_from_counts(
    runner: _Runner,
    tar: NDArray[np.floating],
    values: NDArray[np.floating],
    parts: list[dict[str, Any]],
    n_non: int,
    block_sizes: list[int],
    known_sums: tuple[float, float, float] | None = None,
) -> SortedPools:
    """The :class:`SortedPools` of the whole matrix from the blocks' pass-2 counts.

    ``known_sums`` (sum of the non-mated scores, their mean, the sum of their squared
    deviations from it), when passes 1 and 2 took them, answer ``non_sums`` without a pass.
    """
    non_below = np.sum([p["lo"] for p in parts], axis=0)
    non_upto = np.sum([p["hi"] for p in parts], axis=0)
    first = np.min([p["first"] for p in parts], axis=0)
    tar_sorted = np.sort(tar)
    tar_at = np.unique(tar_sorted, return_counts=True)[1]
    cells = np.concatenate([non_below, [n_non]]) - np.concatenate([[0], non_upto])
    counts = RunCounts(
        cells=cells.astype(np.float64),
        tar_at=tar_at.astype(np.float64),
        non_at=(non_upto - non_below).astype(np.float64),
    )
    cell_first = np.where(np.isfinite(first), first, np.nan)
    last = np.max([p["last"] for p in parts], axis=0)
    cell_last = np.where(np.isfinite(last), last, np.nan)
    low = min(min(p["min"] for p in parts), float(tar_sorted[0]))
    high = max(max(p["max"] for p in parts), float(tar_sorted[-1]))
    grid = _Grid(values, tar_sorted, non_below, non_upto, n_non, low, high)
    points = _eer_points_blockwise(runner, grid)

    def locate(score: float, mated: bool) -> int:
        v = tar.dtype.type(score)
        if mated:
            return int(np.flatnonzero(tar == v)[0])
        hits = runner.run(_task_locate, v, "locating a score", (0.95, 0.99))
        offset = 0
        for size, h in zip(block_sizes, hits, strict=True):
            if h >= 0:
                return offset + int(h)
            offset += size
        raise ValueError("score not in the non-target pool")  # pragma: no cover

    def count_non_le(thresholds: Any) -> NDArray[np.int64]:
        x = np.asarray(thresholds, dtype=np.float64).ravel()
        return np.sum(runner.run(_task_count_le, x, "counting", (0.95, 0.99)), axis=0)

    def non_sums(c: float) -> tuple[float, float]:
        if known_sums is not None:
            total, mean, sq = known_sums
            if math.isnan(c):
                return total, math.nan
            if c == mean:
                return total, sq
        total = sq = 0.0
        for t_b, sq_b in runner.run(_task_sums, float(c), "sums", (0.95, 0.99)):
            total += t_b  # in block order, as the in-memory loop
            sq += sq_b
        return total, sq

    # n_distinct (distinct pooled scores) is not additive over blocks: the distinct mated
    # scores plus each block's distinct non-mated scores between them bound it from above
    # (equal when no non-mated score repeats across blocks). Only the DET curve's n_points
    # reads it.
    n_distinct = min(values.size + sum(p["n_distinct"] for p in parts), int(tar.size + n_non))
    return SortedPools(
        values,
        counts,
        cell_first,
        cell_last,
        n_distinct,
        int(tar.size),
        int(n_non),
        points,
        locate,
        count_non_le,
        non_sums,
    )


@dataclass(frozen=True)
class _Grid:
    """Pooled counts known at the distinct mated scores after pass 2."""

    values: NDArray[np.floating]
    tar_sorted: NDArray[np.floating]
    non_below: NDArray[np.int64]
    """Non-mated scores below each distinct mated score."""
    non_upto: NDArray[np.int64]
    """Non-mated scores at or below each distinct mated score."""
    n_non: int
    low: float
    """Lowest pooled score."""
    high: float
    """Highest pooled score."""


def _eer_points_blockwise(runner: _Runner, grid: _Grid) -> dict[str, EERPoint]:
    """SpeechBrain's EER operating points (both tie rules) from part of the pooled scores.

    FAR - FRR changes sign in (v_{k0-1}, v_k0] for the first distinct mated score v_k0 where
    FAR <= FRR. The distinct pooled scores (with counts) of a range of mated scores around it,
    reaching at least ``_WINDOW_MARGIN`` pooled positions beyond either end, are fetched in
    one pass, and the margin grows until the range covers the window :func:`_scan_window`
    needs (a few hundred positions for continuous scores).
    """
    values, tar_sorted = grid.values, grid.tar_sorted
    n_tar, n_non = int(tar_sorted.size), grid.n_non
    k_n = values.size
    fr = np.searchsorted(tar_sorted, values, side="right").astype(np.int64)
    sign = (n_non - grid.non_upto) * n_tar - fr * n_non <= 0
    k0 = int(np.argmax(sign)) if sign.any() else k_n
    pos_left = np.searchsorted(tar_sorted, values, side="left") + grid.non_below
    pos_right = fr + grid.non_upto
    n = n_tar + n_non
    p_lo = int(pos_right[k0 - 1]) if k0 > 0 else 0
    p_hi = int(pos_right[k0]) if k0 < k_n else n
    # where in the cell: the q-th non-mated score with q = n_non - floor(FR n_non / n_tar) is
    # the first with FAR <= FRR (ties may move the crossing left: the scan then asks for more)
    fr_c = int(fr[k0 - 1]) if k0 > 0 else 0
    p_est = min(max(fr_c + n_non - (fr_c * n_non) // n_tar - 1, p_lo), p_hi)
    margin = _WINDOW_MARGIN
    points: dict[str, EERPoint] = {}
    while True:
        want = (max(0, p_est - margin), min(n, p_est + margin))
        ka = int(np.searchsorted(pos_left, want[0], side="right")) - 1
        kb = int(np.searchsorted(pos_right, want[1], side="left"))
        low = float(values[ka]) if ka >= 0 else grid.low
        high = float(values[kb]) if kb < k_n else grid.high
        start = int(pos_left[ka]) if ka >= 0 else 0
        stop = int(pos_right[kb]) if kb < k_n else n
        while stop - start > WINDOW_CAP:  # too many scores between mated ones: narrow by value
            low, high, start, stop, narrower = _narrow(runner, grid, low, high, start, want)
            if not narrower:
                break
        parts = runner.run(_task_window, (low, high), "EER operating point", (0.8, 0.95))
        keep = (tar_sorted >= np.float64(low)) & (tar_sorted <= np.float64(high))
        u, inv = np.unique(
            np.concatenate([*(p["u"] for p in parts), tar_sorted[keep]]), return_inverse=True
        )
        weights = np.concatenate([*(p["c"] for p in parts), np.ones(int(keep.sum()), np.int64)])
        cnt = np.bincount(inv, weights=weights, minlength=u.size).astype(np.int64)
        for ties in TIES:
            if ties not in points:
                point = _scan_window(
                    u, cnt, start, n, tar_sorted, n_non, attacker=ties == "attacker"
                )
                if point is not None:
                    points[ties] = point
        if len(points) == len(TIES):
            return points
        margin = max(4 * margin, 64)


def _narrow(
    runner: _Runner, grid: _Grid, low: float, high: float, start: int, want: tuple[int, int]
) -> tuple[float, float, int, int, bool]:
    """One histogram pass over [low, high]: the narrowest run of bins covering ``want``.

    ``start`` pooled scores lie below ``low``; ``want`` are pooled positions. Bounds are
    float64 and compared as float64 (exact for float32 scores too).
    """
    edges = np.linspace(low, high, _BINS + 1)
    parts = runner.run(_task_histogram, edges, "EER operating point", (0.8, 0.95))
    counts = np.sum(parts, axis=0) + _bin_counts(grid.tar_sorted, edges)
    cum = start + np.concatenate([[0], np.cumsum(counts)])  # cum[i]: pooled scores < e_i
    i0 = int(np.searchsorted(cum[:-1], want[0], side="right")) - 1
    i1 = int(np.searchsorted(cum[1:], want[1], side="left"))
    i1 = min(i1, _BINS - 1)
    new_low, new_high = float(edges[i0]), float(edges[i1 + 1])
    narrower = (new_low, new_high) != (low, high)
    return new_low, new_high, int(cum[i0]), int(cum[i1 + 1]), narrower


def _scan_window(
    u: NDArray[np.floating],
    cnt: NDArray[np.int64],
    below: int,
    n: int,
    tar_sorted: NDArray[np.floating],
    n_non: int,
    *,
    attacker: bool,
) -> EERPoint | None:
    """The scan of :func:`voxmetrics.metrics.pools._eer_point` on part of the pooled scores.

    ``u`` are distinct pooled scores with counts ``cnt``, starting at pooled position ``below``;
    None when they do not cover the window the scan needs.
    """
    n_tar = int(tar_sorted.size)
    pos_end = below + np.cumsum(cnt)
    pos_start = pos_end - cnt
    fr_all = np.searchsorted(tar_sorted, u, side="right").astype(np.int64)
    fa_all = n_non - (pos_end - fr_all)
    sign = fa_all * n_tar - fr_all * n_non <= 0
    if not sign.any() or (sign[0] and below > 0):
        return None
    lo_j = int(pos_start[int(np.argmax(sign))])
    half = 64
    while True:
        a, b = max(0, lo_j - half), min(n, lo_j + half)
        if a < below or b > int(pos_end[-1]):
            return None
        sel = (pos_start < b) & (pos_end > a)  # the distinct scores of positions a .. b - 1
        cand = eer_candidates(
            u[sel], fr_all[sel], fa_all[sel], cnt[sel], tar_sorted, n_non, attacker=attacker
        )
        if (a == 0 or cand.c[0] > cand.m) and (b == n or cand.c[-1] > cand.m):
            return cand.point()
        half *= 4


def _singling_out_blockwise(
    client: Any, es: EmbeddingSet, split: str, retries: int
) -> SinglingOutResult | None:
    """Singling out of ``split``, its blocks of predicates on the workers (as in memory)."""

    def map_blocks(fn: Callable[..., Any], shared: tuple[Any, ...], blocks: list[Any]) -> list[Any]:
        on_workers = [client.scatter(x, broadcast=True, hash=False) for x in shared]
        futures = [
            client.submit(_run_task, fn, *block, *on_workers, retries=retries, pure=False)
            for block in blocks
        ]
        return _gather_in_order(futures, "singling out", (0.95, 0.99), None)

    return singling_out_of(es, split, map_blocks=map_blocks)  # as evaluate's
