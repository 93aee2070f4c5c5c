"""Embedding files with their metadata into an :class:`~voxmetrics.data.EmbeddingSet`.

NPZ or NPY with a metadata CSV, Kaldi ark / scp or HDF5 (:mod:`voxmetrics.data.embedding_files`)
with a metadata CSV, or one Parquet file carrying both.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.embedding_files import (
    EMBEDDING_FILE_KINDS,
    read_hdf5_embeddings,
    read_kaldi_ark,
    read_kaldi_scp,
    sniff_embeddings,
)
from voxmetrics.data.model import META_COLUMNS, SPLIT_VALUES, EmbeddingSet
from voxmetrics.data.readers._common import Source, Where, load_source
from voxmetrics.data.readers.detect import check_not_empty, detect_kind
from voxmetrics.data.readers.npz import float_array, np_load, npz_arrays, text_array
from voxmetrics.data.readers.tables import (
    labels_of,
    missing_columns,
    parquet_error,
    parquet_footer,
    read_tabular_rows,
    refuse_nested,
)
from voxmetrics.errors import IgnoredEmbeddingsWarning, VoxMetricsInputError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "read_embeddings",
]


def _meta_frame(data: bytes, name: str) -> tuple[pd.DataFrame, Where]:
    kind = detect_kind(data, name)
    if kind not in ("csv", "metadata", "parquet"):
        raise VoxMetricsInputError(
            f"{name}: the metadata must be a CSV (or Parquet) table with columns "
            f"{', '.join(META_COLUMNS)}, but this is a {kind} file."
        )
    df, where = read_tabular_rows(data, name, kind)
    _check_meta(df, where)
    return df, where


def _check_meta(df: pd.DataFrame, where: Where) -> None:
    missing_columns(df, META_COLUMNS, where, "embeddings metadata")
    if df.empty:
        raise VoxMetricsInputError(
            f"{where.name}: has a header but no rows; add one row per utterance."
        )
    for c in META_COLUMNS:
        labels_of(df[c], c, where)
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

    parquet_footer(data, name)  # limits, columns named twice, a damaged footer
    try:
        table = pq.read_table(pa.BufferReader(data))
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow on a damaged file: one line, never a traceback
        raise parquet_error(exc, name) from None
    if "embedding" not in table.column_names:
        raise VoxMetricsInputError(
            f"{name}: no 'embedding' column; an embeddings Parquet needs columns "
            f"{', '.join(META_COLUMNS)} and an `embedding` list column (one vector per row). "
            f"Found: {', '.join(table.column_names)}."
        )
    refuse_nested(table.schema, name, allowed=("embedding",))
    col = table.column("embedding")
    where = Where(name, "row", np.arange(1, table.num_rows + 1, dtype=np.int64))
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
    try:
        meta = table.drop_columns(["embedding"]).to_pandas()
    except MemoryError:
        raise
    except Exception as exc:  # e.g. damaged pandas metadata, or a type pandas cannot hold
        raise parquet_error(exc, name) from None
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
    emb: NDArray[np.floating],
    ids: NDArray[np.str_],
    meta: pd.DataFrame,
    nm: str,
    mnm: str,
) -> NDArray[np.floating]:
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
    data, nm = load_source(source, name)
    check_not_empty(data, nm)
    kind = sniff_embeddings(data) or detect_kind(data, nm)
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
    mdata, mnm = load_source(metadata, metadata_name)
    meta, _ = _meta_frame(mdata, mnm)
    meta = _filter_system(meta, system, mnm)
    if kind == "npy":
        if system is not None:
            raise VoxMetricsInputError(
                f"{nm}: an NPY has no utt_ids, so its rows cannot be filtered by system; use an "
                "NPZ with utt_ids."
            )
        arr = np_load(data, nm, "npy")
        emb = float_array(arr, "embeddings", nm)
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
        arrays = npz_arrays(data, nm, ("embeddings", "utt_ids"), "an embeddings NPZ")
        emb = float_array(arrays["embeddings"], "embeddings", nm)
        ids = text_array(arrays["utt_ids"], "utt_ids", nm)
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
