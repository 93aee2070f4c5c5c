"""Tables: CSV (UTF-8, with a header) and Parquet into a DataFrame, and their column checks.

Label columns are read as text (``007`` stays ``007``); every row keeps its line (CSV, counting
the header as line 1) or row (Parquet, from 1) for messages (:class:`Where`).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.readers._common import (
    LABEL_COLUMNS,
    NAN_WORDS,
    PREFIX,
    Source,
    Where,
    load_source,
)
from voxmetrics.data.readers.detect import detect_kind
from voxmetrics.errors import VoxMetricsInputError, kept_warnings
from voxmetrics.limits import check_count, get_limits, refuse

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "blank_start",
    "csv_header",
    "exact_labels",
    "labels_of",
    "missing_columns",
    "numeric_scores",
    "parquet_error",
    "parquet_footer",
    "read_csv_rows",
    "read_table",
    "read_tabular_rows",
    "refuse_duplicate_columns",
    "refuse_nested",
    "skip_blank_start",
]


def refuse_duplicate_columns(names: Sequence[Any], name: str) -> None:
    """Refuse a table that names a column twice, as written (pandas would rename it 'x.1')."""
    places: dict[str, list[int]] = {}
    for k, c in enumerate(names, 1):
        if str(c).strip():  # unnamed columns (trailing commas) are pandas' 'Unnamed: k'
            places.setdefault(str(c).strip(), []).append(k)
    for c, cols in places.items():
        if len(cols) > 1:
            times = "twice" if len(cols) == 2 else f"{len(cols)} times"
            listed = ", ".join(map(str, cols[:-1])) + f" and {cols[-1]}"
            raise VoxMetricsInputError(
                f"column '{c}' appears {times} in {name} (columns {listed}); keep one, and "
                f"rename or delete the {'other' if len(cols) == 2 else 'others'}."
            )


def csv_header(data: bytes) -> list[str]:
    """The names of a CSV's first line as written (before pandas renames any), [] if none."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace", newline="")
    try:
        return next(csv.reader(text), [])
    except csv.Error:  # e.g. a name longer than the csv module's limit: pandas will say
        return []


def parquet_error(exc: BaseException, name: str) -> VoxMetricsInputError:
    """One line for what pyarrow or pandas raised on a Parquet file (not their internals)."""
    lines = str(exc).strip().splitlines()
    what = lines[0] if lines else type(exc).__name__
    what = what if len(what) <= 200 else what[:200] + "..."
    return VoxMetricsInputError(
        f"{name}: damaged or unsupported Parquet file: it cannot be read as Parquet ({what}); "
        "export it again (e.g. DataFrame.to_parquet)."
    )


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


def exact_labels(
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
    text = data[:PREFIX].decode("utf-8", errors="ignore").lstrip("\ufeff").split("\n")
    rows = [(k, r) for k, r in enumerate(csv.reader(text[:1000]), 1) if r]
    (_, header), (line, first) = rows[0], rows[1]
    return VoxMetricsInputError(
        f"{name}: line {line} has {len(first)} fields but the header has {len(header)}; give "
        "every line the same columns (quote values that contain commas)."
    )


_BLANK = re.compile(rb"[ \t\r\n]*")


def blank_start(data: bytes) -> tuple[int, int]:
    r"""Where :func:`skip_blank_start`'s text begins in ``data``, and the blank lines before it.

    The offset spares a copy of a large file.

    Examples
    --------
    >>> blank_start(b"\xef\xbb\xbf\n  \r\na,b\n"), blank_start(b"a,b\n")
    ((8, 2), (0, 0))
    """
    bom = 3 if data[:3] == b"\xef\xbb\xbf" else 0
    end = _BLANK.match(data, bom).end()  # type: ignore[union-attr]
    if end == bom:
        return 0, 0
    lead = data[bom:end]
    return bom + lead.rfind(b"\n") + 1, lead.count(b"\n")  # keep the first line's indentation


def skip_blank_start(data: bytes) -> tuple[bytes, int]:
    r"""``data`` without its leading blank lines (and byte-order mark), and how many there were.

    Examples
    --------
    >>> skip_blank_start(b"\xef\xbb\xbf\n  \r\na,b\n")
    (b'a,b\n', 2)
    """
    start, skipped = blank_start(data)
    return (data[start:] if start else data), skipped


def read_csv_rows(
    data: bytes, name: str, *, categorical: bool = False
) -> tuple[pd.DataFrame, Where]:
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
    data, skipped = skip_blank_start(data)  # a blank first line: the header is the next one
    check_count(name, "lines", data.count(b"\n"), "max_rows")
    first_line = data[: data.find(b"\n")] if b"\n" in data else data
    check_count(name, "columns", first_line.count(b",") + 1, "max_columns")
    refuse_duplicate_columns(csv_header(data), name)
    try:
        header = pd.read_csv(io.BytesIO(data), nrows=0, encoding="utf-8-sig", index_col=False)
        raw_cols = [str(c) for c in header.columns]
        labels = [c for c in raw_cols if c.strip() in LABEL_COLUMNS]
        if categorical:
            dtype: dict[str, Any] = {c: "category" for c in raw_cols if c.strip() != "score"}
        else:
            dtype = dict.fromkeys(labels, str)
        with kept_warnings(pd.errors.ParserWarning) as dropped:
            df = pd.read_csv(io.BytesIO(data), dtype=dtype, **options)
        if dropped:  # pandas only warns (and drops data) when the first data line is longer
            raise pd.errors.ParserWarning(str(dropped[0].message))  # than the header
        if categorical:
            exact_labels(df, data, options, labels)
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
    where = Where(name, "line", df.index.to_numpy(dtype=np.int64) + 2 + skipped)
    return df.reset_index(drop=True), where


def parquet_footer(data: bytes, name: str) -> Any:
    """A Parquet file's footer, checked before any column is decompressed.

    Rows, columns and the unpacked size against the limits; column names named twice and
    anything pyarrow cannot read refused, in one message each.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(pa.BufferReader(data))
        schema = meta.schema.to_arrow_schema()
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow's errors are not all ArrowException
        raise parquet_error(exc, name) from None
    check_count(name, "rows", meta.num_rows, "max_rows")
    check_count(name, "columns", meta.num_columns, "max_columns")
    if unpacked > get_limits().max_file_bytes:
        raise refuse(name, f"the columns unpack to {unpacked:,} bytes", "max_file_bytes")
    refuse_duplicate_columns(schema.names, name)
    return schema


def _read_parquet_frame(
    data: bytes, name: str, *, categorical: bool = False
) -> tuple[pd.DataFrame, Where]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_footer(data, name)
    refuse_nested(schema, name)
    try:
        if categorical:  # text columns straight to categoricals (fast path, exact labels)
            text = [
                f.name
                for f in pq.read_schema(pa.BufferReader(data))
                if f.name.strip() != "score"
                and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
            ]
            table = pq.read_table(pa.BufferReader(data), read_dictionary=text)
            df = table.to_pandas()
        else:
            df = pd.read_parquet(io.BytesIO(data))
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow or pandas on a damaged file: one line, never a traceback
        raise parquet_error(exc, name) from None
    df.columns = pd.Index([str(c).strip() for c in df.columns])
    df = df.reset_index(drop=True)
    return df, Where(name, "row", np.arange(1, len(df) + 1, dtype=np.int64))


def refuse_nested(schema: Any, name: str, allowed: Sequence[str] = ()) -> None:
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


def read_tabular_rows(
    data: bytes, name: str, kind: str, *, categorical: bool = False
) -> tuple[pd.DataFrame, Where]:
    """A CSV or Parquet (``kind``) table and the line / row of each of its rows."""
    if kind == "parquet":
        return _read_parquet_frame(data, name, categorical=categorical)
    return read_csv_rows(data, name, categorical=categorical)


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
    data, nm = load_source(source, name)
    kind = detect_kind(data, nm)
    if kind not in ("csv", "metadata", "parquet"):
        raise VoxMetricsInputError(
            f"{nm}: expected a table (CSV with a header, or Parquet) but this is a {kind} file; "
            "export the table as CSV or Parquet."
        )
    return read_tabular_rows(data, nm, kind)[0]


def missing_columns(df: pd.DataFrame, required: Sequence[str], where: Where, what: str) -> None:
    """Refuse a table without the ``required`` columns (``what``: the kind of file)."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        place = "in the header (line 1)" if where.unit == "line" else "among the columns"
        found = ", ".join(map(str, df.columns)) or "none"
        raise VoxMetricsInputError(
            f"{where.name}: missing column(s) {', '.join(missing)} {place}; {what} needs "
            f"columns {', '.join(required)}. Found: {found}. Rename or add the columns."
        )


def labels_of(col: pd.Series, column: str, where: Where) -> pd.Series:
    """The label column ``col``, refused if a cell is empty."""
    na = col.isna().to_numpy()
    if na.any():
        i = int(np.argmax(na))
        raise VoxMetricsInputError(
            f"{where.name}: {where(i)}: column '{column}' is empty ({int(na.sum())} empty "
            f"value(s)); every row needs a {column}."
        )
    return col


def numeric_scores(col: pd.Series, where: Where, column: str = "score") -> NDArray[np.float64]:
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
            bad = cand[~text.str.lower().isin(NAN_WORDS).to_numpy()]
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
