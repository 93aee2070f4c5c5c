"""A study's conditions under other attackers: one per back-end, or the strongest of them.

What this module is: the study-level use of the sweep of
:func:`~voxmetrics.analysis.attackers.condition_attackers`, for ``study build --backend`` (and
the dashboard): each condition scored from embeddings (its recipe says cosine) is scored again
by the back-ends asked for, each trained on that condition's attacker's own data, and the
weak-attacker checks (:mod:`voxmetrics.analysis.weak_attacker`) run on each, across the
attacker knowledge levels of one anonymiser too. What it is not: the evaluation (the engine
evaluates the conditions it returns), nor the reading of files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from voxmetrics.analysis.attackers import (
    AttackerSweep,
    calibrated,
    condition_attackers,
    dev_figure,
)
from voxmetrics.analysis.weak_attacker import WeakAttackerCheck, check_attacker
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Condition
from voxmetrics.embeddings.backends import BACKENDS
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["INFORMED", "StudyAttackers", "study_attackers"]

INFORMED = ("lazy-informed", "semi-informed", "informed")
"""Knowledge levels whose attacker knows the anonymiser: only they may learn a mapping from
anonymised to original embeddings."""


@dataclass(frozen=True)
class StudyAttackers:
    """The conditions under their attackers, the checks, and what could not be tried."""

    conditions: tuple[Condition, ...]
    """Every condition: those scored from embeddings under the back-ends asked for, the others
    (imported scores) as they were."""
    checks: dict[str, WeakAttackerCheck] = field(default_factory=dict)
    """The weak-attacker check of each attacked condition, by its (new) name."""
    notes: tuple[str, ...] = ()
    """What could not be tried, and why (e.g. a mapping without original embeddings)."""
    sweeps: dict[str, AttackerSweep] = field(default_factory=dict, repr=False)
    """The sweep of each condition that was attacked, by its original name."""


def _attacked(c: Condition) -> bool:
    """Whether ``c`` was scored from its embeddings by cosine (so other back-ends apply)."""
    return c.embeddings is not None and c.recipe is not None and c.recipe.backend == "cosine"


def study_attackers(
    conditions: Sequence[Condition],
    *,
    backends: Sequence[str] = ("strongest",),
    select_by: str = "eer",
    training: Mapping[str, EmbeddingSet] | None = None,
    originals: EmbeddingSet | None = None,
    original_speech: EmbeddingSet | None = None,
    reference_eer: float | None = None,
    calibrate: bool = False,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
) -> StudyAttackers:
    """Score a study's embedding conditions with other attacker back-ends.

    Parameters
    ----------
    conditions : sequence of Condition
        The study's conditions; those scored from embeddings by cosine are attacked again.
    backends : sequence of str
        ``["strongest"]`` (the default): every back-end tried, the strongest on dev kept, under
        the condition's own name; or back-end names: one condition per back-end, named
        ``"<name> [<back-end>]"`` (cosine, or a single back-end, keeps the name; the strongest
        on dev among several says so in its recipe).
    select_by : str
        The dev metric of the choice.
    training : mapping, optional
        The embeddings each condition's attacker is trained on, by condition name (default:
        the condition's own; their ``train`` split, else dev).
    originals : EmbeddingSet, optional
        Original embeddings of the training utterances (same ``utt_id``), for the mapping
        attack of the informed attackers (:data:`INFORMED`).
    original_speech, reference_eer :
        Original (unprotected) embeddings and what a well-trained verifier reaches on them:
        the ``original_speech`` weak-attacker check.
    calibrate, params, seed :
        As :func:`~voxmetrics.analysis.attackers.condition_attackers`.

    Returns
    -------
    StudyAttackers
    """
    names = list(backends)
    strongest = "strongest" in names
    if strongest and len(names) > 1:
        raise VoxMetricsInputError(
            "give either 'strongest' or a list of back-ends (one condition each), not both."
        )
    training = training or {}
    out: list[Condition] = []
    checks: dict[str, WeakAttackerCheck] = {}
    notes: list[str] = []
    sweeps: dict[str, AttackerSweep] = {}
    for c in conditions:
        if not _attacked(c) or names == ["cosine"]:
            out.append(c)
            continue
        informed = c.attacker in INFORMED
        tried = list(BACKENDS) if strongest else names
        if not informed:
            tried = [b for b in tried if b != "procrustes"]
            if "procrustes" in names:
                notes.append(
                    f"{c.name}: procrustes left out: a mapping attack needs an attacker who "
                    "knows the anonymiser (lazy-informed, semi-informed)"
                )
        sweep = condition_attackers(
            c.embeddings,  # type: ignore[arg-type]
            backends=tried,
            select_by=select_by,
            training=training.get(c.name),
            originals=originals if informed else None,
            calibrate=calibrate and strongest,
            params=params,
            seed=seed,
        )
        if calibrate and not strongest:  # every back-end's condition is reported: each one
            sweep = replace(
                sweep,
                outcomes=tuple(calibrated(o, seed=seed) if o.ok else o for o in sweep.outcomes),
            )
        sweeps[c.name] = sweep
        check = check_attacker(
            sweep,
            original=original_speech if c.attacker != "original" else None,
            reference_eer=reference_eer,
            matched=c.attacker != "ignorant",
        )
        keep = [sweep.chosen] if strongest else [o.name for o in sweep.outcomes if o.name in tried]
        for backend in keep:
            o = sweep.outcome(backend)
            if not o.ok:
                notes.append(f"{c.name}: {backend} left out: {o.skipped}")
                continue
            alone = strongest or len(names) == 1 or backend == "cosine"
            name = c.name if alone else f"{c.name} [{backend}]"
            made = sweep.condition(
                name,
                backend=backend,
                attacker=c.attacker,
                embeddings=c.embeddings,
                description=c.description,
                cautions=check.reasons,
            )
            out.append(replace(made, utility=c.utility))
            checks[name] = check
    return _ordered(
        StudyAttackers(tuple(out), checks, tuple(notes), sweeps), strongest or len(names) == 1
    )


def _ordered(result: StudyAttackers, one_per_condition: bool) -> StudyAttackers:
    """Add the ordering check across knowledge levels (one attacker per level, one anonymiser).

    Run only when each knowledge level has one attacked condition (several anonymisers or
    several back-ends per condition are not one ordering); a finding joins the cautions of
    the better-informed condition it is about.
    """
    attacked = [c for c in result.conditions if c.name in result.checks]
    levels = [c.attacker for c in attacked]
    if not one_per_condition or len(set(levels)) != len(levels) or len(levels) < 2:
        return result
    eers = {c.attacker: dev_figure(c.eval, "eer") for c in attacked}
    ordering = check_attacker(eer_by_knowledge={k: v for k, v in eers.items() if v is not None})
    if not ordering.weak:
        return result
    conditions, checks = [], dict(result.checks)
    for c in result.conditions:
        mine = [f for f in ordering.findings if f.values[0][0] == f"{c.attacker}_eer"]
        if c.name in checks and mine and c.recipe is not None:
            check = checks[c.name]
            check = WeakAttackerCheck(check.findings + tuple(mine), (*check.ran, "ordering"))
            checks[c.name] = check
            c = replace(c, recipe=replace(c.recipe, cautions=check.reasons))
        conditions.append(c)
    return replace(result, conditions=tuple(conditions), checks=checks)
