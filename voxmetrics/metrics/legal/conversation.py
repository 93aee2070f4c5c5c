"""Conversation length, and Vauquier et al. 2025's whole evaluation (their figure 1, per L).

Trial embeddings averaged in groups of L utterances per speaker, then linkability, EER and
singling out against the number of speakers, for each L.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import Progress
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.legal.linking import (
    EERCurve,
    LinkabilityCurve,
    eer_curve,
    linkability,
    linkability_curve,
)
from voxmetrics.metrics.legal.singling import (
    SinglingOutCurve,
    average_consecutive,
    singling_out,
    singling_out_curve,
    speaker_profiles,
)

__all__ = [
    "ConversationLengthCurve",
    "LegalEvaluation",
    "LegalLengthResult",
    "conversation_length_curve",
    "legal_evaluation",
]


@dataclass(frozen=True)
class ConversationLengthCurve:
    """Linkability and singling out against the conversation length L (Vauquier et al. 2025)."""

    lengths: NDArray[np.int64] = field(repr=False)
    """The L values."""
    linkability: NDArray[np.float64] = field(repr=False)
    """Linkability of the L-averaged trial embeddings against all enrolled profiles."""
    singling_out: NDArray[np.float64] = field(repr=False)
    """Singling out of the L-averaged trial embeddings (NaN where fewer than 2 groups)."""
    n_enrolled: int
    """N enrolled profiles (linkability chance 1/N)."""
    n_speakers: int
    """Trial speakers (singling-out chance (1 - 1/N)^(N-1))."""

    @property
    def linkability_chance(self) -> float:
        """1 / N enrolled."""
        return 1.0 / self.n_enrolled

    @property
    def singling_out_chance(self) -> float:
        """(1 - 1/N)^(N-1) for the N trial speakers."""
        n = self.n_speakers
        return (1.0 - 1.0 / n) ** (n - 1)


def conversation_length_curve(
    es: EmbeddingSet,
    lengths: ArrayLike = (1, 2, 4),
    *,
    split: str = "eval",
    system: str | None = None,
    seed: int = 0,
) -> ConversationLengthCurve:
    """Linkability and singling out for several conversation lengths L on one split.

    ``seed`` seeds the utterance draws of :func:`singling_out`.
    """
    # any str, as the other callers of roles here: a split without utterances is refused there
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    labels, profiles = speaker_profiles(es.embeddings[enrol], spk[enrol])
    ls = np.asarray(lengths, dtype=np.int64).ravel()
    link, so = np.full(ls.size, np.nan), np.full(ls.size, np.nan)
    n_speakers = np.unique(spk[trial]).size
    for k, length in enumerate(ls):
        t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], int(length))
        enrolled = np.isin(t_spk, labels)
        scores = t_emb[enrolled] @ profiles.T
        link[k] = linkability(scores, np.searchsorted(labels, t_spk[enrolled]))
        try:
            so[k] = singling_out(es.embeddings[enrol], spk[enrol], t_emb, t_spk, seed=seed).value
        except VoxMetricsInputError:
            pass  # fewer than 2 groups per speaker at this L: no held-out fold
    return ConversationLengthCurve(
        lengths=ls,
        linkability=link,
        singling_out=so,
        n_enrolled=int(labels.size),
        n_speakers=int(n_speakers),
    )


def _sub_progress(progress: Progress, start: float, share: float, prefix: str) -> Progress:
    """``progress`` of a step that takes ``share`` of the work from ``start`` on."""

    def step(fraction: float, message: str) -> None:
        progress(start + share * fraction, prefix + message)

    return step


@dataclass(frozen=True)
class LegalLengthResult:
    """Vauquier et al. 2025's three curves at one conversation length L."""

    length: int
    """L: trial utterances averaged into one trial embedding."""
    n_trials: int
    """Averaged trial embeddings of enrolled speakers (the rows of the score matrix)."""
    linkability: LinkabilityCurve
    """Linkability against N' (exact expectation; figure 1 row 2)."""
    eer: EERCurve
    """EER against N' (row 3 plots 1 - EER)."""
    singling_out: SinglingOutCurve | None
    """Singling out against the population size N (row 1); None when fewer than 2 speakers
    have 2 L trial utterances."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the three curves."""
        so = self.singling_out
        return {
            "length": self.length,
            "n_trials": self.n_trials,
            "linkability_vs_n": self.linkability.to_list(),
            "eer_vs_n": self.eer.to_list(),
            "singling_out_vs_n": None
            if so is None
            else [
                [int(a), float(b), float(c)] for a, b, c in zip(so.n, so.value, so.sd, strict=True)
            ],
        }


@dataclass(frozen=True)
class LegalEvaluation:
    """Vauquier et al. 2025's evaluation of one condition: figure 1, one column per L."""

    results: tuple[LegalLengthResult, ...]
    """One entry per conversation length that could be evaluated, ascending L."""
    skipped: tuple[tuple[int, str], ...] = ()
    """(L, why) for the lengths that could not (too few utterances per speaker)."""
    n_draws: int = 5
    """Random draws behind the sampled curves."""

    @property
    def lengths(self) -> list[int]:
        """The evaluated L values."""
        return [r.length for r in self.results]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the ``legal`` command."""
        return {
            "lengths": self.lengths,
            "n_draws": self.n_draws,
            "results": [r.to_dict() for r in self.results],
            "skipped": [{"length": length, "reason": why} for length, why in self.skipped],
        }


def legal_evaluation(
    es: EmbeddingSet,
    lengths: ArrayLike = (1, 3, 30),
    *,
    n: ArrayLike | None = None,
    n_draws: int = 5,
    seed: int = 0,
    split: str = "eval",
    system: str | None = None,
    progress: Progress | None = None,
) -> LegalEvaluation:
    """Singling out, linkability and EER against the number of speakers, for each L.

    Vauquier et al. 2025's protocol (their figure 1): for each conversation length L the trial
    embeddings are averaged in groups of L per speaker (:func:`average_consecutive`) and
    scored against the enrolment profiles; linkability (:func:`linkability_curve`) and EER
    (:func:`eer_curve`) are computed against the number N' of enrolled candidates and singling
    out (:func:`singling_out_curve`) against the population size N. Lengths that leave no
    trial are skipped and listed.

    Parameters
    ----------
    es : EmbeddingSet
    lengths : array_like of int
        Conversation lengths L (the paper's 1, 3 and 30).
    n : array_like of int, optional
        N' and N values (each clipped to what the data allow); default
        :func:`linkability_grid`.
    n_draws : int
        Random draws of candidates (EER) and of populations (singling out).
    seed : int
        Seed of every draw.
    split, system :
        Which utterances (as :meth:`EmbeddingSet.roles`).
    progress : callable(fraction, message), optional
        Called as each length's singling out advances (a length's share: 1 / the lengths).
    """
    ls = np.unique(np.asarray(lengths, dtype=np.int64).ravel())
    if ls.size == 0 or ls.min() < 1:
        raise VoxMetricsInputError("conversation lengths L must be integers >= 1.")
    enrol, trial = es.roles(split, system=system)  # type: ignore[arg-type]
    spk = es.meta["speaker"].to_numpy().astype(str)
    labels, profiles = speaker_profiles(es.embeddings[enrol], spk[enrol])
    grid = None if n is None else np.unique(np.asarray(n, dtype=np.int64).ravel())
    results, skipped = [], []
    for k, length in enumerate(ls.tolist()):
        step = None
        if progress is not None:
            step = _sub_progress(progress, k / ls.size, 1 / ls.size, f"L = {length}: ")
            step(0.0, "averaging")
        try:
            t_emb, t_spk = average_consecutive(es.embeddings[trial], spk[trial], length)
        except VoxMetricsInputError as exc:
            skipped.append((length, str(exc)))
            continue
        enrolled = np.isin(t_spk, labels)
        if not enrolled.any():
            skipped.append((length, "no trial speaker is enrolled."))
            continue
        scores = t_emb[enrolled] @ profiles.T
        targets = np.searchsorted(labels, t_spk[enrolled])
        n_link = None if grid is None else grid[(grid >= 2) & (grid <= labels.size)]
        if n_link is not None and n_link.size == 0:
            n_link = np.asarray([labels.size])
        try:
            so: SinglingOutCurve | None = singling_out_curve(
                es,
                None if grid is None else grid,
                n_draws=n_draws,
                split=split,
                system=system,
                seed=seed,
                length=length,
                clip=True,
                progress=step,
            )
        except VoxMetricsInputError:
            so = None  # fewer than 2 speakers with 2 L trial utterances
        results.append(
            LegalLengthResult(
                length=length,
                n_trials=int(enrolled.sum()),
                linkability=linkability_curve(scores, targets, n=n_link),
                eer=eer_curve(scores, targets, n=n_link, n_draws=n_draws, seed=seed),
                singling_out=so,
            )
        )
    if not results:
        raise VoxMetricsInputError(
            "no conversation length could be evaluated: "
            + "; ".join(f"L = {length}: {why}" for length, why in skipped)
        )
    return LegalEvaluation(results=tuple(results), skipped=tuple(skipped), n_draws=n_draws)
