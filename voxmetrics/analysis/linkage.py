"""Linkage analyses: linkability, singling out and voice similarity, as the dashboard shows them.

The metrics are computed in :mod:`voxmetrics.metrics.legal` and
:mod:`voxmetrics.metrics.similarity`; the figures are drawn by :mod:`voxmetrics.plots.linkage`.
This module holds what lies between them, shared by the dashboard's Linkage page, the report
and the CLI: the calls with the page's options (:func:`sampled_linkability`, :func:`legal`,
:func:`similarity`...), the conversation lengths a set of embeddings allows, the display order
of speakers, the per-speaker mean scores of a score matrix and the summary table of every
condition (:func:`linkage_table`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from voxmetrics._types import MISSING, Progress
from voxmetrics.analysis._result import ConditionResult
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.embedding_intervals import similarity_intervals
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
from voxmetrics.metrics.similarity import (
    Calibration,
    SimilarityResult,
    VoiceDistinctiveness,
    voice_similarity,
)

__all__ = [
    "GROUP_COLUMN",
    "TABLE_COLUMNS",
    "SpeakerOrder",
    "UtteranceOverlap",
    "conversation_curve",
    "conversation_lengths",
    "default_lengths",
    "distinctiveness_against",
    "legal",
    "linkage_table",
    "parse_lengths",
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


def sampled_linkability(sm: ScoreMatrix, *, n_draws: int, seed: int = 0) -> LinkabilityCurve:
    """:func:`~voxmetrics.metrics.legal.linkability_curve` with ``n_draws`` sampled sets.

    Vauquier et al.'s (2025) procedure: ``n_draws`` random candidate sets per trial, beside the
    exact expectation.

    Examples
    --------
    >>> from voxmetrics.evaluation.threat import paper_matrix
    >>> sampled_linkability(paper_matrix(), n_draws=3).n_draws
    3
    """
    return linkability_curve(sm.scores, sm.targets, n_draws=int(n_draws), seed=int(seed))


def _trial_meta(es: EmbeddingSet, split: str) -> pd.DataFrame:
    meta = es.meta
    return meta[(meta["split"] == split) & (meta["role"] == "trial")]


def conversation_lengths(es: EmbeddingSet, *, split: str = "eval") -> tuple[int, ...]:
    """L = 1, 2, 4, ... while every trial speaker still has at least 2 groups of L utterances.

    Two groups are what singling out needs (one held out, one calibrating). Empty when some
    speaker has fewer than 2 trial utterances.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> es = demo_embeddings(n_speakers=3, n_enrol=1, n_trial=8)["plain"]
    >>> conversation_lengths(es)
    (1, 2, 4)
    """
    counts = _trial_meta(es, split).groupby("speaker").size()
    fewest = int(counts.min()) if len(counts) else 0
    lengths, length = [], 1
    while fewest // length >= 2:
        lengths.append(length)
        length *= 2
    return tuple(lengths)


PAPER_LENGTHS = (1, 3, 30)
"""Vauquier et al. 2025's conversation lengths L (figure 1)."""


def default_lengths(
    embedding_sets: Sequence[EmbeddingSet], *, split: str = "eval"
) -> tuple[int, ...]:
    """The conversation lengths to show first: 1, 3 and the longest the data allow (up to 30).

    Vauquier et al. 2025 use L = 1, 3 and 30, but few sets have 30 trial utterances per
    speaker (LibriSpeech's test speakers have about 20), so 30 would be skipped. The longest
    length here is the median number of trial utterances per speaker of the set that has
    fewest, capped at 30: every set has it for at least half of its speakers.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> es = demo_embeddings(n_speakers=3, n_enrol=1, n_trial=8)["plain"]
    >>> default_lengths([es])
    (1, 3, 8)
    >>> default_lengths([])
    (1, 3, 30)
    """
    medians = []
    for es in embedding_sets:
        counts = _trial_meta(es, split).groupby("speaker").size()
        medians.append(int(counts.median()) if len(counts) else 1)
    longest = min([PAPER_LENGTHS[-1], *medians])
    return tuple(sorted({v for v in PAPER_LENGTHS if v < longest} | {max(1, longest)}))


def conversation_curve(
    es: EmbeddingSet, lengths: tuple[int, ...], *, split: str = "eval"
) -> ConversationLengthCurve:
    """:func:`~voxmetrics.metrics.legal.conversation_length_curve` at ``lengths``."""
    return conversation_length_curve(es, tuple(int(v) for v in lengths), split=split)


def singling_out_vs_n(
    es: EmbeddingSet, *, split: str = "eval", progress: Progress | None = None
) -> SinglingOutCurve:
    """:func:`~voxmetrics.metrics.legal.singling_out_curve` (20 draws, seed 0).

    ``progress(fraction, message)`` is called before each population size.
    """
    return singling_out_curve(es, split=split, progress=progress)


def parse_lengths(text: str) -> tuple[int, ...]:
    """Conversation lengths typed as comma-separated whole numbers, sorted and unique.

    Raises :class:`~voxmetrics.errors.VoxMetricsInputError` for anything else.

    Examples
    --------
    >>> parse_lengths("30, 1,3, 1")
    (1, 3, 30)
    """
    try:
        lengths = tuple(sorted({int(v) for v in str(text).split(",") if v.strip()}))
    except ValueError:
        lengths = ()
    if not lengths or min(lengths) < 1:
        raise VoxMetricsInputError(
            f"conversation lengths {text!r}: give whole numbers >= 1 separated by commas, "
            "e.g. 1, 3, 30."
        )
    return lengths


def legal(
    es: EmbeddingSet,
    lengths: tuple[int, ...],
    *,
    n_draws: int = 5,
    seed: int = 0,
    split: str = "eval",
    progress: Progress | None = None,
) -> LegalEvaluation:
    """Vauquier et al. 2025's figure 1 evaluation at the given conversation lengths.

    :func:`~voxmetrics.metrics.legal.legal_evaluation` of the embeddings, the lengths sorted
    and made unique; ``progress(fraction, message)`` as it advances.
    """
    lengths = tuple(sorted({int(v) for v in lengths}))
    return legal_evaluation(
        es, lengths, n_draws=int(n_draws), seed=int(seed), split=split, progress=progress
    )


def similarity(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    *,
    calibration: Calibration = "pav",
    split: str = "eval",
) -> SimilarityResult:
    """:func:`~voxmetrics.metrics.similarity.voice_similarity` of the two sets."""
    return voice_similarity(original, anonymised, split=split, calibration=calibration)


def similarity_ci(
    result: SimilarityResult, *, n_boot: int, seed: int = 0
) -> dict[str, BootstrapInterval]:
    """Speaker-level intervals of DeID and G_VD of ``result`` (:func:`similarity`)."""
    return similarity_intervals(result, n_boot=int(n_boot), seed=int(seed))


def distinctiveness_against(
    original: EmbeddingSet,
    sets: Mapping[str, EmbeddingSet],
    *,
    calibration: Calibration = "pav",
    n_boot: int = 0,
    seed: int = 0,
    split: str = "eval",
    max_utterances: int | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, VoiceDistinctiveness], dict[str, dict[str, BootstrapInterval]]]:
    """DeID and G_VD of every set against the original voices, with their intervals.

    The ``distinctiveness`` and ``distinctiveness_intervals`` of :func:`linkage_table`. Sets
    of the same embeddings are measured once (give each condition its anonymiser's voices,
    :func:`voxmetrics.analysis.anonymisers.voice_sources`, so that its attacker set-ups share
    one DeID and G_VD). A set with more than ``max_utterances`` utterances in the split is
    skipped (its matrices score every pair); the original against itself gets no interval
    (DeID 0, G_VD 0 dB by construction). Intervals only with ``n_boot`` > 0. A set whose
    matrices cannot be computed is left out with a
    :class:`~voxmetrics.errors.DegenerateDataWarning` saying why.

    Examples
    --------
    >>> from voxmetrics.synth import demo_embeddings
    >>> sets = demo_embeddings(n_speakers=4, n_enrol=2, n_trial=4)
    >>> values, ivs = distinctiveness_against(sets["plain"], sets, n_boot=20)
    >>> values["plain"].deid, sorted(ivs) == sorted(set(sets) - {"plain"})
    (0.0, True)
    """
    values, intervals = {}, {}
    done: dict[str, tuple[VoiceDistinctiveness, dict[str, BootstrapInterval] | None]] = {}
    for k, (name, es) in enumerate(sets.items()):
        if progress is not None:
            progress(k / max(len(sets), 1), f"Similarity matrices of {name}…")
        if max_utterances is not None and utterance_count(es, split=split) > max_utterances:
            continue
        if es.content_hash not in done:  # one anonymiser's voices, shared by its set-ups
            try:
                result = similarity(original, es, calibration=calibration, split=split)
            except VoxMetricsInputError as exc:
                warnings.warn(
                    f"{name}: no DeID or G_VD: {exc}", DegenerateDataWarning, stacklevel=2
                )
                continue
            ci = None
            if n_boot > 0 and es.content_hash != original.content_hash:
                ci = similarity_ci(result, n_boot=n_boot, seed=seed)
            done[es.content_hash] = (result.distinctiveness, ci)
        values[name], ci = done[es.content_hash]
        if ci is not None:
            intervals[name] = ci
    return values, intervals


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
    >>> speaker_mean_scores(sm).to_dict("list")["mean_score"]
    [0.2, 0.8, 0.8, 0.2]
    """
    frame = pd.DataFrame(sm.scores, columns=sm.enrol_speakers)
    grouped = frame.groupby(sm.trial_speakers, sort=True)
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


# ---------------------------------------------------------------- the summary table

TABLE_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "eer": "EER",
    "n_enrolled": "N enrolled",
    "linkability": "Linkability",
    "chance_linkability": "Chance 1/N",
    "singling_out": "Singling out",
    "n_speakers": "N speakers",
    "chance_singling_out": "Chance (1-1/N)^(N-1)",
    "deid": "DeID",
    "g_vd": "G_VD (dB)",
    "linkability_ci": "Linkability 95% CI",
    "singling_out_ci": "Singling out 95% CI",
    "deid_ci": "DeID 95% CI",
    "g_vd_ci": "G_VD 95% CI (dB)",
}
"""Columns of :func:`linkage_table` and their labels (the intervals as "[low, high]" text,
:data:`~voxmetrics._types.MISSING` when not computed)."""


def _ci_text(iv: BootstrapInterval | None, digits: int = 3) -> str:
    return (None if iv is None else iv.bounds_text(f".{digits}f")) or MISSING


def linkage_table(
    reports: Mapping[str, ConditionResult],
    distinctiveness: Mapping[str, VoiceDistinctiveness | None] | None = None,
    distinctiveness_intervals: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per condition: linkability, singling out, their chance levels, DeID and G_VD.

    Parameters
    ----------
    reports : mapping of condition name to ConditionReport (the ``linkability`` part at least)
        Linkability at the full N and singling out (None without embeddings).
    distinctiveness : mapping of condition name to VoiceDistinctiveness or None, optional
        DeID and G_VD of each condition against the chosen original (None: not available).
    distinctiveness_intervals : mapping of condition name to intervals, optional
        From :func:`~voxmetrics.metrics.embedding_intervals.similarity_intervals`.

    Returns
    -------
    DataFrame
        Columns: the labels of :data:`TABLE_COLUMNS`; missing values are NaN.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_condition
    >>> from voxmetrics.synth import demo_study
    >>> mild = demo_study(n_speakers=6).get("anon-mild")
    >>> df = linkage_table({"anon-mild": evaluate_condition(mild)})
    >>> df.columns.tolist()[:5]
    ['Condition', 'EER', 'N enrolled', 'Linkability', 'Chance 1/N']
    >>> df["N speakers"].tolist(), df["DeID"].isna().tolist()
    ([6], [True])
    """
    rows = []
    for name, r in reports.items():
        so = r.singling_out
        v = (distinctiveness or {}).get(name)
        dv = (distinctiveness_intervals or {}).get(name) or {}
        rows.append(
            {
                "condition": name,
                "eer": r.baseline.eer,  # the 1-to-1 view beside the linkage numbers
                "n_enrolled": r.baseline.n_enrolled,
                "linkability": r.baseline.linkability,
                "chance_linkability": r.baseline.chance_linkability,
                "singling_out": np.nan if so is None else so.value,
                "n_speakers": pd.NA if so is None else so.n_speakers,
                "chance_singling_out": np.nan if so is None else so.chance,
                "deid": np.nan if v is None else v.deid,
                "g_vd": np.nan if v is None else v.g_vd,
                "linkability_ci": _ci_text(r.intervals.get("linkability")),
                "singling_out_ci": _ci_text(r.singling_out_interval),
                "deid_ci": _ci_text(dv.get("deid")),
                "g_vd_ci": _ci_text(dv.get("g_vd"), 2),
            }
        )
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    df["n_speakers"] = df["n_speakers"].astype("Int64")
    return df.rename(columns=TABLE_COLUMNS)
