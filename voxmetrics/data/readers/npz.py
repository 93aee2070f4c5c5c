"""NumPy files: score NPZ, and the arrays of embedding NPZ / NPY files.

A score NPZ holds ``scores`` (T x N), ``trial_ids``, ``trial_speakers`` (T), ``enrol_speakers``
(N) and optional ``attr_<name>`` (T) and ``mask`` (T x N) arrays.

Archives are read within the input limits and never unpickled.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data._finite import readonly, remember_finite
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.readers._common import Source, attribute_array, incomplete
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_input_path, get_limits, load_npy, load_npz

__all__ = [
    "float_array",
    "np_load",
    "npz_arrays",
    "npz_file",
    "scores_from_npz",
    "text_array",
]

_NPZ_ARRAYS = ("scores", "trial_ids", "trial_speakers", "enrol_speakers")


def np_load(data: bytes, name: str, kind: str) -> Any:
    """An NPY array or NPZ arrays, within the input limits (header checked, never unpickled)."""
    if kind == "npz":
        return load_npz(data, name)
    return load_npy(data, name)


def npz_arrays(
    data: bytes | Path, name: str, required: Sequence[str], what: str
) -> dict[str, np.ndarray]:
    """The arrays of an NPZ (bytes, or a path); refuse an NPY or missing ``required`` arrays."""
    # a path is an NPZ already recognised by npz_file; its members are read from the file
    if isinstance(data, bytes) and data[:6] == b"\x93NUMPY":
        raise VoxMetricsInputError(
            f"{name}: is a single NPY array, but {what} needs an NPZ with arrays "
            f"{', '.join(required)}; save them with numpy.savez."
        )
    arrays = load_npz(data, name)
    missing = [k for k in required if k not in arrays]
    if missing:
        raise VoxMetricsInputError(
            f"{name}: missing array(s) {', '.join(missing)}; {what} needs arrays "
            f"{', '.join(required)}. Found: {', '.join(arrays) or 'none'}. Save them "
            "under these names with numpy.savez."
        )
    return arrays


def text_array(a: np.ndarray, key: str, name: str) -> NDArray[np.str_]:
    """Labels (str, bytes as UTF-8, or integers) as a str array."""
    if a.dtype.kind == "S":
        try:
            return np.char.decode(a, "utf-8")
        except UnicodeDecodeError:
            raise VoxMetricsInputError(
                f"{name}: array '{key}' holds bytes that are not UTF-8; store labels as str."
            ) from None
    if a.dtype.kind not in "Uiub":
        raise VoxMetricsInputError(
            f"{name}: array '{key}' has dtype {a.dtype}; it must hold labels (strings or integers)."
        )
    return a.astype(str)


def float_array(a: np.ndarray, key: str, name: str) -> NDArray[np.floating]:
    """float32 and float64 as they are (no copy); other numbers as float64."""
    if a.dtype.kind not in "fiub":
        raise VoxMetricsInputError(
            f"{name}: array '{key}' has dtype {a.dtype}; it must hold numbers (float)."
        )
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


def npz_file(source: Source, format: str, name: str | None) -> Path | None:
    """The path of an NPZ file given by path, to be read member by member from the file.

    Reading from the file (within the same archive limits) spares the bytes of the whole file
    next to the arrays. None when the source is not a regular file holding an NPZ within the
    size limit: the general reader then reads (and refuses, or reports) it.
    """
    if not isinstance(source, str | os.PathLike) or format not in ("auto", "npz"):
        return None
    path = Path(source)
    st = check_input_path(path, name or path.name or str(path))
    if st.st_size > get_limits().max_file_bytes:
        return None
    try:
        with path.open("rb") as f:
            if f.read(4) not in (b"PK\x03\x04", b"PK\x05\x06"):
                return None
        with zipfile.ZipFile(path) as zf:
            if all(m.endswith(".npy") for m in zf.namelist()):
                return path
    except (OSError, zipfile.BadZipFile):
        return None
    return None


def scores_from_npz(data: bytes | Path, name: str, allow_incomplete: bool = False) -> ScoreMatrix:
    """A score NPZ (bytes, or a path) as a matrix, its shapes and NaN checked."""
    arrays = npz_arrays(data, name, _NPZ_ARRAYS, "a score NPZ")
    s = float_array(arrays["scores"], "scores", name)
    if s.ndim != 2:
        raise VoxMetricsInputError(
            f"{name}: array 'scores' has shape {s.shape}; it must be 2-D (trials x enrolled)."
        )
    t, n = s.shape
    expect = {"trial_ids": t, "trial_speakers": t, "enrol_speakers": n}
    expect.update({k: t for k in arrays if k.startswith("attr_")})
    wrong = [
        f"'{k}' has shape {arrays[k].shape}"
        for k, size in expect.items()
        if arrays[k].shape != (size,)
    ]
    if wrong:
        raise VoxMetricsInputError(
            f"{name}: shape mismatch: NPZ arrays of inconsistent lengths: 'scores' is {t} x {n} "
            f"(trials x enrolled) but {'; '.join(wrong)}; give trial_ids, trial_speakers and "
            f"every attr_<name> one entry per row ({t}) and enrol_speakers one per column ({n})."
        )
    if "mask" in arrays:
        pass
    elif np.isfinite(s.sum(dtype=np.float64)):  # checked once: the matrix and metrics know it
        s = readonly(s, copy=False)  # fresh from the archive reader (or astype): frozen
        remember_finite(s)
    else:
        nan = np.isnan(s)
        if nan.any():
            i, j = np.unravel_index(int(np.argmax(nan)), s.shape)
            incomplete(
                f"{name}: array 'scores' holds {int(nan.sum()):,} NaN value(s) of T x N = "
                f"{t:,} x {n:,} = {t * n:,} (first: row {i + 1}, column {j + 1}) and no 'mask'; "
                "a NaN is not a score (a sparse trial list gives a boolean 'mask' array, True = "
                "listed pair)",
                int(nan.sum()),
                allow_incomplete,
            )
    attrs = {
        k[len("attr_") :]: attribute_array(np.char.decode(v, "utf-8") if v.dtype.kind == "S" else v)
        for k, v in arrays.items()
        if k.startswith("attr_")
    }
    return ScoreMatrix.from_arrays(
        s,
        trial_ids=text_array(arrays["trial_ids"], "trial_ids", name),
        trial_speakers=text_array(arrays["trial_speakers"], "trial_speakers", name),
        enrol_speakers=text_array(arrays["enrol_speakers"], "enrol_speakers", name),
        attributes=attrs,
        source=name,
        copy=False,  # fresh from the archive reader (or astype): nothing else holds it
        mask=arrays.get("mask"),  # a sparse trial list: True = listed pair
        nan_missing=allow_incomplete,  # asked for: a NaN pair is left out (with a warning)
    )
