"""Where the blockwise evaluation reads its scores: embeddings, score chunk files, Zarr stores.

A source indexes its trials on the client (their labels only) and describes each row block as
a small *piece* that travels inside the block's tasks; :func:`block_scores` turns a piece into
the block's scores on a worker: scored from the block's trial embeddings, or read from the
chunk files or the store. Blocks are cut on the in-memory loops' row boundaries (score chunks
of ``SCORE_CHUNK_ROWS`` rows), so every number equals the in-memory path bit for bit.
"""

from __future__ import annotations

import os
import stat
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lru import LRU
from voxmetrics.data.arrays import SCORE_CHUNK_ROWS, score_chunk
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError, kept_warnings
from voxmetrics.limits import (
    ArchiveReader,
    check_count,
    check_declared,
    get_limits,
)

__all__ = ["BlockSource", "ChunkedScores", "EmbeddingBlocks", "ZarrScores", "block_scores"]


@dataclass(frozen=True)
class EmbeddingBlocks:
    """One split of an :class:`~voxmetrics.data.model.EmbeddingSet`, scored block by block.

    The trial embeddings are sent to the workers once (one piece per block); each task scores
    its rows against the enrolment profiles.
    """

    trial_unit: NDArray[np.floating]
    """Unit-norm embeddings of the trials of the split (including unenrolled speakers)."""
    profiles: NDArray[np.float64]
    """Unit-norm enrolment profiles (N x d)."""
    rows: NDArray[np.intp]
    """Index into ``trial_unit`` of each evaluated trial (speaker enrolled)."""
    targets: NDArray[np.intp]
    """Target column of each evaluated trial."""
    trial_speakers: NDArray[np.str_]
    enrol_speakers: NDArray[np.str_]
    n_excluded_trials: int
    dtype: np.dtype[Any]
    cols: NDArray[np.intp] | None = None
    """Columns (enrolment profiles) kept by :meth:`subset_attribute`; None: every profile."""
    attributes: dict[str, NDArray[np.str_]] = field(default_factory=dict)
    """Per-trial attributes of the evaluated trials (the metadata's extra columns, as text)."""

    @classmethod
    def from_embeddings(cls, es: EmbeddingSet, split: str = "eval") -> EmbeddingBlocks:
        """The trials of ``split`` against its enrolment profiles (as ``score_matrix``)."""
        from voxmetrics.data.model import META_COLUMNS

        speakers, profiles, trial_unit = es.scoring_inputs(split)  # type: ignore[arg-type]
        trial = es.roles(split)[1]  # type: ignore[arg-type]
        tspk = es.meta["speaker"].to_numpy()[trial].astype(str)
        out = cls._build(trial_unit, profiles, tspk, speakers.astype(str), es.source or split)
        extra = [c for c in es.meta.columns if c not in (*META_COLUMNS, "system", "audio_path")]
        tmeta = es.meta.loc[trial]  # as score_matrix: attribute columns become trial attributes
        attrs = {c: tmeta[c].fillna("").astype(str).to_numpy()[out.rows] for c in extra}
        return replace(out, attributes=attrs)

    def subset_attribute(self, attr: str, value: str) -> EmbeddingBlocks:
        """The trials whose ``attr`` is ``value`` with their own enrolled identities.

        As :meth:`~voxmetrics.data.model.ScoreMatrix.subset_attribute` on the in-memory matrix:
        an identity is kept when one of the kept trials is its own or it has no trial at all.
        The blocks score every profile and keep the subset's columns, so the scores are
        those of the whole matrix, bit for bit.
        """
        if self.cols is not None:
            raise ValueError("subset_attribute applies to the whole split")  # pragma: no cover
        if attr not in self.attributes:
            have = ", ".join(sorted(self.attributes)) or "none"
            raise VoxMetricsInputError(
                f"no per-trial attribute '{attr}' to split by (attributes: {have}); add it as a "
                "column of the embeddings' metadata."
            )
        sel = self.attributes[attr] == str(value)
        n = self.profiles.shape[0]
        has_trials = np.zeros(n, dtype=bool)
        has_trials[self.targets] = True
        inside = np.zeros(n, dtype=bool)
        inside[self.targets[sel]] = True
        cols = np.flatnonzero(inside | ~has_trials)
        if not sel.any() or cols.size < 2:
            raise VoxMetricsInputError(
                f"the subset {attr} = '{value}' has {int(sel.sum())} trials and {cols.size} "
                "enrolled identities; a 1-to-N search needs trials and at least 2 identities."
            )
        return replace(
            self,
            rows=self.rows[sel],
            targets=np.searchsorted(cols, self.targets[sel]).astype(np.intp),
            trial_speakers=self.trial_speakers[sel],
            enrol_speakers=self.enrol_speakers[cols],
            n_excluded_trials=0,
            cols=cols,
            attributes={k: v[sel] for k, v in self.attributes.items()},
        )

    @classmethod
    def _build(
        cls,
        trial_unit: NDArray[np.floating],
        profiles: NDArray[np.float64],
        tspk: NDArray[np.str_],
        espk: NDArray[np.str_],
        where: str,
    ) -> EmbeddingBlocks:
        rows, targets, n_out = _enrolled_rows(tspk, espk, where)
        dtype = np.result_type(trial_unit.dtype, profiles.dtype)
        return cls(trial_unit, profiles, rows, targets, tspk[rows], espk, n_out, dtype)

    @property
    def shape(self) -> tuple[int, int]:
        """(T, N) of the evaluated matrix."""
        n = self.profiles.shape[0] if self.cols is None else self.cols.size
        return int(self.rows.size), int(n)

    def pieces(self, blocks: Sequence[slice]) -> list[tuple[Any, ...]]:
        """Per block, what its task needs besides the shared data (sent once)."""
        out = []
        for b in blocks:
            rows = self.rows[b]
            c0 = int(rows[0]) // SCORE_CHUNK_ROWS * SCORE_CHUNK_ROWS
            c1 = (int(rows[-1]) // SCORE_CHUNK_ROWS + 1) * SCORE_CHUNK_ROWS
            out.append(("emb", self.trial_unit[c0:c1], rows - c0, self.targets[b], self.cols))
        return out

    def shared(self) -> Any:
        """Data every task needs (the profiles)."""
        return self.profiles


@dataclass(frozen=True)
class ChunkedScores:
    """A score matrix stored as row chunks: score files of the same enrolled speakers.

    A chunk is an NPZ score file (``scores`` (rows x N), ``trial_ids``, ``trial_speakers``,
    ``enrol_speakers``; indexed from its headers, not read) or a long-format Parquet score file
    (read once to index it); the matrix is their rows in file order. Workers read the files
    themselves, so the paths must be visible to every worker.
    """

    paths: tuple[str, ...]
    offsets: NDArray[np.int64]
    """First matrix row (all trials, enrolled or not) of each file; one more entry at the end."""
    rows: NDArray[np.intp]
    targets: NDArray[np.intp]
    trial_speakers: NDArray[np.str_]
    enrol_speakers: NDArray[np.str_]
    n_excluded_trials: int
    dtype: np.dtype[Any]

    @classmethod
    def from_files(cls, paths: Sequence[str | Path]) -> ChunkedScores:
        """Index chunk files (their labels only; the scores are read by the tasks)."""
        if not paths:
            raise VoxMetricsInputError(
                "no score chunk files given; give at least one NPZ or Parquet score file."
            )
        tspk_all: list[NDArray[np.str_]] = []
        tids_all: list[NDArray[np.str_]] = []
        espk: NDArray[np.str_] | None = None
        sizes, dtypes = [], []
        n_out_files = 0
        for p in paths:
            tids, t, e, dtype, n_out_file = _index_chunk(p)
            if espk is None:
                espk = e
            elif not np.array_equal(e, espk):
                raise VoxMetricsInputError(
                    f"{p}: its enrol_speakers differ from those of {paths[0]}; every chunk "
                    "must list the same enrolled speakers in the same order."
                )
            tspk_all.append(t)
            tids_all.append(tids)
            sizes.append(t.size)
            dtypes.append(dtype)
            n_out_files += n_out_file
        assert espk is not None
        if len(set(dtypes)) > 1:
            raise VoxMetricsInputError("the score chunks mix float32 and float64; use one type.")
        tspk = np.concatenate(tspk_all)
        tids = np.concatenate(tids_all)
        if tids.size != tspk.size or np.unique(tids).size != tids.size:
            raise VoxMetricsInputError(
                f"{paths[0]}: the chunks' trial ids are not one per row and unique across the "
                "chunks; every trial must appear once, in one chunk."
            )
        rows, targets, n_out = _enrolled_rows(tspk, espk, str(paths[0]))
        if n_out_files:
            warnings.warn(
                f"{n_out_files} trials of the Parquet chunks have a speaker who is not enrolled; "
                "the blockwise evaluation leaves them out of every metric (the in-memory "
                "evaluation counts their pairs as non-mated pairs of the pairwise metrics).",
                ExcludedTrialsWarning,
                stacklevel=2,
            )
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return cls(
            tuple(str(p) for p in paths),
            offsets,
            rows,
            targets,
            tspk[rows],
            espk,
            n_out + n_out_files,
            np.dtype(dtypes[0]),
        )

    @property
    def shape(self) -> tuple[int, int]:
        """(T, N) of the evaluated matrix."""
        return int(self.rows.size), int(self.enrol_speakers.size)

    def pieces(self, blocks: Sequence[slice]) -> list[tuple[Any, ...]]:
        """Per block: the row range it reads of each of its files, the rows it keeps, targets.

        The rows kept index the ranges read, one file after the other.
        """
        out = []
        for b in blocks:
            rows = self.rows[b]
            f0 = int(np.searchsorted(self.offsets, rows[0], side="right")) - 1
            f1 = int(np.searchsorted(self.offsets, rows[-1], side="right"))
            ranges, keep, read = [], [], 0
            for f in range(f0, f1):
                mine = rows[(rows >= self.offsets[f]) & (rows < self.offsets[f + 1])]
                lo, hi = int(mine[0] - self.offsets[f]), int(mine[-1] - self.offsets[f]) + 1
                ranges.append((self.paths[f], lo, hi))
                keep.append(mine - self.offsets[f] - lo + read)
                read += hi - lo
            out.append(("files", tuple(ranges), np.concatenate(keep), self.targets[b], None))
        return out

    def shared(self) -> Any:
        """Nothing is shared: tasks read their files."""
        return None


@dataclass(frozen=True)
class ZarrScores:
    """A score matrix in a Zarr store, read by row ranges on the workers.

    The store is a group with arrays ``scores`` (T x N, chunked along the rows), ``trial_ids``,
    ``trial_speakers`` (T) and ``enrol_speakers`` (N) of fixed-length strings (or numbers).
    Arrays of Python objects are refused (their codec may unpickle). Needs ``zarr``.
    """

    path: str
    rows: NDArray[np.intp]
    targets: NDArray[np.intp]
    trial_speakers: NDArray[np.str_]
    enrol_speakers: NDArray[np.str_]
    n_excluded_trials: int
    dtype: np.dtype[Any]

    @classmethod
    def open(cls, path: str | Path) -> ZarrScores:
        """Index a store (its labels only; the scores are read by the tasks)."""
        g = _zarr_group(str(path))
        labels = {}
        for key in ("trial_ids", "trial_speakers", "enrol_speakers"):
            arr = g[key]
            if len(arr.shape) != 1:
                raise VoxMetricsInputError(f"{path}: '{key}' must be 1-D, got {arr.shape}.")
            check_count(str(path), f"'{key}' labels", arr.shape[0], "max_rows")
            _check_zarr_stored(arr, f"{path}", key, in_memory=True)
            labels[key] = np.asarray(arr[:]).astype(str)
        t, n = labels["trial_speakers"].size, labels["enrol_speakers"].size
        shape = tuple(g["scores"].shape)
        if shape != (t, n) or labels["trial_ids"].size != t:
            raise VoxMetricsInputError(
                f"{path}: scores have shape {shape}, expected ({t}, {n}) for its "
                f"{labels['trial_ids'].size} trial ids, {t} trial and {n} enrolled speakers."
            )
        _check_zarr_stored(g["scores"], str(path), "scores", in_memory=False)
        if np.unique(labels["trial_ids"]).size != t:
            raise VoxMetricsInputError(f"{path}: the trial ids are not unique.")
        espk = labels["enrol_speakers"]
        rows, targets, n_out = _enrolled_rows(labels["trial_speakers"], espk, str(path))
        dtype = np.dtype(np.float32 if g["scores"].dtype == np.float32 else np.float64)
        return cls(str(path), rows, targets, labels["trial_speakers"][rows], espk, n_out, dtype)

    @property
    def shape(self) -> tuple[int, int]:
        """(T, N) of the evaluated matrix."""
        return int(self.rows.size), int(self.enrol_speakers.size)

    def pieces(self, blocks: Sequence[slice]) -> list[tuple[Any, ...]]:
        """Per block: the store, the row range it reads, the rows it keeps and targets."""
        out = []
        for b in blocks:
            rows = self.rows[b]
            r0, r1 = int(rows[0]), int(rows[-1]) + 1
            out.append(("zarr", (self.path, r0, r1), rows - r0, self.targets[b], None))
        return out

    def shared(self) -> Any:
        """Nothing is shared: tasks read the store."""
        return None


def _zarr_group(path: str) -> Any:
    """The Zarr group at ``path``, with its four arrays checked to hold no Python objects."""
    try:
        import zarr
    except ImportError:
        raise VoxMetricsInputError(
            f"{path}: reading a Zarr store needs zarr: pip install 'voxmetrics[dask]'."
        ) from None
    try:
        g = zarr.open_group(path, mode="r")
    except Exception as exc:  # zarr raises many types for a path that is not a store
        raise VoxMetricsInputError(f"{path}: not a readable Zarr group ({exc}).") from None
    for key in ("scores", "trial_ids", "trial_speakers", "enrol_speakers"):
        try:
            arr = g[key] if key in g else None
        except Exception as exc:  # zarr 3 refuses object (pickle) arrays when opening them
            raise VoxMetricsInputError(
                f"{path}: its '{key}' array cannot be read ({exc}); store numbers as scores "
                "and labels as fixed-length strings."
            ) from None
        if arr is None:
            raise VoxMetricsInputError(
                f"{path}: no '{key}' array; a Zarr score store has scores, trial_ids, "
                "trial_speakers and enrol_speakers."
            )
        kind = _dtype_kind(arr)
        if kind == "O" or (key == "scores" and kind not in "fiub"):
            raise VoxMetricsInputError(
                f"{path}: '{key}' holds {'Python objects' if kind == 'O' else 'no numbers'}; "
                "store numbers as scores and labels as fixed-length strings (objects could "
                "unpickle code, and are refused)."
            )
    return g


def _check_zarr_stored(arr: Any, where: str, key: str, *, in_memory: bool) -> None:
    """Refuse a Zarr array that declares far more than its store holds, before reading it.

    Unwritten chunks read as fill values: a tiny store could declare 3 x 10^8 labels.
    """
    stored = arr.nbytes_stored
    stored = int(stored() if callable(stored) else stored)
    declared = int(np.prod(arr.shape, dtype=np.float64)) * max(np.dtype(arr.dtype).itemsize, 1)
    shape = " x ".join(map(str, arr.shape))
    check_declared(where, f"array '{key}' ({shape})", declared, stored, in_memory=in_memory)


def _dtype_kind(arr: Any) -> str:
    """The numpy dtype kind of a Zarr array, ``"O"`` when its dtype is not a numpy one."""
    try:
        return np.dtype(arr.dtype).kind
    except TypeError:
        return "O"


BlockSource = EmbeddingBlocks | ChunkedScores | ZarrScores
"""What :func:`~voxmetrics.evaluation.blockwise.evaluate_blockwise` reads its blocks from."""


def _index_chunk(
    p: str | Path,
) -> tuple[NDArray[np.str_], NDArray[np.str_], NDArray[np.str_], np.dtype[Any], int]:
    """Trial ids, trial and enrolled speakers, score dtype and trials excluded of one chunk."""
    if Path(p).suffix.lower() != ".npz":
        sm = _read_chunk(p)
        return (
            sm.trial_ids,
            sm.trial_speakers,
            sm.enrol_speakers,
            sm.scores.dtype,
            (sm.n_excluded_trials),
        )
    with ArchiveReader(str(p), str(p)) as z:  # every member within the archive limits
        for key in ("scores", "trial_ids", "trial_speakers", "enrol_speakers"):
            if f"{key}.npy" not in z.infos:
                raise VoxMetricsInputError(
                    f"{p}: no '{key}' array; a score chunk is an NPZ score file "
                    "(scores, trial_ids, trial_speakers, enrol_speakers)."
                )
        e = _chunk_labels(z, "enrol_speakers")
        t = _chunk_labels(z, "trial_speakers")
        shape, dtype = _npz_shape(z, "scores")
        if len(shape) != 2 or shape[0] != t.size or shape[1] != e.size:
            raise VoxMetricsInputError(
                f"{p}: scores have shape {shape}, expected ({t.size}, {e.size}) for its "
                "trial and enrolled speakers."
            )
        tids = _chunk_labels(z, "trial_ids")
    return tids, t, e, np.dtype(np.float32 if dtype == np.float32 else np.float64), 0


def _read_chunk(p: str | Path) -> ScoreMatrix:
    """A long-format (Parquet) chunk as a :class:`ScoreMatrix` (same rows on every read)."""
    from voxmetrics.data.readers import read_scores

    with kept_warnings(ExcludedTrialsWarning):  # dropped: counted in n_excluded_trials
        return read_scores(str(p), format="parquet")


def _chunk_rows(p: str, lo: int, hi: int) -> tuple[NDArray[Any], bool]:
    """Rows ``lo:hi`` of a chunk's scores, and whether all its scores are finite.

    An NPZ chunk streams through the archive reader keeping those rows only
    (:func:`_npy_rows`), the first time this process reads the file; once a stored (not
    compressed) member has been verified whole, later blocks read their rows straight from the
    file (:func:`_recorded_rows`) while it stays the same file. A Parquet one is read whole.
    """
    if Path(p).suffix.lower() != ".npz":
        scores = _read_chunk(p).scores
        return scores[lo:hi], bool(np.isfinite(scores.sum(dtype=np.float64)))
    hit = _recorded_rows(p, lo, hi)
    if hit is not None:
        return hit
    before = _file_key(p)
    with ArchiveReader(p, p) as z:  # the archive limits, as every NPZ reader (never np.load)
        scores, finite, at = _npy_rows(z, "scores.npy", lo, hi, "scores")
        member = _stored_member_at(z, "scores.npy") if at is not None else None
    if scores.dtype.kind not in "fiub":
        raise VoxMetricsInputError(f"{p}: array 'scores' has dtype {scores.dtype}; store numbers.")
    if at is not None and member is not None and before is not None and before == _file_key(p):
        shape, dtype, offset = at
        _VERIFIED.put(before, _Verified(member + offset, shape, dtype, finite))
    return scores, finite


@dataclass(frozen=True)
class _Verified:
    """A chunk's ``scores`` member verified whole by this process: where its rows lie."""

    data_at: int
    """Offset in the file of the first score (the member is stored, not compressed)."""
    shape: tuple[int, int]
    dtype: np.dtype[Any]
    finite: bool


_VERIFIED: LRU[tuple[Any, ...], _Verified] = LRU(1024)
"""This process's (a Dask worker's) record of the chunk files verified whole: by path, device,
inode, size, modification and change times (nanoseconds) and the archive limits in force, so a
file changed in any way, or read under other limits, is streamed and verified again."""


def _file_key(p: str, st: os.stat_result | None = None) -> tuple[Any, ...] | None:
    """The record's key of file ``p`` (its ``stat`` now, or ``st``); None if it cannot be read."""
    if st is None:
        try:
            st = os.stat(p)
        except OSError:
            return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (p, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, get_limits())


def _stored_member_at(z: ArchiveReader, name: str) -> int | None:
    """Offset in the file of a stored member's first byte (its local header read); else None."""
    info = z.infos[name]
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 or z.zf.fp is None:
        return None
    fp = z.zf.fp
    fp.seek(info.header_offset)
    head = fp.read(30)
    if len(head) != 30 or head[:4] != b"PK\x03\x04":
        return None
    return (
        info.header_offset
        + 30
        + int.from_bytes(head[26:28], "little")
        + int.from_bytes(head[28:30], "little")
    )


def _recorded_rows(p: str, lo: int, hi: int) -> tuple[NDArray[Any], bool] | None:
    """Rows ``lo:hi`` read at their offset, if this process verified the same file; else None."""
    key = _file_key(p)
    rec = _VERIFIED.get(key) if key is not None else None
    if rec is None or not 0 <= lo <= hi <= rec.shape[0]:
        return None
    out = np.empty((hi - lo, rec.shape[1]), dtype=rec.dtype)
    try:  # non-blocking: a pipe put in the file's place meanwhile is not waited on
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    with open(fd, "rb", buffering=0) as f:
        if _file_key(p, os.fstat(fd)) != key:
            return None
        f.seek(rec.data_at + lo * rec.shape[1] * rec.dtype.itemsize)
        view = out.reshape(-1).view(np.uint8).data
        got = 0
        while got < out.nbytes and (n := f.readinto(view[got:])):
            got += n
        if got != out.nbytes or _file_key(p, os.fstat(fd)) != key:
            return None  # changed while read: verified again
    return out, rec.finite


def _npy_rows(
    z: ArchiveReader, name: str, start: int, stop: int, array: str | None = None
) -> tuple[np.ndarray, bool, tuple[tuple[int, int], np.dtype[Any], int] | None]:
    """Rows ``start:stop`` of the 2-D NPY member ``name``, and whether all of it is finite.

    The whole member is streamed as by :meth:`~voxmetrics.limits.ArchiveReader.load_npy` (its
    header, sizes and CRC checked, within the same caps), but only the rows asked for are kept,
    and the finiteness of every value is taken on the way (the sum of each piece, then each
    value when it is not finite). Also returned: the member's shape, dtype and data offset, or
    None for a member read whole (one that is not a C-ordered 2-D float array).
    """
    shape, dtype, fortran, offset, _, pieces = z.npy_data(name, array)
    if len(shape) != 2 or fortran or dtype.kind != "f":
        del pieces  # closes the member
        whole = z.load_npy(name, array)
        return whole[start:stop], _all_finite(whole), None
    row = shape[1] * dtype.itemsize
    lo, hi = start * row, stop * row
    body = np.empty(max(0, hi - lo), dtype=np.uint8)
    finite = _FiniteScan(dtype)
    pos = 0  # bytes of data seen
    for piece in pieces:  # never past the declared size
        a, b = max(lo, pos), min(hi, pos + len(piece))
        if b > a:
            body[a - lo : b - lo] = np.frombuffer(piece[a - pos : b - pos], dtype=np.uint8)
        finite.add(piece)
        pos += len(piece)
    rows = body.view(dtype) if body.size else np.empty(0, dtype=dtype)
    layout = ((int(shape[0]), int(shape[1])), dtype, offset)
    return rows.reshape(max(0, stop - start), shape[1]), finite.ok, layout


def _all_finite(a: np.ndarray) -> bool:
    """Every value finite: the sum first (one pass, in the values' own type), then each value.

    Each value only when the sum is not finite (a NaN or an infinity, or finite values whose
    sum overflows).
    """
    return bool(np.isfinite(a.sum()) or np.isfinite(a).all())


class _FiniteScan:
    """Whether a stream of raw bytes of ``dtype`` values is all finite, piece by piece.

    A value cut between two pieces is joined from its bytes; no piece is copied whole.
    """

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype, self.size = dtype, dtype.itemsize
        self.carry = b""
        self.ok = True

    def add(self, piece: memoryview) -> None:
        if not self.ok or not len(piece):
            return
        head = (self.size - len(self.carry)) % self.size
        if self.carry:
            joined = self.carry + bytes(piece[:head])
            if len(joined) < self.size:
                self.carry = joined
                return
            self.ok = _all_finite(np.frombuffer(joined, dtype=self.dtype))
            piece = piece[head:]
        whole = len(piece) - len(piece) % self.size
        if whole:
            self.ok = self.ok and _all_finite(np.frombuffer(piece[:whole], dtype=self.dtype))
        self.carry = bytes(piece[whole:])


def _chunk_scores(p: str) -> NDArray[Any]:
    if Path(p).suffix.lower() != ".npz":
        return _read_chunk(p).scores
    with ArchiveReader(p, p) as z:  # the archive limits, as every NPZ reader (never np.load)
        scores = z.load_npy("scores.npy", "scores")
    if scores.dtype.kind not in "fiub":
        raise VoxMetricsInputError(f"{p}: array 'scores' has dtype {scores.dtype}; store numbers.")
    return scores


def _chunk_labels(z: ArchiveReader, key: str) -> NDArray[np.str_]:
    """A label array of a chunk (text or integers), read within the archive limits."""
    a = z.load_npy(f"{key}.npy", key)
    if a.dtype.kind not in "USiu" or a.ndim != 1:
        raise VoxMetricsInputError(
            f"{z.where}: array '{key}' has dtype {a.dtype} and shape {a.shape}; store the "
            "labels as a 1-D array of strings."
        )
    try:
        return np.char.decode(a, "utf-8") if a.dtype.kind == "S" else a.astype(str)
    except UnicodeDecodeError:
        raise VoxMetricsInputError(f"{z.where}: array '{key}' is not UTF-8 text.") from None


def _npz_shape(z: ArchiveReader, key: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Shape and dtype of one NPZ member from its header (checked), without reading the data."""
    shape, dtype, *_ = z.npy_data(f"{key}.npy", key)  # the data left unread (the member closed)
    return shape, dtype


def _enrolled_rows(
    tspk: NDArray[np.str_], espk: NDArray[np.str_], where: str
) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Rows whose speaker is enrolled, their target columns and the number excluded."""
    if espk.size < 2:
        raise VoxMetricsInputError(
            f"{where}: only {espk.size} enrolled identity; a 1-to-N search needs at least 2."
        )
    if np.unique(espk).size != espk.size:
        raise VoxMetricsInputError(f"{where}: the enrolled speakers are not unique.")
    order = np.argsort(espk)
    pos = np.searchsorted(espk[order], tspk)
    pos = np.minimum(pos, espk.size - 1)
    hit = espk[order][pos] == tspk
    rows = np.flatnonzero(hit)
    n_out = int(tspk.size - rows.size)
    if rows.size == 0:
        raise VoxMetricsInputError(
            f"{where}: none of the {tspk.size} trials has an enrolled speaker, so there is "
            "nothing to evaluate."
        )
    if n_out:
        warnings.warn(
            f"{where}: {n_out} of {tspk.size} trials have a speaker who is not enrolled; the "
            "blockwise evaluation leaves them out of every metric (the in-memory evaluation "
            "counts their pairs as non-mated pairs of the pairwise metrics).",
            ExcludedTrialsWarning,
            stacklevel=3,
        )
    return rows, order[pos[rows]].astype(np.intp), n_out


def block_scores(piece: tuple[Any, ...], shared: Any) -> tuple[NDArray[np.floating], Any]:
    """Scores (rows x N) and target columns of one block, computed or read on the worker."""
    kind, data, keep, targets, cols = piece
    if kind == "emb":  # one chunk at a time into the block: memory is the block + one chunk
        out = np.empty((keep.size, shared.shape[0]), dtype=np.result_type(data, shared))
        for c in range(0, data.shape[0], SCORE_CHUNK_ROWS):
            lo, hi = np.searchsorted(keep, [c, c + SCORE_CHUNK_ROWS])
            if hi > lo:
                out[lo:hi] = score_chunk(data, shared, c)[keep[lo:hi] - c]
        if cols is not None:  # row-major, as the in-memory subset (sums follow the layout)
            out = np.ascontiguousarray(out[:, cols])
        return out, targets
    if kind == "zarr":
        path, r0, r1 = data
        mats, names = [np.asarray(_zarr_group(path)["scores"][r0:r1])], [path]
        finite = np.isfinite(mats[0].sum(dtype=np.float64))
    else:  # each file's rows of the block; each file checked finite whole, as it streams by
        parts = [_chunk_rows(p, lo, hi) for p, lo, hi in data]
        mats, names = [m for m, _ in parts], [p for p, _, _ in data]
        finite = all(ok for _, ok in parts)
    mats = [s if s.dtype in (np.float32, np.float64) else s.astype(np.float64) for s in mats]
    scores = np.concatenate(mats) if len(mats) > 1 else mats[0]
    if not finite:
        raise VoxMetricsInputError(
            f"{', '.join(names)}: NaN or infinite scores; every score must be finite."
        )
    if keep.size == scores.shape[0] and (keep.size == 0 or keep[-1] == keep.size - 1):
        return scores, targets  # every row read is kept (keep is increasing)
    return scores[keep], targets
