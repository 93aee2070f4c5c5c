"""Cached wrappers of the Linkage page: keyed on content hashes and options.

Every wrapper takes the big objects (score matrices, embedding sets) as ``_``-prefixed
arguments, which Streamlit does not hash, and an explicit key built from their
``content_hash`` and the options. Library warnings are captured into an
:class:`~voxmetrics.ui.cache.Outcome`, so a cache hit shows them again;
:class:`~voxmetrics.errors.VoxMetricsInputError` propagates (nothing is cached) for
:func:`voxmetrics.ui.call` to show.

Besides the library calls, two small table operations live here rather than in the page:
:func:`speaker_mean_scores` (the trial-speaker x enrolled-speaker mean of a score matrix, a
pandas group-by) and :func:`speaker_order` (speakers sorted by sex, then id, from the metadata).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.legal import (
    ConversationLengthCurve,
    LegalEvaluation,
    LinkabilityCurve,
    SinglingOutCurve,
    conversation_length_curve,
    legal_evaluation,
    linkability_curve,
    singling_out_curve,
)
from voxmetrics.metrics.similarity import Calibration, SimilarityResult, voice_similarity
from voxmetrics.metrics.uncertainty import similarity_intervals
from voxmetrics.ui.cache import Outcome, capture

__all__ = [
    "SpeakerOrder",
    "UtteranceOverlap",
    "conversation_curve",
    "conversation_lengths",
    "legal",
    "sampled_linkability",
    "similarity",
    "similarity_ci",
    "singling_out_vs_n",
    "speaker_mean_scores",
    "speaker_order",
    "utterance_count",
    "utterance_overlap",
]

GROUP_COLUMN = "sex"
"""Metadata column the similarity matrices' speakers are grouped by (when present)."""


@st.cache_data(max_entries=64, show_spinner=False)
def _sampled(key: str, _sm: ScoreMatrix, n_draws: int, seed: int) -> Outcome[LinkabilityCurve]:
    return capture(linkability_curve, _sm.scores, _sm.targets, n_draws=n_draws, seed=seed)


def sampled_linkability(
    sm: ScoreMatrix, *, n_draws: int, seed: int = 0
) -> Outcome[LinkabilityCurve]:
    """:func:`~voxmetrics.metrics.legal.linkability_curve` with ``n_draws`` sampled sets.

    Cached on the matrix's content hash, ``n_draws`` and ``seed``.
    """
    return _sampled(f"{sm.content_hash}|{n_draws}|{seed}", sm, int(n_draws), int(seed))


def _trial_meta(es: EmbeddingSet, split: str) -> pd.DataFrame:
    meta = es.meta
    return meta[(meta["split"] == split) & (meta["role"] == "trial")]


@st.cache_data(max_entries=64, show_spinner=False)
def _lengths(key: str, _es: EmbeddingSet, split: str) -> tuple[int, ...]:
    counts = _trial_meta(_es, split).groupby("speaker").size()
    fewest = int(counts.min()) if len(counts) else 0
    lengths, length = [], 1
    while fewest // length >= 2:
        lengths.append(length)
        length *= 2
    return tuple(lengths)


def conversation_lengths(es: EmbeddingSet, *, split: str = "eval") -> tuple[int, ...]:
    """L = 1, 2, 4, ... while every trial speaker still has at least 2 groups of L utterances.

    Two groups are what singling out needs (one held out, one calibrating). Empty when some
    speaker has fewer than 2 trial utterances.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> es = demo_embeddings(n_speakers=3, n_enrol=1, n_trial=8)["plain"]
    >>> _lengths.__wrapped__("-", es, "eval")
    (1, 2, 4)
    """
    return _lengths(f"{es.content_hash}|{split}", es, split)


@st.cache_data(max_entries=64, show_spinner=False)
def _curve(
    key: str, _es: EmbeddingSet, lengths: tuple[int, ...], split: str
) -> Outcome[ConversationLengthCurve]:
    return capture(conversation_length_curve, _es, lengths, split=split)


def conversation_curve(
    es: EmbeddingSet, lengths: tuple[int, ...], *, split: str = "eval"
) -> Outcome[ConversationLengthCurve]:
    """:func:`~voxmetrics.metrics.legal.conversation_length_curve`, cached on content."""
    lengths = tuple(int(v) for v in lengths)
    return _curve(f"{es.content_hash}|{lengths}|{split}", es, lengths, split)


@st.cache_data(max_entries=64, show_spinner=False)
def _so_curve(key: str, _es: EmbeddingSet, split: str) -> Outcome[SinglingOutCurve]:
    return capture(singling_out_curve, _es, split=split)


def singling_out_vs_n(es: EmbeddingSet, *, split: str = "eval") -> Outcome[SinglingOutCurve]:
    """:func:`~voxmetrics.metrics.legal.singling_out_curve` (20 draws, seed 0), cached."""
    return _so_curve(f"{es.content_hash}|{split}", es, split)


@st.cache_data(max_entries=32, show_spinner=False)
def _legal(
    key: str, _es: EmbeddingSet, lengths: tuple[int, ...], n_draws: int, seed: int, split: str
) -> Outcome[LegalEvaluation]:
    return capture(legal_evaluation, _es, lengths, n_draws=n_draws, seed=seed, split=split)


def legal(
    es: EmbeddingSet,
    lengths: tuple[int, ...],
    *,
    n_draws: int = 5,
    seed: int = 0,
    split: str = "eval",
) -> Outcome[LegalEvaluation]:
    """Vauquier et al. 2025's figure 1 evaluation, cached on content and options.

    :func:`~voxmetrics.metrics.legal.legal_evaluation` of the embeddings.
    """
    lengths = tuple(sorted({int(v) for v in lengths}))
    key = f"{es.content_hash}|{lengths}|{n_draws}|{seed}|{split}"
    return _legal(key, es, lengths, int(n_draws), int(seed), split)


@st.cache_data(max_entries=32, show_spinner=False)
def _similarity(
    key: str, _original: EmbeddingSet, _anonymised: EmbeddingSet, split: str, calibration: str
) -> Outcome[SimilarityResult]:
    return capture(voice_similarity, _original, _anonymised, split=split, calibration=calibration)


def similarity(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    *,
    calibration: Calibration = "pav",
    split: str = "eval",
) -> Outcome[SimilarityResult]:
    """:func:`~voxmetrics.metrics.similarity.voice_similarity`, cached on both sets' content."""
    key = f"{original.content_hash}|{anonymised.content_hash}|{split}|{calibration}"
    return _similarity(key, original, anonymised, split, calibration)


@st.cache_data(max_entries=64, show_spinner=False)
def _similarity_ci(
    key: str, _result: SimilarityResult, n_boot: int, seed: int
) -> dict[str, BootstrapInterval]:
    return similarity_intervals(_result, n_boot=n_boot, seed=seed)


def similarity_ci(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    result: SimilarityResult,
    *,
    n_boot: int,
    seed: int = 0,
    calibration: Calibration = "pav",
    split: str = "eval",
) -> dict[str, BootstrapInterval]:
    """Speaker-level intervals of DeID and G_VD of ``result``, cached.

    ``result`` is the :func:`similarity` of the two sets; the key is both sets' content, the
    replicates and the seed.
    """
    key = f"{original.content_hash}|{anonymised.content_hash}|{split}|{calibration}"
    return _similarity_ci(f"{key}|{n_boot}|{seed}", result, n_boot, seed)


def utterance_count(es: EmbeddingSet, *, split: str = "eval") -> int:
    """Utterances (enrolment and trial) of one split: the similarity matrices score U^2 pairs.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> utterance_count(demo_embeddings(n_speakers=2, n_enrol=1, n_trial=2)["plain"])
    6
    """
    return int((es.meta["split"] == split).sum())


@dataclass(frozen=True)
class UtteranceOverlap:
    """How many anonymised utterances keep the id of an original one (the pairing rule)."""

    shared: int
    """Anonymised utterances of the split whose ``utt_id`` is also an original utterance's."""
    anonymised: int
    """Anonymised utterances of the split."""


def utterance_overlap(
    original: EmbeddingSet, anonymised: EmbeddingSet, *, split: str = "eval"
) -> UtteranceOverlap:
    """Count the anonymised utterances that share an id with an original utterance.

    The similarity matrices skip every pair with equal ids (an utterance and its own
    anonymised version); when no id is shared that rule does nothing, which the page says.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> sets = demo_embeddings(n_speakers=2, n_enrol=1, n_trial=2)
    >>> utterance_overlap(sets["plain"], sets["random"])
    UtteranceOverlap(shared=6, anonymised=6)
    """
    o = original.meta.loc[original.meta["split"] == split, "utt_id"]
    a = anonymised.meta.loc[anonymised.meta["split"] == split, "utt_id"]
    return UtteranceOverlap(shared=int(a.isin(o).sum()), anonymised=len(a))


@dataclass(frozen=True)
class SpeakerOrder:
    """Display order of speakers and the group (sex) of each, when the metadata has one."""

    speakers: tuple[str, ...]
    """Speakers sorted by group, then id."""
    groups: dict[str, str] | None
    """Speaker -> group label (None when the metadata has no such column)."""


def speaker_order(es: EmbeddingSet, *, split: str = "eval") -> SpeakerOrder:
    """Speakers of one split sorted by sex, then id (by id alone without a ``sex`` column).

    Examples
    --------
    >>> import pandas as pd
    >>> meta = pd.DataFrame({"utt_id": ["1", "2", "3"], "speaker": ["b", "a", "c"],
    ...                      "role": "trial", "split": "eval", "sex": ["F", "M", "F"]})
    >>> order = speaker_order(EmbeddingSet.from_arrays(np.eye(3), meta))
    >>> order.speakers, order.groups
    (('b', 'c', 'a'), {'b': 'F', 'c': 'F', 'a': 'M'})
    """
    meta = es.meta[es.meta["split"] == split]
    if GROUP_COLUMN not in meta.columns:
        return SpeakerOrder(tuple(sorted(meta["speaker"].unique())), None)
    first = (
        meta.assign(_group=meta[GROUP_COLUMN].fillna("").astype(str))
        .drop_duplicates("speaker")
        .sort_values(["_group", "speaker"])
    )
    return SpeakerOrder(
        tuple(first["speaker"]), dict(zip(first["speaker"], first["_group"], strict=True))
    )


@st.cache_data(max_entries=16, show_spinner=False)
def _mean_scores(key: str, _sm: ScoreMatrix) -> pd.DataFrame:
    frame = pd.DataFrame(_sm.scores, columns=_sm.enrol_speakers)
    grouped = frame.groupby(_sm.trial_speakers, sort=True)
    means = grouped.mean()
    counts = grouped.size()
    # columns: the trial speakers' own columns first, in the rows' order, then the others, so
    # the mated cells lie on the diagonal
    rows = means.index.tolist()
    cols = [s for s in rows if s in means.columns] + sorted(
        s for s in means.columns if s not in set(rows)
    )
    long = (
        means[cols]
        .rename_axis(index="trial_speaker", columns="enrol_speaker")
        .stack()
        .rename("mean_score")
        .reset_index()
    )
    long["n_trials"] = long["trial_speaker"].map(counts).astype(np.int64)
    return long


def speaker_mean_scores(sm: ScoreMatrix) -> pd.DataFrame:
    """Mean score of each trial speaker's trials against each enrolled speaker.

    Returns
    -------
    DataFrame
        Long format, one row per (trial speaker, enrolled speaker): ``trial_speaker,
        enrol_speaker, mean_score, n_trials``; trial speakers sorted, enrolled speakers in the
        same order (mated cells on the diagonal), then those without trials.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[.9, .1], [.7, .3], [.2, .8]], trial_ids=["1", "2", "3"],
    ...                              trial_speakers=["a", "a", "b"], enrol_speakers=["b", "a"])
    >>> _mean_scores.__wrapped__("-", sm).to_dict("list")["mean_score"]
    [0.2, 0.8, 0.8, 0.2]
    """
    return _mean_scores(sm.content_hash, sm)
