"""The data model: :class:`ScoreMatrix` (T trials x N enrolled) and :class:`EmbeddingSet`.

See the documentation (User guide > Input formats; Methods > Conventions). Both classes
are frozen; their arrays are read-only. Build them through :meth:`ScoreMatrix.from_arrays` and
:meth:`EmbeddingSet.from_arrays`, which validate once and raise
:class:`~voxmetrics.errors.VoxMetricsInputError` with a message saying what to fix.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics._types import Split
from voxmetrics.data._checks import (
    check_finite,
    check_labels,
    check_unique,
    enrolled_trials,
    listed_mask,
    score_array,
    trial_attributes,
    unlisted_nan,
)
from voxmetrics.data._finite import frozen, remember_finite
from voxmetrics.data.arrays import SCORE_CHUNK_ROWS, label_array, readonly, score_chunk, unit_rows
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError
from voxmetrics.limits import check_count

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "SCORE_CHUNK_ROWS",
    "SPLIT_VALUES",
    "EmbeddingSet",
    "ScoreMatrix",
    "score_chunk",
    "unit_rows",
]


Scorer = Callable[[NDArray[np.float64], NDArray[np.str_], NDArray[np.float64]], Any]
"""``scorer(enrol, enrol_speakers, trials) -> (speakers, scores)``: a scoring rule of
:meth:`EmbeddingSet.score_matrix_with` (an attacker back-end's)."""


PHANTOM_IDENTITY = "\x00not enrolled"
"""Label of the unlisted column :meth:`ScoreMatrix.pairwise_view` adds for the trials of
speakers who are not enrolled (never a real enrolled speaker's label)."""


@dataclass(frozen=True, eq=False)
class OtherTrials:
    """Trials of speakers who are not enrolled, listed against every enrolled identity.

    Every listed pair of such a trial is non-mated. The pairwise metrics (EER, ROCCH-EER,
    Cllr, min Cllr, ZEBRA, DCF) count them, as the VoicePrivacy scripts count every line of a
    trial key; the 1-to-N metrics leave them out (the attacker has no identity to find). A
    trial of an unenrolled speaker listed against some enrolled identities only stays in the
    sparse matrix itself, its own cell unlisted.
    """

    scores: NDArray[np.floating]
    """U x N scores against the matrix's enrolled identities (every pair listed)."""
    trial_ids: NDArray[np.str_]
    """U trial identifiers."""
    trial_speakers: NDArray[np.str_]
    """U speaker labels, none of them enrolled."""
    attributes: Mapping[str, NDArray[Any]] = field(default_factory=dict)
    """Per-trial attributes, as the matrix's."""

    @property
    def n_trials(self) -> int:
        """U, the number of such trials."""
        return int(self.scores.shape[0])


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Scores of T trial utterances against N enrolled identities (docs, Methods > Conventions).

    Build with :meth:`from_arrays`, which validates once. Trials whose speaker is not enrolled
    count for the pairwise metrics, their pairs all non-mated, and not for the 1-to-N metrics
    (see :meth:`from_arrays`, :attr:`others` and :meth:`pairwise_view`).

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
    """Trials a reader dropped from every metric before the matrix was built (0 unless a
    reader says why)."""
    source: str = ""
    """Where the data came from (file name), for messages."""
    mask: NDArray[np.bool_] | None = None
    """T x N listed pairs of a sparse trial list (True = scored pair), None when every pair is
    scored. Unlisted cells hold NaN in :attr:`scores`. Pairwise metrics use the listed pairs
    (:attr:`tar`, :attr:`non`); the 1-to-N metrics use :meth:`complete_rows`."""
    others: OtherTrials | None = None
    """Trials of speakers who are not enrolled, listed against every enrolled identity: their
    pairs are non-mated pairs of the pairwise metrics (:meth:`pairwise_view`), not trials of
    the 1-to-N metrics. None when there are none."""

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

        Trials whose speaker is not among ``enrol_speakers`` count for the pairwise metrics,
        their pairs all non-mated, and are left out of the 1-to-N metrics (an
        :class:`~voxmetrics.errors.ExcludedTrialsWarning` says how many); it is an error only
        when no trial has an enrolled speaker. float32 scores stay float32 (half the memory of
        a large matrix); anything else becomes float64. With ``copy=False`` the score array is
        not copied but made read-only in place, together with the array it is a view of (if
        any): pass it only for an array nothing else will write to.

        A sparse trial list (not every trial scored against every enrolled identity) gives
        ``mask`` (T x N, True = listed pair) or, with ``nan_missing=True``, NaN for the unlisted
        pairs. Only listed scores must be finite; unlisted cells become NaN. A mask that lists
        every pair is dropped (the matrix is complete, :attr:`mask` is None). A trial with no
        listed pair is an error.

        Every listed pair counts for the pairwise metrics (EER, ROCCH-EER, Cllr, ZEBRA,
        verification): a trial whose speaker is not enrolled (a Kaldi key trial with
        non-target lines only, an utt2spk speaker without enrolment) is kept, its listed pairs
        all non-mated, and the 1-to-N metrics leave it out (:meth:`complete_rows`). Listed
        against some enrolled identities only, it stays in the sparse matrix (its own cell
        unlisted); listed against every one, it goes to :attr:`others`.

        Raises
        ------
        VoxMetricsInputError
            Wrong shapes, non-numeric, NaN or infinite scores, duplicate labels, fewer than two
            enrolled identities, or no trial with an enrolled speaker.
        """
        where = source or "score matrix"
        s = score_array(scores, where)
        tids = label_array(trial_ids, "trial_ids", where)
        tspk = label_array(trial_speakers, "trial_speakers", where)
        espk = label_array(enrol_speakers, "enrol_speakers", where)
        check_labels(s.shape, tids, tspk, espk, where)
        m = listed_mask(s, mask, nan_missing, tids, where)
        if m is not None and m.all():
            m = None
        if m is not None:
            s, copy = unlisted_nan(s, m, copy=copy)
        check_finite(s, m, tids, espk, where)
        attrs = trial_attributes(attributes, s.shape[0], where)
        enrolled = enrolled_trials(tspk, espk, where)
        if m is not None:  # a sparse list keeps the non-mated pairs of unenrolled speakers
            enrolled = enrolled | ~m.all(axis=1)
        n_out = int((~enrolled).sum())
        others = None
        if n_out:
            warnings.warn(
                f"{where}: {n_out} of {tids.size} trials have a speaker who is not enrolled; "
                "their pairs count as non-mated pairs of the pairwise metrics (EER, Cllr, "
                "ZEBRA, DCF), and the 1-to-N metrics leave them out.",
                ExcludedTrialsWarning,
                stacklevel=2,
            )
            out = ~enrolled
            others = OtherTrials(
                scores=readonly(s[out]),
                trial_ids=readonly(tids[out]),
                trial_speakers=readonly(tspk[out]),
                attributes={k: readonly(v[out]) for k, v in attrs.items()},
            )
            s, tids, tspk = s[enrolled], tids[enrolled], tspk[enrolled]
            attrs = {k: v[enrolled] for k, v in attrs.items()}
            copy = False  # the boolean selection made a fresh array
            if m is not None:
                m = m[enrolled]
                if m.all():
                    m = None
        sm = cls(
            mask=None if m is None else readonly(m, copy=False),
            scores=readonly(s, copy=copy),
            trial_ids=readonly(tids),
            trial_speakers=readonly(tspk),
            enrol_speakers=readonly(espk),
            attributes={k: readonly(v) for k, v in attrs.items()},
            n_excluded_trials=int(n_excluded_trials),
            source=source,
            others=others,
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
        return self.scores.shape

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
        return readonly(np.isin(self.trial_speakers, self.enrol_speakers), copy=False)

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
        return readonly(t, copy=False)

    @property
    def is_complete(self) -> bool:
        """Whether every trial is scored against every enrolled identity (no :attr:`mask`)."""
        return self.mask is None

    @property
    def all_trial_speakers(self) -> NDArray[np.str_]:
        """The speakers of every trial, those of :attr:`others` too (after the matrix's own)."""
        if self.others is None:
            return self.trial_speakers
        return np.concatenate([self.trial_speakers, self.others.trial_speakers])

    @property
    def n_other_trials(self) -> int:
        """Trials of unenrolled speakers held in :attr:`others` (0 when there are none)."""
        return 0 if self.others is None else self.others.n_trials

    def pairwise_view(self) -> ScoreMatrix:
        """Every listed pair, as the pairwise metrics (and their bootstrap) count them.

        The matrix itself without :attr:`others`; with them, a sparse matrix of its trials and
        theirs (after its own), with one more column, :data:`PHANTOM_IDENTITY`, never listed:
        the own column of the others' trials, so that each of their pairs is non-mated. Not a
        matrix for the 1-to-N metrics (:meth:`complete_rows` of the matrix itself is).

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(
        ...     [[0.9, 0.1], [0.2, 0.8], [0.7, 0.6]], trial_ids=["t1", "t2", "t3"],
        ...     trial_speakers=["a", "b", "x"], enrol_speakers=["a", "b"])
        >>> v = sm.pairwise_view()
        >>> v.n_pairs, v.tar.tolist(), sorted(v.non.tolist())
        (6, [0.9, 0.8], [0.1, 0.2, 0.6, 0.7])
        """
        if self.others is None:
            return self
        o = self.others
        n_main, n = self.shape
        dtype = np.result_type(self.scores.dtype, o.scores.dtype)
        scores = np.full((n_main + o.n_trials, n + 1), np.nan, dtype=dtype)
        scores[:n_main, :n] = self.scores
        scores[n_main:, :n] = o.scores
        mask = np.zeros(scores.shape, dtype=bool)
        mask[:n_main, :n] = True if self.mask is None else self.mask
        mask[n_main:, :n] = True
        return ScoreMatrix(
            scores=readonly(scores, copy=False),
            trial_ids=readonly(np.concatenate([self.trial_ids, o.trial_ids])),
            trial_speakers=readonly(np.concatenate([self.trial_speakers, o.trial_speakers])),
            enrol_speakers=readonly(np.append(self.enrol_speakers, PHANTOM_IDENTITY)),
            attributes={
                k: readonly(np.concatenate([v, o.attributes[k]]))
                for k, v in self.attributes.items()
                if k in o.attributes
            },
            n_excluded_trials=self.n_excluded_trials,
            source=self.source,
            mask=readonly(mask, copy=False),
        )

    def without_others(self) -> ScoreMatrix:
        """The matrix with the trials of unenrolled speakers left out of every metric.

        As the blockwise (Dask) evaluation reads a matrix: their number is added to
        :attr:`n_excluded_trials`.
        """
        if self.others is None:
            return self
        return replace(
            self, others=None, n_excluded_trials=self.n_excluded_trials + self.n_other_trials
        )

    def _stacked(self) -> dict[str, Any]:
        """The arguments of :meth:`from_arrays` holding the matrix's trials and its others'."""
        args: dict[str, Any] = {
            "enrol_speakers": self.enrol_speakers,
            "n_excluded_trials": self.n_excluded_trials,
            "source": self.source,
        }
        if self.others is None:
            args.update(
                scores=self.scores, trial_ids=self.trial_ids, trial_speakers=self.trial_speakers,
                attributes=dict(self.attributes), mask=self.mask,
            )  # fmt: skip
            return args
        o = self.others
        mask = None
        if self.mask is not None:
            mask = np.concatenate([self.mask, np.ones(o.scores.shape, dtype=bool)])
        args.update(
            scores=np.concatenate([self.scores, o.scores]),
            trial_ids=np.concatenate([self.trial_ids, o.trial_ids]),
            trial_speakers=np.concatenate([self.trial_speakers, o.trial_speakers]),
            attributes={
                k: np.concatenate([v, o.attributes[k]]) for k, v in self.attributes.items()
            },
            mask=mask,
        )
        return args

    @property
    def n_pairs(self) -> int:
        """Listed (trial, enrolled) pairs: T x N for a complete matrix."""
        t, n = self.shape
        return t * n if self.mask is None else int(np.count_nonzero(self.mask))

    @cached_property
    def target_listed(self) -> NDArray[np.bool_]:
        """Per trial: whether its mated pair ``(i, m_i)`` is listed (all True when complete)."""
        if self.mask is None:
            return readonly(np.ones(self.n_trials, dtype=bool), copy=False)
        return readonly(self.mask[np.arange(self.n_trials), self.targets])

    @cached_property
    def tar(self) -> NDArray[np.float64]:
        """The mated scores ``S[i, m_i]`` of the listed mated pairs (T of them when complete)."""
        tar = self.scores[np.arange(self.n_trials), self.targets]
        return readonly(tar if self.mask is None else tar[self.target_listed])

    @cached_property
    def non(self) -> NDArray[np.float64]:
        """The listed non-mated scores, row by row (T(N-1) of them when complete)."""
        mask = np.ones(self.scores.shape, dtype=bool) if self.mask is None else self.mask.copy()
        mask[np.arange(self.n_trials), self.targets] = False
        return readonly(self.scores[mask])

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
            scores=readonly(sub, copy=False),
            trial_ids=readonly(self.trial_ids[rows]),
            trial_speakers=readonly(self.trial_speakers[rows]),
            enrol_speakers=readonly(self.enrol_speakers[cols]),
            attributes={k: readonly(v[rows]) for k, v in self.attributes.items()},
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
        args = self._stacked()  # every trial, those of unenrolled speakers too
        wanted = args["trial_ids"] if key == "trial_id" else args["trial_speakers"]
        pos = pd.Index(keys).get_indexer(wanted)
        if (pos < 0).any():
            i = int(np.argmax(pos < 0))
            raise VoxMetricsInputError(
                f"{where}: {int((pos < 0).sum())} trial(s) are not covered, e.g. trial "
                f"'{args['trial_ids'][i]}' ({key} '{wanted[i]}'); add a row for every {key}."
            )
        attrs = args["attributes"]
        for c in columns:
            attrs[str(c)] = table[c].to_numpy()[pos]
        with warnings.catch_warnings():  # said when the matrix was built
            warnings.simplefilter("ignore", ExcludedTrialsWarning)
            return ScoreMatrix.from_arrays(**args, copy=False)

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
        values = set(self.attributes[attr].astype(str).tolist())
        if self.others is not None and attr in self.others.attributes:
            values |= set(self.others.attributes[attr].astype(str).tolist())
        return sorted(values)

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
        args = self._stacked()  # the trials of unenrolled speakers too
        rows = args["attributes"][attr].astype(str) == value
        mask = args["mask"]
        cols = np.ones(self.n_enrolled, dtype=bool) if mask is None else mask[rows].any(axis=0)
        n_other = self.n_other_trials
        own = np.concatenate([self.trial_enrolled, np.zeros(n_other, dtype=bool)])
        targets = np.concatenate([self.targets, np.zeros(n_other, dtype=np.intp)])
        has_trials = np.zeros(self.n_enrolled, dtype=bool)
        has_trials[targets[own]] = True  # an unenrolled trial's column is not its speaker's
        inside = np.zeros(self.n_enrolled, dtype=bool)
        inside[targets[rows & own]] = True
        cols &= inside | ~has_trials
        if cols.sum() < 2:
            raise VoxMetricsInputError(
                f"{where}: the subset {attr} = '{value}' has {int(cols.sum())} enrolled identity; "
                "a 1-to-N search needs at least 2."
            )
        sub_mask = None if mask is None else mask[np.ix_(rows, cols)]
        keep = np.ones(int(rows.sum()), dtype=bool) if sub_mask is None else sub_mask.any(axis=1)
        rows[rows] = keep  # trials listed only against identities of other subsets drop out
        return ScoreMatrix.from_arrays(
            args["scores"][np.ix_(rows, cols)],
            trial_ids=args["trial_ids"][rows],
            trial_speakers=args["trial_speakers"][rows],
            enrol_speakers=self.enrol_speakers[cols],
            attributes={k: v[rows] for k, v in args["attributes"].items()},
            source=f"{where} [{attr}={value}]",
            copy=False,
            mask=None if sub_mask is None else sub_mask[keep],
        )

    @cached_property
    def content_hash(self) -> str:
        """sha256 of everything the metrics depend on; use it as a cache key."""
        h = hashlib.sha256()
        h.update(np.asarray(self.scores.shape, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(self.scores).data.cast("B"))
        for labels in (self.trial_ids, self.trial_speakers, self.enrol_speakers):
            h.update("\x1f".join(labels.tolist()).encode())
            h.update(b"\x1e")
        for k in sorted(self.attributes):
            h.update(k.encode())
            h.update("\x1f".join(map(str, self.attributes[k].tolist())).encode())
        if self.mask is not None:
            h.update(b"mask")
            h.update(np.packbits(self.mask).tobytes())
        if self.others is not None:  # the pairs of trials of unenrolled speakers
            o = self.others
            h.update(b"others")
            h.update(np.asarray(o.scores.shape, dtype=np.int64).tobytes())
            h.update(np.ascontiguousarray(o.scores).tobytes())
            for labels in (o.trial_ids, o.trial_speakers):
                h.update("\x1f".join(labels.tolist()).encode())
                h.update(b"\x1e")
            for k in sorted(o.attributes):
                h.update(k.encode())
                h.update("\x1f".join(map(str, o.attributes[k].tolist())).encode())
        return h.hexdigest()

    def subset_trials(self, mask: ArrayLike) -> ScoreMatrix:
        """The matrix restricted to the trials where ``mask`` is true (enrolment unchanged)."""
        m = np.asarray(mask, dtype=bool)
        sub_mask = None if self.mask is None else self.mask[m]
        if sub_mask is not None and sub_mask.all():
            sub_mask = None
        return ScoreMatrix(
            mask=None if sub_mask is None else readonly(sub_mask, copy=False),
            scores=readonly(self.scores[m]),
            trial_ids=readonly(self.trial_ids[m]),
            trial_speakers=readonly(self.trial_speakers[m]),
            enrol_speakers=self.enrol_speakers,
            attributes={k: readonly(v[m]) for k, v in self.attributes.items()},
            n_excluded_trials=self.n_excluded_trials,
            source=self.source,
            others=self.others,
        )

    def to_long_frame(self) -> pd.DataFrame:
        """Long format: one row per listed (trial, enrolled identity) pair, as in a long CSV.

        The trials of unenrolled speakers (:attr:`others`) come after the matrix's own.
        """
        args = self._stacked()
        t, n = args["scores"].shape
        df = pd.DataFrame(
            {
                "trial_id": np.repeat(args["trial_ids"], n),
                "trial_speaker": np.repeat(args["trial_speakers"], n),
                "enrol_speaker": np.tile(self.enrol_speakers, t),
                "score": args["scores"].ravel(),
            }
        )
        for k, v in args["attributes"].items():
            df[k] = np.repeat(v, n)
        if args["mask"] is not None:
            df = df.loc[args["mask"].ravel()].reset_index(drop=True)
        return df

    def equals(self, other: ScoreMatrix, *, atol: float = 0.0) -> bool:
        """Same trials, identities, attributes and scores (up to row and column order)."""
        if self.n_other_trials != other.n_other_trials or not self._equal_rows(other, atol):
            return False
        if self.others is None or other.others is None:
            return True
        a, b = (
            ScoreMatrix(  # no check: the rows of their others, against the same identities
                scores=m.others.scores.astype(np.float64, copy=False),
                trial_ids=m.others.trial_ids,
                trial_speakers=m.others.trial_speakers,
                enrol_speakers=m.enrol_speakers,
                attributes=m.others.attributes,
            )
            for m in (self, other)
            if m.others is not None
        )
        return a._equal_rows(b, atol)

    def _equal_rows(self, other: ScoreMatrix, atol: float) -> bool:
        """:meth:`equals` of two matrices without :attr:`others`."""
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


META_COLUMNS = ("utt_id", "speaker", "role", "split")
"""Required metadata columns of an :class:`EmbeddingSet`."""

SPLIT_VALUES = ("dev", "eval", "train")
"""The ``split`` values of embedding metadata: ``dev`` and ``eval`` are scored (enrolment
against trials); ``train`` holds the attacker's own anonymised training utterances (any role),
which the attacker back-ends are trained on and which are never scored."""


@dataclass(frozen=True, eq=False)
class EmbeddingSet:
    """U utterance embeddings (U x d) with their metadata.

    ``meta`` has columns ``utt_id, speaker, role, split`` (role in {enrol, trial}, split in
    {dev, eval, train}: ``train`` rows are the attacker's own training data, never scored) plus
    optional attribute columns (``sex``, ``age_group``, ...), ``system`` and ``audio_path``.
    :meth:`score_matrix` turns one split into a :class:`ScoreMatrix` by cosine scoring the
    trial embeddings against enrolment profiles (mean of the L2-normalised enrolment embeddings
    of each speaker); :meth:`score_matrix_with` does the same with another scoring rule (an
    attacker back-end).

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
        for col, allowed in (("role", {"enrol", "trial"}), ("split", set(SPLIT_VALUES))):
            bad = ~meta[col].isin(allowed)
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise VoxMetricsInputError(
                    f"{where}: metadata row {row + 1} (first data row = 1) has {col} "
                    f"'{meta[col].iloc[row]}'; use one of {', '.join(sorted(allowed))}."
                )
        check_unique(meta["utt_id"].to_numpy(), "utt_id", where)
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
        return cls(embeddings=readonly(e), meta=meta, source=source)

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
        """The scored splits present, ``dev`` first (``train`` is not scored)."""
        present = set(self.meta["split"])
        return [s for s in ("dev", "eval") if s in present]

    def training_split(self) -> str | None:
        """The split a back-end is trained on: ``train`` if present, else ``dev``, else None."""
        present = set(self.meta["split"])
        return next((s for s in ("train", "dev") if s in present), None)

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
        return self._trial_matrix(scores, speakers, trial, where)

    def score_matrix_with(
        self, split: Split, scorer: Scorer, *, system: str | None = None
    ) -> ScoreMatrix:
        """:meth:`score_matrix` with another scoring rule (an attacker back-end's).

        ``scorer(enrol, enrol_speakers, trials)`` gets the split's enrolment embeddings
        (E x d), their speakers and its trial embeddings (T x d, metadata order) as given, and
        returns the enrolled speakers sorted (as :func:`numpy.unique`) and the T x N scores.
        """
        where = f"{self.source or 'embeddings'} ({split})"
        enrol, trial = self.roles(split, system=system)
        enrol_spk = self.meta["speaker"].to_numpy().astype(str)[enrol]
        n_cells = int(trial.sum()) * np.unique(enrol_spk).size
        check_count(where, f"score cells ({n_cells:,})", n_cells, "max_cells")
        speakers, scores = scorer(self.embeddings[enrol], enrol_spk, self.embeddings[trial])
        return self._trial_matrix(np.asarray(scores, dtype=np.float64), speakers, trial, where)

    def _trial_matrix(
        self, scores: np.ndarray, speakers: np.ndarray, trial: np.ndarray, where: str
    ) -> ScoreMatrix:
        """The :class:`ScoreMatrix` of the ``trial`` rows' scores against ``speakers``."""
        meta = self.meta
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
