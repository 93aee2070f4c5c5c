"""Embedding extraction spread over a Dask cluster (:func:`extract_embeddings_blockwise`).

Each task embeds a batch of recordings with its worker's own extractor, loaded once per worker
process and device; the content-hash cache on a shared disk means no recording is embedded
twice. Needs the ``dask`` extra (``pip install "voxmetrics[dask]"``); the client comes from the
caller (e.g. :func:`voxmetrics.distributed.dask_client`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from voxmetrics._types import Progress
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.embeddings.audio import DEFAULT_LOUDNESS
from voxmetrics.errors import VoxMetricsInputError, raise_bad_input, returning_bad_input

__all__ = ["extract_embeddings_blockwise"]


_EXTRACTORS: dict[tuple[str, str], Any] = {}


def _worker_extractor(model: str, device: str) -> Any:
    """The extractor of this worker, loaded once per worker process and device.

    ``device`` is resolved here, on the worker (:func:`~voxmetrics.embeddings.select_device`):
    ``"auto"`` is CUDA on a worker whose torch sees a GPU and the CPU elsewhere, so one cluster
    may mix GPU and CPU workers; ``"cuda"`` on a worker without a GPU is refused there.
    """
    from voxmetrics.embeddings import load_extractor, select_device

    resolved = select_device(device)
    key = (model, resolved)
    if key not in _EXTRACTORS:
        _EXTRACTORS[key] = load_extractor(model, device=resolved)
    return _EXTRACTORS[key]


def _task_extract(part: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Embed one batch of recordings on a worker (cache lookups first, as on one machine)."""
    from voxmetrics.embeddings import extract_embeddings

    extractor = _worker_extractor(options["model"], options["device"])
    result = extract_embeddings(
        part,
        audio_root=options["audio_root"],
        extractor=extractor,
        batch_size=options["batch_size"],
        cache_dir=options["cache_dir"],
        exact=options["exact"],
        loudness=options["loudness"],
    )
    es = result.embeddings
    return {
        "rows": np.array([], np.int64) if es is None else es.meta["_row"].to_numpy(np.int64),
        "embeddings": None if es is None else es.embeddings.astype(np.float32),
        "failures": result.failures,
        "n_cached": result.n_cached,
        "model": result.model,
        "device": str(extractor.device),
    }


def extract_embeddings_blockwise(
    manifest: Any,
    *,
    audio_root: str | Path,
    model: str,
    client: Any,
    device: str = "auto",
    batch_size: int = 16,
    files_per_task: int | None = None,
    cache_dir: str | Path | None = None,
    exact: bool = True,
    progress: Progress | None = None,
    retries: int = 3,
    loudness: float | None = DEFAULT_LOUDNESS,
) -> Any:
    """:func:`~voxmetrics.embeddings.extract_embeddings` spread over a Dask cluster.

    One task embeds ``files_per_task`` recordings (default ``4 * batch_size``) with the
    worker's own extractor (``model`` and ``device`` as in
    :func:`~voxmetrics.embeddings.load_extractor`; ``"auto"`` takes a worker's GPU when it has
    one). The content-hash cache ``cache_dir`` is shared on disk, so a recording embedded once
    is never embedded again, by any worker; ``audio_root`` (and the cache) must be visible to
    every worker at the same path. A failed task is retried (``retries``) without redoing the
    others; bad input (a model folder a worker cannot read, ``"cuda"`` on a worker without a
    GPU) is not retried: it stops the run with its one-line message. ``loudness`` is the
    normalisation of :func:`~voxmetrics.embeddings.extract_embeddings`. Returns an
    :class:`~voxmetrics.embeddings.ExtractionResult` in manifest order.
    """
    import time

    import pandas as pd

    from voxmetrics.embeddings import ExtractionResult, default_cache_dir
    from voxmetrics.embeddings.extractors import extraction_source

    if batch_size < 1 or (files_per_task is not None and files_per_task < 1):
        raise VoxMetricsInputError("batch_size and files_per_task must be at least 1.")
    start = time.monotonic()
    per_task = files_per_task or 4 * batch_size
    if Path(model).is_dir():  # a local model folder: the same path on the workers
        model = str(Path(model).resolve())
    frame = manifest.reset_index(drop=True).assign(_row=np.arange(len(manifest)))
    options = {
        "model": model,
        "device": device,
        "audio_root": str(Path(audio_root).resolve()),
        "batch_size": batch_size,
        "cache_dir": str(Path(cache_dir or default_cache_dir()).resolve()),
        "exact": exact,
        "loudness": loudness,
    }
    from distributed import as_completed

    futures = [
        client.submit(
            returning_bad_input,
            _task_extract,
            frame.iloc[a : a + per_task],
            options,
            retries=retries,
            pure=False,
        )
        for a in range(0, len(frame), per_task)
    ]
    parts = []
    done = 0
    for fut in as_completed(futures):
        parts.append(raise_bad_input(fut.result(), futures))
        fut.release()
        done += 1
        if progress is not None:
            progress(
                done / len(futures),
                f"{done}/{len(futures)} batches of recordings (the last on {parts[-1]['device']})",
            )
    rows = np.concatenate([p["rows"] for p in parts])
    order = np.argsort(rows)
    es = None
    if rows.size:
        embs = np.concatenate([p["embeddings"] for p in parts if p["embeddings"] is not None])
        es = EmbeddingSet.from_arrays(
            embs[order].astype(np.float64),
            manifest.iloc[rows[order]].reset_index(drop=True),
            source=extraction_source(parts[0]["model"], loudness),
        )
    failures = pd.concat([p["failures"] for p in parts], ignore_index=True)
    return ExtractionResult(
        embeddings=es,
        failures=failures,
        model=parts[0]["model"] if parts else model,
        n_cached=sum(int(p["n_cached"]) for p in parts),
        seconds=time.monotonic() - start,
        loudness=loudness,
    )
