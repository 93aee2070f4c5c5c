"""Array helpers of the data model: unit-norm rows, chunked cosine scores, read-only arrays.

:mod:`voxmetrics.data.model` builds its score matrices and embedding sets with them; the metric
and evaluation modules that score embeddings use :func:`unit_rows` and :func:`score_chunk` too.
"""

from __future__ import annotations

from typing import TypeVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import VoxMetricsInputError

__all__ = ["SCORE_CHUNK_ROWS", "label_array", "readonly", "score_chunk", "unit_rows"]


_Float = TypeVar("_Float", bound=np.floating)
"""A float dtype: :func:`unit_rows` keeps the input's precision."""


@overload
def unit_rows(x: NDArray[_Float]) -> NDArray[_Float]: ...
@overload
def unit_rows(x: ArrayLike) -> NDArray[np.floating]: ...
def unit_rows(x: ArrayLike) -> NDArray[np.floating]:
    """Each row divided by its L2 norm, for any finite scale (no overflow or underflow).

    Rows are first scaled by a power of two so their largest magnitude is in [0.5, 1) (exact,
    so ordinary embeddings give bit-identical results, in the input's float precision): a norm
    of 1e200-sized or 1e-200-sized values neither overflows to infinity nor underflows to zero.
    All-zero rows become NaN.

    Examples
    --------
    >>> unit_rows([[3e200, 4e200], [3e-200, 4e-200]]).tolist()
    [[0.6, 0.8], [0.6, 0.8]]
    """
    a = np.asarray(x)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    peak = np.abs(a).max(axis=1, keepdims=True) if a.size else np.ones((a.shape[0], 1), a.dtype)
    _, exponent = np.frexp(np.where(np.isfinite(peak) & (peak > 0), peak, 1.0))
    a = np.ldexp(a, -exponent).astype(a.dtype, copy=False)  # in the input's precision
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / np.linalg.norm(a, axis=1, keepdims=True)


SCORE_CHUNK_ROWS = 256
"""Trial rows cosine-scored per matrix product. Fixed, so that every row of a split scores to
the same bits whichever rows are scored together (blockwise evaluation relies on it: a BLAS
product's rounding can depend on the shape of the call)."""


def score_chunk(
    trial_unit: NDArray[np.floating], profiles: NDArray[np.float64], start: int
) -> NDArray[np.float64]:
    """Cosine scores of the trial rows ``start .. start + SCORE_CHUNK_ROWS`` against profiles.

    ``start`` is a multiple of :data:`SCORE_CHUNK_ROWS`; the profiles are unit-norm.

    Examples
    --------
    >>> score_chunk(np.array([[1.0, 0.0], [0.0, 1.0]]), np.eye(2), 0).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return trial_unit[start : start + SCORE_CHUNK_ROWS] @ profiles.T


def readonly(a: np.ndarray, *, copy: bool = True) -> np.ndarray:
    """A read-only contiguous array; without ``copy`` the array itself is frozen (owned).

    Without ``copy``, a view of an array that owns its memory (e.g. the reshaped buffer
    ``np.load`` returns) is frozen together with that array instead of being copied.
    """
    a = np.array(a, copy=True) if copy else np.ascontiguousarray(a)
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not copy and root is not a and root.base is None:
        root.setflags(write=False)  # nothing can write through the base any more
        a.setflags(write=False)
        return a
    if a.flags.writeable and a.base is not None and not a.flags.owndata:
        a = a.copy()  # a writeable view could still be changed through its base
    a.setflags(write=False)
    return a


def label_array(values: ArrayLike, name: str, where: str) -> NDArray[np.str_]:
    """``values`` as a 1-D array of text labels, or the error naming ``name`` and ``where``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise VoxMetricsInputError(
            f"{where}: `{name}` must be a 1-D list of labels, got an array of shape {arr.shape}."
        )
    if arr.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in arr):
            raise VoxMetricsInputError(
                f"{where}: `{name}` has empty values; give every entry a label."
            )
    return arr.astype(str)
