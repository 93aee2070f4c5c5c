"""Blockwise evaluation on a Dask cluster, never holding the T x N score matrix.

Every metric of :func:`~voxmetrics.report.evaluate` is computed from per-block summaries.

The trials are cut into row blocks of about 4 M scores; a task scores one block (from the
embeddings, or by reading it from score chunk files or a Zarr store) and returns small
summaries:

* pass 1 (row-wise): the mated score and the target rank of every trial (SRD, linkability and
  its curve), the per-trial LID under a calibration learned in memory on dev, the block's
  sum of ln(1 + e^s) (Cllr) and its share of the chance levels
  (:func:`~voxmetrics.metrics.uncertainty.chance_block` at columns drawn on the client);
* pass 2 (pooled): for the non-mated scores, the counts below and at each distinct mated score
  and the lowest score of each cell between them. Added over blocks these are exactly the run
  counts of :class:`~voxmetrics.metrics.pools.SortedPools`, from which EER, ROCCH-EER, min Cllr,
  ZEBRA, minDCF and the DET and APE curves follow;
* the EER operating point (SpeechBrain's scan, whose thresholds include non-mated scores and
  midpoints) needs the distinct pooled scores around the sign change of FAR - FRR: a third pass
  fetches them, with their multiplicities, for a value range fixed by the counts (first
  narrowed by histogram passes when more than ``WINDOW_CAP`` scores lie in it);
* d' takes two passes of sums (the mean, then squared deviations from it) and, for LLR
  scores, the actual DCFs one pass of counts at the Bayes thresholds;
* singling out (from embeddings) runs blocks of predicates (enrolment profiles) against every
  trial embedding (:func:`~voxmetrics.metrics.legal.singling_out_isolations`), which each
  worker holds once as float64: T x d x 8 bytes.

Every number equals the in-memory path bit for bit: blocks are cut on the same row boundaries as
the in-memory loops (score chunks of ``SCORE_CHUNK_ROWS`` rows, float sums over
:func:`~voxmetrics.metrics.ranks.row_blocks`), and all counts are integers; only the DET curve's
``n_points`` is an upper bound (see :func:`evaluate_blockwise`). Memory per task is a few
times one block; each task carries its block's trial embeddings (or file names), so a task of a
lost worker is rerun elsewhere. The client holds O(T + K) numbers (K distinct mated scores).

Finished blocks are reduced on the client as they arrive; a failed task is retried by Dask
(``retries``) without recomputing the others. Needs the ``dask`` extra
(``pip install "voxmetrics[dask]"``).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._types import SCORE_KINDS, ScoreKind
from voxmetrics.data.model import SCORE_CHUNK_ROWS, EmbeddingSet, ScoreMatrix, score_chunk
from voxmetrics.data.study import check_disjoint_speakers
from voxmetrics.errors import DegenerateDataWarning, ExcludedTrialsWarning, VoxMetricsInputError
from voxmetrics.metrics.baseline import BaselineResult, softplus_sum
from voxmetrics.metrics.cllr import min_cllr_from_pools
from voxmetrics.metrics.dcf import DEFAULT_P_TARGETS, verification_from_pools
from voxmetrics.metrics.eer import eer_from_pools, eer_rocch_from_pools
from voxmetrics.metrics.legal import (
    SinglingOutResult,
    linkability_curve_from_ranks,
    singling_out_embeddings,
)
from voxmetrics.metrics.lid import calibrate_lid, lid_result, resolve_lid_variant
from voxmetrics.metrics.pools import (
    TIES,
    EERPoint,
    RunCounts,
    SortedPools,
    Ties,
    check_ties,
    eer_candidates,
    non_block_sums,
)
from voxmetrics.metrics.ranks import row_blocks
from voxmetrics.metrics.srd import SRDResult, fit_beta_binomial, rank_histogram, srd_stats
from voxmetrics.metrics.uncertainty import chance_block, chance_columns, chance_levels_from_blocks
from voxmetrics.metrics.zebra import zebra_from_pools

__all__ = [
    "BlockSource",
    "ChunkedScores",
    "EmbeddingBlocks",
    "ZarrScores",
    "dask_client",
    "evaluate_blockwise",
    "extract_embeddings_blockwise",
]

Progress = Callable[[float, str], None]

WINDOW_CAP = 20_000_000
"""Most pooled scores the EER window fetches; a wider range is first narrowed by histograms."""
_WINDOW_MARGIN = 1 << 14
"""Pooled positions first fetched on either side of where FAR - FRR changes sign."""
_BINS = 1024
"""Bins of a histogram pass that narrows the EER window when it holds too many scores."""


# --------------------------------------------------------------------------- block sources


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
                "they are excluded from every metric.",
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
        """Per block: the files it reads, their first rows, the rows it keeps and targets."""
        out = []
        for b in blocks:
            rows = self.rows[b]
            f0 = int(np.searchsorted(self.offsets, rows[0], side="right")) - 1
            f1 = int(np.searchsorted(self.offsets, rows[-1], side="right"))
            files = self.paths[f0:f1]
            out.append(("files", files, rows - self.offsets[f0], self.targets[b], None))
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
            labels[key] = np.asarray(arr[:]).astype(str)
        t, n = labels["trial_speakers"].size, labels["enrol_speakers"].size
        shape = tuple(g["scores"].shape)
        if shape != (t, n) or labels["trial_ids"].size != t:
            raise VoxMetricsInputError(
                f"{path}: scores have shape {shape}, expected ({t}, {n}) for its "
                f"{labels['trial_ids'].size} trial ids, {t} trial and {n} enrolled speakers."
            )
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
        kind = np.dtype(arr.dtype).kind if _numpy_dtype(arr) else "O"
        if kind == "O" or (key == "scores" and kind not in "fiub"):
            raise VoxMetricsInputError(
                f"{path}: '{key}' holds {'Python objects' if kind == 'O' else 'no numbers'}; "
                "store numbers as scores and labels as fixed-length strings (objects could "
                "unpickle code, and are refused)."
            )
    return g


def _numpy_dtype(arr: Any) -> bool:
    try:
        np.dtype(arr.dtype)
    except TypeError:
        return False
    return True


BlockSource = EmbeddingBlocks | ChunkedScores | ZarrScores


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
    with _open_npz(p) as z:
        for key in ("scores", "trial_ids", "trial_speakers", "enrol_speakers"):
            if key not in z.files:
                raise VoxMetricsInputError(
                    f"{p}: no '{key}' array; a score chunk is an NPZ score file "
                    "(scores, trial_ids, trial_speakers, enrol_speakers)."
                )
        e = z["enrol_speakers"].astype(str)
        t = z["trial_speakers"].astype(str)
        shape, dtype = _npz_shape(z, "scores")
        if len(shape) != 2 or shape[0] != t.size or shape[1] != e.size:
            raise VoxMetricsInputError(
                f"{p}: scores have shape {shape}, expected ({t.size}, {e.size}) for its "
                "trial and enrolled speakers."
            )
        tids = z["trial_ids"].astype(str)
    return tids, t, e, np.dtype(np.float32 if dtype == np.float32 else np.float64), 0


def _read_chunk(p: str | Path) -> ScoreMatrix:
    """A long-format (Parquet) chunk as a :class:`ScoreMatrix` (same rows on every read)."""
    from voxmetrics.data.readers import read_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExcludedTrialsWarning)  # counted in n_excluded_trials
        return read_scores(str(p), format="parquet")


def _chunk_scores(p: str) -> NDArray[Any]:
    if Path(p).suffix.lower() != ".npz":
        return _read_chunk(p).scores
    with np.load(p, allow_pickle=False) as z:
        return z["scores"]


def _open_npz(path: str | Path) -> Any:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise VoxMetricsInputError(f"{path}: not a readable NPZ file ({exc}).") from None


def _npz_shape(z: Any, key: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Shape and dtype of one NPZ member from its header, without reading the data."""
    from voxmetrics.limits import check_npy_header, npy_header

    with z.zip.open(f"{key}.npy") as f:
        shape, dtype, _, _ = npy_header(f, f"{z.fid.name if z.fid else 'npz'}:{key}")
    check_npy_header(shape, dtype, "score chunk", key)
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
            f"{where}: {n_out} of {tspk.size} trials have a speaker who is not enrolled; they are "
            "excluded from every metric.",
            ExcludedTrialsWarning,
            stacklevel=3,
        )
    return rows, order[pos[rows]].astype(np.intp), n_out


# --------------------------------------------------------------------------- tasks


def _block_scores(piece: tuple[Any, ...], shared: Any) -> tuple[NDArray[np.floating], Any]:
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
    else:
        mats, names = [_chunk_scores(p) for p in data], list(data)
    mats = [s if s.dtype in (np.float32, np.float64) else s.astype(np.float64) for s in mats]
    scores = np.concatenate(mats) if len(mats) > 1 else mats[0]
    if not np.isfinite(scores.sum(dtype=np.float64)):
        raise VoxMetricsInputError(
            f"{', '.join(names)}: NaN or infinite scores; every score must be finite."
        )
    return scores[keep], targets


def _task_rows(piece: tuple[Any, ...], shared: Any, arg: Any) -> dict[str, Any]:
    """Pass 1: mated scores, ranks, Cllr sum, LID and chance-level work of a block.

    ``arg`` is (LID calibration or None, tie rule, the block's chance columns).
    """
    cal, ties, columns = arg
    s, t = _block_scores(piece, shared)
    mated = s[np.arange(s.shape[0]), t]
    out: dict[str, Any] = {
        "tar": mated,
        "rank": (s >= mated[:, None]).sum(axis=1).astype(np.int64),  # ties count against
        "rank_gt": 1 + (s > mated[:, None]).sum(axis=1).astype(np.int64),  # ties to the target
        "softplus": softplus_sum(s),
    }
    # with a calibration, the chance block also holds each row's LID (one pass for both)
    out["chance"] = chance_block(s, columns, calibration=cal, ties=ties, targets=t)
    return out


def _nonmated_sorted(s: NDArray[np.floating], t: NDArray[np.intp]) -> NDArray[np.floating]:
    mask = np.ones(s.shape, dtype=bool)
    mask[np.arange(s.shape[0]), t] = False
    non = s[mask]
    non.sort()
    return non


def _task_pools(piece: tuple[Any, ...], shared: Any, values: Any) -> dict[str, Any]:
    """Pass 2: non-mated counts below / up to each distinct mated score, and cell minima."""
    non = _nonmated_sorted(*_block_scores(piece, shared))
    lo = np.searchsorted(non, values, side="left")
    hi = np.searchsorted(non, values, side="right")
    starts = np.concatenate([[0], hi])
    ends = np.concatenate([lo, [non.size]])
    first = np.full(starts.size, np.inf)
    last = np.full(starts.size, -np.inf)
    has = ends > starts
    first[has] = non[starts[has]]
    last[has] = non[ends[has] - 1]
    n_distinct = int(np.count_nonzero(non[1:] != non[:-1])) + 1 if non.size else 0
    return {
        "n_distinct": n_distinct - int(np.count_nonzero(hi > lo)),  # not at a mated score
        "lo": lo.astype(np.int64),
        "hi": hi.astype(np.int64),
        "first": first,
        "last": last,
        "min": float(non[0]) if non.size else np.inf,
        "max": float(non[-1]) if non.size else -np.inf,
    }


def _task_window(piece: tuple[Any, ...], shared: Any, bounds: Any) -> dict[str, Any]:
    """Pass 3: distinct non-mated scores in [low, high] with their counts."""
    low, high = np.float64(bounds[0]), np.float64(bounds[1])  # compared as float64, exactly
    s, t = _block_scores(piece, shared)
    keep = np.ones(s.shape, dtype=bool)
    keep[np.arange(s.shape[0]), t] = False
    keep &= (s >= low) & (s <= high)
    u, c = np.unique(s[keep], return_counts=True)  # only the range is sorted, not the block
    return {"u": u, "c": c.astype(np.int64)}


def _task_histogram(piece: tuple[Any, ...], shared: Any, edges: Any) -> NDArray[np.int64]:
    """Refining pass: non-mated counts in the bins [e_i, e_i+1) of ``edges`` (last bin closed)."""
    s, t = _block_scores(piece, shared)
    keep = np.ones(s.shape, dtype=bool)
    keep[np.arange(s.shape[0]), t] = False
    return _bin_counts(s[keep], edges)


def _bin_counts(x: NDArray[np.floating], edges: NDArray[np.float64]) -> NDArray[np.int64]:
    """Counts of ``x`` in [e_i, e_i+1) for each bin, the last bin closed; outside ignored."""
    x = x[(x >= edges[0]) & (x <= edges[-1])]
    idx = np.minimum(np.searchsorted(edges, x, side="right") - 1, edges.size - 2)
    return np.bincount(idx, minlength=edges.size - 1).astype(np.int64)


def _task_count_le(piece: tuple[Any, ...], shared: Any, x: Any) -> NDArray[np.int64]:
    """Non-mated scores <= each float64 threshold ``x`` in one block."""
    non = _nonmated_sorted(*_block_scores(piece, shared)).astype(np.float64)
    return np.searchsorted(non, np.asarray(x, dtype=np.float64), side="right").astype(np.int64)


def _task_sums(piece: tuple[Any, ...], shared: Any, c: float) -> tuple[float, float]:
    """Sum of a block's non-mated scores and of their squared deviations from ``c``."""
    scores, targets = _block_scores(piece, shared)
    return non_block_sums(scores, targets, c)  # as in memory


def _task_locate(piece: tuple[Any, ...], shared: Any, value: Any) -> int:
    """Index (block-local, row-major without the mated cells) of the first non-mated == value."""
    s, t = _block_scores(piece, shared)
    hit = s == value
    hit[np.arange(s.shape[0]), t] = False
    idx = np.flatnonzero(hit)
    if idx.size == 0:
        return -1
    r, j = divmod(int(idx[0]), s.shape[1])
    return r * (s.shape[1] - 1) + j - int(j > t[r])


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def dask_client(
    scheduler: Any = "local",
    *,
    n_workers: int = 2,
    memory_limit: str | int | None = None,
    processes: bool = True,
) -> Iterator[Any]:
    """A ``dask.distributed`` client for ``scheduler``.

    ``"local"`` starts a local cluster, an address (``"tcp://host:8786"``) connects to a running
    scheduler, and an existing ``Client`` is used as is.

    The local cluster has ``n_workers`` single-threaded workers with ``memory_limit`` each
    (Dask's default when None) and is closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise VoxMetricsInputError(
            "blockwise evaluation needs Dask: pip install 'voxmetrics[dask]' (dask[distributed])."
        ) from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler == "local":
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=processes,
                memory_limit=memory_limit if memory_limit is not None else "auto",
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    try:
        client = Client(str(scheduler), timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc}); give its "
            "address as tcp://HOST:PORT, or 'local' for a cluster on this machine."
        ) from None
    with client:
        yield client


class _Runner:
    """Maps one task over every block, reducing results as they arrive, with progress."""

    def __init__(
        self,
        client: Any,
        source: BlockSource,
        blocks: list[slice],
        progress: Progress | None,
        retries: int,
    ) -> None:
        self.client = client
        self.retries = retries
        self.progress = progress
        # each block's piece travels inside its tasks (not scattered): a task of a lost worker
        # is then rerun elsewhere from its own description; scattered data would be lost too
        self.pieces = source.pieces(blocks)
        shared = source.shared()
        self.shared = None if shared is None else client.scatter(shared, broadcast=True, hash=False)
        self.fraction = 0.0

    def run(
        self,
        fn: Callable[..., Any],
        arg: Any,
        label: str,
        weight: tuple[float, float],
        *,
        per_block: bool = False,
    ) -> list[Any]:
        """Results of ``fn(piece, shared, arg)`` for every block, in block order.

        With ``per_block``, ``arg`` is a list: block i gets ``arg[i]``.
        """
        if isinstance(arg, np.ndarray) and arg.size > 100_000:
            arg = self.client.scatter(arg, broadcast=True, hash=False)
        args = arg if per_block else [arg] * len(self.pieces)
        futures = [
            self.client.submit(fn, p, self.shared, a, retries=self.retries, pure=False)
            for p, a in zip(self.pieces, args, strict=True)
        ]
        return _gather_in_order(futures, label, weight, self)

    def report(self, done: int, total: int, label: str, weight: tuple[float, float]) -> None:
        """Progress: ``done`` of ``total`` tasks of a pass spanning ``weight`` of the run."""
        if self.progress is not None:
            a, b = weight
            self.fraction = max(self.fraction, a + (b - a) * done / total)
            self.progress(self.fraction, f"{label}: block {done}/{total}")


def _gather_in_order(
    futures: list[Any], label: str, weight: tuple[float, float], runner: _Runner | None
) -> list[Any]:
    """Results of ``futures`` in their order, each released as it arrives, with progress."""
    from distributed import as_completed

    index = {f.key: i for i, f in enumerate(futures)}
    out: list[Any] = [None] * len(futures)
    done = 0
    for fut in as_completed(futures):
        out[index[fut.key]] = fut.result()
        fut.release()
        done += 1
        if runner is not None:
            runner.report(done, len(futures), label, weight)
    return out


def _row_blocks(n_rows: int, n_cols: int) -> list[slice]:
    """The row blocks of the in-memory loops (:func:`~voxmetrics.metrics.ranks.row_blocks`).

    Float sums over blocks (Cllr, the chance ALID) then add the same terms in the same order.
    """
    return row_blocks(n_rows, n_cols)


def evaluate_blockwise(
    source: BlockSource | EmbeddingSet,
    *,
    client: Any,
    dev: ScoreMatrix | None = None,
    name: str = "condition",
    attacker: str = "semi-informed",
    lid_variant: str = "maximum-likelihood",
    split: str = "eval",
    ties: Ties = "reference",
    seed: int = 0,
    score_kind: ScoreKind = "similarity",
    p_targets: Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    by: str | None = None,
    progress: Progress | None = None,
    retries: int = 3,
) -> Any:
    """Every metric of :func:`~voxmetrics.report.evaluate`, block by block on a Dask client.

    Parameters
    ----------
    source : EmbeddingSet, EmbeddingBlocks, ChunkedScores or ZarrScores
        The evaluated trials: embeddings (scored per block; ``split`` picks the split) or a
        score matrix stored as row chunks (files, or a Zarr store).
    client : distributed.Client
        Where the blocks run (see :func:`dask_client`).
    dev : ScoreMatrix, optional
        In-memory calibration scores of disjoint speakers; LID is computed when given (for an
        EmbeddingSet with a dev split and no ``dev``, its dev split is scored in memory).
    name, attacker, lid_variant, ties, seed, score_kind, p_targets, c_miss, c_fa :
        As in :func:`~voxmetrics.report.evaluate` (``seed`` seeds the chance levels' draws).
    by : str, optional
        A per-trial attribute of embeddings (a metadata column, e.g. ``"sex"``): also evaluate
        each of its values on its own trials and enrolled identities, as ``evaluate(by=...)``
        (:meth:`EmbeddingBlocks.subset_attribute`; ``dev`` is split likewise when it has the
        attribute). Score chunks carry no attributes.
    progress : callable(fraction, message), optional
        Called as blocks finish.
    retries : int
        Times Dask retries a failed block (a lost worker) before giving up.

    Returns
    -------
    ConditionReport
        Equal to ``evaluate(matrix, dev=dev, embeddings=..., ...)`` on the in-memory matrix,
        every number of its JSON bit for bit: the baselines, LID, SRD, ZEBRA, linkability and
        its curve, the chance levels, the verification block (DCF, d', the DET and APE curves)
        and, from an EmbeddingSet, singling out (its predicates in blocks on the workers). Only
        the DET curve's ``n_points`` (operating points before thinning) is an upper bound:
        the distinct scores of different blocks are not compared. Bootstrap intervals,
        cross-calibrated LID are not computed.
    """
    from voxmetrics.report import ConditionReport, TrialsUsed

    check_ties(ties)
    if score_kind not in SCORE_KINDS:
        raise VoxMetricsInputError(
            f"score_kind '{score_kind}' is unknown; use one of {', '.join(SCORE_KINDS)}."
        )
    es = None
    if isinstance(source, EmbeddingSet):
        es = source
        source = EmbeddingBlocks.from_embeddings(es, split)
        if dev is None and split == "eval" and "dev" in es.splits():
            dev = es.score_matrix("dev")
    options = {
        "attacker": attacker,
        "lid_variant": lid_variant,
        "ties": ties,
        "seed": seed,
        "score_kind": score_kind,
        "p_targets": p_targets,
        "c_miss": c_miss,
        "c_fa": c_fa,
        "retries": retries,
    }
    subsets = None
    if by is not None:
        if not isinstance(source, EmbeddingBlocks):
            raise VoxMetricsInputError(
                f"--by {by}: score chunks carry no per-trial attributes; evaluate embeddings "
                "(--embeddings with a metadata column) to split by an attribute on Dask."
            )
        if by not in source.attributes:
            source.subset_attribute(by, "")  # the error naming the attributes there are
        subsets = {}
        for value in sorted(set(source.attributes[by].tolist())):
            sub_dev = dev
            if dev is not None and by in dev.attributes:
                sub_dev = dev.subset_attribute(by, value)
            subsets[value] = evaluate_blockwise(
                source.subset_attribute(by, value),
                client=client,
                dev=sub_dev,
                name=f"{name} [{by}={value}]",
                **options,  # type: ignore[arg-type]
            )
    n_rows, n_cols = source.shape
    cal = None
    if dev is not None:
        labels = SimpleNamespace(
            trial_speakers=source.trial_speakers,
            enrol_speakers=source.enrol_speakers,
            source="the blockwise eval set",
        )
        check_disjoint_speakers(dev, labels)  # type: ignore[arg-type]
        cal = calibrate_lid(dev.scores, dev.targets, variant=resolve_lid_variant(lid_variant))
    blocks = _row_blocks(n_rows, n_cols)
    runner = _Runner(client, source, blocks, progress, retries)

    columns = chance_columns(n_rows, n_cols, seed=seed)  # the chance levels' draws
    args = [(cal, ties, columns[:, b]) for b in blocks]
    rows = runner.run(_task_rows, args, "scores and ranks", (0.0, 0.4), per_block=True)
    tar = np.concatenate([r["tar"] for r in rows])
    ranks = np.concatenate([r["rank"] for r in rows])  # target_ranks(ties="reference")
    ranks_gt = np.concatenate([r["rank_gt"] for r in rows])  # target_ranks(ties="attacker")
    c_all = 0.0
    for r in rows:  # in block order, as the in-memory loop
        c_all += r["softplus"]
    values = np.unique(tar)
    pools_parts = runner.run(_task_pools, values, "pooled counts", (0.4, 0.8))
    sizes = [(b.stop - b.start) * (n_cols - 1) for b in blocks]
    pools = _pools_from_counts(runner, tar, values, pools_parts, n_rows * (n_cols - 1), sizes)

    c_tar = softplus_sum(-tar)
    c_non = c_all - softplus_sum(tar)
    cllr = float(0.5 * (c_tar / n_rows + c_non / (n_rows * (n_cols - 1))) / np.log(2.0))
    e = eer_from_pools(pools, ties=ties)
    baseline = BaselineResult(
        n_trials=n_rows,
        n_enrolled=n_cols,
        eer=e.eer,
        eer_threshold=e.threshold,
        eer_rocch=eer_rocch_from_pools(pools, ties=ties),
        cllr=cllr,
        min_cllr=min_cllr_from_pools(pools, ties=ties),
        linkability=float((ranks_gt == 1).mean()),  # ties go to the true speaker, as in memory
    )
    srd_ranks = ranks.copy() if ties == "reference" else ranks_gt.copy()
    hist = rank_histogram(srd_ranks, n_cols)
    srd_result = SRDResult(ranks=_ro(srd_ranks), histogram=_ro(hist), stats=srd_stats(hist))
    lid_out = None
    if cal is not None:
        blocks = [r["chance"] for r in rows]
        lid_out = lid_result(
            np.concatenate([b.lid for b in blocks]),
            np.concatenate([b.p_target for b in blocks]),
            ranks.copy(),
            n_enrolled=n_cols,
            calibration=cal,
            n_degenerate=sum(b.n_degenerate for b in blocks),
        )
    zebra = zebra_from_pools(pools, ties=ties)
    chance = chance_levels_from_blocks([r["chance"] for r in rows], n_cols)
    verification = verification_from_pools(
        pools, p_targets=p_targets, c_miss=c_miss, c_fa=c_fa, scores_are_llrs=score_kind == "llr"
    )
    singled = None if es is None else _singling_out_blockwise(client, es, split, retries)
    if progress is not None:
        progress(1.0, "done")
    return ConditionReport(
        name=name,
        attacker=attacker,
        n_excluded_trials=source.n_excluded_trials,
        has_dev=dev is not None,
        baseline=baseline,
        srd=srd_result,
        srd_model=fit_beta_binomial(hist, loss="CLL"),
        zebra=zebra,
        linkability_curve=linkability_curve_from_ranks(ranks_gt, n_cols),
        singling_out=singled,
        lid=lid_out,
        verification=verification,
        score_kind=score_kind,
        chance=chance,
        ties=ties,
        by=None if subsets is None else {by: subsets},
        trials_used=TrialsUsed(  # a complete matrix: every pair, every trial
            n_pairs=n_rows * n_cols,
            n_tar=n_rows,
            n_non=n_rows * (n_cols - 1),
            n_trials=n_rows,
            n_enrolled=n_cols,
            one_to_n_trials=n_rows,
            one_to_n_enrolled=n_cols,
        ),
    )


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _pools_from_counts(
    runner: _Runner,
    tar: NDArray[np.floating],
    values: NDArray[np.floating],
    parts: list[dict[str, Any]],
    n_non: int,
    block_sizes: list[int],
) -> SortedPools:
    """The :class:`SortedPools` of the whole matrix from the blocks' pass-2 counts."""
    non_below = np.sum([p["lo"] for p in parts], axis=0)
    non_upto = np.sum([p["hi"] for p in parts], axis=0)
    first = np.min([p["first"] for p in parts], axis=0)
    tar_sorted = np.sort(tar)
    tar_at = np.unique(tar_sorted, return_counts=True)[1]
    cells = np.concatenate([non_below, [n_non]]) - np.concatenate([[0], non_upto])
    counts = RunCounts(
        cells=cells.astype(np.float64),
        tar_at=tar_at.astype(np.float64),
        non_at=(non_upto - non_below).astype(np.float64),
    )
    cell_first = np.where(np.isfinite(first), first, np.nan)
    last = np.max([p["last"] for p in parts], axis=0)
    cell_last = np.where(np.isfinite(last), last, np.nan)
    low = min(min(p["min"] for p in parts), float(tar_sorted[0]))
    high = max(max(p["max"] for p in parts), float(tar_sorted[-1]))
    grid = _Grid(values, tar_sorted, non_below, non_upto, n_non, low, high)
    points = _eer_points_blockwise(runner, grid)

    def locate(score: float, mated: bool) -> int:
        v = tar.dtype.type(score)
        if mated:
            return int(np.flatnonzero(tar == v)[0])
        hits = runner.run(_task_locate, v, "locating a score", (0.95, 0.99))
        offset = 0
        for size, h in zip(block_sizes, hits, strict=True):
            if h >= 0:
                return offset + int(h)
            offset += size
        raise ValueError("score not in the non-target pool")  # pragma: no cover

    def count_non_le(thresholds: Any) -> NDArray[np.int64]:
        x = np.asarray(thresholds, dtype=np.float64).ravel()
        return np.sum(runner.run(_task_count_le, x, "counting", (0.95, 0.99)), axis=0)

    def non_sums(c: float) -> tuple[float, float]:
        total = sq = 0.0
        for t_b, sq_b in runner.run(_task_sums, float(c), "sums", (0.95, 0.99)):
            total += t_b  # in block order, as the in-memory loop
            sq += sq_b
        return total, sq

    # n_distinct (distinct pooled scores) is not additive over blocks: the distinct mated
    # scores plus each block's distinct non-mated scores between them bound it from above
    # (equal when no non-mated score repeats across blocks). Only the DET curve's n_points
    # reads it.
    n_distinct = min(values.size + sum(p["n_distinct"] for p in parts), int(tar.size + n_non))
    return SortedPools(
        values,
        counts,
        cell_first,
        cell_last,
        n_distinct,
        int(tar.size),
        int(n_non),
        points,
        locate,
        count_non_le,
        non_sums,
    )


@dataclass(frozen=True)
class _Grid:
    """Pooled counts known at the distinct mated scores after pass 2."""

    values: NDArray[np.floating]
    tar_sorted: NDArray[np.floating]
    non_below: NDArray[np.int64]
    """Non-mated scores below each distinct mated score."""
    non_upto: NDArray[np.int64]
    """Non-mated scores at or below each distinct mated score."""
    n_non: int
    low: float
    """Lowest pooled score."""
    high: float
    """Highest pooled score."""


def _eer_points_blockwise(runner: _Runner, grid: _Grid) -> dict[str, EERPoint]:
    """SpeechBrain's EER operating points (both tie rules) from part of the pooled scores.

    FAR - FRR changes sign in (v_{k0-1}, v_k0] for the first distinct mated score v_k0 where
    FAR <= FRR. The distinct pooled scores (with counts) of a range of mated scores around it,
    reaching at least ``_WINDOW_MARGIN`` pooled positions beyond either end, are fetched in
    one pass, and the margin grows until the range covers the window :func:`_scan_window`
    needs (a few hundred positions for continuous scores).
    """
    values, tar_sorted = grid.values, grid.tar_sorted
    n_tar, n_non = int(tar_sorted.size), grid.n_non
    k_n = values.size
    fr = np.searchsorted(tar_sorted, values, side="right").astype(np.int64)
    sign = (n_non - grid.non_upto) * n_tar - fr * n_non <= 0
    k0 = int(np.argmax(sign)) if sign.any() else k_n
    pos_left = np.searchsorted(tar_sorted, values, side="left") + grid.non_below
    pos_right = fr + grid.non_upto
    n = n_tar + n_non
    p_lo = int(pos_right[k0 - 1]) if k0 > 0 else 0
    p_hi = int(pos_right[k0]) if k0 < k_n else n
    # where in the cell: the q-th non-mated score with q = n_non - floor(FR n_non / n_tar) is
    # the first with FAR <= FRR (ties may move the crossing left: the scan then asks for more)
    fr_c = int(fr[k0 - 1]) if k0 > 0 else 0
    p_est = min(max(fr_c + n_non - (fr_c * n_non) // n_tar - 1, p_lo), p_hi)
    margin = _WINDOW_MARGIN
    points: dict[str, EERPoint] = {}
    while True:
        want = (max(0, p_est - margin), min(n, p_est + margin))
        ka = int(np.searchsorted(pos_left, want[0], side="right")) - 1
        kb = int(np.searchsorted(pos_right, want[1], side="left"))
        low = float(values[ka]) if ka >= 0 else grid.low
        high = float(values[kb]) if kb < k_n else grid.high
        start = int(pos_left[ka]) if ka >= 0 else 0
        stop = int(pos_right[kb]) if kb < k_n else n
        while stop - start > WINDOW_CAP:  # too many scores between mated ones: narrow by value
            low, high, start, stop, narrower = _narrow(runner, grid, low, high, start, want)
            if not narrower:
                break
        parts = runner.run(_task_window, (low, high), "EER operating point", (0.8, 0.95))
        keep = (tar_sorted >= np.float64(low)) & (tar_sorted <= np.float64(high))
        u, inv = np.unique(
            np.concatenate([*(p["u"] for p in parts), tar_sorted[keep]]), return_inverse=True
        )
        weights = np.concatenate([*(p["c"] for p in parts), np.ones(int(keep.sum()), np.int64)])
        cnt = np.bincount(inv, weights=weights, minlength=u.size).astype(np.int64)
        for ties in TIES:
            if ties not in points:
                point = _scan_window(
                    u, cnt, start, n, tar_sorted, n_non, attacker=ties == "attacker"
                )
                if point is not None:
                    points[ties] = point
        if len(points) == len(TIES):
            return points
        margin = max(4 * margin, 64)


def _narrow(
    runner: _Runner, grid: _Grid, low: float, high: float, start: int, want: tuple[int, int]
) -> tuple[float, float, int, int, bool]:
    """One histogram pass over [low, high]: the narrowest run of bins covering ``want``.

    ``start`` pooled scores lie below ``low``; ``want`` are pooled positions. Bounds are
    float64 and compared as float64 (exact for float32 scores too).
    """
    edges = np.linspace(low, high, _BINS + 1)
    parts = runner.run(_task_histogram, edges, "EER operating point", (0.8, 0.95))
    counts = np.sum(parts, axis=0) + _bin_counts(grid.tar_sorted, edges)
    cum = start + np.concatenate([[0], np.cumsum(counts)])  # cum[i]: pooled scores < e_i
    i0 = int(np.searchsorted(cum[:-1], want[0], side="right")) - 1
    i1 = int(np.searchsorted(cum[1:], want[1], side="left"))
    i1 = min(i1, _BINS - 1)
    new_low, new_high = float(edges[i0]), float(edges[i1 + 1])
    narrower = (new_low, new_high) != (low, high)
    return new_low, new_high, int(cum[i0]), int(cum[i1 + 1]), narrower


def _scan_window(
    u: NDArray[np.floating],
    cnt: NDArray[np.int64],
    below: int,
    n: int,
    tar_sorted: NDArray[np.floating],
    n_non: int,
    *,
    attacker: bool,
) -> EERPoint | None:
    """The scan of :func:`voxmetrics.metrics.pools._eer_point` on part of the pooled scores.

    ``u`` are distinct pooled scores with counts ``cnt``, starting at pooled position ``below``;
    None when they do not cover the window the scan needs.
    """
    n_tar = int(tar_sorted.size)
    pos_end = below + np.cumsum(cnt)
    pos_start = pos_end - cnt
    fr_all = np.searchsorted(tar_sorted, u, side="right").astype(np.int64)
    fa_all = n_non - (pos_end - fr_all)
    sign = fa_all * n_tar - fr_all * n_non <= 0
    if not sign.any() or (sign[0] and below > 0):
        return None
    lo_j = int(pos_start[int(np.argmax(sign))])
    half = 64
    while True:
        a, b = max(0, lo_j - half), min(n, lo_j + half)
        if a < below or b > int(pos_end[-1]):
            return None
        sel = (pos_start < b) & (pos_end > a)  # the distinct scores of positions a .. b - 1
        cand = eer_candidates(
            u[sel], fr_all[sel], fa_all[sel], cnt[sel], tar_sorted, n_non, attacker=attacker
        )
        if (a == 0 or cand.c[0] > cand.m) and (b == n or cand.c[-1] > cand.m):
            return cand.point()
        half *= 4


def _singling_out_blockwise(
    client: Any, es: EmbeddingSet, split: str, retries: int
) -> SinglingOutResult | None:
    """Singling out of ``split``, its blocks of predicates on the workers (as in memory)."""

    def map_blocks(fn: Callable[..., Any], shared: tuple[Any, ...], blocks: list[Any]) -> list[Any]:
        on_workers = [client.scatter(x, broadcast=True, hash=False) for x in shared]
        futures = [
            client.submit(fn, *block, *on_workers, retries=retries, pure=False) for block in blocks
        ]
        return _gather_in_order(futures, "singling out", (0.95, 0.99), None)

    try:
        return singling_out_embeddings(es, split=split, map_blocks=map_blocks)
    except VoxMetricsInputError as exc:  # as evaluate: too few trial embeddings per speaker
        warnings.warn(f"singling out skipped: {exc}", DegenerateDataWarning, stacklevel=3)
        return None


# --------------------------------------------------------------------------- extraction

_EXTRACTORS: dict[tuple[str, str], Any] = {}


def _worker_extractor(model: str, device: str) -> Any:
    """The extractor of this worker, loaded once per worker process and device.

    ``device`` is resolved here, on the worker (:func:`~voxmetrics.embeddings.select_device`):
    ``"auto"`` is CUDA on a worker whose torch sees a GPU and the CPU elsewhere, so one cluster
    may mix GPU and CPU workers; ``"cuda"`` on a worker without a GPU is refused there.
    """
    from voxmetrics.embeddings import load_extractor, select_device

    resolved = select_device(device)
    key = (model, resolved)
    if key not in _EXTRACTORS:
        _EXTRACTORS[key] = load_extractor(model, device=resolved)
    return _EXTRACTORS[key]


def _task_extract(part: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Embed one batch of recordings on a worker (cache lookups first, as on one machine)."""
    from voxmetrics.embeddings import extract_embeddings

    extractor = _worker_extractor(options["model"], options["device"])
    result = extract_embeddings(
        part,
        audio_root=options["audio_root"],
        extractor=extractor,
        batch_size=options["batch_size"],
        cache_dir=options["cache_dir"],
        exact=options["exact"],
    )
    es = result.embeddings
    return {
        "rows": np.array([], np.int64) if es is None else es.meta["_row"].to_numpy(np.int64),
        "embeddings": None if es is None else es.embeddings.astype(np.float32),
        "failures": result.failures,
        "n_cached": result.n_cached,
        "model": result.model,
        "device": str(extractor.device),
    }


def extract_embeddings_blockwise(
    manifest: Any,
    *,
    audio_root: str | Path,
    model: str,
    client: Any,
    device: str = "auto",
    batch_size: int = 16,
    files_per_task: int | None = None,
    cache_dir: str | Path | None = None,
    exact: bool = True,
    progress: Progress | None = None,
    retries: int = 3,
) -> Any:
    """:func:`~voxmetrics.embeddings.extract_embeddings` spread over a Dask cluster.

    One task embeds ``files_per_task`` recordings (default ``4 * batch_size``) with the
    worker's own extractor (``model`` and ``device`` as in
    :func:`~voxmetrics.embeddings.load_extractor`; ``"auto"`` takes a worker's GPU when it has
    one). The content-hash cache ``cache_dir`` is shared on disk, so a recording embedded once
    is never embedded again, by any worker; ``audio_root`` (and the cache) must be visible to
    every worker at the same path. A failed task is retried (``retries``) without redoing the
    others. Returns an :class:`~voxmetrics.embeddings.ExtractionResult` in manifest order.
    """
    import time

    import pandas as pd

    from voxmetrics.embeddings import ExtractionResult, default_cache_dir

    if batch_size < 1 or (files_per_task is not None and files_per_task < 1):
        raise VoxMetricsInputError("batch_size and files_per_task must be at least 1.")
    start = time.monotonic()
    per_task = files_per_task or 4 * batch_size
    if Path(model).is_dir():  # a local model folder: the same path on the workers
        model = str(Path(model).resolve())
    frame = manifest.reset_index(drop=True).assign(_row=np.arange(len(manifest)))
    options = {
        "model": model,
        "device": device,
        "audio_root": str(Path(audio_root).resolve()),
        "batch_size": batch_size,
        "cache_dir": str(Path(cache_dir or default_cache_dir()).resolve()),
        "exact": exact,
    }
    from distributed import as_completed

    futures = [
        client.submit(
            _task_extract, frame.iloc[a : a + per_task], options, retries=retries, pure=False
        )
        for a in range(0, len(frame), per_task)
    ]
    parts = []
    done = 0
    for fut in as_completed(futures):
        parts.append(fut.result())
        fut.release()
        done += 1
        if progress is not None:
            progress(
                done / len(futures),
                f"{done}/{len(futures)} batches of recordings (the last on {parts[-1]['device']})",
            )
    rows = np.concatenate([p["rows"] for p in parts])
    order = np.argsort(rows)
    es = None
    if rows.size:
        embs = np.concatenate([p["embeddings"] for p in parts if p["embeddings"] is not None])
        es = EmbeddingSet.from_arrays(
            embs[order].astype(np.float64),
            manifest.iloc[rows[order]].reset_index(drop=True),
            source=f"embeddings ({parts[0]['model']})",
        )
    failures = pd.concat([p["failures"] for p in parts], ignore_index=True)
    return ExtractionResult(
        embeddings=es,
        failures=failures,
        model=parts[0]["model"] if parts else model,
        n_cached=sum(int(p["n_cached"]) for p in parts),
        seconds=time.monotonic() - start,
    )
