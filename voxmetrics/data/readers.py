"""Readers: score and embedding files (paths or uploaded bytes) to the data model.

Every reader takes a :data:`Source` (a path, or the raw bytes of an uploaded file), recognises the
format from the content (:func:`detect_format`; the file extension is only a hint), parses it
with vectorised pandas / numpy code and builds the model through
:meth:`~voxmetrics.data.ScoreMatrix.from_arrays` or
:meth:`~voxmetrics.data.EmbeddingSet.from_arrays`. Every problem becomes one
:class:`~voxmetrics.errors.VoxMetricsInputError` saying what is wrong, where (file name and, for
text files, the line, counting a CSV header as line 1; for Parquet the data row, counting from 1)
and how to fix it. Pickled data is refused.

The formats (docs, User guide > Input formats):

- ``csv`` / ``parquet``: long scores, columns ``trial_id, trial_speaker, enrol_speaker, score``
  plus optional per-trial attribute columns, one row per (trial, enrolled identity) pair.
- ``npz``: ``scores`` (T x N), ``trial_ids``, ``trial_speakers`` (T), ``enrol_speakers`` (N) and
  optional ``attr_<name>`` arrays of length T.
- ``kaldi``: whitespace-separated ``enrol_id trial_id score`` lines, with a ``kaldi-key`` file
  (``enrol_id trial_id target|nontarget``) or an ``utt2spk`` file (``utt_id speaker``) giving
  the trial speakers.
- embeddings: ``npz`` (``embeddings``, ``utt_ids``), ``npy``, Kaldi ark / scp or HDF5 with a
  ``metadata`` CSV (``utt_id, speaker, role, split`` and optional attribute columns), or one
  ``parquet`` file with those columns and an ``embedding`` list column.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics._types import ScoreFormat
from voxmetrics.data._finite import remember_finite
from voxmetrics.data.embedding_files import (
    EMBEDDING_FILE_KINDS,
    read_hdf5_embeddings,
    read_kaldi_ark,
    read_kaldi_scp,
    sniff_embeddings,
)
from voxmetrics.data.model import META_COLUMNS, SPLIT_VALUES, EmbeddingSet, ScoreMatrix, _readonly
from voxmetrics.errors import (
    IgnoredEmbeddingsWarning,
    IncompleteScoresWarning,
    VoxMetricsInputError,
)
from voxmetrics.limits import (
    check_count,
    check_input_path,
    get_limits,
    load_npy,
    load_npz,
    read_file_bytes,
    refuse,
)

pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "FORMATS",
    "SCORE_COLUMNS",
    "Source",
    "detect_format",
    "negate_scores",
    "read_embeddings",
    "read_scores",
    "read_table",
]

Source = str | os.PathLike | bytes
"""A path to a file, or the raw bytes of an uploaded file."""

FORMATS = ("csv", "parquet", "npz", "npy", "kaldi", "kaldi-key", "utt2spk", "metadata")
"""The values :func:`detect_format` returns."""

SCORE_COLUMNS = ("trial_id", "trial_speaker", "enrol_speaker", "score")
"""Required columns of a long scores CSV / Parquet file."""

_SCORE_FORMATS = ("auto", "csv", "parquet", "npz", "kaldi")
_NPZ_ARRAYS = ("scores", "trial_ids", "trial_speakers", "enrol_speakers")
# Columns that hold labels: always read as text (so '007' stays '007' and 'NA' is a label).
_LABEL_COLUMNS = (*SCORE_COLUMNS[:3], *META_COLUMNS, "system", "audio_path")
_NAN_WORDS = ("nan", "-nan", "+nan")
_NOT_ENROLLED = "unknown speaker"  # of a Kaldi trial without a target key line (+ its id)
_PREFIX = 65536  # bytes sniffed by detect_format

_SUPPORTED = (
    "supported formats are: long scores CSV or Parquet (columns trial_id, trial_speaker, "
    "enrol_speaker, score); NumPy NPZ (scores, trial_ids, trial_speakers, enrol_speakers; or "
    "embeddings, utt_ids) or NPY; Kaldi / VoicePrivacy scores (`enrol_id trial_id score`); "
    "Kaldi key (`enrol_id trial_id target|nontarget`); utt2spk (`utt_id speaker`); metadata "
    "CSV (utt_id, speaker, role, split)"
)


# --------------------------------------------------------------------------------------------
# Loading and format detection
# --------------------------------------------------------------------------------------------


def _load(source: Source, name: str | None) -> tuple[bytes, str]:
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


def _check_not_empty(data: bytes, name: str) -> None:
    if not data or (not data[:_PREFIX].strip() and not data.strip()):
        raise VoxMetricsInputError(
            f"{name}: the file is empty; upload the file that holds the data (was it saved "
            "before upload?)."
        )


def _refuse_pickle(data: bytes, name: str) -> None:
    if data[:1] == b"\x80":
        raise VoxMetricsInputError(
            f"{name}: pickled data is refused for safety (loading a pickle can run arbitrary "
            "code); save with numpy.savez / to CSV."
        )


def _binary_kind(data: bytes, name: str) -> str | None:
    """Recognise binary formats by their magic bytes; ``None`` when it is not one of them."""
    _refuse_pickle(data, name)
    if data[:4] == b"PAR1":
        if data[-4:] != b"PAR1":
            raise VoxMetricsInputError(
                f"{name}: starts like a Parquet file but has no Parquet footer, so it is "
                "truncated or damaged; export or upload it again."
            )
        return "parquet"
    if data[:6] == b"\x93NUMPY":
        return "npy"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = zf.namelist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
            raise VoxMetricsInputError(
                f"{name}: looks like a zip / NPZ archive but cannot be opened (truncated or "
                "damaged?); save it again with numpy.savez."
            ) from None
        others = [m for m in members if not m.endswith(".npy")]
        if others:
            raise VoxMetricsInputError(
                f"{name}: not a recognised format: a zip archive that is not an NPZ (it "
                f"contains '{others[0]}'); {_SUPPORTED}. Save score or embedding arrays with "
                "numpy.savez."
            )
        return "npz"
    return None


def _looks_binary(prefix: bytes) -> bool:
    if b"\x00" in prefix:
        return True
    a = np.frombuffer(prefix, dtype=np.uint8)
    ctrl = ((a < 32) & ~np.isin(a, (9, 10, 11, 12, 13))) | (a == 127)
    return bool(a.size) and ctrl.mean() > 0.05


def _check_utf8(data: bytes, name: str) -> None:
    if data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        pos = exc.start
        line = data.count(b"\n", 0, pos) + 1
        hint = ""
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            hint = " It starts with a UTF-16 byte-order mark, so it was saved as UTF-16."
        raise VoxMetricsInputError(
            f"{name}: not UTF-8 text: byte 0x{data[pos]:02x} at byte offset {pos} (line {line}) "
            f"is not valid UTF-8.{hint} Re-save the file with UTF-8 encoding (e.g. 'CSV UTF-8' "
            "in Excel, or `iconv -t UTF-8`)."
        ) from None


def _unknown(name: str, what: str) -> VoxMetricsInputError:
    return VoxMetricsInputError(
        f"{name}: not a recognised format ({what}); {_SUPPORTED}. Export the data in one of "
        "these formats."
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sniff_text(data: bytes, name: str) -> str:
    prefix = data[:_PREFIX].decode("utf-8", errors="ignore").lstrip("\ufeff")
    lines = prefix.splitlines()
    if len(data) > _PREFIX and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    lines = [ln for ln in lines if ln.strip()][:50]
    if not lines:
        raise VoxMetricsInputError(
            f"{name}: the file is empty (only a byte-order mark or blank lines); upload the file "
            "that holds the data."
        )
    ext = Path(name).suffix.lower()
    first = lines[0]
    fields = [ln.split() for ln in lines]
    width = Counter(len(f) for f in fields).most_common(1)[0][0]
    if width == 3 and len(fields[0]) == 3:
        # Kaldi lines; labels may contain commas, but a CSV header never ends in a score/label
        third = [f[2] for f in fields if len(f) == 3]
        n_key = sum(t.lower() in ("target", "nontarget") for t in third)
        n_num = sum(_is_number(t) for t in third)
        first_ok = _is_number(fields[0][2]) or fields[0][2].lower() in ("target", "nontarget")
        if "," not in first or first_ok:
            if n_key and n_key >= n_num:
                return "kaldi-key"
            if n_num:
                return "kaldi"
    if "," in first:
        header = {c.strip() for c in next(csv.reader([first]))}
        if set(META_COLUMNS) <= header or (
            {"utt_id", "speaker"} <= header and not header & set(SCORE_COLUMNS)
        ):
            return "metadata"
        return "csv"
    if width == 2:
        return "utt2spk"
    for sep, what in (("\t", "tab"), (";", "semicolon")):
        if sep in first:
            raise _unknown(name, f"{what}-separated text; use commas to separate CSV columns")
    if ext == ".csv":  # e.g. a one-column CSV: let the reader say which columns are missing
        return "csv"
    raise _unknown(name, f"text whose first line is {first[:80]!r}")


def _detect(data: bytes, name: str) -> str:
    _check_not_empty(data, name)
    kind = _binary_kind(data, name)
    if kind is not None:
        return kind
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        _check_utf8(data, name)
    head = data[:_PREFIX]
    if _looks_binary(head[:8192]):
        hint = "binary content"
        if data[:2] == b"\x1f\x8b":
            hint = "gzip-compressed data; decompress it first"
        elif data[:8] == b"\x89HDF\r\n\x1a\n":
            hint = (
                "an HDF5 file: HDF5 is read as embeddings (read_embeddings, command line "
                "--embeddings); export scores as NPZ or CSV"
            )
        elif sniff_embeddings(data[:256]) == "kaldi-ark":
            hint = (
                "a binary Kaldi ark of vectors: arks are read as embeddings (read_embeddings, "
                "command line --embeddings); Kaldi scores are text `enrol_id trial_id score`"
            )
        elif ext_hint := {".parquet": "Parquet", ".npz": "NPZ", ".npy": "NPY"}.get(
            Path(name).suffix.lower()
        ):
            hint = f"binary content without the {ext_hint} signature; is the file damaged?"
        raise _unknown(name, hint)
    _check_utf8(data, name)
    return _sniff_text(data, name)


def detect_format(data: bytes, name: str = "") -> str:
    r"""Recognise the format of a file from its content.

    The content decides (magic bytes of Parquet, NPY, NPZ; sniffing the first lines of text);
    the extension of ``name`` is only a hint for ambiguous text.

    Parameters
    ----------
    data : bytes
        The whole file.
    name : str, optional
        The file name, used as a hint and in messages.

    Returns
    -------
    str
        One of ``"csv"`` (long scores CSV), ``"parquet"``, ``"npz"``, ``"npy"``, ``"kaldi"``
        (``enrol_id trial_id score``), ``"kaldi-key"`` (``enrol_id trial_id
        target|nontarget``), ``"utt2spk"`` (``utt_id speaker``) or ``"metadata"`` (CSV with
        ``utt_id, speaker, role, split`` columns).

    Raises
    ------
    VoxMetricsInputError
        Empty file, pickled data (refused), text that is not UTF-8 (with the byte offset and
        line), or content in none of the formats above.

    Examples
    --------
    >>> detect_format(b"trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.5\n")
    'csv'
    >>> detect_format(b"spk1 utt1 -0.25\nspk2 utt1 1.5\n")
    'kaldi'
    >>> detect_format(b"spk1 utt1 target\nspk2 utt1 nontarget\n")
    'kaldi-key'
    """
    return _detect(data if isinstance(data, bytes) else bytes(data), name or "uploaded file")


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


class _Where:
    """Turn a row position into 'line 7' (text) or 'row 6' (Parquet) for messages."""

    def __init__(self, name: str, unit: str, numbers: NDArray[np.int64]) -> None:
        self.name, self.unit, self.numbers = name, unit, numbers

    def __call__(self, i: int) -> str:
        return f"{self.unit} {int(self.numbers[i])}"


def _parser_error(exc: Exception, name: str, what: str) -> VoxMetricsInputError:
    msg = str(exc).strip()
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
    if m:
        expected, line, saw = (int(g) for g in m.groups())
        return VoxMetricsInputError(
            f"{name}: line {line} has {saw} fields but {what} has {expected}; give every line "
            "the same columns (quote values that contain commas)."
        )
    return VoxMetricsInputError(
        f"{name}: cannot be parsed as {what} ({msg}); check that it is a comma-separated, UTF-8 "
        "text file."
    )


def _exact_labels(
    df: pd.DataFrame, data: bytes, options: dict[str, Any], labels: Sequence[Any]
) -> None:
    """Re-read label columns whose categories pandas turned into numbers ('007' -> 7)."""
    for c in labels:
        col = df[c]
        if isinstance(col.dtype, pd.CategoricalDtype) and not pd.api.types.is_string_dtype(
            col.cat.categories
        ):
            again = pd.read_csv(io.BytesIO(data), **{**options, "usecols": [c], "dtype": object})
            df[c] = again[c]


def _long_first_line(data: bytes, name: str) -> VoxMetricsInputError:
    text = data[:_PREFIX].decode("utf-8", errors="ignore").lstrip("\ufeff").split("\n")
    rows = [(k, r) for k, r in enumerate(csv.reader(text[:1000]), 1) if r]
    (_, header), (line, first) = rows[0], rows[1]
    return VoxMetricsInputError(
        f"{name}: line {line} has {len(first)} fields but the header has {len(header)}; give "
        "every line the same columns (quote values that contain commas)."
    )


def _skip_blank_start(data: bytes) -> tuple[bytes, int]:
    r"""``data`` without its leading blank lines (and byte-order mark), and how many there were.

    Examples
    --------
    >>> _skip_blank_start(b"\xef\xbb\xbf\n  \r\na,b\n")
    (b'a,b\n', 2)
    """
    body = data[3:] if data[:3] == b"\xef\xbb\xbf" else data
    stripped = body.lstrip(b" \t\r\n")
    if len(stripped) == len(body):
        return data, 0
    lead = body[: len(body) - len(stripped)]
    cut = lead.rfind(b"\n") + 1  # keep the indentation of the first line with content
    return body[cut:], lead.count(b"\n")


def _read_csv(data: bytes, name: str, *, categorical: bool = False) -> tuple[pd.DataFrame, _Where]:
    """Parse a CSV with a header; label columns as text, blank lines dropped, line numbers kept.

    With ``categorical``, every column but ``score`` is parsed straight into a categorical (the
    fast path for 10^7-row long score files: no string object per cell). Labels stay exact
    text either way; attribute columns are converted to numbers later when they all are.
    """
    options: dict[str, Any] = {
        "keep_default_na": False,
        "na_values": [""],
        "skip_blank_lines": False,
        "encoding": "utf-8-sig",
        "index_col": False,
    }
    data, skipped = _skip_blank_start(data)  # a blank first line: the header is the next one
    check_count(name, "lines", data.count(b"\n"), "max_rows")
    first_line = data[: data.find(b"\n")] if b"\n" in data else data
    check_count(name, "columns", first_line.count(b",") + 1, "max_columns")
    try:
        header = pd.read_csv(io.BytesIO(data), nrows=0, encoding="utf-8-sig", index_col=False)
        raw_cols = [str(c) for c in header.columns]
        labels = [c for c in raw_cols if c.strip() in _LABEL_COLUMNS]
        if categorical:
            dtype: dict[str, Any] = {c: "category" for c in raw_cols if c.strip() != "score"}
        else:
            dtype = dict.fromkeys(labels, str)
        with warnings.catch_warnings():
            # pandas only warns (and drops data) when the first data line is longer than the header
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(io.BytesIO(data), dtype=dtype, **options)
        if categorical:
            _exact_labels(df, data, options, labels)
    except pd.errors.ParserWarning:
        raise _long_first_line(data, name) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise _parser_error(exc, name, "the header") from None
    except pd.errors.EmptyDataError:
        raise VoxMetricsInputError(
            f"{name}: the file is empty; upload the file that holds the data."
        ) from None
    df.columns = pd.Index([str(c).strip() for c in df.columns])
    unnamed = [
        c for c in df.columns if c.startswith("Unnamed: ") and df[c].isna().all()
    ]  # trailing commas
    if unnamed:
        df = df.drop(columns=unnamed)
    blank = df.isna().all(axis=1).to_numpy()
    if blank.any():
        df = df.loc[~blank]
    where = _Where(name, "line", df.index.to_numpy(dtype=np.int64) + 2 + skipped)
    return df.reset_index(drop=True), where


def _read_parquet_frame(
    data: bytes, name: str, *, categorical: bool = False
) -> tuple[pd.DataFrame, _Where]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"{name}: cannot be read as Parquet ({exc}); export it again (e.g. "
            "DataFrame.to_parquet)."
        ) from None
    # refuse by the footer, before any column is decompressed
    check_count(name, "rows", meta.num_rows, "max_rows")
    check_count(name, "columns", meta.num_columns, "max_columns")
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > get_limits().max_file_bytes:
        raise refuse(name, f"the columns unpack to {unpacked:,} bytes", "max_file_bytes")
    _refuse_nested(meta.schema.to_arrow_schema(), name)
    try:
        if categorical:  # text columns straight to categoricals (fast path, exact labels)
            schema = pq.read_schema(pa.BufferReader(data))
            text = [
                f.name
                for f in schema
                if f.name.strip() != "score"
                and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
            ]
            table = pq.read_table(pa.BufferReader(data), read_dictionary=text)
            df = table.to_pandas()
        else:
            df = pd.read_parquet(io.BytesIO(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"{name}: cannot be read as Parquet ({exc}); export it again (e.g. "
            "DataFrame.to_parquet)."
        ) from None
    df.columns = pd.Index([str(c).strip() for c in df.columns])
    df = df.reset_index(drop=True)
    return df, _Where(name, "row", np.arange(1, len(df) + 1, dtype=np.int64))


def _refuse_nested(schema: Any, name: str, allowed: Sequence[str] = ()) -> None:
    """Refuse Parquet columns of lists, structs or maps (labels and scores are plain values)."""
    import pyarrow as pa

    for f in schema:
        if f.name in allowed:
            continue
        t = f.type
        if pa.types.is_nested(t):
            raise VoxMetricsInputError(
                f"{name}: column '{f.name}' holds {t} values (lists or records), not plain "
                "text or numbers; give it one value per row (e.g. flatten it before "
                "to_parquet)."
            )


def _table(
    data: bytes, name: str, kind: str, *, categorical: bool = False
) -> tuple[pd.DataFrame, _Where]:
    if kind == "parquet":
        return _read_parquet_frame(data, name, categorical=categorical)
    return _read_csv(data, name, categorical=categorical)


def read_table(source: Source, *, name: str | None = None) -> pd.DataFrame:
    r"""Read a CSV (UTF-8, with a header) or Parquet table.

    Label columns (``trial_id``, ``trial_speaker``, ``enrol_speaker``, ``utt_id``, ``speaker``,
    ``role``, ``split``, ``system``, ``audio_path``) are read as text, so ``007`` stays ``007``;
    only empty cells are missing values. Blank lines are skipped.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path, or the raw bytes of an uploaded file.
    name : str, optional
        The file name used in messages (default: the path's name or ``"uploaded file"``).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    VoxMetricsInputError
        Empty, not UTF-8, not a table, or a line with the wrong number of fields.

    Examples
    --------
    >>> read_table(b"utt_id,speaker\n007,a\n").to_dict("list")
    {'utt_id': ['007'], 'speaker': ['a']}
    """
    data, nm = _load(source, name)
    kind = _detect(data, nm)
    if kind not in ("csv", "metadata", "parquet"):
        raise VoxMetricsInputError(
            f"{nm}: expected a table (CSV with a header, or Parquet) but this is a {kind} file; "
            "export the table as CSV or Parquet."
        )
    return _table(data, nm, kind)[0]


def _missing_columns(df: pd.DataFrame, required: Sequence[str], where: _Where, what: str) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        place = "in the header (line 1)" if where.unit == "line" else "among the columns"
        found = ", ".join(map(str, df.columns)) or "none"
        raise VoxMetricsInputError(
            f"{where.name}: missing column(s) {', '.join(missing)} {place}; {what} needs "
            f"columns {', '.join(required)}. Found: {found}. Rename or add the columns."
        )


def _labels_of(col: pd.Series, column: str, where: _Where) -> pd.Series:
    na = col.isna().to_numpy()
    if na.any():
        i = int(np.argmax(na))
        raise VoxMetricsInputError(
            f"{where.name}: {where(i)}: column '{column}' is empty ({int(na.sum())} empty "
            f"value(s)); every row needs a {column}."
        )
    return col


def _as_str_array(values: Any) -> NDArray[np.str_]:
    return np.array(list(values), dtype=str)


def _numeric_scores(col: pd.Series, where: _Where, column: str = "score") -> NDArray[np.float64]:
    """Parse a score column; non-numeric, NaN and infinite values are errors with their line."""
    if pd.api.types.is_bool_dtype(col):
        raise VoxMetricsInputError(
            f"{where.name}: {where(0)}: {column} '{col.iloc[0]}' is not a number; write each "
            f"{column} as a plain number, e.g. 0.73."
        )
    if pd.api.types.is_numeric_dtype(col):
        vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        vals = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        cand = np.flatnonzero(np.isnan(vals) & col.notna().to_numpy())
        if cand.size:
            text = col.iloc[cand].astype(str).str.strip()
            bad = cand[~text.str.lower().isin(_NAN_WORDS).to_numpy()]
            if bad.size:
                i = int(bad[0])
                value = str(col.iloc[i])
                hint = (
                    " (use '.' as the decimal separator)"
                    if re.fullmatch(r"\s*[-+]?\d+,\d+\s*", value)
                    else ""
                )
                more = f" ({bad.size} non-numeric values in all)" if bad.size > 1 else ""
                raise VoxMetricsInputError(
                    f"{where.name}: {where(i)}: {column} '{value}' is not a number{more}; write "
                    f"each {column} as a plain number{hint}, e.g. 0.73."
                )
    bad = ~np.isfinite(vals)
    if bad.any():
        i = int(np.argmax(bad))
        what = "missing or NaN" if np.isnan(vals[i]) else f"infinite ({vals[i]})"
        more = f" ({int(bad.sum())} such values in all)" if bad.sum() > 1 else ""
        raise VoxMetricsInputError(
            f"{where.name}: {where(i)}: {column} is {what}{more}; every (trial, enrolled) pair "
            "needs a finite score, so fix the value or re-run the scoring."
        )
    return vals


# --------------------------------------------------------------------------------------------
# Long format -> T x N
# --------------------------------------------------------------------------------------------


class _Pivot:
    """Long (trial, enrolled, score) rows pivoted to T x N, orders of first appearance."""

    def __init__(
        self, trial: pd.Series, enrol: pd.Series, scores: NDArray[np.float64], where: _Where
    ) -> None:
        tcodes, tuniq = pd.factorize(trial, sort=False)
        ecodes, euniq = pd.factorize(enrol, sort=False)
        t, n = len(tuniq), len(euniq)
        self.trial_ids = _as_str_array(tuniq)
        self.enrol_speakers = _as_str_array(euniq)
        self.tcodes = tcodes
        self.ecodes = ecodes
        # Row of the first appearance of each trial; factorize numbers trials in that order.
        self.first = np.flatnonzero(~pd.Series(tcodes).duplicated().to_numpy())
        key = tcodes.astype(np.int64) * n + ecodes
        if t * n <= key.size:  # complete unless a pair repeats: a bitmap of at most one per row
            filled = np.zeros(t * n, dtype=bool)
            filled[key] = True
            complete = key.size == t * n and bool(filled.all())
            del filled
        else:  # sparse for sure; no T x N bitmap before the cell limit (a file may imply 10^10)
            complete = False
        dup = np.zeros(0, dtype=bool) if complete else pd.Series(key).duplicated().to_numpy()
        if dup.any():  # some pair appears twice
            j = int(np.argmax(dup))
            i = int(np.flatnonzero(key == key[j])[0])
            raise VoxMetricsInputError(
                f"{where.name}: {where(j)}: duplicate (trial, enrolled) pair: trial "
                f"'{self.trial_ids[tcodes[j]]}' x enrolled '{self.enrol_speakers[ecodes[j]]}' "
                f"already appears on {where(i)} ({int(dup.sum())} duplicate row(s) in all); "
                "keep one score per pair."
            )
        check_count(
            where.name,
            f"score cells ({t:,} trials x {n:,} enrolled"
            + ("" if complete else f", {key.size:,} of them listed")
            + ")",
            t * n,
            "max_cells",
        )
        # Fill through a flat view so the matrix owns its memory (from_arrays need not copy it).
        # A sparse trial list (some pairs not listed): NaN in the unlisted cells and a mask.
        self.scores = np.empty((t, n), dtype=np.float64)
        self.mask: NDArray[np.bool_] | None = None
        if not complete:
            self.scores.fill(np.nan)
            self.mask = np.zeros((t, n), dtype=bool)
            self.mask.reshape(-1)[key] = True
        self.scores.reshape(-1)[key] = scores

    def check_truncated(self, where: _Where, allow_incomplete: bool) -> None:
        """Refuse a file that lists its pairs in grid order and stops inside a trial / speaker.

        A long or Kaldi file written trial by trial (every trial against all enrolled, in one
        order) or enrolled speaker by speaker, whose last group is cut short, is a file cut at
        a line boundary, not a sparse trial list.
        """
        if self.mask is None:
            return
        t, n = self.scores.shape
        rows = np.arange(self.tcodes.size, dtype=np.int64)
        for outer, inner, size, what in (
            (self.tcodes, self.ecodes, n, "trial"),
            (self.ecodes, self.tcodes, t, "enrolled speaker"),
        ):
            if (
                size > 1
                and rows.size % size
                and np.array_equal(outer, rows // size)
                and np.array_equal(inner, rows % size)
            ):
                last = (
                    self.trial_ids[self.tcodes[-1]]
                    if what == "trial"
                    else self.enrol_speakers[self.ecodes[-1]]
                )
                msg = (
                    f"{where.name}: the rows end early: the file lists its pairs {what} by "
                    f"{what}, each against all {size:,}, but stops after {where(rows.size - 1)} "
                    f"inside {what} '{last}' ({rows.size:,} listed pairs of T x N = {t:,} x "
                    f"{n:,} = {t * n:,}), so it looks truncated"
                )
                _incomplete(msg, t * n - rows.size, allow_incomplete)
                return

    def per_trial(self, col: pd.Series, column: str, where: _Where) -> NDArray[Any]:
        """Values of a column that must be constant within each trial, one per trial."""
        codes, _ = pd.factorize(col, sort=False)
        firsts = codes[self.first]
        bad = codes != firsts[self.tcodes]
        if bad.any():
            j = int(np.argmax(bad))
            i = int(self.first[self.tcodes[j]])
            raise VoxMetricsInputError(
                f"{where.name}: {where(j)}: trial '{self.trial_ids[self.tcodes[j]]}' has "
                f"{column} '{col.iloc[j]}' but {where(i)} gives '{col.iloc[i]}'; '{column}' "
                "describes the trial, so give it the same value on all the trial's rows."
            )
        return col.iloc[self.first].to_numpy()


def _incomplete(msg: str, dropped: int, allow_incomplete: bool) -> None:
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


def _infer_numbers(values: NDArray[Any]) -> NDArray[Any]:
    """Text values that are all numbers (or missing) become a numeric array, as in read_csv."""
    try:
        return pd.to_numeric(pd.Series(values, dtype=object)).to_numpy()
    except (ValueError, TypeError):
        return values


def _attribute(values: NDArray[Any]) -> NDArray[Any]:
    """Attribute values as a plain numpy array: numbers stay numbers, text becomes str."""
    if values.dtype.kind in "biufcmM":
        return values
    if pd.isna(values).any():
        return np.array([None if pd.isna(v) else v for v in values], dtype=object)
    return values.astype(str)


def _drop_nan_rows(df: pd.DataFrame, column: Any, where: _Where) -> tuple[pd.DataFrame, _Where]:
    """Rows whose score is empty or NaN left out, with a warning (``allow_incomplete``)."""
    col = df[column]
    if pd.api.types.is_numeric_dtype(col):
        nan = col.isna().to_numpy()
    else:
        text = col.astype(object).where(col.notna(), "nan").astype(str).str.strip().str.lower()
        nan = text.isin(_NAN_WORDS).to_numpy()
    if nan.any() and not nan.all():
        i = int(np.argmax(nan))
        _incomplete(
            f"{where.name}: {int(nan.sum()):,} of {nan.size:,} rows have an empty or NaN score "
            f"(first: {where(i)})",
            int(nan.sum()),
            True,
        )
        keep = ~nan
        df = df.loc[keep].reset_index(drop=True)
        where = _Where(where.name, where.unit, where.numbers[keep])
    return df, where


def _scores_from_long(
    df: pd.DataFrame, where: _Where, *, text: bool = True, allow_incomplete: bool = False
) -> ScoreMatrix:
    """Validate and pivot a long frame; ``text``: it came from CSV (attributes may be numbers)."""
    _missing_columns(df, SCORE_COLUMNS, where, "a long scores file")
    if df.empty:
        raise VoxMetricsInputError(
            f"{where.name}: has a header but no data rows; add one row per (trial, enrolled) pair."
        )
    for c in SCORE_COLUMNS[:3]:
        _labels_of(df[c], c, where)
    if allow_incomplete:
        df, where = _drop_nan_rows(df, "score", where)
    scores = _numeric_scores(df["score"], where)
    pv = _Pivot(df["trial_id"], df["enrol_speaker"], scores, where)
    pv.check_truncated(where, allow_incomplete)
    speakers = _as_str_array(pv.per_trial(df["trial_speaker"], "trial_speaker", where))
    attrs = {}
    for c in df.columns:
        if c not in SCORE_COLUMNS:
            values = pv.per_trial(df[c], c, where)
            if text and isinstance(df[c].dtype, pd.CategoricalDtype):  # CSV: infer numbers
                values = _infer_numbers(values)
            attrs[c] = _attribute(values)
    return ScoreMatrix.from_arrays(
        pv.scores,
        trial_ids=pv.trial_ids,
        trial_speakers=speakers,
        enrol_speakers=pv.enrol_speakers,
        attributes=attrs,
        source=where.name,
        copy=False,  # the pivot's own array
        mask=pv.mask,
    )


# --------------------------------------------------------------------------------------------
# NumPy
# --------------------------------------------------------------------------------------------


def _np_load(data: bytes, name: str, kind: str) -> Any:
    """An NPY array or NPZ arrays, within the input limits (header checked, never unpickled)."""
    if kind == "npz":
        return load_npz(data, name)
    return load_npy(data, name)


def _npz_arrays(
    data: bytes | Path, name: str, required: Sequence[str], what: str
) -> dict[str, np.ndarray]:
    # a path is an NPZ already recognised by _npz_path; its members are read from the file
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


def _text_array(a: np.ndarray, key: str, name: str) -> NDArray[np.str_]:
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


def _float_array(a: np.ndarray, key: str, name: str) -> NDArray[np.floating]:
    """float32 and float64 as they are (no copy); other numbers as float64."""
    if a.dtype.kind not in "fiub":
        raise VoxMetricsInputError(
            f"{name}: array '{key}' has dtype {a.dtype}; it must hold numbers (float)."
        )
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


def _npz_path(source: Source, format: str, name: str | None) -> Path | None:
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


def _scores_from_npz(data: bytes | Path, name: str, allow_incomplete: bool = False) -> ScoreMatrix:
    arrays = _npz_arrays(data, name, _NPZ_ARRAYS, "a score NPZ")
    s = _float_array(arrays["scores"], "scores", name)
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
        s = _readonly(s, copy=False)  # fresh from the archive reader (or astype): frozen
        remember_finite(s)
    else:
        nan = np.isnan(s)
        if nan.any():
            i, j = np.unravel_index(int(np.argmax(nan)), s.shape)
            _incomplete(
                f"{name}: array 'scores' holds {int(nan.sum()):,} NaN value(s) of T x N = "
                f"{t:,} x {n:,} = {t * n:,} (first: row {i + 1}, column {j + 1}) and no 'mask'; "
                "a NaN is not a score (a sparse trial list gives a boolean 'mask' array, True = "
                "listed pair)",
                int(nan.sum()),
                allow_incomplete,
            )
    attrs = {
        k[len("attr_") :]: _attribute(np.char.decode(v, "utf-8") if v.dtype.kind == "S" else v)
        for k, v in arrays.items()
        if k.startswith("attr_")
    }
    return ScoreMatrix.from_arrays(
        s,
        trial_ids=_text_array(arrays["trial_ids"], "trial_ids", name),
        trial_speakers=_text_array(arrays["trial_speakers"], "trial_speakers", name),
        enrol_speakers=_text_array(arrays["enrol_speakers"], "enrol_speakers", name),
        attributes=attrs,
        source=name,
        copy=False,  # fresh from the archive reader (or astype): nothing else holds it
        mask=arrays.get("mask"),  # a sparse trial list: True = listed pair
        nan_missing=allow_incomplete,  # asked for: a NaN pair is left out (with a warning)
    )


# --------------------------------------------------------------------------------------------
# Kaldi / VoicePrivacy
# --------------------------------------------------------------------------------------------


def _fields(k: int) -> str:
    return f"{k} field" if k == 1 else f"{k} fields"


def _read_fields(
    data: bytes, name: str, n: int, layout: str, *, numeric_last: bool
) -> tuple[pd.DataFrame, _Where]:
    """Whitespace-separated lines of exactly ``n`` fields; blank lines are skipped."""
    labels = range(n - 1 if numeric_last else n)
    data, skipped = _skip_blank_start(data)
    options: dict[str, Any] = {
        "sep": r"\s+",
        "header": None,
        "keep_default_na": False,
        "na_values": [""],
        "skip_blank_lines": False,
        "encoding": "utf-8-sig",
        "quoting": csv.QUOTE_NONE,
    }
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=dict.fromkeys(labels, "category"), **options)
        _exact_labels(df, data, options, [c for c in labels if c in df.columns])
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if not m:
            raise VoxMetricsInputError(
                f"{name}: cannot be parsed as `{layout}` lines ({exc})."
            ) from None
        expected, line, saw = (int(g) for g in m.groups())
        if expected != n:  # the first line set the wrong width
            first = data.lstrip(b"\xef\xbb\xbf").split(b"\n")
            line = next(k for k, ln in enumerate(first, 1) if ln.strip())
            saw = expected
        raise VoxMetricsInputError(
            f"{name}: line {line} has {_fields(saw)}; every line must be `{layout}` ({n} "
            "whitespace-separated fields)."
        ) from None
    except pd.errors.EmptyDataError:
        raise VoxMetricsInputError(f"{name}: the file is empty.") from None
    blank = df.isna().all(axis=1).to_numpy()
    df = df.loc[~blank]
    where = _Where(name, "line", df.index.to_numpy(dtype=np.int64) + 1 + skipped)
    df = df.reset_index(drop=True)
    if df.shape[1] != n or df[n - 1].isna().any():
        counts = df.notna().sum(axis=1).to_numpy()
        bad = counts != n
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{name}: {where(i)} has {_fields(counts[i])}; every line must be `{layout}` "
                f"({n} whitespace-separated fields)."
            )
    return df, where


def _key_pairs_scored(
    pv: _Pivot, key: pd.DataFrame, where: _Where, scores_name: str, allow_incomplete: bool
) -> None:
    """Refuse key lines of scored trials whose (enrolled, trial) pair has no score.

    A scores file cut inside a trial (or from another run) lacks pairs its key lists. ``key``
    holds the scored trials' lines only (the others are :func:`_key_trials_scored`'s).
    """
    tpos = pd.Index(pv.trial_ids).get_indexer(key[1].astype(str))
    epos = pd.Index(pv.enrol_speakers).get_indexer(key[0].astype(str))
    found = (tpos >= 0) & (epos >= 0)
    if pv.mask is not None:
        found[found] = pv.mask[tpos[found], epos[found]]
    if found.all():
        return
    missing = ~found
    i = int(np.argmax(missing))
    t, n = pv.scores.shape
    listed = t * n if pv.mask is None else int(pv.mask.sum())
    _incomplete(
        f"{where.name}: {int(missing.sum()):,} of the {missing.size:,} pairs listed in the key "
        f"have no score in {scores_name} (first: {where(i)}, enrolled '{key[0].iloc[i]}' x "
        f"trial '{key[1].iloc[i]}'); the scores hold {listed:,} listed pairs of T x N = "
        f"{t:,} x {n:,} = {t * n:,}, so the scores file is truncated or from another run",
        int(missing.sum()),
        allow_incomplete,
    )


def _key_trials_scored(
    trial_col: pd.Series,
    scored: NDArray[np.bool_],
    where: _Where,
    scores_name: str,
    allow_incomplete: bool,
) -> None:
    """Refuse a key whose trials are not all scored: a scores file cut between two trials.

    A file cut exactly at a trial boundary lacks whole trials, each with all its pairs; only
    the key shows it. A key that lists more trials on purpose (a master key serving several
    scores files) is read with ``allow_incomplete``: its unscored trials are left out, counted.
    """
    unscored = ~scored
    n_trials = int(trial_col[unscored].nunique())
    total = int(trial_col.nunique())
    i = int(np.argmax(unscored))
    _incomplete(
        f"{where.name}: {n_trials:,} of the {total:,} trials listed in the key "
        f"({int(unscored.sum()):,} of its {unscored.size:,} lines) have no score at all in "
        f"{scores_name} (first: {where(i)}, trial '{trial_col.iloc[i]}'), so the scores file "
        "was cut between two trials, or the key lists more trials than it (a master key)",
        int(unscored.sum()),
        allow_incomplete,
    )


def _kaldi_trial_speakers(
    pv: _Pivot,
    trials: Source,
    trials_name: str | None,
    scores_name: str,
    allow_incomplete: bool = False,
) -> tuple[NDArray[np.str_], bool]:
    data, tn = _load(trials, trials_name)
    kind = _detect(data, tn)
    if kind == "kaldi-key":
        key, where = _read_fields(
            data, tn, 3, "enrol_id trial_id target|nontarget", numeric_last=False
        )
        scored = key[1].isin(pv.trial_ids).to_numpy()  # a master key may list other trials
        if not scored.any():
            raise VoxMetricsInputError(
                f"{tn}: the key file does not match {scores_name}: none of its trial ids "
                "appears in the scores; give the key (trials) file of the same experiment as "
                "the scores."
            )
        if not scored.all():  # only the scored trials' lines are used (and checked)
            _key_trials_scored(key[1], scored, where, scores_name, allow_incomplete)
            key = key.loc[scored].reset_index(drop=True)
            where = _Where(where.name, where.unit, where.numbers[scored])
        label = key[2].astype(str).str.lower()
        bad = ~label.isin(("target", "nontarget")).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{tn}: {where(i)}: label '{key[2].iloc[i]}' is neither 'target' nor "
                "'nontarget'; each key line is `enrol_id trial_id target|nontarget`."
            )
        is_tgt = (label == "target").to_numpy()
        tgt = key.loc[is_tgt, [0, 1]].drop_duplicates()
        clash = tgt.duplicated(subset=[1]).to_numpy()
        if clash.any():
            j = int(np.argmax(clash))
            trial = tgt[1].iloc[j]
            first = tgt[(tgt[1] == trial).to_numpy()].index
            raise VoxMetricsInputError(
                f"{tn}: {where(int(tgt.index[j]))}: trial '{trial}' is marked target for "
                f"enrolled '{tgt[0].iloc[j]}' but {where(int(first[0]))} marks it target for "
                f"'{key[0].iloc[int(first[0])]}'; a trial has one speaker, so mark only one "
                "target line per trial."
            )
        mapping = pd.Series(tgt[0].to_numpy(), index=tgt[1].to_numpy())
        speakers = mapping.reindex(pv.trial_ids)
        if not speakers.isna().all():
            _key_pairs_scored(pv, key, where, scores_name, allow_incomplete)
        if speakers.isna().all():
            raise VoxMetricsInputError(
                f"{tn}: the key file does not match {scores_name}: none of its target lines "
                "names a trial of the scores; give the key (trials) file of the same "
                "experiment as the scores."
            )
        # a trial without a target line: speaker unknown (not enrolled), one label per trial
        unknown = speakers.isna().to_numpy()
        speakers[unknown] = [f"{_NOT_ENROLLED} ({t})" for t in pv.trial_ids[unknown]]
        return _as_str_array(speakers.to_numpy()), True
    if kind == "utt2spk":
        u2s, where = _read_fields(data, tn, 2, "utt_id speaker", numeric_last=False)
        pairs = u2s.drop_duplicates()
        clash = pairs.duplicated(subset=[0]).to_numpy()
        if clash.any():
            j = int(np.argmax(clash))
            utt = pairs[0].iloc[j]
            i = int(np.flatnonzero((u2s[0] == utt).to_numpy())[0])
            raise VoxMetricsInputError(
                f"{tn}: {where(int(pairs.index[j]))}: utterance '{utt}' has speaker "
                f"'{pairs[1].iloc[j]}' but {where(i)} gives '{u2s[1].iloc[i]}'; give each "
                "utterance one speaker."
            )
        speakers = pd.Series(pairs[1].to_numpy(), index=pairs[0].to_numpy()).reindex(pv.trial_ids)
        missing = speakers.isna().to_numpy()
        if missing.any():
            raise VoxMetricsInputError(
                f"{tn}: {int(missing.sum())} of {missing.size} trial ids of {scores_name} are "
                f"not in this utt2spk file, e.g. '{pv.trial_ids[int(np.argmax(missing))]}'; add "
                "a `utt_id speaker` line for every trial."
            )
        return _as_str_array(speakers.to_numpy()), False
    raise VoxMetricsInputError(
        f"{tn}: the trials file must be a Kaldi key (`enrol_id trial_id target|nontarget`) or an "
        f"utt2spk file (`utt_id speaker`), but it looks like a {kind} file; pass the key file "
        "of the scores."
    )


def _scores_from_kaldi(
    data: bytes,
    name: str,
    trials: Source | None,
    trials_name: str | None,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    if trials is None:
        raise VoxMetricsInputError(
            f"{name}: Kaldi / VoicePrivacy scores (`enrol_id trial_id score`) do not say who "
            "speaks in each trial; pass the key file (`enrol_id trial_id target|nontarget`) or "
            "an utt2spk file with trials=... (command line: --trials KEY)."
        )
    df, where = _read_fields(data, name, 3, "enrol_id trial_id score", numeric_last=True)
    if allow_incomplete:
        df, where = _drop_nan_rows(df, 2, where)
    scores = _numeric_scores(df[2], where)
    pv = _Pivot(df[1], df[0], scores, where)
    speakers, keyed = _kaldi_trial_speakers(pv, trials, trials_name, name, allow_incomplete)
    if not keyed:  # a key names the pairs the scores lack; an utt2spk file does not
        pv.check_truncated(where, allow_incomplete)
    return ScoreMatrix.from_arrays(
        pv.scores,
        trial_ids=pv.trial_ids,
        trial_speakers=speakers,
        enrol_speakers=pv.enrol_speakers,
        source=name,
        copy=False,  # the pivot's own array
        mask=pv.mask,
    )


# --------------------------------------------------------------------------------------------
# Public readers
# --------------------------------------------------------------------------------------------


def read_scores(
    source: Source,
    *,
    trials: Source | None = None,
    format: ScoreFormat = "auto",
    name: str | None = None,
    trials_name: str | None = None,
    distance: bool = False,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    r"""Read a score file into a :class:`~voxmetrics.data.ScoreMatrix`.

    The long format is pivoted to T x N keeping trials and enrolled identities in their order of
    first appearance. A sparse trial list (pairs missing from a long or Kaldi file, an NPZ
    ``mask`` array, or NaN for the unlisted pairs of an NPZ) gives a matrix with a ``mask``
    (:attr:`~voxmetrics.data.ScoreMatrix.mask`): NaN in the unlisted cells, which the metrics
    never read. Trials whose speaker is not enrolled are excluded and counted (an
    :class:`~voxmetrics.errors.ExcludedTrialsWarning` is emitted).

    Parameters
    ----------
    source : str, os.PathLike or bytes
        The scores: a path, or the raw bytes of an uploaded file.
    trials : str, os.PathLike or bytes, optional
        For Kaldi / VoicePrivacy scores only (required there): the key file ``enrol_id trial_id
        target|nontarget`` (a trial's speaker is the ``enrol_id`` of its target line; a trial
        with no target line has a speaker who is not enrolled) or an utt2spk file ``utt_id
        speaker`` (every trial must be listed).
    format : {"auto", "csv", "parquet", "npz", "kaldi"}
        ``"auto"`` recognises the format from the content (:func:`detect_format`).
    name, trials_name : str, optional
        File names used in messages (default: the path's name or ``"uploaded file"``).
    distance : bool, default False
        The scores are distances (lower = closer, e.g. Euclidean or PLDA-free cosine
        distances): they are negated on reading, so that every metric sees higher = closer.
    allow_incomplete : bool, default False
        A broken file is refused: Kaldi key pairs without a score, NaN scores (an NPZ without
        a ``mask``; an empty or NaN score cell), a long or Kaldi file that lists its pairs in
        grid order and stops inside a trial. With True such pairs are left out instead,
        counted in an :class:`~voxmetrics.errors.IncompleteScoresWarning`, and the metrics use
        the listed pairs only.

    Returns
    -------
    ScoreMatrix
        With ``source`` set to ``name``; CSV / Parquet attribute columns and NPZ ``attr_<name>``
        arrays become per-trial attributes.

    Raises
    ------
    VoxMetricsInputError
        Saying what is wrong, where (file and line / row) and how to fix it: empty file, missing
        columns, non-numeric / NaN / infinite scores, duplicate (trial, enrolled) pairs, a
        sparse list without a mated or a non-mated pair (or over the cell limit), fewer than two
        enrolled identities, no trial with an enrolled speaker, text that is not UTF-8, pickled
        arrays, inconsistent array lengths, malformed Kaldi lines.

    Examples
    --------
    >>> csv_bytes = (b"trial_id,trial_speaker,enrol_speaker,score,sex\n"
    ...              b"t1,a,a,0.9,F\nt1,a,b,0.1,F\nt2,b,a,0.2,M\nt2,b,b,0.8,M\n")
    >>> sm = read_scores(csv_bytes, name="scores.csv")
    >>> sm.shape, sm.tar.tolist(), sm.attributes["sex"].tolist()
    ((2, 2), [0.9, 0.8], ['F', 'M'])
    >>> sm2 = read_scores(b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n",
    ...                   trials=b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n")
    >>> sm2.trial_speakers.tolist()
    ['a', 'b']
    >>> read_scores(b"a t1 0.1\nb t1 0.9\n", trials=b"t1 a\n", distance=True).tar.tolist()
    [-0.1]
    """
    sm = _read_scores(source, trials, format, name, trials_name, allow_incomplete)
    return negate_scores(sm) if distance else sm


def negate_scores(sm: ScoreMatrix) -> ScoreMatrix:
    """The matrix with every score negated: distances (lower = closer) become similarities.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[0.2, 1.5]], trial_ids=["t"], trial_speakers=["a"],
    ...                              enrol_speakers=["a", "b"])
    >>> negate_scores(sm).scores.tolist()
    [[-0.2, -1.5]]
    """
    neg = np.negative(sm.scores)
    neg.flags.writeable = False
    return replace(sm, scores=neg)


def _read_scores(
    source: Source,
    trials: Source | None,
    format: ScoreFormat,
    name: str | None,
    trials_name: str | None,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    npz_path = _npz_path(source, format, name) if trials is None else None
    if npz_path is not None:  # one copy of the matrix: read from the file, not from its bytes
        nm = name or npz_path.name or str(npz_path)
        return _scores_from_npz(npz_path, nm, allow_incomplete)
    data, nm = _load(source, name)
    if format not in _SCORE_FORMATS:
        raise VoxMetricsInputError(
            f"{nm}: unknown format {format!r}; use one of {', '.join(_SCORE_FORMATS)}."
        )
    if format == "auto":
        kind = _detect(data, nm)
    else:
        _check_not_empty(data, nm)
        found = _binary_kind(data, nm)
        expected = format if format in ("npz", "parquet") else None
        if found != expected:
            what = f"the file is {found.upper()}" if found else "the file is text, not binary"
            if found is None and expected:
                what = f"the file does not start with the {expected.upper()} signature"
            raise VoxMetricsInputError(
                f"{nm}: format={format!r} was given but {what}; pass the right format or "
                "format='auto'."
            )
        if expected is None:
            _check_utf8(data, nm)
        kind = format
    if trials is not None and kind != "kaldi":
        raise VoxMetricsInputError(
            f"{nm}: a trials (key) file was given but the scores are {kind}, not Kaldi; the key "
            "file only goes with Kaldi / VoicePrivacy scores (`enrol_id trial_id score`)."
        )
    if kind in ("csv", "parquet"):
        df, where = _table(data, nm, kind, categorical=True)
        return _scores_from_long(df, where, text=kind == "csv", allow_incomplete=allow_incomplete)
    if kind == "npz":
        return _scores_from_npz(data, nm, allow_incomplete)
    if kind == "kaldi":
        return _scores_from_kaldi(data, nm, trials, trials_name, allow_incomplete)
    advice = {
        "npy": "an NPY file holds one bare array without labels; save scores with their labels "
        "in an NPZ (numpy.savez(path, scores=..., trial_ids=..., trial_speakers=..., "
        "enrol_speakers=...)) or as a long CSV",
        "kaldi-key": "this is a Kaldi key file (`enrol_id trial_id target|nontarget`); pass the "
        "scores file as the source and this one as trials=... (command line: --trials)",
        "utt2spk": "this is an utt2spk file (`utt_id speaker`); pass the Kaldi scores file as "
        "the source and this one as trials=... (command line: --trials)",
        "metadata": "this is an embeddings metadata CSV (utt_id, speaker, role, split); read it "
        "with read_embeddings(..., metadata=...) or give a scores file",
    }
    raise VoxMetricsInputError(f"{nm}: not a score file: {advice[kind]}.")


def _meta_frame(data: bytes, name: str) -> tuple[pd.DataFrame, _Where]:
    kind = _detect(data, name)
    if kind not in ("csv", "metadata", "parquet"):
        raise VoxMetricsInputError(
            f"{name}: the metadata must be a CSV (or Parquet) table with columns "
            f"{', '.join(META_COLUMNS)}, but this is a {kind} file."
        )
    df, where = _table(data, name, kind)
    _check_meta(df, where)
    return df, where


def _check_meta(df: pd.DataFrame, where: _Where) -> None:
    _missing_columns(df, META_COLUMNS, where, "embeddings metadata")
    if df.empty:
        raise VoxMetricsInputError(
            f"{where.name}: has a header but no rows; add one row per utterance."
        )
    for c in META_COLUMNS:
        _labels_of(df[c], c, where)
        df[c] = df[c].astype(str)
    for col, allowed in (("role", ("enrol", "trial")), ("split", SPLIT_VALUES)):
        bad = ~df[col].isin(allowed).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise VoxMetricsInputError(
                f"{where.name}: {where(i)}: {col} '{df[col].iloc[i]}' is not allowed; use one of "
                f"{', '.join(allowed)}."
            )
    dup = df["utt_id"].duplicated().to_numpy()
    if dup.any():
        j = int(np.argmax(dup))
        i = int(np.flatnonzero((df["utt_id"] == df["utt_id"].iloc[j]).to_numpy())[0])
        raise VoxMetricsInputError(
            f"{where.name}: {where(j)}: utt_id '{df['utt_id'].iloc[j]}' already appears on "
            f"{where(i)}; each utterance needs one row with a unique utt_id."
        )


def _embeddings_from_parquet(data: bytes, name: str) -> EmbeddingSet:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"{name}: cannot be read as Parquet ({exc}); export it again."
        ) from None
    if "embedding" not in table.column_names:
        raise VoxMetricsInputError(
            f"{name}: no 'embedding' column; an embeddings Parquet needs columns "
            f"{', '.join(META_COLUMNS)} and an `embedding` list column (one vector per row). "
            f"Found: {', '.join(table.column_names)}."
        )
    _refuse_nested(table.schema, name, allowed=("embedding",))
    col = table.column("embedding")
    where = _Where(name, "row", np.arange(1, table.num_rows + 1, dtype=np.int64))
    if not (
        pa.types.is_list(col.type)
        or pa.types.is_large_list(col.type)
        or pa.types.is_fixed_size_list(col.type)
    ) or not (
        pa.types.is_floating(col.type.value_type) or pa.types.is_integer(col.type.value_type)
    ):
        raise VoxMetricsInputError(
            f"{name}: column 'embedding' has type {col.type}; it must be a list of numbers "
            "(one vector per row)."
        )
    if col.null_count:
        i = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
        raise VoxMetricsInputError(
            f"{name}: {where(i)}: the embedding is empty (null); give every row a vector."
        )
    lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
    if lengths.size and (lengths != lengths[0]).any():
        i = int(np.argmax(lengths != lengths[0]))
        raise VoxMetricsInputError(
            f"{name}: shape mismatch: {where(i)} has an embedding of length {lengths[i]} but "
            f"{where(0)} has {lengths[0]}; all embeddings must have the same dimension."
        )
    d = int(lengths[0]) if lengths.size else 0
    flat = pc.list_flatten(col).to_numpy(zero_copy_only=False).astype(np.float64)
    emb = flat.reshape(table.num_rows, d)
    meta = table.drop_columns(["embedding"]).to_pandas()
    meta.columns = pd.Index([str(c).strip() for c in meta.columns])
    _check_meta(meta, where)
    return EmbeddingSet.from_arrays(emb, meta, source=name)


def _filter_system(meta: pd.DataFrame, system: str | None, name: str) -> pd.DataFrame:
    """The metadata rows of one ``system`` (all rows when None)."""
    if system is None:
        return meta
    if "system" not in meta.columns:
        raise VoxMetricsInputError(
            f"{name}: system '{system}' was asked for but the metadata has no 'system' column; "
            "add one (e.g. original, anonymised) or leave out the system filter."
        )
    labels = meta["system"].astype(str)
    keep = (labels == system).to_numpy()
    if not keep.any():
        found = ", ".join(sorted(labels.unique())[:10])
        raise VoxMetricsInputError(
            f"{name}: no row has system '{system}'; the systems are: {found}."
        )
    return meta[keep].reset_index(drop=True)


def _match_ids(
    emb: NDArray[np.float64],
    ids: NDArray[np.str_],
    meta: pd.DataFrame,
    nm: str,
    mnm: str,
) -> NDArray[np.float64]:
    """Rows of ``emb`` in the metadata's order; embeddings without a metadata row are ignored."""
    index = pd.Index(ids)
    if index.has_duplicates:
        dup = index[index.duplicated()][0]
        raise VoxMetricsInputError(
            f"{nm}: utt_id '{dup}' appears more than once; each embedding needs a unique utt_id."
        )
    meta_ids = meta["utt_id"].to_numpy(dtype=str)
    pos = index.get_indexer(meta_ids)
    if (pos < 0).any():
        miss = pos < 0
        raise VoxMetricsInputError(
            f"{mnm}: {int(miss.sum())} of {miss.size} utt_ids have no embedding in {nm}, e.g. "
            f"'{meta_ids[int(np.argmax(miss))]}'; remove those rows or add their embeddings."
        )
    if emb.shape[0] != len(meta):
        extra = ~index.isin(meta_ids)
        warnings.warn(
            f"{nm}: {int(extra.sum())} of {extra.size} embeddings have no row in {mnm}, e.g. "
            f"'{ids[int(np.argmax(extra))]}' (or belong to another system); they are ignored.",
            IgnoredEmbeddingsWarning,
            stacklevel=3,
        )
    return emb[pos]


def read_embeddings(
    source: Source,
    *,
    metadata: Source | None = None,
    name: str | None = None,
    metadata_name: str | None = None,
    system: str | None = None,
    ark_root: str | os.PathLike[str] | None = None,
) -> EmbeddingSet:
    r"""Read utterance embeddings into an :class:`~voxmetrics.data.EmbeddingSet` (format 4).

    Parameters
    ----------
    source : str, os.PathLike or bytes
        An NPZ with ``embeddings`` (U x d) and ``utt_ids`` (U); an NPY (U x d) whose rows follow
        the metadata's rows; one Parquet with columns ``utt_id, speaker, role, split``,
        optional attribute columns and an ``embedding`` list column; a Kaldi ark (binary
        float / double vectors or text) or scp (a path; see
        :mod:`voxmetrics.data.embedding_files` for how its ark paths are resolved); or an HDF5
        file (one dataset per utterance, or ``embeddings`` plus ``utt_ids``).
    metadata : str, os.PathLike or bytes, optional
        Required except with Parquet (refused there): a CSV (or Parquet) table with columns
        ``utt_id, speaker, role, split`` and optional attributes. Embeddings are matched to it
        by ``utt_id`` and put in its order; it may list a subset of them (the others are
        ignored, counted in an :class:`~voxmetrics.errors.IgnoredEmbeddingsWarning`).
    name, metadata_name : str, optional
        File names used in messages (default: the path's name or ``"uploaded file"``).
    system : str, optional
        Keep only the metadata rows whose ``system`` column has this value.
    ark_root : str or os.PathLike, optional
        For a Kaldi scp: the folder its relative ark paths are resolved against and outside
        which no ark may lie (default: the scp's folder).

    Returns
    -------
    EmbeddingSet
        Embeddings in the metadata's row order.

    Raises
    ------
    VoxMetricsInputError
        Missing metadata, missing columns, utterances without an embedding, row counts that
        differ (NPY), pickled arrays, bad role / split values, an unknown system, and what
        :meth:`EmbeddingSet.from_arrays` rejects.

    Examples
    --------
    >>> import io, numpy as np
    >>> buf = io.BytesIO()
    >>> ids = np.array(["e1", "e2", "t1", "t2"])
    >>> np.savez(buf, embeddings=np.eye(3)[[0, 1, 0, 1]], utt_ids=ids)
    >>> meta = (b"utt_id,speaker,role,split\ne1,a,enrol,eval\ne2,b,enrol,eval\n"
    ...         b"t1,a,trial,eval\nt2,b,trial,eval\n")
    >>> es = read_embeddings(buf.getvalue(), metadata=meta)
    >>> es.embeddings.shape, es.score_matrix("eval").tar.tolist()
    ((4, 3), [1.0, 1.0])
    >>> ark = b"e1  [ 1 0 ]\ne2  [ 0 1 ]\nt1  [ 2 0.1 ]\nt2  [ 0.1 3 ]\n"
    >>> read_embeddings(ark, metadata=meta).embeddings.shape
    (4, 2)
    """
    data, nm = _load(source, name)
    _check_not_empty(data, nm)
    kind = sniff_embeddings(data) or _detect(data, nm)
    if kind == "parquet":
        if metadata is not None:
            raise VoxMetricsInputError(
                f"{nm}: an embeddings Parquet file carries its own metadata columns; do not pass "
                "a separate metadata file (or give the embeddings as NPZ / NPY)."
            )
        es = _embeddings_from_parquet(data, nm)
        if system is None:
            return es
        meta = _filter_system(es.meta, system, nm)
        keep = es.meta["utt_id"].isin(meta["utt_id"]).to_numpy()
        return EmbeddingSet.from_arrays(es.embeddings[keep], meta, source=nm)
    if kind not in ("npz", "npy", *EMBEDDING_FILE_KINDS):
        hint = (
            "this is the metadata; pass the embeddings file first and this one as metadata=..."
            if kind == "metadata"
            else f"this is a {kind} file"
        )
        raise VoxMetricsInputError(
            f"{nm}: not an embeddings file: {hint}. Embeddings come as an NPZ (embeddings, "
            "utt_ids), NPY, Kaldi ark / scp or HDF5 with a metadata CSV, or one Parquet with an "
            "`embedding` column."
        )
    if metadata is None:
        raise VoxMetricsInputError(
            f"{nm}: {kind.upper()} embeddings need a metadata file (CSV with columns "
            f"{', '.join(META_COLUMNS)}); pass it with metadata=..."
        )
    mdata, mnm = _load(metadata, metadata_name)
    meta, _ = _meta_frame(mdata, mnm)
    meta = _filter_system(meta, system, mnm)
    if kind == "npy":
        if system is not None:
            raise VoxMetricsInputError(
                f"{nm}: an NPY has no utt_ids, so its rows cannot be filtered by system; use an "
                "NPZ with utt_ids."
            )
        arr = _np_load(data, nm, "npy")
        emb = _float_array(arr, "embeddings", nm)
        if emb.ndim != 2:
            raise VoxMetricsInputError(
                f"{nm}: the NPY array has shape {emb.shape}; it must be 2-D (utterances x "
                "dimensions)."
            )
        if emb.shape[0] != len(meta):
            raise VoxMetricsInputError(
                f"{nm}: shape mismatch: the NPY has {emb.shape[0]} rows but {mnm} has "
                f"{len(meta)} utterance rows; the NPY's rows must follow the metadata's rows one "
                "to one (or use an NPZ with utt_ids)."
            )
        return EmbeddingSet.from_arrays(emb, meta, source=nm)
    if kind == "npz":
        arrays = _npz_arrays(data, nm, ("embeddings", "utt_ids"), "an embeddings NPZ")
        emb = _float_array(arrays["embeddings"], "embeddings", nm)
        ids = _text_array(arrays["utt_ids"], "utt_ids", nm)
        if emb.ndim != 2 or ids.shape != (emb.shape[0],):
            raise VoxMetricsInputError(
                f"{nm}: shape mismatch: 'embeddings' has shape {emb.shape} and 'utt_ids' "
                f"{ids.shape}; give a 2-D (utterances x dimensions) array and one utt_id per row."
            )
    elif kind == "kaldi-scp":
        if not isinstance(source, str | os.PathLike):
            raise VoxMetricsInputError(
                f"{nm}: a Kaldi scp only points into ark files, which an upload does not "
                "carry; upload the ark itself (or give the scp's path on disk)."
            )
        ids, emb = read_kaldi_scp(source, ark_root=ark_root)
    elif kind == "hdf5":
        ids, emb = read_hdf5_embeddings(data, name=nm)
    else:
        ids, emb = read_kaldi_ark(data, name=nm)
    return EmbeddingSet.from_arrays(_match_ids(emb, ids, meta, nm, mnm), meta, source=nm)
