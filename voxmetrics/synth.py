"""The built-in demo study: a seeded generative model of speakers, utterances and anonymisers.

Generative model
----------------
Speakers.
    Each speaker k has a sex (F/M, balanced), an age group (18-35, 36-55, 56+) and an identity
    vector ``s_k = z_k + 1.2 sex_k e_0 + 0.6 age_k e_1`` in R^d (d = 32), with
    ``z_k ~ N(0, I_d)``, ``sex_k`` in {-1, +1}, ``age_k`` in {-1, 0, +1} and ``e_0, e_1`` the
    first two basis vectors (so sex and age are partly readable from the voice).
Utterances.
    An original utterance embedding is ``x = s_k + 0.8 eps`` with ``eps ~ N(0, I_d)`` drawn per
    utterance (session variability). Every speaker has 4 enrolment and 8 trial utterances.
Anonymisers.
    A system replaces an utterance by ``a = kappa_k x + (1 - kappa_k) p + sex_keep 1.2 sex_k
    e_0``, where ``p ~ N(0, 1.3^2 I_d)`` is a pseudo-speaker drawn afresh for every utterance
    and ``kappa_k`` is the share of identity the system keeps for speaker k. With
    ``kappa = 1`` the audio is untouched; with ``kappa = 0`` nothing of the speaker is left.
    ``sex_keep`` is how much of the sex cue survives on top of what ``kappa`` keeps.
Attacker.
    Semi-informed (VoicePrivacy 2024): the enrolment utterances are anonymised by the same
    system; the attacker's profiles are the means of the L2-normalised enrolment embeddings
    and scores are cosine similarities (:meth:`EmbeddingSet.score_matrix`).
Splits.
    dev and eval each have their own 40 speakers (disjoint), so calibration learned on dev is
    applied to unseen speakers.

The five conditions
-------------------
``plain``
    No anonymisation (kappa = 1): the attacker's upper bound.
``random``
    kappa = 0 and no sex cue: no identity left, every metric at chance.
``anon-mild``, ``anon-strong``
    Ordinary anonymisers keeping kappa = 0.45 and 0.3 of every speaker's identity.
``anon-leaky``
    kappa = 0 for most speakers but 0.9 for an exposed minority (10 % of the speakers of each
    split, chosen at random): a pooled
    EER of at least 0.45 that hides localised, near-certain linkage of those speakers, the
    situation Šterns et al. 2025 (LID) is about.

Utility
-------
Every condition carries fixed, plausible utility numbers (:class:`~voxmetrics.data.utility.Utility`,
set by hand, not simulated; no random draw, so the privacy numbers are those of the model
above): ``plain`` has the original speech's WER 0.018 and UAR 0.70 (about VoicePrivacy 2024's
figures on LibriSpeech and IEMOCAP); the ordinary anonymisers cost some of both (``anon-mild``
WER 0.035, UAR 0.62; ``anon-strong`` 0.060 and 0.55; ``anon-leaky`` 0.045 and 0.60); ``random``
destroys the speech with the speaker (WER 0.85, UAR 0.25, chance among four emotions), so its
perfect privacy is not free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "DEMO_SYSTEMS",
    "Anonymiser",
    "demo_embeddings",
    "demo_study",
    "offset_scores",
]

DIM = 32
WITHIN_SD = 0.8
PSEUDO_SD = 1.3
SEX_SHIFT = 1.2
AGE_SHIFT = 0.6
AGE_GROUPS = ("18-35", "36-55", "56+")


@dataclass(frozen=True)
class Anonymiser:
    """One simulated anonymisation system of the demo (see the module docstring)."""

    name: str
    """Condition label."""
    kappa: float
    """Share of a speaker's identity the system keeps (0 = none, 1 = all)."""
    sex_keep: float = 0.0
    """Extra sex cue left in the output."""
    exposed_fraction: float = 0.0
    """Share of speakers for whom the system fails and keeps ``kappa_exposed``."""
    kappa_exposed: float = 1.0
    """Identity kept for the exposed speakers."""
    description: str = ""
    """One sentence for the dashboard."""
    utility: Utility | None = None
    """Its utility numbers (WER, UAR, rho_F0), set by hand (module docstring)."""


def _demo_utility(wer: float, uar: float, rho_f0: float) -> Utility:
    return Utility(wer=wer, uar=uar, rho_f0=rho_f0, source="demo (set by hand)")


DEMO_SYSTEMS: tuple[Anonymiser, ...] = (
    Anonymiser(
        "plain",
        1.0,
        description="No anonymisation: the original voices.",
        utility=_demo_utility(0.018, 0.70, 1.0),
    ),
    Anonymiser(
        "random",
        0.0,
        description="Nothing of the speaker is left (chance level).",
        utility=_demo_utility(0.85, 0.25, 0.05),
    ),
    Anonymiser(
        "anon-mild",
        0.45,
        sex_keep=0.5,
        description="Keeps 45 % of every identity.",
        utility=_demo_utility(0.035, 0.62, 0.82),
    ),
    Anonymiser(
        "anon-strong",
        0.3,
        sex_keep=0.3,
        description="Keeps 30 % of every identity.",
        utility=_demo_utility(0.060, 0.55, 0.74),
    ),
    Anonymiser(
        "anon-leaky",
        0.0,
        exposed_fraction=0.1,
        kappa_exposed=0.9,
        description="Near-chance EER, but 10 % of speakers keep 90 % of their identity.",
        utility=_demo_utility(0.045, 0.60, 0.78),
    ),
)


def _speakers(rng: np.random.Generator, split: str, n: int) -> pd.DataFrame:
    sex = np.where(np.arange(n) % 2 == 0, "F", "M")
    rng.shuffle(sex)
    age = rng.choice(np.array(AGE_GROUPS), size=n)
    return pd.DataFrame(
        {"speaker": [f"{split}-spk{k:03d}" for k in range(n)], "sex": sex, "age_group": age}
    )


def demo_embeddings(
    *,
    seed: int = 0,
    n_speakers: int = 40,
    n_enrol: int = 4,
    n_trial: int = 8,
    systems: tuple[Anonymiser, ...] = DEMO_SYSTEMS,
) -> dict[str, EmbeddingSet]:
    """Simulate original utterances once and anonymise them with every system.

    Parameters
    ----------
    seed : int
        Seed of every random draw; the same seed gives the same study.
    n_speakers : int
        Speakers per split (dev and eval are disjoint).
    n_enrol, n_trial : int
        Enrolment and trial utterances per speaker.
    systems : tuple of Anonymiser
        The systems to simulate.

    Returns
    -------
    dict of str to EmbeddingSet
        One embedding set (dev and eval, enrolment and trial) per system name, with ``sex``
        and ``age_group`` columns and a ``system`` column.

    Examples
    --------
    >>> sets = demo_embeddings(n_speakers=4, n_enrol=1, n_trial=2)
    >>> sorted(sets) == sorted(s.name for s in DEMO_SYSTEMS), sets["plain"].embeddings.shape
    (True, (24, 32))
    """
    rng = np.random.default_rng(seed)
    rows, xs, spk_sex, spk_index = [], [], [], []
    for split in ("dev", "eval"):
        spk = _speakers(rng, split, n_speakers)
        for k, r in enumerate(spk.itertuples(index=False)):
            sex = 1.0 if r.sex == "M" else -1.0
            age = AGE_GROUPS.index(r.age_group) - 1.0
            identity = rng.standard_normal(DIM)
            identity[0] += SEX_SHIFT * sex
            identity[1] += AGE_SHIFT * age
            for role, count in (("enrol", n_enrol), ("trial", n_trial)):
                for u in range(count):
                    rows.append(
                        {
                            "utt_id": f"{r.speaker}-{role}{u:02d}",
                            "speaker": r.speaker,
                            "role": role,
                            "split": split,
                            "sex": r.sex,
                            "age_group": r.age_group,
                        }
                    )
                    xs.append(identity + WITHIN_SD * rng.standard_normal(DIM))
                    spk_sex.append(sex)
                    spk_index.append((split, k))
    meta = pd.DataFrame(rows)
    x = np.asarray(xs)
    sex_sign = np.asarray(spk_sex)
    speaker_ids = meta["speaker"].to_numpy()
    uniq, inverse = np.unique(speaker_ids, return_inverse=True)

    out: dict[str, EmbeddingSet] = {}
    for system in systems:
        exposed = np.zeros(uniq.size, dtype=bool)
        for split in ("dev", "eval"):  # exactly round(fraction * n) exposed speakers per split
            in_split = np.flatnonzero(np.char.startswith(uniq.astype(str), f"{split}-"))
            n_exposed = round(system.exposed_fraction * in_split.size)
            exposed[rng.choice(in_split, size=n_exposed, replace=False)] = True
        kappa = np.where(exposed, system.kappa_exposed, system.kappa)[inverse][:, None]
        pseudo = PSEUDO_SD * rng.standard_normal(x.shape)
        anon = kappa * x + (1.0 - kappa) * pseudo
        anon[:, 0] += system.sex_keep * SEX_SHIFT * sex_sign
        m = meta.copy()
        m["system"] = system.name
        out[system.name] = EmbeddingSet.from_arrays(anon, m, source=f"demo:{system.name}")
    return out


def demo_study(*, seed: int = 0, n_speakers: int = 40) -> Study:
    """The built-in demo study: five conditions with dev and eval score matrices.

    See the module docstring for the generative model.

    Parameters
    ----------
    seed : int
        Seed of the simulation.
    n_speakers : int
        Speakers per split.

    Returns
    -------
    Study
        Conditions ``plain``, ``random``, ``anon-mild``, ``anon-strong``, ``anon-leaky``, each
        with a dev and an eval :class:`~voxmetrics.ScoreMatrix` (cosine scores, semi-informed
        attacker), the embeddings they came from and hand-set utility numbers (WER, UAR,
        rho_F0).

    Examples
    --------
    >>> s = demo_study(n_speakers=6)
    >>> s.names
    ['plain', 'random', 'anon-mild', 'anon-strong', 'anon-leaky']
    >>> s.get("plain").eval.shape
    (48, 6)
    """
    sets = demo_embeddings(seed=seed, n_speakers=n_speakers)
    described = {s.name: s.description for s in DEMO_SYSTEMS}
    utilities = {s.name: s.utility for s in DEMO_SYSTEMS}
    conditions = tuple(
        Condition(
            name=name,
            eval=es.score_matrix("eval"),
            dev=es.score_matrix("dev"),
            attacker="semi-informed",
            embeddings=es,
            description=described.get(name, ""),
            utility=utilities.get(name),
        )
        for name, es in sets.items()
    )
    return Study(conditions=conditions, name="demo")


def offset_scores(
    *,
    n_enrolled: int = 20,
    n_trials: int = 200,
    margin: float = 0.5,
    offset_spread: float = 1.0,
    noise: float = 0.2,
    seed: int = 0,
    prefix: str = "spk",
) -> ScoreMatrix:
    """Scores where every trial has its own level: the threat-model generator (Šterns et al. 2025).

    ``s_ij = o_i + noise e_ij + margin [j = m_i]`` with a per-trial offset
    ``o_i ~ N(0, offset_spread^2)`` and ``e_ij ~ N(0, 1)``; trial i belongs to enrolled
    speaker ``i mod n_enrolled``. When the offsets vary more than the margin, the pooled mated
    and non-mated scores overlap (EER near 0.5) although, row by row, each trial's own speaker
    still scores highest whenever ``margin`` beats the noise (linkability near 1).

    Examples
    --------
    >>> sm = offset_scores(n_enrolled=4, n_trials=8, seed=1)
    >>> sm.shape, sm.targets.tolist()
    ((8, 4), [0, 1, 2, 3, 0, 1, 2, 3])
    """
    if n_enrolled < 2 or n_trials < 1:
        raise VoxMetricsInputError(
            f"offset_scores needs at least 2 enrolled speakers and 1 trial, got {n_enrolled} "
            f"and {n_trials}."
        )
    rng = np.random.default_rng(seed)
    targets = np.arange(n_trials) % n_enrolled
    scores = offset_spread * rng.standard_normal((n_trials, 1)) + noise * rng.standard_normal(
        (n_trials, n_enrolled)
    )
    scores[np.arange(n_trials), targets] += margin
    width = len(str(n_enrolled))
    speakers = np.array([f"{prefix}{k + 1:0{width}d}" for k in range(n_enrolled)])
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"{prefix}-trial{i + 1}" for i in range(n_trials)],
        trial_speakers=speakers[targets],
        enrol_speakers=speakers,
        source=f"offset model ({prefix})",
        copy=False,
    )
