"""From one EmbeddingSet with a ``system`` column to one condition per anonymiser and attack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from voxmetrics._types import Attacker
from voxmetrics.data import study as _study
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "ATTACKER_OF_SCENARIO",
    "ORIGINAL",
    "Condition",
    "conditions_frame",
    "conditions_from_embeddings",
    "study_conditions",
]

ORIGINAL = "original"
"""The ``system`` value of unprocessed audio."""
Scenario = Literal["original", "ignorant", "lazy-informed"]

ATTACKER_OF_SCENARIO: dict[str, Attacker] = {
    "original": "original",
    "ignorant": "ignorant",
    "lazy-informed": "lazy-informed",
}
"""The attacker knowledge level of a study condition built from each scenario."""


@dataclass(frozen=True)
class Condition:
    """One anonymiser under one attack scenario, ready for ``score_matrix(split)``."""

    name: str
    """``"<system> / <scenario>"``, or ``"original"`` for the original audio."""
    system: str
    """The anonymiser (``original`` for the baseline without anonymisation)."""
    scenario: Scenario
    """``ignorant``: enrolment on original audio, trials anonymised; ``lazy-informed``: both
    anonymised; ``original``: both original audio (no anonymisation, the baseline; the
    attacker knowledge the library calls ``original``)."""
    embeddings: EmbeddingSet
    """The enrolment and trial utterances of this condition (all splits)."""


def conditions_from_embeddings(
    es: EmbeddingSet, *, scenarios: tuple[str, ...] = ("ignorant", "lazy-informed")
) -> list[Condition]:
    """Build the conditions of a study from embeddings of original and anonymised audio.

    Parameters
    ----------
    es : EmbeddingSet
        With a ``system`` column (``original`` for unprocessed audio; missing means all
        original).
    scenarios : tuple of str
        Attack scenarios per anonymiser: ``ignorant`` (enrol original, trials anonymised) and /
        or ``lazy-informed`` (both anonymised).

    Returns
    -------
    list of Condition
        ``original`` first (when original audio has enrolment and trials), then
        each anonymiser in sorted order with the requested scenarios. Conditions that lack
        enrolment or trial utterances are left out.

    Raises
    ------
    VoxMetricsInputError
        An unknown scenario, or no condition could be formed.

    Examples
    --------
    >>> import pandas as pd
    >>> meta = pd.DataFrame({"utt_id": list("abcd"), "speaker": ["s", "s", "s", "s"],
    ...     "role": ["enrol", "trial", "enrol", "trial"], "split": ["eval"] * 4,
    ...     "system": ["original", "original", "B1", "B1"]})
    >>> [c.name for c in conditions_from_embeddings(EmbeddingSet.from_arrays(np.eye(4), meta))]
    ['original', 'B1 / ignorant', 'B1 / lazy-informed']
    """
    bad = [s for s in scenarios if s not in ("ignorant", "lazy-informed")]
    if bad:
        raise VoxMetricsInputError(
            f"scenario '{bad[0]}' is unknown; use ignorant and/or lazy-informed."
        )
    meta = es.meta
    system = (
        meta["system"].astype(str).to_numpy()
        if "system" in meta.columns
        else np.full(len(meta), ORIGINAL)
    )
    enrol = (meta["role"] == "enrol").to_numpy()
    trial = ~enrol

    def make(name: str, sys_name: str, scenario: Scenario, keep: np.ndarray) -> Condition | None:
        if not (keep & enrol).any() or not (keep & trial).any():
            return None
        sub = meta.loc[keep].reset_index(drop=True)
        part = EmbeddingSet.from_arrays(
            es.embeddings[keep], sub, source=f"{es.source} {name}".strip()
        )
        return Condition(name=name, system=sys_name, scenario=scenario, embeddings=part)

    out = [make(ORIGINAL, ORIGINAL, "original", system == ORIGINAL)]  # the attacker's name
    for s in sorted(set(system) - {ORIGINAL}):
        if "ignorant" in scenarios:
            keep = (enrol & (system == ORIGINAL)) | (trial & (system == s))
            out.append(make(f"{s} / ignorant", s, "ignorant", keep))
        if "lazy-informed" in scenarios:
            out.append(make(f"{s} / lazy-informed", s, "lazy-informed", system == s))
    result = [c for c in out if c is not None]
    if not result:
        raise VoxMetricsInputError(
            f"{es.source or 'embeddings'}: no condition has both enrolment and trial utterances; "
            "check the role and system columns."
        )
    return result


def study_conditions(conditions: list[Condition], model: str) -> list[_study.Condition]:
    """The study conditions of embedding conditions: cosine scores of each split.

    Each is named ``"<model>: <name>"``, with the attacker of its scenario
    (:data:`ATTACKER_OF_SCENARIO`), its embeddings, and a dev matrix when it has dev rows.

    Examples
    --------
    >>> meta = pd.DataFrame({"utt_id": list("abcd"), "speaker": ["s", "t", "s", "t"],
    ...     "role": ["enrol", "enrol", "trial", "trial"], "split": ["eval"] * 4})
    >>> es = EmbeddingSet.from_arrays(np.eye(4) + 0.1, meta)
    >>> [(c.name, c.attacker, c.dev) for c in study_conditions(conditions_from_embeddings(es), "m")]
    [('m: original', 'original', None)]
    """
    out = []
    for c in conditions:
        part = c.embeddings
        out.append(
            _study.Condition(
                name=f"{model}: {c.name}",
                eval=part.score_matrix("eval"),
                dev=part.score_matrix("dev") if "dev" in part.splits() else None,
                attacker=ATTACKER_OF_SCENARIO[c.scenario],
                embeddings=part,
                description=f"{c.scenario} attack on {c.system}, {model} embeddings",
                recipe=AttackerRecipe("cosine"),  # today's attacker: cosine of the embeddings
            )
        )
    return out


def conditions_frame(conditions: list[Condition], model: str) -> pd.DataFrame:
    """One row per embedding condition: its study name, enrolment and trial counts, splits.

    Examples
    --------
    >>> meta = pd.DataFrame({"utt_id": list("abc"), "speaker": ["s", "s", "s"],
    ...     "role": ["enrol", "trial", "trial"], "split": ["eval"] * 3})
    >>> es = EmbeddingSet.from_arrays(np.eye(3), meta)
    >>> conditions_frame(conditions_from_embeddings(es), "m").to_dict("records")
    [{'Condition': 'm: original', 'Enrolment': 1, 'Trials': 2, 'Splits': 'eval'}]
    """
    return pd.DataFrame(
        [
            {
                "Condition": f"{model}: {c.name}",
                "Enrolment": int((c.embeddings.meta["role"] == "enrol").sum()),
                "Trials": int((c.embeddings.meta["role"] == "trial").sum()),
                "Splits": ", ".join(c.embeddings.splits()),
            }
            for c in conditions
        ],
        columns=["Condition", "Enrolment", "Trials", "Splits"],
    )
