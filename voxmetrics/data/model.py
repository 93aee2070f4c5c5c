"""The data model: :class:`ScoreMatrix` (T trials x N enrolled) and :class:`EmbeddingSet`.

See the documentation (User guide > Input formats; Methods > Conventions). Both classes
are frozen; their arrays are read-only. Build them through :meth:`ScoreMatrix.from_arrays` and
:meth:`EmbeddingSet.from_arrays`, which validate once and raise
:class:`~voxmetrics.errors.VoxMetricsInputError` with a message saying what to fix.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics._types import Split
from voxmetrics.data._finite import frozen, known_finite, remember_finite
from voxmetrics.data._finite import readonly as _readonly
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError
from voxmetrics.limits import check_count

pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = ["SCORE_CHUNK_ROWS", "EmbeddingSet", "ScoreMatrix", "score_chunk", "unit_rows"]


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


def _labels(values: ArrayLike, name: str, where: str) -> NDArray[np.str_]:
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


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Scores of T trial utterances against N enrolled identities (docs, Methods > Conventions).

    Build with :meth:`from_arrays`, which validates and excludes trials whose speaker is not
    enrolled (their number is kept in :attr:`n_excluded_trials`); a sparse trial list keeps
    them for the pairwise metrics (see :meth:`from_arrays`).

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...     trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> sm.shape, sm.targets.tolist(), sm.tar.tolist()
    ((2, 2), [0, 1], [0.9, 0.8])
    """

    scores: NDArray[np.float64]
    """T x N similarity scores; row i is trial i, column j enrolled identity j."""
    trial_ids: NDArray[np.str_]
    """T unique trial identifiers."""
    trial_speakers: NDArray[np.str_]
    """T speaker labels of the trials (each one enrolled, except in a sparse trial list: see
    :attr:`trial_enrolled`)."""
    enrol_speakers: NDArray[np.str_]
    """N unique labels of the enrolled identities (the columns)."""
    attributes: Mapping[str, NDArray[Any]] = field(default_factory=dict)
    """Optional per-trial attributes (e.g. ``sex``, ``age_group``), each of length T."""
    n_excluded_trials: int = 0
    """Trials dropped because their speaker is not enrolled (a sparse trial list keeps those
    with an unlisted pair)."""
    source: str = ""
    """Where the data came from (file name), for messages."""
    mask: NDArray[np.bool_] | None = None
    """T x N listed pairs of a sparse trial list (True = scored pair), None when every pair is
    scored. Unlisted cells hold NaN in :attr:`scores`. Pairwise metrics use the listed pairs
    (:attr:`tar`, :attr:`non`); the 1-to-N metrics use :meth:`complete_rows`."""

    @classmethod
    def from_arrays(
        cls,
        scores: ArrayLike,
        *,
        trial_ids: ArrayLike,
        trial_speakers: ArrayLike,
        enrol_speakers: ArrayLike,
        attributes: Mapping[str, ArrayLike] | None = None,
        source: str = "",
        n_excluded_trials: int = 0,
        copy: bool = True,
        mask: ArrayLike | None = None,
        nan_missing: bool = False,
    ) -> ScoreMatrix:
        """Validate arrays and build a :class:`ScoreMatrix`.

        Trials whose speaker is not among ``enrol_speakers`` are excluded and counted (an
        :class:`~voxmetrics.errors.ExcludedTrialsWarning` is emitted); it is an error only when
        no trial is left. float32 scores stay float32 (half the memory of a large matrix);
        anything else becomes float64. With ``copy=False`` the score array is not copied but
        made read-only in place, together with the array it is a view of (if any): pass it only
        for an array nothing else will write to.

        A sparse trial list (not every trial scored against every enrolled identity) gives
        ``mask`` (T x N, True = listed pair) or, with ``nan_missing=True``, NaN for the unlisted
        pairs. Only listed scores must be finite; unlisted cells become NaN. A mask that lists
        every pair is dropped (the matrix is complete, :attr:`mask` is None). A trial with no
        listed pair is an error.

        In a sparse trial list every listed pair counts for the pairwise metrics (EER,
        ROCCH-EER, Cllr, ZEBRA, verification): a trial whose speaker is not enrolled (a Kaldi
        key trial with non-target lines only, an utt2spk speaker without enrolment) is kept,
        its listed pairs all non-mated; the 1-to-N metrics leave it out
        (:meth:`complete_rows`). Only such a trial listed against every enrolled identity is
        excluded (and counted), as in a complete matrix.

        Raises
        ------
        VoxMetricsInputError
            Wrong shapes, non-numeric, NaN or infinite scores, duplicate labels, fewer than two
            enrolled identities, or no trial with an enrolled speaker.
        """
        where = source or "score matrix"
        s = _score_array(scores, where)
        tids = _labels(trial_ids, "trial_ids", where)
        tspk = _labels(trial_speakers, "trial_speakers", where)
        espk = _labels(enrol_speakers, "enrol_speakers", where)
        _check_labels(s.shape, tids, tspk, espk, where)
        m = _listed_mask(s, mask, nan_missing, tids, where)
        if m is not None and m.all():
            m = None
        if m is not None:
            s, copy = _unlisted_nan(s, m, copy=copy)
        _check_finite(s, m, tids, espk, where)
        attrs = _trial_attributes(attributes, s.shape[0], where)
        enrolled = _enrolled_trials(tspk, espk, where)
        if m is not None:  # a sparse list keeps the non-mated pairs of unenrolled speakers
            enrolled = enrolled | ~m.all(axis=1)
        n_out = int((~enrolled).sum())
        if n_out:
            warnings.warn(
                f"{where}: {n_out} of {tids.size} trials have a speaker who is not enrolled"
                + (" and are listed against every enrolled identity" if m is not None else "")
                + "; they are excluded from every metric.",
                ExcludedTrialsWarning,
                stacklevel=2,
            )
            s, tids, tspk = s[enrolled], tids[enrolled], tspk[enrolled]
            attrs = {k: v[enrolled] for k, v in attrs.items()}
            copy = False  # the boolean selection made a fresh array
            if m is not None:
                m = m[enrolled]
                if m.all():
                    m = None
        sm = cls(
            mask=None if m is None else _readonly(m, copy=False),
            scores=_readonly(s, copy=copy),
            trial_ids=_readonly(tids),
            trial_speakers=_readonly(tspk),
            enrol_speakers=_readonly(espk),
            attributes={k: _readonly(v) for k, v in attrs.items()},
            n_excluded_trials=int(n_excluded_trials) + n_out,
            source=source,
        )
        if m is not None:
            sm._check_both_kinds_listed(where)
        elif frozen(sm.scores):  # found finite above (or a selection of rows of it)
            remember_finite(sm.scores)
        return sm

    def _check_both_kinds_listed(self, where: str) -> None:
        """A sparse matrix lists at least one mated and one non-mated pair."""
        listed = int(self.target_listed.sum())
        if listed == 0:
            raise VoxMetricsInputError(
                f"{where}: no mated (target) pair is listed: no trial is scored against its own "
                "speaker, so no pooled metric can be computed; list each trial against its own "
                "speaker."
            )
        if listed == self.n_pairs:
            raise VoxMetricsInputError(
                f"{where}: no non-mated pair is listed: every listed pair scores a trial against "
                "its own speaker, so no pooled metric can be computed; list trials against "
                "other enrolled speakers too."
            )

    @property
    def shape(self) -> tuple[int, int]:
        """(T, N)."""
        return self.scores.shape  # type: ignore[return-value]

    @property
    def n_trials(self) -> int:
        """T, the number of (kept) trials."""
        return self.scores.shape[0]

    @property
    def n_enrolled(self) -> int:
        """N, the number of enrolled identities."""
        return self.scores.shape[1]

    @cached_property
    def trial_enrolled(self) -> NDArray[np.bool_]:
        """Per trial: whether its speaker is enrolled.

        All True except in a sparse trial list, where a trial of an unenrolled speaker keeps
        its non-mated pairs.
        """
        return _readonly(np.isin(self.trial_speakers, self.enrol_speakers), copy=False)

    @cached_property
    def targets(self) -> NDArray[np.intp]:
        """Column index ``m_i`` of each trial's own speaker (length T).

        A trial whose speaker is not enrolled (sparse trial lists only) gets its first unlisted
        column instead: that cell is not listed, so it is neither a mated nor a non-mated pair
        (:attr:`target_listed` is False) and every listed pair of the trial is non-mated.
        """
        order = np.argsort(self.enrol_speakers)
        pos = np.searchsorted(self.enrol_speakers, self.trial_speakers, sorter=order)
        t = order[np.minimum(pos, self.n_enrolled - 1)]
        out = ~self.trial_enrolled
        if out.any() and self.mask is not None:
            t[out] = np.argmin(self.mask[out], axis=1)  # the first False: an unlisted cell
        return _readonly(t, copy=False)

    @property
    def is_complete(self) -> bool:
        """Whether every trial is scored against every enrolled identity (no :attr:`mask`)."""
        return self.mask is None

    @property
    def n_pairs(self) -> int:
        """Listed (trial, enrolled) pairs: T x N for a complete matrix."""
        t, n = self.shape
        return t * n if self.mask is None else int(np.count_nonzero(self.mask))

    @cached_property
    def target_listed(self) -> NDArray[np.bool_]:
        """Per trial: whether its mated pair ``(i, m_i)`` is listed (all True when complete)."""
        if self.mask is None:
            return _readonly(np.ones(self.n_trials, dtype=bool), copy=False)
        return _readonly(self.mask[np.arange(self.n_trials), self.targets])

    @cached_property
    def tar(self) -> NDArray[np.float64]:
        """The mated scores ``S[i, m_i]`` of the listed mated pairs (T of them when complete)."""
        tar = self.scores[np.arange(self.n_trials), self.targets]
        return _readonly(tar if self.mask is None else tar[self.target_listed])

    @cached_property
    def non(self) -> NDArray[np.float64]:
        """The listed non-mated scores, row by row (T(N-1) of them when complete)."""
        mask = np.ones(self.scores.shape, dtype=bool) if self.mask is None else self.mask.copy()
        mask[np.arange(self.n_trials), self.targets] = False
        return _readonly(self.scores[mask])

    def complete_rows(self) -> ScoreMatrix | None:
        """The complete sub-matrix the 1-to-N metrics (linkability, SRD, LID...) are computed on.

        The matrix itself when complete. For a sparse trial list: the enrolled identities that
        are listed in at least one pair, and the trials listed against every one of them and
        against their own speaker; None when no trial is (or fewer than two identities are
        listed). Attributes and the count of
        excluded trials are kept.

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(
        ...     [[0.9, 0.1, 0.2], [0.3, 0.8, np.nan], [0.1, 0.2, 0.7]],
        ...     trial_ids=["t1", "t2", "t3"], trial_speakers=["a", "b", "c"],
        ...     enrol_speakers=["a", "b", "c"], nan_missing=True)
        >>> sm.n_pairs, sm.complete_rows().trial_ids.tolist()
        (8, ['t1', 't3'])
        """
        if self.mask is None:
            return self
        cols = self.mask.any(axis=0)
        rows = self.mask[:, cols].all(axis=1) & self.target_listed  # own speaker among them
        if not rows.any() or cols.sum() < 2:  # a 1-to-N search needs two identities
            return None
        sub = self.scores[np.ix_(rows, cols)]
        return ScoreMatrix(
            scores=_readonly(sub, copy=False),
            trial_ids=_readonly(self.trial_ids[rows]),
            trial_speakers=_readonly(self.trial_speakers[rows]),
            enrol_speakers=_readonly(self.enrol_speakers[cols]),
            attributes={k: _readonly(v[rows]) for k, v in self.attributes.items()},
            n_excluded_trials=self.n_excluded_trials,
            source=self.source,
        )

    def with_attributes(self, table: pd.DataFrame, *, where: str = "attributes") -> ScoreMatrix:
        """The matrix with per-trial attributes joined from a table (e.g. for ``--by sex``).

        ``table`` has a ``trial_id`` column (one row per trial) or a ``speaker`` column (one
        row per speaker, as a VoicePrivacy ``spk2gender`` list); its other columns become
        attributes of every trial, replacing attributes of the same name. Every trial must be
        covered. Useful for Kaldi / VoicePrivacy scores, which carry no attributes.

        Raises
        ------
        VoxMetricsInputError
            No key column, no attribute column, a key listed twice, or a trial not covered.

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(np.eye(2), trial_ids=["t1", "t2"],
        ...     trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
        >>> table = pd.DataFrame({"speaker": ["a", "b"], "sex": ["F", "M"]})
        >>> sm.with_attributes(table).attributes["sex"].tolist()
        ['F', 'M']
        """
        key = next((k for k in ("trial_id", "speaker") if k in table.columns), None)
        if key is None:
            raise VoxMetricsInputError(
                f"{where}: needs a 'trial_id' column (one row per trial) or a 'speaker' column "
                f"(one row per speaker); found {', '.join(map(str, table.columns))}."
            )
        columns = [c for c in table.columns if c not in ("trial_id", "speaker", "trial_speaker")]
        if not columns:
            raise VoxMetricsInputError(
                f"{where}: has no attribute column beside '{key}'; add one (e.g. sex)."
            )
        keys = table[key].astype(str)
        if keys.duplicated().any():
            raise VoxMetricsInputError(
                f"{where}: {key} '{keys[keys.duplicated()].iloc[0]}' is listed twice; give each "
                f"{key} one row."
            )
        wanted = self.trial_ids if key == "trial_id" else self.trial_speakers
        pos = pd.Index(keys).get_indexer(wanted)
        if (pos < 0).any():
            i = int(np.argmax(pos < 0))
            raise VoxMetricsInputError(
                f"{where}: {int((pos < 0).sum())} trial(s) are not covered, e.g. trial "
                f"'{self.trial_ids[i]}' ({key} '{wanted[i]}'); add a row for every {key}."
            )
        attrs = dict(self.attributes)
        for c in columns:
            attrs[str(c)] = table[c].to_numpy()[pos]
        return ScoreMatrix.from_arrays(
            self.scores,
            trial_ids=self.trial_ids,
            trial_speakers=self.trial_speakers,
            enrol_speakers=self.enrol_speakers,
            attributes=attrs,
            source=self.source,
            n_excluded_trials=self.n_excluded_trials,
            copy=False,
            mask=self.mask,
        )

    def attribute_values(self, attr: str) -> list[str]:
        """The distinct values (as text, sorted) of a per-trial attribute.

        Raises
        ------
        VoxMetricsInputError
            When the matrix has no such attribute.
        """
        if attr not in self.attributes:
            have = ", ".join(sorted(self.attributes)) or "none"
            raise VoxMetricsInputError(
                f"{self.source or 'score matrix'}: no per-trial attribute '{attr}' to split by "
                f"(attributes: {have}); add it as a column of the scores (NPZ: attr_{attr})."
            )
        return sorted(set(self.attributes[attr].astype(str).tolist()))

    def subset_attribute(self, attr: str, value: str) -> ScoreMatrix:
        """The trials whose attribute ``attr`` is ``value``, with their own enrolled identities.

        As VoicePrivacy evaluates female and male speakers separately. Values are compared as
        text. An enrolled identity is kept unless it is never listed with a kept trial, or its own
        trials all lie outside the subset (it belongs to another subset); an identity without
        any trial is kept. The result is complete when the kept pairs are.

        Raises
        ------
        VoxMetricsInputError
            No such attribute, no trial with that value, or fewer than two identities left.

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(
        ...     np.eye(4), trial_ids=["t1", "t2", "t3", "t4"], trial_speakers=["a", "b", "c", "d"],
        ...     enrol_speakers=["a", "b", "c", "d"], attributes={"sex": ["F", "F", "M", "M"]})
        >>> sub = sm.subset_attribute("sex", "M")
        >>> sub.trial_ids.tolist(), sub.enrol_speakers.tolist(), sub.is_complete
        (['t3', 't4'], ['c', 'd'], True)
        """
        values = self.attribute_values(attr)
        where = self.source or "score matrix"
        value = str(value)
        if value not in values:
            raise VoxMetricsInputError(
                f"{where}: no trial has {attr} = '{value}' (values: {', '.join(values)}); pick "
                "one of these."
            )
        rows = self.attributes[attr].astype(str) == value
        cols = (
            np.ones(self.n_enrolled, dtype=bool)
            if self.mask is None
            else (self.mask[rows].any(axis=0))
        )
        own = self.trial_enrolled  # an unenrolled trial's column is not its speaker's
        has_trials = np.zeros(self.n_enrolled, dtype=bool)
        has_trials[self.targets[own]] = True
        inside = np.zeros(self.n_enrolled, dtype=bool)
        inside[self.targets[rows & own]] = True
        cols &= inside | ~has_trials
        if cols.sum() < 2:
            raise VoxMetricsInputError(
                f"{where}: the subset {attr} = '{value}' has {int(cols.sum())} enrolled identity; "
                "a 1-to-N search needs at least 2."
            )
        sub_mask = None if self.mask is None else self.mask[np.ix_(rows, cols)]
        keep = np.ones(int(rows.sum()), dtype=bool) if sub_mask is None else sub_mask.any(axis=1)
        rows[rows] = keep  # trials listed only against identities of other subsets drop out
        return ScoreMatrix.from_arrays(
            self.scores[np.ix_(rows, cols)],
            trial_ids=self.trial_ids[rows],
            trial_speakers=self.trial_speakers[rows],
            enrol_speakers=self.enrol_speakers[cols],
            attributes={k: v[rows] for k, v in self.attributes.items()},
            source=f"{where} [{attr}={value}]",
            copy=False,
            mask=None if sub_mask is None else sub_mask[keep],
        )

    @cached_property
    def content_hash(self) -> str:
        """sha256 of everything the metrics depend on; use it as a cache key."""
        h = hashlib.sha256()
        h.update(np.asarray(self.scores.shape, dtype=np.int64).tobytes())
        h.update(memoryview(np.ascontiguousarray(self.scores)).cast("B"))
        for labels in (self.trial_ids, self.trial_speakers, self.enrol_speakers):
            h.update("\x1f".join(labels.tolist()).encode())
            h.update(b"\x1e")
        for k in sorted(self.attributes):
            h.update(k.encode())
            h.update("\x1f".join(map(str, self.attributes[k].tolist())).encode())
        if self.mask is not None:
            h.update(b"mask")
            h.update(np.packbits(self.mask).tobytes())
        return h.hexdigest()

    def subset_trials(self, mask: ArrayLike) -> ScoreMatrix:
        """The matrix restricted to the trials where ``mask`` is true (enrolment unchanged)."""
        m = np.asarray(mask, dtype=bool)
        sub_mask = None if self.mask is None else self.mask[m]
        if sub_mask is not None and sub_mask.all():
            sub_mask = None
        return ScoreMatrix(
            mask=None if sub_mask is None else _readonly(sub_mask, copy=False),
            scores=_readonly(self.scores[m]),
            trial_ids=_readonly(self.trial_ids[m]),
            trial_speakers=_readonly(self.trial_speakers[m]),
            enrol_speakers=self.enrol_speakers,
            attributes={k: _readonly(v[m]) for k, v in self.attributes.items()},
            n_excluded_trials=self.n_excluded_trials,
            source=self.source,
        )

    def to_long_frame(self) -> pd.DataFrame:
        """Long format: one row per listed (trial, enrolled identity) pair, as in a long CSV."""
        t, n = self.shape
        df = pd.DataFrame(
            {
                "trial_id": np.repeat(self.trial_ids, n),
                "trial_speaker": np.repeat(self.trial_speakers, n),
                "enrol_speaker": np.tile(self.enrol_speakers, t),
                "score": self.scores.ravel(),
            }
        )
        for k, v in self.attributes.items():
            df[k] = np.repeat(v, n)
        if self.mask is not None:
            df = df.loc[self.mask.ravel()].reset_index(drop=True)
        return df

    def equals(self, other: ScoreMatrix, *, atol: float = 0.0) -> bool:
        """Same trials, identities, attributes and scores (up to row and column order)."""
        if self.shape != other.shape:
            return False
        ri, rj = np.argsort(self.trial_ids), np.argsort(self.enrol_speakers)
        oi, oj = np.argsort(other.trial_ids), np.argsort(other.enrol_speakers)
        if not (
            np.array_equal(self.trial_ids[ri], other.trial_ids[oi])
            and np.array_equal(self.trial_speakers[ri], other.trial_speakers[oi])
            and np.array_equal(self.enrol_speakers[rj], other.enrol_speakers[oj])
            and set(self.attributes) == set(other.attributes)
        ):
            return False
        for k, v in self.attributes.items():
            if not np.array_equal(v[ri].astype(str), other.attributes[k][oi].astype(str)):
                return False
        if (self.mask is None) != (other.mask is None):
            return False
        a = self.scores[np.ix_(ri, rj)]
        b = other.scores[np.ix_(oi, oj)]
        if self.mask is not None and other.mask is not None:
            ma, mb = self.mask[np.ix_(ri, rj)], other.mask[np.ix_(oi, oj)]
            if not np.array_equal(ma, mb):
                return False
            a, b = a[ma], b[mb]
        return bool(np.allclose(a, b, rtol=0.0, atol=atol))


_RESERVED_ATTRIBUTES = ("trial_id", "trial_speaker", "enrol_speaker", "score")


def _listed_mask(
    s: np.ndarray, mask: ArrayLike | None, nan_missing: bool, tids: np.ndarray, where: str
) -> NDArray[np.bool_] | None:
    """The T x N listed pairs of a sparse matrix (``mask`` or NaN cells), None when complete."""
    if mask is None:
        # a finite float64 sum: no NaN, so no T x N mask for a complete matrix
        if not nan_missing or known_finite(s) or np.isfinite(s.sum(dtype=np.float64)):
            return None
        m = ~np.isnan(s)
    else:
        m = np.asarray(mask)
        if m.dtype != bool:
            raise VoxMetricsInputError(
                f"{where}: the mask has dtype {m.dtype}; it must be boolean (True = listed pair)."
            )
        if m.shape != s.shape:
            raise VoxMetricsInputError(
                f"{where}: shape mismatch: the mask is {m.shape} but the scores are {s.shape}; "
                "give one True / False per (trial, enrolled) pair."
            )
    empty = ~m.any(axis=1)
    if empty.any():
        raise VoxMetricsInputError(
            f"{where}: {int(empty.sum())} trial(s) have no listed pair (first: "
            f"'{tids[int(np.argmax(empty))]}'); list at least one pair per trial or remove it."
        )
    return m


def _check_unique(labels: np.ndarray, what: str, where: str) -> None:
    uniq, counts = np.unique(labels, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1]
        raise VoxMetricsInputError(
            f"{where}: {dup.size} duplicate {what} label(s) (e.g. '{dup[0]}' appears "
            f"{counts[counts > 1][0]} times); each {what} must appear once."
        )


def _score_array(scores: ArrayLike, where: str) -> np.ndarray:
    """The scores as a 2-D float32 (kept) or float64 array."""
    try:
        s = np.asarray(scores)
        if s.dtype not in (np.float32, np.float64):
            s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"{where}: scores are not numeric ({exc}); give one number per (trial, enrolled) pair."
        ) from None
    if s.ndim != 2:
        raise VoxMetricsInputError(
            f"{where}: scores must be a 2-D array (trials x enrolled), got shape {s.shape}."
        )
    return s


def _check_labels(
    shape: tuple[int, ...],
    tids: np.ndarray,
    tspk: np.ndarray,
    espk: np.ndarray,
    where: str,
) -> None:
    """One trial id and speaker per row, one unique label per column, two columns or more."""
    t, n = shape
    if tids.size != t or tspk.size != t:
        raise VoxMetricsInputError(
            f"{where}: shape mismatch: scores have {t} rows (trials) but there are "
            f"{tids.size} trial ids and {tspk.size} trial speakers; give one id and one "
            "speaker per row."
        )
    if espk.size != n:
        raise VoxMetricsInputError(
            f"{where}: shape mismatch: scores have {n} columns (enrolled identities) but "
            f"there are {espk.size} enrolled speaker labels; give one label per column."
        )
    if n < 2:
        raise VoxMetricsInputError(
            f"{where}: only {n} enrolled identity; a 1-to-N search needs at least 2 enrolled "
            "speakers."
        )
    _check_unique(espk, "enrolled speaker", where)
    _check_unique(tids, "trial id", where)


def _unlisted_nan(s: np.ndarray, m: np.ndarray, *, copy: bool) -> tuple[np.ndarray, bool]:
    """The scores with NaN in the unlisted cells, and whether they still need a copy.

    Without ``copy`` a writeable array is changed in place (no second T x N array);
    otherwise the result is a fresh array, which needs no further copy.
    """
    if not copy and s.flags.writeable:
        np.copyto(s, s.dtype.type(np.nan), where=~m)
        return s, copy
    return np.where(m, s, s.dtype.type(np.nan)), False


def _check_finite(
    s: np.ndarray, m: np.ndarray | None, tids: np.ndarray, espk: np.ndarray, where: str
) -> None:
    """Every listed score (every score of a complete matrix) is finite."""
    if m is not None:
        bad = m & ~np.isfinite(s)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise VoxMetricsInputError(
                f"{where}: {int(bad.sum())} listed score(s) are NaN or infinite (first: "
                f"trial '{tids[i]}', enrolled '{espk[j]}' = {s[i, j]}); every listed score "
                "must be a finite number."
            )
    # the float64 sum is finite iff every score is (no T x N mask for a clean matrix); a
    # read-only matrix a reader found finite is not summed again
    elif known_finite(s):
        return
    elif not np.isfinite(s.sum(dtype=np.float64)) and not np.isfinite(s).all():
        bad = ~np.isfinite(s)
        i, j = np.argwhere(bad)[0]
        raise VoxMetricsInputError(
            f"{where}: {int(bad.sum())} score(s) are NaN or infinite (first: trial "
            f"'{tids[i]}', enrolled '{espk[j]}' = {s[i, j]}); every score must be a finite "
            "number."
        )


def _trial_attributes(
    attributes: Mapping[str, ArrayLike] | None, t: int, where: str
) -> dict[str, np.ndarray]:
    """The per-trial attributes as arrays of length ``t`` (text as str)."""
    attrs: dict[str, np.ndarray] = {}
    for name, values in (attributes or {}).items():
        if name in _RESERVED_ATTRIBUTES:
            raise VoxMetricsInputError(
                f"{where}: an attribute cannot be called '{name}', which is a column of the "
                "score format; rename it."
            )
        a = np.asarray(values)
        if a.dtype.kind == "O":  # text as str, so nothing downstream pickles objects
            a = np.array(["" if v is None else str(v) for v in a.tolist()], dtype=str)
        if a.shape != (t,):
            raise VoxMetricsInputError(
                f"{where}: attribute '{name}' has shape {a.shape}; it needs one value per "
                f"trial ({t})."
            )
        attrs[str(name)] = a
    return attrs


def _enrolled_trials(tspk: np.ndarray, espk: np.ndarray, where: str) -> NDArray[np.bool_]:
    """Which trials have an enrolled speaker (an error when none has)."""
    enrolled = np.isin(tspk, espk)
    if not enrolled.any():
        raise VoxMetricsInputError(
            f"{where}: none of the {tspk.size} trials has an enrolled speaker, so there is "
            "nothing to evaluate; check that trial speakers and enrolled speakers use the same "
            "labels."
        )
    return enrolled


META_COLUMNS = ("utt_id", "speaker", "role", "split")
"""Required metadata columns of an :class:`EmbeddingSet`."""


@dataclass(frozen=True, eq=False)
class EmbeddingSet:
    """U utterance embeddings (U x d) with their metadata.

    ``meta`` has columns ``utt_id, speaker, role, split`` (role in {enrol, trial}, split in
    {dev, eval}) plus optional attribute columns (``sex``, ``age_group``, ...), ``system`` and
    ``audio_path``. :meth:`score_matrix` turns one split into a :class:`ScoreMatrix` by cosine
    scoring the trial embeddings against enrolment profiles (mean of the L2-normalised enrolment
    embeddings of each speaker).

    Examples
    --------
    >>> meta = pd.DataFrame({"utt_id": ["e1", "e2", "t1", "t2"], "speaker": ["a", "b", "a", "b"],
    ...                      "role": ["enrol", "enrol", "trial", "trial"], "split": ["eval"] * 4})
    >>> es = EmbeddingSet.from_arrays([[1, 0], [0, 1], [2, 0.1], [0.1, 3]], meta)
    >>> es.score_matrix("eval").targets.tolist()
    [0, 1]
    """

    embeddings: NDArray[np.float64]
    """U x d utterance embeddings, in the order of ``meta``'s rows."""
    meta: pd.DataFrame
    """One row per utterance: ``utt_id, speaker, role, split`` and optional columns."""
    source: str = ""
    """Where the data came from, for messages."""

    @classmethod
    def from_arrays(
        cls, embeddings: ArrayLike, meta: pd.DataFrame, *, source: str = ""
    ) -> EmbeddingSet:
        """Validate embeddings and metadata and build an :class:`EmbeddingSet`."""
        where = source or "embeddings"
        try:
            e = np.asarray(embeddings, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise VoxMetricsInputError(f"{where}: embeddings are not numeric ({exc}).") from None
        if e.ndim != 2 or e.shape[1] < 1:
            raise VoxMetricsInputError(
                f"{where}: embeddings must be a 2-D array (utterances x dimensions), got shape "
                f"{e.shape}."
            )
        missing = [c for c in META_COLUMNS if c not in meta.columns]
        if missing:
            raise VoxMetricsInputError(
                f"{where}: the metadata lacks column(s) {', '.join(missing)}; it needs "
                f"{', '.join(META_COLUMNS)}."
            )
        if len(meta) != e.shape[0]:
            raise VoxMetricsInputError(
                f"{where}: shape mismatch: {e.shape[0]} embeddings but {len(meta)} metadata rows; "
                "give one metadata row per embedding, in the same order."
            )
        meta = meta.reset_index(drop=True).copy()
        for c in META_COLUMNS:
            if meta[c].isna().any():
                row = int(np.flatnonzero(meta[c].isna().to_numpy())[0])
                raise VoxMetricsInputError(
                    f"{where}: column '{c}' is empty in metadata row {row + 1} (first data row = "
                    "1); fill it in."
                )
            meta[c] = meta[c].astype(str)
        for col, allowed in (("role", {"enrol", "trial"}), ("split", {"dev", "eval"})):
            bad = ~meta[col].isin(allowed)
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise VoxMetricsInputError(
                    f"{where}: metadata row {row + 1} (first data row = 1) has {col} "
                    f"'{meta[col].iloc[row]}'; use one of {', '.join(sorted(allowed))}."
                )
        _check_unique(meta["utt_id"].to_numpy(), "utt_id", where)
        bad = ~np.isfinite(e).all(axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise VoxMetricsInputError(
                f"{where}: the embedding of '{meta['utt_id'].iloc[row]}' has NaN or infinite "
                "values; every value must be a finite number."
            )
        zero = ~(e != 0).any(axis=1)
        if zero.any():
            row = int(np.flatnonzero(zero)[0])
            raise VoxMetricsInputError(
                f"{where}: the embedding of '{meta['utt_id'].iloc[row]}' is all zeros, so it has "
                "no direction to score; remove it."
            )
        return cls(embeddings=_readonly(e), meta=meta, source=source)

    @property
    def dim(self) -> int:
        """Embedding dimension d."""
        return self.embeddings.shape[1]

    @cached_property
    def content_hash(self) -> str:
        """sha256 of the embeddings and metadata; use it as a cache key."""
        h = hashlib.sha256(self.embeddings.tobytes())
        h.update(self.meta.to_csv(index=False).encode())
        return h.hexdigest()

    def splits(self) -> list[str]:
        """The splits present, ``dev`` first."""
        present = set(self.meta["split"])
        return [s for s in ("dev", "eval") if s in present]

    def roles(
        self, split: Split = "eval", *, system: str | None = None
    ) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Masks of the enrolment and of the trial utterances of one split (and system).

        Raises
        ------
        VoxMetricsInputError
            When ``system`` is asked for without a ``system`` column, or the split lacks
            enrolment or trial utterances.

        Examples
        --------
        >>> meta = pd.DataFrame({"utt_id": ["e", "t"], "speaker": ["a", "a"],
        ...                      "role": ["enrol", "trial"], "split": ["eval"] * 2})
        >>> enrol, trial = EmbeddingSet.from_arrays([[1, 0], [1, 1]], meta).roles("eval")
        >>> enrol.tolist(), trial.tolist()
        ([True, False], [False, True])
        """
        meta = self.meta
        keep = (meta["split"] == split).to_numpy()
        if system is not None:
            if "system" not in meta.columns:
                raise VoxMetricsInputError(
                    f"{self.source or 'embeddings'}: no 'system' column, so system '{system}' "
                    "cannot be selected."
                )
            # not in place: pandas may hand out read-only arrays
            keep = keep & (meta["system"].astype(str) == system).to_numpy()
        enrol = keep & (meta["role"] == "enrol").to_numpy()
        trial = keep & (meta["role"] == "trial").to_numpy()
        if not trial.any() or not enrol.any():
            raise VoxMetricsInputError(
                f"{self.source or 'embeddings'} ({split}): needs both enrolment and trial "
                f"utterances, found {int(enrol.sum())} enrolment and {int(trial.sum())} trial "
                "utterances."
            )
        return enrol, trial

    def scoring_inputs(
        self, split: Split = "eval", *, system: str | None = None
    ) -> tuple[NDArray[np.str_], NDArray[np.float64], NDArray[np.floating]]:
        """What :meth:`score_matrix` multiplies, for one split.

        Returns the enrolled speakers (sorted), their unit-norm profiles (S x d) and the
        unit-norm trial embeddings (T x d, in metadata order).

        Scores are ``score_chunk(trial_unit, profiles, start)`` for each multiple ``start`` of
        :data:`SCORE_CHUNK_ROWS`, so a row block can be scored alone (blockwise evaluation).
        """
        enrol, trial = self.roles(split, system=system)
        unit = unit_rows(self.embeddings)
        enrol_spk = self.meta["speaker"].to_numpy()[enrol]
        speakers, inverse = np.unique(enrol_spk, return_inverse=True)
        profiles = np.zeros((speakers.size, self.dim))
        np.add.at(profiles, inverse, unit[enrol])
        profiles /= np.linalg.norm(profiles, axis=1, keepdims=True)
        return speakers, profiles, unit[trial]

    def score_matrix(self, split: Split = "eval", *, system: str | None = None) -> ScoreMatrix:
        """Cosine-score one split's trials against its enrolment profiles.

        Parameters
        ----------
        split : {"dev", "eval"}
            Which half of the data to score.
        system : str, optional
            Keep only utterances of this ``system`` (when the metadata has that column).

        Returns
        -------
        ScoreMatrix
            T x N cosine similarities; attribute columns of the metadata become trial attributes.
        """
        meta = self.meta
        where = f"{self.source or 'embeddings'} ({split})"
        trial = self.roles(split, system=system)[1]
        n_trials = int(np.count_nonzero(trial))
        n_enrolled = int(meta["speaker"][self.roles(split, system=system)[0]].nunique())
        check_count(
            where,
            f"score cells ({n_trials:,} trials x {n_enrolled:,} enrolled)",
            n_trials * n_enrolled,
            "max_cells",
        )
        speakers, profiles, trial_unit = self.scoring_inputs(split, system=system)
        scores = np.empty((trial_unit.shape[0], speakers.size))
        for c in range(0, trial_unit.shape[0], SCORE_CHUNK_ROWS):
            scores[c : c + SCORE_CHUNK_ROWS] = score_chunk(trial_unit, profiles, c)
        extra = [c for c in meta.columns if c not in (*META_COLUMNS, "system", "audio_path")]
        tmeta = meta.loc[trial]
        return ScoreMatrix.from_arrays(
            scores,
            trial_ids=tmeta["utt_id"].to_numpy(),
            trial_speakers=tmeta["speaker"].to_numpy(),
            enrol_speakers=speakers,
            attributes={c: tmeta[c].fillna("").astype(str).to_numpy() for c in extra},
            source=where,
            copy=False,
        )
