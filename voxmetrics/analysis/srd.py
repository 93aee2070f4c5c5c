"""SRD of a condition beyond its report: fits per loss, per-speaker SRD and the SRD tables.

The dashboard's SRD page, the report and its HTML page build their SRD tables here; the math is
:mod:`voxmetrics.metrics.srd` (rank histograms, beta-binomial fits, disclosure statistics), the
figures :mod:`voxmetrics.plots.srd`. SRD is defined by Bäckström et al. (2026); see the
documentation's Methods > SRD.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import MISSING, Progress
from voxmetrics.analysis._result import ConditionResult
from voxmetrics.metrics.srd import (
    BetaBinomialFit,
    Loss,
    SpeakerSRD,
    SRDResult,
    SRDStats,
    fit_beta_binomial,
    srd_per_speaker,
)

__all__ = [
    "CHANCE_COLUMNS",
    "CHANCE_HELP",
    "CHANCE_KEYS",
    "SPEAKER_GROUPS",
    "STATISTICS_HELP",
    "MeanDSummary",
    "against_chance_table",
    "condition_fits",
    "mean_d_summary",
    "merge_speaker_srd",
    "speaker_groups",
    "speaker_srd",
    "speaker_srd_group",
    "srd_table",
    "zero_rank_counts",
]

Fit = Callable[[NDArray[np.int64], Loss], BetaBinomialFit]
GroupSRD = Callable[[NDArray[np.int64], NDArray[np.str_], int, Loss], SpeakerSRD]

SPEAKER_GROUPS = 20
""":func:`speaker_srd` with a ``group_srd`` fits the speakers in about this many groups (one
progress step each). Without one, every speaker's fit runs in one batch (in lock step,
:func:`~voxmetrics.metrics.srd.fit_beta_binomials`), which reports its progress itself:
groups would repeat the batch's fixed cost per step (20 groups of 50 speakers cost 7x one
batch of 1,000)."""


# ---------------------------------------------------------------- fits


def _fit(histogram: NDArray[np.int64], loss: Loss) -> BetaBinomialFit:
    return fit_beta_binomial(histogram, loss=loss)


def condition_fits(
    report: ConditionResult,
    losses: Sequence[Loss],
    *,
    fit: Fit | None = None,
    progress: Progress | None = None,
) -> tuple[BetaBinomialFit, ...]:
    """The beta-binomial fits of a condition's rank histogram, one per loss, in that order.

    The CLL fit is the report's own ``srd_model`` (computed with the report); the others are
    ``fit(histogram, loss)``, by default :func:`~voxmetrics.metrics.srd.fit_beta_binomial`
    (the dashboard passes a cached one). ``progress(fraction, message)`` is called before
    each fit. None when the ranks were pooled over groups of different N (a VoicePrivacy list,
    complete per gender: :mod:`voxmetrics.evaluation.one_to_n`), whose histogram no one model
    describes: each group's own report (``by``) has them.
    """
    if report.srd_model is None:
        return ()
    assert report.srd is not None  # the model is fitted to the report's rank histogram
    fit = fit or _fit
    fits = []
    for k, loss in enumerate(losses):
        if progress is not None:
            progress(k / len(losses), f"{loss} fit")
        fits.append(report.srd_model if loss == "CLL" else fit(report.srd.histogram, loss))
    return tuple(fits)


# ---------------------------------------------------------------- per speaker


def speaker_srd_group(
    ranks: NDArray[np.int64], speakers: NDArray[np.str_], n_enrolled: int, loss: Loss
) -> SpeakerSRD:
    """The default ``group_srd`` of :func:`speaker_srd`: ``srd_per_speaker`` of some trials."""
    return srd_per_speaker(ranks, speakers, n_enrolled, loss=loss)


def speaker_groups(
    ranks: ArrayLike, trial_speakers: ArrayLike, *, n_groups: int = SPEAKER_GROUPS
) -> list[tuple[NDArray[np.int64], NDArray[np.str_]]]:
    """The trials split into about ``n_groups`` groups of whole speakers, in sorted order.

    Each group is ``(ranks, speakers)`` of the trials of consecutive speakers in the sorted
    order of :func:`~voxmetrics.metrics.srd.srd_per_speaker`; ceil(S / n_groups) speakers
    each. Empty input gives no group.

    Examples
    --------
    >>> groups = speaker_groups([1, 2, 3, 1], ["b", "a", "c", "a"], n_groups=2)
    >>> [(r.tolist(), s.tolist()) for r, s in groups]
    [([1, 2, 1], ['b', 'a', 'a']), ([3], ['c'])]
    """
    ranks = np.asarray(ranks, dtype=np.int64).ravel()
    speakers = np.asarray(trial_speakers).astype(str).ravel()
    unique = np.unique(speakers)
    size = max(1, math.ceil(unique.size / max(1, n_groups)))
    groups = []
    for k in range(0, unique.size, size):
        mask = np.isin(speakers, unique[k : k + size])
        groups.append((ranks[mask], speakers[mask]))
    return groups


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


def merge_speaker_srd(parts: Sequence[SpeakerSRD]) -> SpeakerSRD:
    """The per-speaker SRD of disjoint, ordered groups of speakers, put back together."""
    if len(parts) == 1:
        return parts[0]
    return SpeakerSRD(
        speakers=_readonly(np.concatenate([p.speakers for p in parts])),
        histograms=_readonly(np.concatenate([p.histograms for p in parts])),
        empirical_mean_d=_readonly(np.concatenate([p.empirical_mean_d for p in parts])),
        model_mean_d=_readonly(np.concatenate([p.model_mean_d for p in parts])),
        fits=tuple(f for p in parts for f in p.fits),
    )


def speaker_srd(
    result: SRDResult,
    trial_speakers: ArrayLike,
    *,
    loss: Loss = "LL",
    progress: Progress | None = None,
    group_srd: GroupSRD | None = None,
    n_groups: int | None = None,
) -> SpeakerSRD:
    """:func:`~voxmetrics.metrics.srd.srd_per_speaker` of a condition, group by group.

    With ``n_groups`` or a ``group_srd`` (then :data:`SPEAKER_GROUPS` groups by default), the
    speakers are split by :func:`speaker_groups`; each group goes through
    ``group_srd(ranks, speakers, N, loss)`` (by default ``srd_per_speaker``) and the groups
    are put back together in order: the result equals ``srd_per_speaker`` of all trials at
    once, which is what runs without either. ``progress(fraction, message)`` is called after
    each group, or now and then during the one batch.
    """
    group_srd = group_srd or speaker_srd_group
    ranks = np.asarray(result.ranks, dtype=np.int64)
    speakers = np.asarray(trial_speakers).astype(str)
    if speakers.shape != ranks.shape or speakers.size == 0:
        # nothing to split; the library validates and says what is wrong
        return srd_per_speaker(ranks, speakers, result.n_enrolled, loss=loss)
    if group_srd is speaker_srd_group and n_groups is None:  # every speaker in one batch
        n_all = np.unique(speakers).size

        def told(done: int, total: int) -> None:
            if progress is not None:
                progress(done / max(1, total), f"Fitted {done} of {n_all} speakers…")

        out = srd_per_speaker(ranks, speakers, result.n_enrolled, loss=loss, progress=told)
        told(n_all, n_all)
        return out
    groups = speaker_groups(ranks, speakers, n_groups=n_groups or SPEAKER_GROUPS)
    n_speakers = np.unique(speakers).size
    parts: list[SpeakerSRD] = []
    done = 0
    for k, (r, s) in enumerate(groups):
        parts.append(group_srd(r, s, result.n_enrolled, loss))
        done += parts[-1].speakers.size
        if progress is not None:
            progress((k + 1) / len(groups), f"Fitted {done} of {n_speakers} speakers…")
    return merge_speaker_srd(parts)


@dataclass(frozen=True)
class MeanDSummary:
    """Max, mean and std of per-speaker MeanD values (legend of Bäckström et al. 2026, fig. 6)."""

    n: int
    """Speakers with a value."""
    n_missing: int
    """Speakers without one (NaN: their fit did not converge)."""
    max: float
    """Largest MeanD, bits (NaN when n = 0)."""
    mean: float
    """Mean MeanD, bits (NaN when n = 0)."""
    std: float
    """Population standard deviation, bits (NaN when n = 0)."""


def mean_d_summary(values: ArrayLike) -> MeanDSummary:
    """Summary of per-speaker MeanD values for display, NaNs (failed fits) counted apart.

    Examples
    --------
    >>> mean_d_summary([1.0, 3.0, float("nan")])
    MeanDSummary(n=2, n_missing=1, max=3.0, mean=2.0, std=1.0)
    """
    v = np.asarray(values, dtype=np.float64)
    ok = v[np.isfinite(v)]
    if ok.size == 0:
        return MeanDSummary(0, int(v.size), math.nan, math.nan, math.nan)
    return MeanDSummary(
        n=int(ok.size),
        n_missing=int(v.size - ok.size),
        max=float(ok.max()),
        mean=float(ok.mean()),
        std=float(ok.std()),
    )


# ---------------------------------------------------------------- tables


def zero_rank_counts(results: Mapping[str, SRDResult]) -> dict[str, int]:
    """Number of ranks with no trial, per condition (they cannot be drawn on a log axis).

    Examples
    --------
    >>> from voxmetrics.metrics.srd import srd
    >>> zero_rank_counts({"a": srd([[0.9, 0.1, 0.0], [0.2, 0.8, 0.1]], [0, 1])})
    {'a': 2}
    """
    return {name: int((r.histogram == 0).sum()) for name, r in results.items()}


def _stats_row(s: SRDStats) -> dict[str, float]:
    return {
        "MeanD (bits)": s.mean_d,
        "IdR": s.idr,
        "StDD (bits)": s.std_d,
        "MaxD (bits)": s.max_d,
        "Spread": s.spread,
    }


def srd_table(
    results: Mapping[str, SRDResult],
    fits: Mapping[str, Sequence[BetaBinomialFit]] | None = None,
    *,
    eer: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Disclosure statistics of the data and of each model (Bäckström et al. 2026, tables II-III).

    One row each.

    Columns: Condition, Source ("data" or "LL model"...), MeanD (bits), IdR, StDD (bits),
    MaxD (bits), Spread, α, β, KL (bits), Rank-1 match (bits), Fit. The model columns are empty
    on data rows; Fit says "converged" or "did not converge" (such fits are listed, not hidden).
    With ``eer`` (condition -> EER), an EER column follows Source, on the data rows.

    Examples
    --------
    >>> from voxmetrics.metrics.srd import srd
    >>> df = srd_table({"a": srd([[0.9, 0.1], [0.2, 0.8]], [0, 1])})
    >>> df[["Condition", "Source", "MeanD (bits)", "IdR", "Spread"]].values.tolist()
    [['a', 'data', 1.0, 1.0, 0.5]]
    """
    rows = []
    for name, r in results.items():
        eer_cell = {} if eer is None else {"EER": eer.get(name)}
        rows.append(
            {"Condition": name, "Source": "data", **eer_cell, **_stats_row(r.stats), "Fit": MISSING}
        )
        for fit in (fits or {}).get(name, ()):
            rows.append(
                {
                    "Condition": name,
                    "Source": f"{fit.loss} model",
                    **_stats_row(fit.stats),
                    "α": fit.alpha,
                    "β": fit.beta,
                    "KL (bits)": fit.kl_bits,
                    "Rank-1 match (bits)": fit.rank1_match,
                    "Fit": "converged" if fit.converged else "did not converge",
                }
            )
    columns = [
        "Condition", "Source", *([] if eer is None else ["EER"]), "MeanD (bits)", "IdR",
        "StDD (bits)", "MaxD (bits)", "Spread", "α", "β", "KL (bits)", "Rank-1 match (bits)",
        "Fit",
    ]  # fmt: skip
    df = pd.DataFrame(rows, columns=columns)
    for col in ("α", "β", "KL (bits)", "Rank-1 match (bits)", *([] if eer is None else ["EER"])):
        df[col] = df[col].astype(float)
    return df


CHANCE_KEYS: tuple[str, ...] = ("mean_d", "idr", "max_d", "max_d_q95")
"""The SRD numbers of :func:`voxmetrics.report.frames.intervals_frame` shown against chance."""

CHANCE_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "number": "Statistic",
    "value": "Value",
    "low": "95% low",
    "high": "95% high",
    "chance": "Chance",
    "excess": "Excess over chance",
}
"""Column names of :func:`against_chance_table`, by those of the intervals frame."""


def against_chance_table(intervals: pd.DataFrame) -> pd.DataFrame:
    """The SRD statistics against chance, with their intervals, as the dashboard shows them.

    ``intervals`` is :func:`voxmetrics.report.frames.intervals_frame` of the reports with
    ``keys=CHANCE_KEYS``; its ``key`` column is dropped and the others renamed by
    :data:`CHANCE_COLUMNS`.

    Examples
    --------
    >>> iv = pd.DataFrame({"condition": ["a"], "key": ["idr"], "number": ["IdR"],
    ...                    "value": [0.5], "low": [0.4], "high": [0.6], "chance": [0.25],
    ...                    "excess": [0.25]})
    >>> against_chance_table(iv).columns.tolist()
    ['Condition', 'Statistic', 'Value', '95% low', '95% high', 'Chance', 'Excess over chance']
    """
    return intervals.drop(columns="key").rename(columns=CHANCE_COLUMNS)


# ---------------------------------------------------------------- what each column means

STATISTICS_HELP: dict[str, str] = {
    "MeanD (bits)": "Mean disclosure: sum of p_k log2(N p_k); 0 = chance, log2 N = always rank 1.",
    "IdR": "Identification rate p_1, the share of trials at rank 1 (= linkability).",
    "StDD (bits)": "Standard deviation of the disclosure over trials.",
    "MaxD (bits)": "Largest disclosure of any rank reached.",
    "Spread": "Share of ranks more likely than chance (p_k > 1/N).",
    "KL (bits)": "Kullback-Leibler divergence of the model from the data (smaller: better).",
    "Rank-1 match (bits)": "|log2(p_1 / model p_1)| (smaller is better).",
    "Fit": "Whether the optimiser converged; do not rely on a model that did not.",
}
"""What each column of :func:`srd_table` means (the dashboard's column help)."""

CHANCE_HELP: dict[str, str] = {
    "Chance": "The statistic when the scores carry no speaker information: each trial's "
    "identity replaced by a random column of its own scores. The plug-in statistics are "
    "biased upward when trials are few against N; chance shows by how much.",
    "Excess over chance": "What the ranks actually disclose.",
    "95% low": "Speaker-level bootstrap (the study's replicates); MaxD, a maximum, has "
    "none: read the q95 row.",
}
"""Help of the columns of :func:`against_chance_table` that need one."""
