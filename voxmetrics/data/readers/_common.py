"""What the readers share: the source type, the column names, messages' line numbers.

The names here serve the modules of :mod:`voxmetrics.data.readers`; the public ones
(:data:`Source`, :data:`FORMATS`, :data:`SCORE_COLUMNS`) are exported by the package.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import META_COLUMNS
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError
from voxmetrics.limits import get_limits, read_file_bytes, refuse

pd = lazy_module("pandas")  # imported when a function first uses it


Source = str | os.PathLike | bytes
"""A path to a file, or the raw bytes of an uploaded file."""

FORMATS = ("csv", "parquet", "npz", "npy", "kaldi", "kaldi-key", "utt2spk", "metadata")
"""The values :func:`detect_format` returns."""

SCORE_COLUMNS = ("trial_id", "trial_speaker", "enrol_speaker", "score")
"""Required columns of a long scores CSV / Parquet file."""

# Columns that hold labels: always read as text (so '007' stays '007' and 'NA' is a label).
LABEL_COLUMNS = (*SCORE_COLUMNS[:3], *META_COLUMNS, "system", "audio_path")

NAN_WORDS = ("nan", "-nan", "+nan")

PREFIX = 65536  # bytes sniffed by detect_format


def load_source(source: Source, name: str | None) -> tuple[bytes, str]:
    """Return the bytes of ``source`` and the name to use in messages (within the limits)."""
    if isinstance(source, bytes | bytearray | memoryview):
        data, label = bytes(source), name or "uploaded file"
        if len(data) > get_limits().max_file_bytes:
            raise refuse(label, f"the file is {len(data):,} bytes", "max_file_bytes")
        return data, label
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label = name or path.name or str(path)
        return read_file_bytes(path, label), label
    raise TypeError(
        f"source must be a path (str or os.PathLike) or bytes, got {type(source).__name__}"
    )


class Where:
    """Turn a row position into 'line 7' (text) or 'row 6' (Parquet) for messages."""

    def __init__(self, name: str, unit: str, numbers: NDArray[np.int64]) -> None:
        self.name, self.unit, self.numbers = name, unit, numbers

    def __call__(self, i: int) -> str:
        return f"{self.unit} {int(self.numbers[i])}"


def incomplete(msg: str, dropped: int, allow_incomplete: bool) -> None:
    """Refuse a broken score file, or (when asked for) warn that ``dropped`` pairs are left out."""
    if not allow_incomplete:
        raise VoxMetricsInputError(
            f"{msg}. Write the file again complete (was it copied or saved to the end?); if "
            "the pairs are meant to be left out, read it with allow_incomplete=True (command "
            "line: --allow-incomplete; dashboard: the Data page's 'Allow incomplete score "
            "files' box), which evaluates the listed pairs only and says so."
        )
    warnings.warn(
        f"{msg}; as asked for (allow_incomplete), {dropped:,} pair(s) are left out and the "
        "metrics use the listed pairs only.",
        IncompleteScoresWarning,
        stacklevel=4,
    )


def as_str_array(values: Any) -> NDArray[np.str_]:
    return np.array(list(values), dtype=str)


def attribute_array(values: NDArray[Any]) -> NDArray[Any]:
    """Attribute values as a plain numpy array: numbers stay numbers, text becomes str."""
    if values.dtype.kind in "biufcmM":
        return values
    if pd.isna(values).any():
        return np.array([None if pd.isna(v) else v for v in values], dtype=object)
    return values.astype(str)
