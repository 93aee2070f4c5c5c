"""A local Dask cluster for the tests of the Dask paths (blockwise evaluation, extraction).

Two single-threaded workers in this process (``processes=False``), so that a test may patch a
module and the workers see the patch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def local_client() -> Iterator[Any]:
    """A ``distributed.Client`` of a two-worker in-process ``LocalCluster``, closed on exit."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c
