"""Score normalisation with a cohort of the attacker's anonymised training embeddings.

**S-norm** (symmetric normalisation, Kenny 2010): each score is z-normalised against the
enrolled identity's scores with the cohort and against the trial's, and the two are averaged:
``s' = [(s - mu_e)/sigma_e + (s - mu_t)/sigma_t] / 2``. **AS-norm** (adaptive, Cumani et al.
2011; Matejka et al. 2017) takes each side's mean and spread over its ``top_n`` highest cohort
scores only (300 by default, or the whole cohort if smaller). Means and spreads are population
ones (ddof 0). The base score is cosine (unit embeddings; a profile is the normalised mean of
its unit enrolment rows).

Both apply to every cell of the T x N matrix, so they reorder the candidates of a trial: the
1-to-N numbers (linkability, SRD, LID) change with them, not only the EER. What they assume:
that the cohort, speakers other than the evaluated ones processed like them, shows how each
enrolled identity and each trial scores against strangers.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends._common import (
    _BLOCK_ELEMENTS,
    FittedBackend,
    cosine_scores,
    speaker_sums,
)
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError

__all__ = ["DEFAULT_TOP_N", "NormBackend", "cohort_statistics", "normalise_scores"]

DEFAULT_TOP_N = 300
"""Cohort scores kept per side by AS-norm (the top N)."""


def cohort_statistics(
    x: NDArray[np.float64], cohort: NDArray[np.float64], top_n: int | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and population sd of each unit row's cosines with the unit cohort rows.

    With ``top_n``, of its ``top_n`` highest cosines only (AS-norm); rows are scored in blocks
    of bounded size.

    Examples
    --------
    >>> mu, sd = cohort_statistics(np.eye(2), np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]))
    >>> mu.round(4).tolist(), sd.round(4).tolist()
    ([0.5333, 0.6], [0.411, 0.432])
    """
    c = cohort.shape[0]
    keep = c if top_n is None else min(int(top_n), c)
    mu = np.empty(x.shape[0])
    sd = np.empty(x.shape[0])
    step = max(1, _BLOCK_ELEMENTS // max(1, c))
    for r in range(0, x.shape[0], step):
        s = x[r : r + step] @ cohort.T
        if keep < c:
            s = -np.partition(-s, keep - 1, axis=1)[:, :keep]
        mu[r : r + step] = s.mean(axis=1)
        sd[r : r + step] = s.std(axis=1)
    return mu, sd


def normalise_scores(
    scores: NDArray[np.float64],
    enrol_stats: tuple[NDArray[np.float64], NDArray[np.float64]],
    trial_stats: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> NDArray[np.float64]:
    """``[(s - mu_e)/sd_e + (s - mu_t)/sd_t] / 2`` for every cell of the T x N ``scores``.

    A side whose cohort scores do not vary (sd 0) is left out of the average for that row or
    column (its z-score is undefined), with a warning.
    """
    (mu_e, sd_e), (mu_t, sd_t) = enrol_stats, trial_stats
    flat_e, flat_t = sd_e <= 0, sd_t <= 0
    if flat_e.any() or flat_t.any():
        warnings.warn(
            f"score normalisation: {int(flat_e.sum())} enrolled identities and "
            f"{int(flat_t.sum())} trials score the same against every cohort embedding; their "
            "side is left out of the normalisation.",
            DegenerateDataWarning,
            stacklevel=3,
        )
    z_e = (scores - mu_e[None, :]) / np.where(flat_e, 1.0, sd_e)[None, :]
    z_t = (scores - mu_t[:, None]) / np.where(flat_t, 1.0, sd_t)[:, None]
    both = (~flat_e)[None, :] & (~flat_t)[:, None]
    only_t = flat_e[None, :] & (~flat_t)[:, None]
    only_e = (~flat_e)[None, :] & flat_t[:, None]
    return np.where(both, 0.5 * (z_e + z_t), np.where(only_t, z_t, np.where(only_e, z_e, scores)))


class NormBackend(FittedBackend):
    """Cosine scores normalised with a cohort (S-norm, or AS-norm with ``top_n``)."""

    def __init__(self, cohort: NDArray[np.float64], top_n: int | None = None) -> None:
        super().__init__(
            {"cohort_size": int(cohort.shape[0])}
            | ({} if top_n is None else {"top_n": min(int(top_n), cohort.shape[0])})
        )
        if cohort.shape[0] < 2:
            raise VoxMetricsInputError("score normalisation needs a cohort of two embeddings.")
        self.name = "snorm" if top_n is None else "asnorm"
        self.cohort = unit_rows(cohort)
        """The unit cohort embeddings."""
        self.top_n = top_n
        """Cohort scores kept per side (None: all, S-norm)."""

    def __call__(self, enrol, enrol_speakers, trials):
        """Normalised cosine scores of the trials against the enrolment profiles."""
        names, sums, _ = speaker_sums(unit_rows(enrol), enrol_speakers)
        profiles = unit_rows(sums)
        t = unit_rows(trials)
        _, raw = cosine_scores(unit_rows(enrol), enrol_speakers, t)
        e_stats = cohort_statistics(profiles, self.cohort, self.top_n)
        t_stats = cohort_statistics(t, self.cohort, self.top_n)
        return names, normalise_scores(raw, e_stats, t_stats)
