"""Row blocks on parallel threads, and BLAS on one thread while VoxMetrics evaluates.

The row-wise metrics (LID, the chance levels, Cllr, d') cut a score matrix into blocks of rows
(:func:`~voxmetrics.metrics.ranks.row_blocks`); :func:`map_blocks` runs them on
:func:`threads` threads. NumPy releases the interpreter lock inside its sorts, ufuncs and
reductions on large arrays, so the blocks run in parallel, and the results are combined in
row order: the same numbers as a serial loop, bit for bit.

:func:`single_blas_thread` keeps BLAS (the matrix products of the bootstrap and the similarity
matrices) on one thread meanwhile: its products are small, OpenBLAS's extra threads only
spin, and the last bits of a BLAS product (a dot product split between threads) depend on
how many threads computed it. With one thread they do not.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

__all__ = ["map_blocks", "single_blas_thread", "threads"]

_T = TypeVar("_T")
_R = TypeVar("_R")


def threads() -> int:
    """Threads for row-block work: ``VOXMETRICS_THREADS`` if set, else the CPUs this process has.

    Examples
    --------
    >>> threads() >= 1
    True
    """
    env = os.environ.get("VOXMETRICS_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass  # not a number: as if unset
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity outside Linux
        return max(1, os.cpu_count() or 1)


def map_blocks(fn: Callable[[_T], _R], blocks: Sequence[_T]) -> list[_R]:
    """``[fn(b) for b in blocks]``, the blocks shared among :func:`threads` threads.

    NumPy releases the interpreter lock inside its sorts, ufuncs and reductions on large
    arrays, so row blocks run in parallel. The results come back in block order and each is
    the same as in a serial loop (a block's numbers depend on that block only), so sums taken
    over them in order are the same bit for bit. ``fn`` works in cache-sized chunks of its
    block, so each thread holds a few MB of temporaries, not a copy of its block. Each block
    runs in a copy of the caller's :mod:`contextvars` context, so a warning it raises is the
    caller's (:func:`voxmetrics.errors.recorded_warnings`).

    Examples
    --------
    >>> map_blocks(lambda b: b * 2, [1, 2, 3])
    [2, 4, 6]
    """
    n = min(threads(), len(blocks))
    if n <= 1:
        return [fn(b) for b in blocks]
    contexts = [contextvars.copy_context() for _ in blocks]
    with ThreadPoolExecutor(n, thread_name_prefix="voxmetrics-rows") as pool:
        return list(pool.map(lambda ctx, b: ctx.run(fn, b), contexts, blocks))


_CONTROLLER: Any = None


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (threadpoolctl's limit).

    The previous limits come back on exit. Used by :func:`~voxmetrics.evaluation.evaluate` and
    :func:`~voxmetrics.report.study.build_study_report`; ``VOXMETRICS_BLAS_THREADS=keep`` leaves
    BLAS as it is.

    Examples
    --------
    >>> import numpy as np
    >>> with single_blas_thread():
    ...     float(np.ones(3) @ np.ones(3))
    3.0
    """
    global _CONTROLLER
    if os.environ.get("VOXMETRICS_BLAS_THREADS", "").strip().lower() == "keep":
        yield
        return
    if _CONTROLLER is None:  # finds the BLAS libraries loaded (once: it takes milliseconds)
        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield
