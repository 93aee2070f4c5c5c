"""``evaluate --scheduler``: every metric block by block on a Dask cluster."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from voxmetrics.cli._common import (
    check_outputs,
    check_source,
    finish,
    priors,
    progress_bar,
    read_embedding_file,
    read_score_file,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_input_path

if TYPE_CHECKING:
    from voxmetrics.data.model import EmbeddingSet
    from voxmetrics.distributed import ChunkedScores, ZarrScores

_NOT_BLOCKWISE: tuple[tuple[str, Callable[[argparse.Namespace], bool], str], ...] = (
    (
        "--bootstrap",
        lambda a: a.bootstrap > 0,
        "the speaker-level replicates of the pooled metrics (EER, min Cllr, ZEBRA) reweight "
        "each speaker's counts of non-mated scores between every two mated scores, which for "
        "continuous scores are about as many as the scores themselves; evaluate in memory "
        "for intervals (on a sample of the speakers if the matrix is too large)",
    ),
    (
        "--cross-calibrate",
        lambda a: a.cross_calibrate is not None,
        "the folds fit LID on the eval scores themselves; give a dev set instead (--dev, or "
        "a dev split in the embeddings' metadata)",
    ),
    (
        "--trials",
        lambda a: a.trials is not None,
        "a trial list (sparse pairs) is not a chunked matrix; evaluate it in memory, whose "
        "size it already bounds",
    ),
    (
        "--distance",
        lambda a: a.distance,
        "the chunks are read as they are; store the negated distances (higher = closer)",
    ),
    (
        "--by",
        lambda a: a.by is not None and not a.embeddings,
        "score chunks carry no per-trial attributes; give --embeddings whose metadata has "
        "the attribute column",
    ),
    (
        "--trial-attributes",
        lambda a: a.trial_attributes is not None,
        "for --by on Dask, give --embeddings whose metadata has the attribute column",
    ),
)
"""Options of ``evaluate`` refused with ``--scheduler``, and why."""

_CHUNK_SUFFIXES = (".npz", ".parquet")


def run_blockwise(args: argparse.Namespace) -> int:
    """``evaluate --scheduler``: evaluate on Dask, print the JSON as ``evaluate`` does."""
    from voxmetrics.distributed import dask_client, evaluate_blockwise

    check_outputs([args.json, args.html])
    for flag, given, why in _NOT_BLOCKWISE:
        if given(args):
            raise VoxMetricsInputError(
                f"{flag} cannot be used with --scheduler (blockwise evaluation): {why}."
            )
    if args.workers < 1:
        raise VoxMetricsInputError("--workers must be at least 1.")
    source = _source(args)
    dev = read_score_file(args.dev, args.dev_trials, args.format)[0] if args.dev else None
    if args.dev_trials and not args.dev:
        raise VoxMetricsInputError("--dev-trials was given without --dev; add --dev DEV.")
    workers = {"n_workers": args.workers, "memory_limit": args.memory_limit}
    with _quiet_workers(), dask_client(args.scheduler, **workers) as client:
        report = evaluate_blockwise(
            source,
            client=client,
            dev=dev,
            name=Path(args.eval or args.embeddings).stem,
            lid_variant=args.lid_variant,
            split=args.split,
            ties=args.ties,
            linkability_rule=args.linkability_rule,
            seed=args.seed,
            score_kind="llr" if args.llr else "similarity",
            p_targets=priors(args.p_target),
            c_miss=args.c_miss,
            c_fa=args.c_fa,
            by=args.by,
            progress=progress_bar,
        )
    print(file=sys.stderr)
    if args.embeddings:  # the attacker: cosine of the given embeddings, as in memory
        from dataclasses import replace

        from voxmetrics.data.recipe import AttackerRecipe

        report = replace(report, recipe=AttackerRecipe("cosine"))
    return finish(args, report)


@contextlib.contextmanager
def _quiet_workers() -> Iterator[None]:
    """Dask's worker error blocks silenced for the run: a failure ends in one line instead.

    The note that the local cluster's HTTP port is taken (it takes another) is dropped too.
    """
    loggers = [logging.getLogger(n) for n in ("distributed.worker", "distributed.nanny")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Port \d+ is already in use")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _source(args: argparse.Namespace) -> EmbeddingSet | ZarrScores | ChunkedScores:
    """The embeddings, the Zarr store or the score chunks to evaluate block by block."""
    check_source(args, "score chunks")
    if args.embeddings:
        return read_embedding_file(args.embeddings, args.metadata, args.system, args.ark_root)
    root = Path(args.eval)
    if root.suffix.lower() == ".zarr":
        from voxmetrics.distributed import ZarrScores

        return ZarrScores.open(root)
    return _score_chunks(root, args.eval)


def _score_chunks(root: Path, name: str) -> ChunkedScores:
    """The score chunk files of ``evaluate --scheduler EVAL`` (a folder, or one file)."""
    from voxmetrics.distributed import ChunkedScores

    chunk = _CHUNK_SUFFIXES
    files = (
        sorted(f for f in root.iterdir() if f.suffix.lower() in chunk) if root.is_dir() else [root]
    )
    for f in files:
        check_input_path(str(f))
    if not files or any(f.suffix.lower() not in chunk for f in files):
        raise VoxMetricsInputError(
            f"{name}: with --scheduler, EVAL is a folder of score chunks (or one chunk): NPZ "
            "score files (scores, trial_ids, trial_speakers, enrol_speakers) or long-format "
            "Parquet score files, each with some of the trials; a Zarr store (.zarr) of "
            "scores, trial_ids, trial_speakers and enrol_speakers; or use --embeddings."
        )
    return ChunkedScores.from_files(files)
