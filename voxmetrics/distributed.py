"""Blockwise evaluation and extraction on a Dask cluster, never holding the T x N matrix.

The public names of the Dask paths, in one module:

- :func:`evaluate_blockwise`, the blockwise executor of the engine
  (:mod:`voxmetrics.evaluation.blockwise`): every metric of
  :func:`~voxmetrics.evaluation.engine.evaluate`, equal bit for bit, from per-block summaries;
- its sources (:mod:`voxmetrics.evaluation.sources`): :class:`EmbeddingBlocks`,
  :class:`ChunkedScores` (score chunk files), :class:`ZarrScores` (a Zarr store);
- :func:`dask_client`, a client for a local cluster or a running scheduler;
- :func:`extract_embeddings_blockwise` (:mod:`voxmetrics.embeddings.distributed`), extraction
  spread over the workers.

Needs the ``dask`` extra (``pip install "voxmetrics[dask]"``).
"""

from voxmetrics.embeddings.distributed import extract_embeddings_blockwise
from voxmetrics.evaluation.blockwise import dask_client, evaluate_blockwise
from voxmetrics.evaluation.sources import BlockSource, ChunkedScores, EmbeddingBlocks, ZarrScores

__all__ = [
    "BlockSource",
    "ChunkedScores",
    "EmbeddingBlocks",
    "ZarrScores",
    "dask_client",
    "evaluate_blockwise",
    "extract_embeddings_blockwise",
]
