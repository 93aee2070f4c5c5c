"""Cached wrappers of the SRD page: beta-binomial fits and per-speaker views.

Keys are content hashes: a fit is keyed on the sha256 of the histogram it fits (so the same
histogram is fitted once, whichever condition or speaker it comes from) and the loss; the
per-speaker view on the sha256 of the ranks and speaker labels of a group of speakers, N and
the loss. The arrays themselves are passed as ``_``-prefixed arguments, which Streamlit does
not hash. Library warnings are captured into an :class:`~voxmetrics.ui.cache.Outcome`, so a
cache hit shows them again.

Per-speaker fits take about 0.1 s each (more when a fit does not converge), so
:func:`speaker_srd` fits the speakers in groups, each group cached on its own, and reports
``progress(fraction, message)`` between groups.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st
from numpy.typing import ArrayLike, NDArray

from voxmetrics.metrics.srd import (
    BetaBinomialFit,
    Loss,
    SpeakerSRD,
    SRDResult,
    fit_beta_binomial,
    srd_per_speaker,
)
from voxmetrics.report import ConditionReport
from voxmetrics.ui.cache import Outcome, capture, sha256

__all__ = ["condition_fits", "fit_cached", "histogram_key", "speaker_srd"]

Progress = Callable[[float, str], None]

SPEAKER_GROUPS = 20
"""Per-speaker fits are computed (and cached) in about this many groups."""


def histogram_key(histogram: ArrayLike) -> str:
    """Cache key of a rank histogram: N and the sha256 of its int64 counts."""
    h = np.ascontiguousarray(histogram, dtype=np.int64)
    return f"{h.size}:{sha256(h.tobytes())}"


@st.cache_data(max_entries=512, show_spinner=False)
def _fit(key: str, _histogram: np.ndarray, loss: str) -> Outcome[BetaBinomialFit]:
    return capture(fit_beta_binomial, _histogram, loss=loss)


def fit_cached(histogram: ArrayLike, loss: Loss) -> Outcome[BetaBinomialFit]:
    """:func:`~voxmetrics.metrics.srd.fit_beta_binomial`, cached on the histogram's content."""
    h = np.asarray(histogram)
    return _fit(histogram_key(h), h, loss)


def condition_fits(report: ConditionReport, losses: Sequence[Loss]) -> Outcome[tuple]:
    """The beta-binomial fits of a condition's rank histogram, one per loss, in that order.

    The CLL fit is the report's own ``srd_model`` (computed with the report); the others are
    :func:`fit_cached`. The warnings are those of the fits computed here.
    """
    fits: list[BetaBinomialFit] = []
    messages: list[str] = []
    for loss in losses:
        if loss == "CLL":
            fits.append(report.srd_model)
            continue
        out = fit_cached(report.srd.histogram, loss)
        fits.append(out.value)
        messages.extend(out.warnings)
    return Outcome(tuple(fits), tuple(dict.fromkeys(messages)))


@st.cache_data(max_entries=1024, show_spinner=False)
def _speaker_group(
    key: str, _ranks: np.ndarray, _speakers: np.ndarray, n_enrolled: int, loss: str
) -> SpeakerSRD:
    return srd_per_speaker(_ranks, _speakers, n_enrolled, loss=loss)  # type: ignore[arg-type]


def _readonly(a: NDArray) -> NDArray:
    a.setflags(write=False)
    return a


def speaker_srd(
    result: SRDResult,
    trial_speakers: ArrayLike,
    *,
    loss: Loss = "LL",
    progress: Progress | None = None,
) -> SpeakerSRD:
    """:func:`~voxmetrics.metrics.srd.srd_per_speaker` of a condition, cached and with progress.

    The speakers (sorted, as the library sorts them) are split into about
    :data:`SPEAKER_GROUPS` groups; each group's trials go through ``srd_per_speaker`` in a call
    cached on the content of those trials, and the groups' results are put back together in
    order. ``progress(fraction, message)`` is called after each group.
    """
    ranks = np.asarray(result.ranks, dtype=np.int64)
    speakers = np.asarray(trial_speakers).astype(str)
    if speakers.shape != ranks.shape or speakers.size == 0:
        # nothing to split; the library validates and says what is wrong
        return srd_per_speaker(ranks, speakers, result.n_enrolled, loss=loss)
    unique = np.unique(speakers)
    size = max(1, math.ceil(unique.size / SPEAKER_GROUPS))
    groups = [unique[k : k + size] for k in range(0, unique.size, size)]
    parts: list[SpeakerSRD] = []
    for k, group in enumerate(groups):
        mask = np.isin(speakers, group)
        r, s = ranks[mask], speakers[mask]
        key = (
            f"{result.n_enrolled}|{loss}|{sha256(r.tobytes())}|"
            f"{sha256(chr(31).join(s.tolist()).encode())}"
        )
        parts.append(_speaker_group(key, r, s, result.n_enrolled, loss))
        if progress is not None:
            done = min(unique.size, (k + 1) * size)
            progress((k + 1) / len(groups), f"Fitted {done} of {unique.size} speakers…")
    if len(parts) == 1:
        return parts[0]
    return SpeakerSRD(
        speakers=_readonly(np.concatenate([p.speakers for p in parts])),
        histograms=_readonly(np.concatenate([p.histograms for p in parts])),
        empirical_mean_d=_readonly(np.concatenate([p.empirical_mean_d for p in parts])),
        model_mean_d=_readonly(np.concatenate([p.model_mean_d for p in parts])),
        fits=tuple(f for p in parts for f in p.fits),
    )
