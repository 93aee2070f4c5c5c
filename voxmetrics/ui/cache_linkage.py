"""Cached wrappers of the Linkage page: keyed on content hashes and options.

Every wrapper calls one function of :mod:`voxmetrics.analysis.linkage`, takes the big objects
(score matrices, embedding sets) as ``_``-prefixed arguments, which Streamlit does not hash,
and an explicit key built from their ``content_hash`` and the options. Library warnings are
captured into an :class:`~voxmetrics.ui.cache.Outcome`, so a cache hit shows them again;
:class:`~voxmetrics.errors.VoxMetricsInputError` propagates (nothing is cached) for
:func:`voxmetrics.ui.call` to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from voxmetrics.analysis import linkage
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.legal import (
    ConversationLengthCurve,
    LegalEvaluation,
    LinkabilityCurve,
    SinglingOutCurve,
)
from voxmetrics.metrics.similarity import Calibration, SimilarityResult, VoiceDistinctiveness
from voxmetrics.ui.cache import Outcome, capture

__all__ = [
    "conversation_curve",
    "conversation_lengths",
    "distinctiveness_against",
    "legal",
    "sampled_linkability",
    "similarity",
    "similarity_ci",
    "singling_out_vs_n",
    "speaker_mean_scores",
]


@st.cache_data(max_entries=64, show_spinner=False)
def _sampled(key: str, _sm: ScoreMatrix, n_draws: int, seed: int) -> Outcome[LinkabilityCurve]:
    return capture(linkage.sampled_linkability, _sm, n_draws=n_draws, seed=seed)


def sampled_linkability(
    sm: ScoreMatrix, *, n_draws: int, seed: int = 0
) -> Outcome[LinkabilityCurve]:
    """:func:`~voxmetrics.analysis.linkage.sampled_linkability`, cached on content and options."""
    return _sampled(f"{sm.content_hash}|{n_draws}|{seed}", sm, int(n_draws), int(seed))


@st.cache_data(max_entries=64, show_spinner=False)
def _lengths(key: str, _es: EmbeddingSet, split: str) -> tuple[int, ...]:
    return linkage.conversation_lengths(_es, split=split)


def conversation_lengths(es: EmbeddingSet, *, split: str = "eval") -> tuple[int, ...]:
    """:func:`~voxmetrics.analysis.linkage.conversation_lengths`, cached on content."""
    return _lengths(f"{es.content_hash}|{split}", es, split)


@st.cache_data(max_entries=64, show_spinner=False)
def _curve(
    key: str, _es: EmbeddingSet, lengths: tuple[int, ...], split: str
) -> Outcome[ConversationLengthCurve]:
    return capture(linkage.conversation_curve, _es, lengths, split=split)


def conversation_curve(
    es: EmbeddingSet, lengths: tuple[int, ...], *, split: str = "eval"
) -> Outcome[ConversationLengthCurve]:
    """:func:`~voxmetrics.analysis.linkage.conversation_curve`, cached on content."""
    lengths = tuple(int(v) for v in lengths)
    return _curve(f"{es.content_hash}|{lengths}|{split}", es, lengths, split)


@st.cache_data(max_entries=64, show_spinner=False)
def _so_curve(key: str, _es: EmbeddingSet, split: str) -> Outcome[SinglingOutCurve]:
    return capture(linkage.singling_out_vs_n, _es, split=split)


def singling_out_vs_n(es: EmbeddingSet, *, split: str = "eval") -> Outcome[SinglingOutCurve]:
    """:func:`~voxmetrics.analysis.linkage.singling_out_vs_n`, cached on content."""
    return _so_curve(f"{es.content_hash}|{split}", es, split)


@st.cache_data(max_entries=32, show_spinner=False)
def _legal(
    key: str, _es: EmbeddingSet, lengths: tuple[int, ...], n_draws: int, seed: int, split: str
) -> Outcome[LegalEvaluation]:
    return capture(linkage.legal, _es, lengths, n_draws=n_draws, seed=seed, split=split)


def legal(
    es: EmbeddingSet,
    lengths: tuple[int, ...],
    *,
    n_draws: int = 5,
    seed: int = 0,
    split: str = "eval",
) -> Outcome[LegalEvaluation]:
    """:func:`~voxmetrics.analysis.linkage.legal`, cached on content and options."""
    lengths = tuple(sorted({int(v) for v in lengths}))
    key = f"{es.content_hash}|{lengths}|{n_draws}|{seed}|{split}"
    return _legal(key, es, lengths, int(n_draws), int(seed), split)


@st.cache_data(max_entries=32, show_spinner=False)
def _similarity(
    key: str, _original: EmbeddingSet, _anonymised: EmbeddingSet, split: str, calibration: str
) -> Outcome[SimilarityResult]:
    return capture(linkage.similarity, _original, _anonymised, split=split, calibration=calibration)


def similarity(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    *,
    calibration: Calibration = "pav",
    split: str = "eval",
) -> Outcome[SimilarityResult]:
    """:func:`~voxmetrics.analysis.linkage.similarity`, cached on both sets' content."""
    key = f"{original.content_hash}|{anonymised.content_hash}|{split}|{calibration}"
    return _similarity(key, original, anonymised, split, calibration)


@st.cache_data(max_entries=64, show_spinner=False)
def _similarity_ci(
    key: str, _result: SimilarityResult, n_boot: int, seed: int
) -> dict[str, BootstrapInterval]:
    return linkage.similarity_ci(_result, n_boot=n_boot, seed=seed)


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
    """:func:`~voxmetrics.analysis.linkage.similarity_ci` of ``result``, cached.

    ``result`` is the :func:`similarity` of the two sets; the key is both sets' content, the
    replicates and the seed.
    """
    key = f"{original.content_hash}|{anonymised.content_hash}|{split}|{calibration}"
    return _similarity_ci(f"{key}|{n_boot}|{seed}", result, int(n_boot), int(seed))


@st.cache_data(max_entries=16, show_spinner=False)
def _mean_scores(key: str, _sm: ScoreMatrix) -> pd.DataFrame:
    return linkage.speaker_mean_scores(_sm)


def speaker_mean_scores(sm: ScoreMatrix) -> pd.DataFrame:
    """:func:`~voxmetrics.analysis.linkage.speaker_mean_scores`, cached on content."""
    return _mean_scores(sm.content_hash, sm)


@st.cache_data(max_entries=16, show_spinner=False)
def _against(
    key: str,
    _original: EmbeddingSet,
    _sets: Mapping[str, EmbeddingSet],
    options: tuple[tuple[str, Any], ...],
) -> Outcome[tuple[dict[str, VoiceDistinctiveness], dict[str, dict[str, BootstrapInterval]]]]:
    return capture(linkage.distinctiveness_against, _original, _sets, **dict(options))


def distinctiveness_against(
    original: EmbeddingSet, sets: Mapping[str, EmbeddingSet], **options: Any
) -> Outcome[tuple[dict[str, VoiceDistinctiveness], dict[str, dict[str, BootstrapInterval]]]]:
    """:func:`~voxmetrics.analysis.linkage.distinctiveness_against`, cached on content.

    The key is every set's content, the names and the options.
    """
    names = "|".join(f"{n}={es.content_hash}" for n, es in sets.items())
    key = f"{original.content_hash}|{names}"
    return _against(key, original, dict(sets), tuple(sorted(options.items())))
