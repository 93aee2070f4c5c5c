"""Fixtures of the blockwise tests (test_blockwise.py, and test_sources.py's Dask cases).

``client``: a local two-worker Dask cluster per test module. ``small_blocks``: tiny row blocks
and score chunks (a few rows), so that every test crosses many block and score-chunk
boundaries.
"""

from __future__ import annotations

import pytest
from dask_cases import local_client

BLOCK = 600  # scores per Cllr / Dask block in these tests (rows = BLOCK // N)
CHUNK = 16  # rows per score chunk


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    with local_client() as c:
        yield c


@pytest.fixture
def small_blocks(monkeypatch):
    import voxmetrics.data.arrays as arrays_mod
    import voxmetrics.data.model as model_mod
    import voxmetrics.evaluation.blockwise as bw
    import voxmetrics.evaluation.sources as sources
    import voxmetrics.metrics.ranks as ranks_mod

    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", BLOCK)  # row blocks of both paths
    for mod in (arrays_mod, model_mod, sources):
        monkeypatch.setattr(mod, "SCORE_CHUNK_ROWS", CHUNK)
    monkeypatch.setattr(bw, "_WINDOW_MARGIN", 0)  # widen the EER window step by step
