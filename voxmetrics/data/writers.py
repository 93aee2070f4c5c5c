"""Writers: the data model to files, in every format the readers understand.

Each writer's output reads back with :func:`~voxmetrics.data.read_scores` /
:func:`~voxmetrics.data.read_embeddings` to an equal object, except where a format cannot hold
something (documented per format: Kaldi score files drop per-trial attributes). Nothing is
pickled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.readers import SCORE_COLUMNS
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["spreadsheet_safe", "write_embeddings", "write_scores"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells cannot run as spreadsheet formulas.

    A text cell (a condition name, a label) starting with ``= + - @``, a tab or a carriage
    return gets a leading apostrophe, so that Excel or LibreOffice shows it instead of
    evaluating it (e.g. ``=HYPERLINK(...)``); numbers are untouched. For exported tables only:
    score files written for reading back keep their labels exactly.

    Examples
    --------
    >>> spreadsheet_safe(pd.DataFrame({"c": ["=1+1", "ok"], "v": [-1.5, 2.0]})).to_dict("list")
    {'c': ["'=1+1", 'ok'], 'v': [-1.5, 2.0]}
    """
    out = frame.copy()
    for c in out.columns:
        col = out[c]
        if col.dtype.kind == "O" or isinstance(col.dtype, pd.StringDtype | pd.CategoricalDtype):
            text = col.astype(object)
            risky = text.map(lambda v: isinstance(v, str) and v.startswith(_FORMULA_START))
            if risky.any():
                out[c] = text.where(~risky, "'" + text.astype(str))
    safe_columns = [
        "'" + c if isinstance(c, str) and c.startswith(_FORMULA_START) else c for c in out.columns
    ]
    out.columns = pd.Index(safe_columns)
    return out


def _plain(values: np.ndarray) -> np.ndarray:
    """A non-object array that ``numpy.savez`` stores without pickling."""
    if values.dtype.kind != "O":
        return values
    return np.array(["" if v is None else str(v) for v in values.tolist()], dtype=str)


def _long_table(sm: ScoreMatrix, *, attributes: bool) -> Any:
    """The long format as a pyarrow Table (one row per pair, trial-major), built without loops."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t, n = sm.shape
    rows = pa.array(np.repeat(np.arange(t, dtype=np.int64), n))
    cols = pa.array(np.tile(np.arange(n, dtype=np.int64), t))
    columns = {
        "trial_id": pc.take(pa.array(sm.trial_ids.tolist(), pa.string()), rows),
        "trial_speaker": pc.take(pa.array(sm.trial_speakers.tolist(), pa.string()), rows),
        "enrol_speaker": pc.take(pa.array(sm.enrol_speakers.tolist(), pa.string()), cols),
        "score": pa.array(np.asarray(sm.scores, dtype=np.float64).ravel()),
    }
    if attributes:
        for k, v in sm.attributes.items():
            try:
                values = pa.array(v.tolist() if v.dtype.kind == "O" else v)
            except (pa.ArrowException, TypeError, ValueError):
                values = pa.array(_plain(v).tolist(), pa.string())
            columns[k] = pc.take(values, rows)
    table = pa.table(columns)
    if sm.mask is not None:  # a sparse trial list: its listed pairs only
        table = table.filter(pa.array(sm.mask.ravel()))
    return table


def _check_kaldi_labels(sm: ScoreMatrix) -> None:
    import pandas as pd

    for what, labels in (("trial id", sm.trial_ids), ("enrolled speaker", sm.enrol_speakers)):
        bad = pd.Series(labels, dtype=object).str.contains(r'[\s"]|^$', regex=True).to_numpy()
        if bad.any():
            raise VoxMetricsInputError(
                f"{sm.source or 'score matrix'}: {what} '{labels[int(np.argmax(bad))]}' is empty "
                "or contains whitespace or a quote, which the Kaldi format cannot hold; write "
                "CSV, Parquet or NPZ instead."
            )


def write_scores(
    sm: ScoreMatrix,
    path: str | os.PathLike[str],
    *,
    format: Literal["csv", "parquet", "npz", "kaldi"],
) -> list[Path]:
    """Write a :class:`~voxmetrics.data.ScoreMatrix` in one of the readable formats.

    Parameters
    ----------
    sm : ScoreMatrix
        The scores to write.
    path : str or os.PathLike
        The file to write (used as given: no extension is added).
    format : {"csv", "parquet", "npz", "kaldi"}
        - ``"csv"`` / ``"parquet"``: long format, one row per (trial, enrolled identity), columns
          ``trial_id, trial_speaker, enrol_speaker, score`` and one column per attribute.
        - ``"npz"``: ``scores``, ``trial_ids``, ``trial_speakers``, ``enrol_speakers`` and
          ``attr_<name>`` per attribute (object attributes are stored as strings).
        - ``"kaldi"``: ``path`` holds ``enrol_id trial_id score`` lines and ``<path>.key`` (the
          same name with ``.key`` appended) the key ``enrol_id trial_id target|nontarget``, one
          line per pair. Kaldi files cannot hold attributes: reading them back gives the matrix
          without its attributes.

    Returns
    -------
    list of pathlib.Path
        The files written (two for ``"kaldi"``: scores, then key).

    Raises
    ------
    VoxMetricsInputError
        An attribute named like a score column, or (Kaldi) labels with whitespace.

    Notes
    -----
    Scores are written with full precision (shortest round-trip repr), so they read back
    exactly. The CSV is written by pyarrow, which quotes every text value. Rows are trial-major,
    so reading back keeps the order of trials and enrolled identities. ``n_excluded_trials`` is
    not stored: excluded trials are no longer in the matrix.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from voxmetrics.data import read_scores
    >>> sm = ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = write_scores(sm, pathlib.Path(tmp) / "s.scores", format="kaldi")
    ...     print([p.name for p in paths], read_scores(paths[0], trials=paths[1]).equals(sm))
    ['s.scores', 's.scores.key'] True
    """
    out = Path(path)
    if format == "npz":
        arrays: dict[str, Any] = {
            "scores": np.asarray(sm.scores, dtype=np.float64),
            "trial_ids": np.asarray(sm.trial_ids, dtype=str),
            "trial_speakers": np.asarray(sm.trial_speakers, dtype=str),
            "enrol_speakers": np.asarray(sm.enrol_speakers, dtype=str),
        }
        arrays.update({f"attr_{k}": _plain(np.asarray(v)) for k, v in sm.attributes.items()})
        if sm.mask is not None:  # a sparse trial list: True = listed pair
            arrays["mask"] = np.asarray(sm.mask)
        with out.open("wb") as f:
            np.savez(f, allow_pickle=False, **arrays)
        return [out]
    if format in ("csv", "parquet"):
        clash = [k for k in sm.attributes if k in SCORE_COLUMNS]
        if clash:
            raise VoxMetricsInputError(
                f"{sm.source or 'score matrix'}: attribute '{clash[0]}' has the name of a score "
                "column; rename the attribute before writing the long format."
            )
        table = _long_table(sm, attributes=True)
        if format == "csv":
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, out)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, out)
        return [out]
    if format == "kaldi":
        import pyarrow as pa
        import pyarrow.csv as pacsv

        _check_kaldi_labels(sm)
        long = _long_table(sm, attributes=False)
        plain = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
        scores = long.select(["enrol_speaker", "trial_id", "score"])
        pacsv.write_csv(scores, out, write_options=plain)
        n = sm.n_enrolled
        is_target = (np.arange(n)[None, :] == sm.targets[:, None]).ravel()
        if sm.mask is not None:
            is_target = is_target[sm.mask.ravel()]
        label = pa.array(np.where(is_target, "target", "nontarget"))
        key_path = Path(f"{out}.key")
        key = long.select(["enrol_speaker", "trial_id"]).append_column("label", label)
        pacsv.write_csv(key, key_path, write_options=plain)
        return [out, key_path]
    raise VoxMetricsInputError(f"unknown format {format!r}; use one of csv, parquet, npz, kaldi.")


def write_embeddings(
    es: EmbeddingSet,
    path: str | os.PathLike[str],
    *,
    format: Literal["npz", "parquet"],
) -> list[Path]:
    """Write an :class:`~voxmetrics.data.EmbeddingSet` in a readable format.

    Parameters
    ----------
    es : EmbeddingSet
        The embeddings and their metadata.
    path : str or os.PathLike
        ``"npz"``: the stem; ``<stem>.npz`` (``embeddings``, ``utt_ids``) and ``<stem>.csv``
        (the metadata) are written, where ``<stem>`` is ``path`` without its suffix.
        ``"parquet"``: the file to write (used as given).
    format : {"npz", "parquet"}
        ``"parquet"`` writes one file: the metadata columns plus an ``embedding`` list column.

    Returns
    -------
    list of pathlib.Path
        The files written (NPZ then CSV, or the Parquet file).
    """
    out = Path(path)
    if format == "npz":
        stem = out.with_suffix("")
        npz, csv = Path(f"{stem}.npz"), Path(f"{stem}.csv")
        with npz.open("wb") as f:
            np.savez(
                f,
                allow_pickle=False,
                embeddings=np.asarray(es.embeddings, dtype=np.float64),
                utt_ids=es.meta["utt_id"].to_numpy(dtype=str),
            )
        es.meta.to_csv(csv, index=False)
        return [npz, csv]
    if format == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(es.meta, preserve_index=False)
        d = es.dim
        flat = pa.array(np.ascontiguousarray(es.embeddings, dtype=np.float64).ravel())
        table = table.append_column("embedding", pa.FixedSizeListArray.from_arrays(flat, d))
        pq.write_table(table, out)
        return [out]
    raise VoxMetricsInputError(f"unknown format {format!r}; use npz or parquet.")
