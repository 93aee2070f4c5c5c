"""Cached wrappers of the SRD page: beta-binomial fits and per-speaker views.

The computations are :mod:`voxmetrics.analysis.srd`'s; here they are only cached. Keys are
content hashes: a fit is keyed on the sha256 of the histogram it fits (so the same histogram
is fitted once, whichever condition or speaker it comes from) and the loss; the per-speaker
view on the sha256 of the ranks and speaker labels of a group of speakers, N and the loss. The
arrays themselves are passed as ``_``-prefixed arguments, which Streamlit does not hash.
Library warnings are captured into an :class:`~voxmetrics.ui.cache.Outcome`, so a cache hit
shows them again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st
from numpy.typing import ArrayLike, NDArray

from voxmetrics.analysis import srd as analysis
from voxmetrics.metrics.srd import BetaBinomialFit, Loss, SpeakerSRD, SRDResult, fit_beta_binomial
from voxmetrics.report import ConditionReport
from voxmetrics.ui.cache import Outcome, capture, sha256

__all__ = ["condition_fits", "fit_cached", "histogram_key", "speaker_srd"]

Progress = Callable[[float, str], None]


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
    """:func:`~voxmetrics.analysis.srd.condition_fits` with :func:`fit_cached`.

    The warnings are those of the fits computed here (not the report's CLL fit).
    """
    messages: list[str] = []

    def fit(histogram: NDArray[np.int64], loss: Loss) -> BetaBinomialFit:
        out = fit_cached(histogram, loss)
        messages.extend(out.warnings)
        return out.value

    fits = analysis.condition_fits(report, losses, fit=fit)
    return Outcome(fits, tuple(dict.fromkeys(messages)))


@st.cache_data(max_entries=1024, show_spinner=False)
def _speaker_group(
    key: str, _ranks: np.ndarray, _speakers: np.ndarray, n_enrolled: int, loss: str
) -> SpeakerSRD:
    return analysis.speaker_srd_group(_ranks, _speakers, n_enrolled, loss)  # type: ignore[arg-type]


def _cached_group(
    ranks: NDArray[np.int64], speakers: NDArray[np.str_], n_enrolled: int, loss: Loss
) -> SpeakerSRD:
    key = (
        f"{n_enrolled}|{loss}|{sha256(ranks.tobytes())}|"
        f"{sha256(chr(31).join(speakers.tolist()).encode())}"
    )
    return _speaker_group(key, ranks, speakers, n_enrolled, loss)


def speaker_srd(
    result: SRDResult,
    trial_speakers: ArrayLike,
    *,
    loss: Loss = "LL",
    progress: Progress | None = None,
) -> SpeakerSRD:
    """:func:`~voxmetrics.analysis.srd.speaker_srd`, each group of speakers cached on content.

    ``progress(fraction, message)`` is called after each group.
    """
    return analysis.speaker_srd(
        result, trial_speakers, loss=loss, progress=progress, group_srd=_cached_group
    )
