"""What every attacker back-end shares: its training data, a projection, cosine and max scoring.

A back-end is fitted on :class:`TrainingData` (the attacker's own anonymised utterances with
their speaker labels) and is then a scorer: ``scorer(enrol, enrol_speakers, trials)`` returns
the enrolled speakers (sorted) and the T x N scores, the rule
:meth:`voxmetrics.data.model.EmbeddingSet.score_matrix_with` takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "FittedBackend",
    "Projection",
    "TrainingData",
    "cosine_scores",
    "max_scores",
    "speaker_sums",
]

_BLOCK_ELEMENTS = 1 << 22
"""Scores per block of the T x E products of max scoring and score normalisation (32 MB)."""


@dataclass(frozen=True, eq=False)
class TrainingData:
    """The attacker's training utterances: embeddings, speakers and, for mapping, originals.

    Build with :meth:`of` (the training split of an :class:`EmbeddingSet`, never ``eval``).

    Examples
    --------
    >>> import pandas as pd
    >>> meta = pd.DataFrame({"utt_id": list("abcd"), "speaker": list("sstt"),
    ...                      "role": ["trial"] * 4, "split": ["train"] * 4})
    >>> es = EmbeddingSet.from_arrays(np.eye(4), meta)
    >>> t = TrainingData.of(es)
    >>> t.split, t.n_utterances, t.n_speakers
    ('train', 4, 2)
    """

    embeddings: NDArray[np.float64]
    """U x d anonymised training embeddings (as given)."""
    speakers: NDArray[np.str_]
    """U speaker labels."""
    split: str = "train"
    """The split they come from: ``train`` or ``dev``."""
    utt_ids: NDArray[np.str_] | None = field(default=None, repr=False)
    """U utterance ids (to pair them with their originals)."""
    originals: NDArray[np.float64] | None = field(default=None, repr=False)
    """U x d' original embeddings of the same utterances, row for row (mapping attacks);
    None when not known. Rows without an original are left out of :meth:`paired`."""
    has_original: NDArray[np.bool_] | None = field(default=None, repr=False)
    """Which rows have an original (None: none)."""

    @classmethod
    def of(
        cls,
        es: EmbeddingSet,
        split: str | None = None,
        *,
        originals: EmbeddingSet | None = None,
    ) -> TrainingData:
        """The rows of ``split`` (default :meth:`EmbeddingSet.training_split`) of ``es``.

        ``originals`` gives the original embeddings of the same utterances (matched on
        ``utt_id``, any split) for the mapping attacks.

        Raises
        ------
        VoxMetricsInputError
            No training split, ``split`` is ``eval``, or fewer than two speakers.
        """
        split = split or es.training_split()
        where = es.source or "embeddings"
        if split is None:
            raise VoxMetricsInputError(
                f"{where}: a trained back-end needs the attacker's own data: a 'train' split of "
                "anonymised embeddings (or a 'dev' split), and there is neither; add one, or use "
                "the cosine back-end."
            )
        if split == "eval":
            raise VoxMetricsInputError(
                f"{where}: a back-end is never trained on the eval split (its numbers would be "
                "in-sample); give a 'train' (or 'dev') split."
            )
        rows = (es.meta["split"] == split).to_numpy()
        data = cls(
            embeddings=es.embeddings[rows],
            speakers=es.meta["speaker"].to_numpy().astype(str)[rows],
            split=split,
            utt_ids=es.meta["utt_id"].to_numpy().astype(str)[rows],
        )
        data.check(where)
        return data if originals is None else data.with_originals(originals)

    def check(self, where: str) -> None:
        """Refuse training data with fewer than two speakers."""
        if np.unique(self.speakers).size < 2:
            raise VoxMetricsInputError(
                f"{where}: the {self.split} split has {np.unique(self.speakers).size} speaker; "
                "a back-end is trained to tell speakers apart and needs at least two."
            )

    def with_originals(self, originals: EmbeddingSet) -> TrainingData:
        """These data with the original embeddings of their utterances (matched on utt_id)."""
        if self.utt_ids is None:
            return self
        ids = originals.meta["utt_id"].to_numpy().astype(str)
        order = np.argsort(ids)
        pos = np.searchsorted(ids, self.utt_ids, sorter=order)
        pos = order[np.minimum(pos, ids.size - 1)]
        found = ids[pos] == self.utt_ids
        out = np.zeros((self.n_utterances, originals.dim))
        out[found] = originals.embeddings[pos[found]]
        return TrainingData(self.embeddings, self.speakers, self.split, self.utt_ids, out, found)

    def subset(self, rows: NDArray[np.bool_]) -> TrainingData:
        """The rows ``rows`` (a fold of the cross-fitting)."""
        return TrainingData(
            self.embeddings[rows],
            self.speakers[rows],
            self.split,
            None if self.utt_ids is None else self.utt_ids[rows],
            None if self.originals is None else self.originals[rows],
            None if self.has_original is None else self.has_original[rows],
        )

    def paired(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The (anonymised, original) rows that have both, for a mapping attack."""
        if self.originals is None or self.has_original is None:
            return np.empty((0, self.dim)), np.empty((0, 0))
        keep = self.has_original
        return self.embeddings[keep], self.originals[keep]

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        return self.embeddings.shape[1]

    @property
    def n_utterances(self) -> int:
        """Training utterances."""
        return self.embeddings.shape[0]

    @property
    def n_speakers(self) -> int:
        """Training speakers."""
        return int(np.unique(self.speakers).size)


@dataclass(frozen=True, eq=False)
class Projection:
    """Length-normalise, subtract ``mean``, multiply by ``matrix``, length-normalise again.

    The identity projection (no mean, no matrix) is plain length normalisation: cosine scoring.
    """

    mean: NDArray[np.float64] | None = None
    """Subtracted after the first length normalisation (the training mean)."""
    matrix: NDArray[np.float64] | None = None
    """d x k projection applied after centring (LDA, WCCN)."""

    def __call__(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """The projected, unit-norm rows of ``x``."""
        u = unit_rows(np.asarray(x, dtype=np.float64))
        if self.mean is not None:
            u = u - self.mean
        if self.matrix is not None:
            u = u @ self.matrix
        return unit_rows(u)


def speaker_sums(
    x: NDArray[np.float64], speakers: NDArray[np.str_]
) -> tuple[NDArray[np.str_], NDArray[np.float64], NDArray[np.int64]]:
    """The sorted unique speakers, the sum of their rows and their row counts."""
    names, inverse, counts = np.unique(speakers, return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return names, np.add.reduceat(x[order], starts, axis=0), counts


def cosine_scores(
    enrol: NDArray[np.float64], enrol_speakers: NDArray[np.str_], trials: NDArray[np.float64]
) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """Cosine scores of unit ``trials`` against the normalised mean of each speaker's unit rows."""
    names, sums, _ = speaker_sums(enrol, enrol_speakers)
    profiles = unit_rows(sums)
    return names, trials @ profiles.T


def max_scores(
    enrol: NDArray[np.float64], enrol_speakers: NDArray[np.str_], trials: NDArray[np.float64]
) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """For each trial and speaker, the highest cosine over that speaker's unit enrolment rows.

    The T x E products are made in row blocks of bounded size.
    """
    names, inverse, counts = np.unique(enrol_speakers, return_inverse=True, return_counts=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    cols = enrol[order].T
    out = np.empty((trials.shape[0], names.size))
    step = max(1, _BLOCK_ELEMENTS // max(1, enrol.shape[0]))
    for r in range(0, trials.shape[0], step):
        out[r : r + step] = np.maximum.reduceat(trials[r : r + step] @ cols, starts, axis=1)
    return names, out


class FittedBackend:
    """A fitted back-end: a scorer with its name and parameters (subclasses say how it scores).

    Calling it scores trials against enrolled speakers (the rule
    :meth:`~voxmetrics.data.model.EmbeddingSet.score_matrix_with` takes).
    """

    name: str = "cosine"
    """The back-end's name."""

    def __init__(self, parameters: dict[str, Any] | None = None) -> None:
        self.parameters: dict[str, Any] = dict(parameters or {})
        """Its parameters (JSON-safe scalars), for the recipe."""

    def __call__(
        self,
        enrol: NDArray[np.float64],
        enrol_speakers: NDArray[np.str_],
        trials: NDArray[np.float64],
    ) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
        """The sorted enrolled speakers and the T x N scores."""
        return cosine_scores(unit_rows(enrol), enrol_speakers, unit_rows(trials))
