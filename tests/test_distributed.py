"""The Dask paths' public names in one module (voxmetrics.distributed), and the dask extra.

The paths themselves are tested where they live: the blockwise executor in
tests/evaluation/test_blockwise.py (its score sources in tests/evaluation/test_sources.py),
extraction on Dask in tests/embeddings/test_distributed.py.
"""

from __future__ import annotations

import pytest


def test_the_dask_extra_is_in_the_dev_requirements():
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["dask"]
    dev = (root / "requirements-dev.txt").read_text().splitlines()
    assert extra and all(req in dev for req in extra)


def test_the_public_names_are_those_of_the_modules_that_define_them():
    pytest.importorskip("distributed")
    import voxmetrics.distributed as dist
    from voxmetrics.embeddings import distributed as edist
    from voxmetrics.evaluation import blockwise, sources

    assert sorted(dist.__all__) == [
        "BlockSource",
        "ChunkedScores",
        "EmbeddingBlocks",
        "ZarrScores",
        "dask_client",
        "evaluate_blockwise",
        "extract_embeddings_blockwise",
    ]
    assert dist.evaluate_blockwise is blockwise.evaluate_blockwise
    assert dist.dask_client is blockwise.dask_client
    assert dist.extract_embeddings_blockwise is edist.extract_embeddings_blockwise
    for name in ("BlockSource", "ChunkedScores", "EmbeddingBlocks", "ZarrScores"):
        assert getattr(dist, name) is getattr(sources, name)
