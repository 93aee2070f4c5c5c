"""The strongest attacker tried on each system: which condition the verdicts judge.

What this module is: a study may hold several attackers of one anonymisation system at one
knowledge level, e.g. ``sttts (semi-informed)`` scored by cosine and ``sttts (semi-informed)
[plda]`` by a PLDA back-end (``study build --backend cosine plda``, the dashboard's Attackers
page). A privacy verdict holds only against the attackers tried, so the report card, the threat
call-outs and VoicePrivacy's ranking judge the **strongest** of them and say which: the one
with the lowest dev EER, the rule of the sweep (:func:`~voxmetrics.analysis.attackers.
condition_attackers`: chosen on dev, reported on eval, never chosen on eval). The others are
listed as weaker attackers, with their dev EERs. :func:`strongest_attackers` groups the
conditions and chooses; :class:`StrongestAttackers` says, for each condition, whether it is
judged and against which attacker. What it is not: the sweep over back-ends itself
(:mod:`voxmetrics.analysis.attackers`), nor the verdicts (:mod:`voxmetrics.analysis.verdicts`).

**Which conditions are one system's attackers.** Those of the same anonymiser
(:func:`~voxmetrics.analysis.anonymisers.anonymiser_of`) and knowledge level, once the back-end
a name ends with (``" [plda]"``, the name a back-end's condition gets) is set aside. A group is
made when one of its conditions has an attacker recipe (conditions with recipes); a condition
without one (imported scores, or scores made before recipes) joins its system's group as the
attacker "scores as given". A condition alone in its group is judged, and its recipe names its
attacker (with how the sweep chose it, when it did).

**No dev split.** An attacker without dev scores has no dev EER and cannot be chosen; when no
attacker of a group has one, none is chosen and every one is judged (and says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from voxmetrics.analysis.anonymisers import anonymiser_of
from voxmetrics.analysis.attackers import dev_figure
from voxmetrics.data.recipe import WEAK_ATTACKER, AttackerRecipe
from voxmetrics.data.study import Condition

__all__ = [
    "AS_GIVEN",
    "STRONGEST_RULE",
    "AttackerChoice",
    "AttackerTried",
    "StrongestAttackers",
    "strongest_attackers",
    "weak_attacker_message",
]

AS_GIVEN = "scores as given"
"""The attacker of a condition without a recipe (imported scores: whoever made them)."""
STRONGEST_RULE = (
    "the strongest attacker tried on a system at a knowledge level is judged: the lowest dev "
    "EER (ties: the first in study order), chosen on dev and reported on eval; the others are "
    "listed as weaker attackers"
)
"""The rule, in words, for tables, pages and the JSON."""


def weak_attacker_message(recipe: AttackerRecipe | None) -> str:
    """The weak-attacker warning of a recipe with its reasons, "" when none holds.

    Examples
    --------
    >>> weak_attacker_message(AttackerRecipe("lda", cautions=("too few speakers",)))
    'the attacker may be too weak: privacy may be overestimated (too few speakers)'
    >>> weak_attacker_message(AttackerRecipe("cosine"))
    ''
    """
    if recipe is None or not recipe.weak:
        return ""
    return f"{WEAK_ATTACKER} ({'; '.join(recipe.cautions)})"


@dataclass(frozen=True)
class AttackerTried:
    """One attacker of a system: its condition, back-end and dev EER."""

    condition: str
    """The condition (the system under this attacker)."""
    backend: str
    """Its back-end (the recipe's), or :data:`AS_GIVEN`."""
    dev_eer: float | None
    """Its dev EER (None without dev scores)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        return {"condition": self.condition, "backend": self.backend, "dev_eer": self.dev_eer}


def _pct(x: float | None) -> str:
    return "no dev" if x is None else f"{100 * x:.1f} %"


@dataclass(frozen=True)
class AttackerChoice:
    """The attacker judged for one system at one knowledge level, and the others tried."""

    system: str
    """The anonymisation system (the anonymiser of its conditions)."""
    attacker: str
    """The knowledge level."""
    condition: str
    """The condition judged: the strongest attacker's."""
    tried: tuple[AttackerTried, ...]
    """Every attacker of the system at this level, in study order (the judged one among them)."""
    recipe: AttackerRecipe | None = None
    """The judged condition's attacker recipe (None: scores as given)."""
    compared: bool = True
    """Whether the attackers were compared on dev (False: none had dev scores, so each is
    judged)."""

    @property
    def judged(self) -> AttackerTried:
        """The judged attacker's entry of :attr:`tried`."""
        return next(t for t in self.tried if t.condition == self.condition)

    @property
    def backend(self) -> str:
        """The judged attacker's back-end."""
        return self.judged.backend

    @property
    def dev_eer(self) -> float | None:
        """The judged attacker's dev EER."""
        return self.judged.dev_eer

    @property
    def weaker(self) -> tuple[AttackerTried, ...]:
        """The other attackers tried (not judged), in study order."""
        if not self.compared:
            return ()
        return tuple(t for t in self.tried if t.condition != self.condition)

    @property
    def weak_attacker(self) -> str:
        """The judged attacker's weak-attacker warning with its reasons ("" when none)."""
        return weak_attacker_message(self.recipe)

    @property
    def label(self) -> str:
        """Which attacker is judged, in one line (e.g. for a card's note).

        Examples
        --------
        >>> c = AttackerChoice("b1", "semi-informed", "b1 [plda]",
        ...     (AttackerTried("b1", "cosine", 0.30), AttackerTried("b1 [plda]", "plda", 0.21)))
        >>> c.label
        'plda, the strongest of 2 attackers tried (lowest dev EER 21.0 %; cosine 30.0 %)'
        """
        if len(self.tried) > 1 and self.compared:
            others = "; ".join(f"{t.backend} {_pct(t.dev_eer)}" for t in self.weaker)
            return (
                f"{self.backend}, the strongest of {len(self.tried)} attackers tried (lowest "
                f"dev EER {_pct(self.dev_eer)}; {others})"
            )
        r = self.recipe
        if len(self.tried) > 1:
            return f"{self.backend} (attackers not compared: no dev scores to choose on)"
        if r is not None and r.selected_by is not None and len(r.candidates) > 1:
            value = "no dev" if r.dev_value is None else f"{r.dev_value:.3g}"
            return (
                f"{self.backend}, the strongest of {len(r.candidates)} back-ends tried (chosen "
                f"on dev by {r.selected_by}: {value})"
            )
        return self.backend

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the system, the condition judged, its back-end, every attacker tried."""
        return {
            "system": self.system,
            "attacker": self.attacker,
            "condition": self.condition,
            "backend": self.backend,
            "dev_eer": self.dev_eer,
            "compared": self.compared,
            "label": self.label,
            "tried": [t.to_dict() for t in self.tried],
            "weak": bool(self.weak_attacker),
            "warning": self.weak_attacker or None,
        }


@dataclass(frozen=True)
class StrongestAttackers:
    """For each system and knowledge level with an attacker recipe, the attacker judged.

    Examples
    --------
    >>> s = StrongestAttackers(())
    >>> s.judged("anything"), s.left_out(), s.label("anything")
    (True, {}, '')
    """

    choices: tuple[AttackerChoice, ...]
    """One per system and knowledge level (one per attacker of a group not compared)."""

    def choice_of(self, condition: str) -> AttackerChoice | None:
        """The choice ``condition`` is part of (None: no attacker recipe in its group)."""
        for c in self.choices:
            if c.condition == condition:
                return c
        for c in self.choices:
            if any(t.condition == condition for t in c.tried):
                return c
        return None

    def judged(self, condition: str) -> bool:
        """Whether the verdicts judge ``condition`` (False: a weaker attacker of its system)."""
        c = self.choice_of(condition)
        return c is None or c.condition == condition or not c.compared

    def label(self, condition: str) -> str:
        """Which attacker a judged condition is judged against ("" without a recipe or choice)."""
        c = self.choice_of(condition)
        if c is None or c.condition != condition:
            return ""
        return c.label

    def left_out(self) -> dict[str, str]:
        """The weaker attackers' conditions, each with why it is not judged."""
        out = {}
        for c in self.choices:
            for t in c.weaker:
                out[t.condition] = (
                    f"a weaker attacker of {c.system} ({c.attacker}) than {c.backend} "
                    f"({c.condition}): dev EER {_pct(t.dev_eer)} against {_pct(c.dev_eer)}"
                )
        return out

    def keep(self, names: Iterable[str]) -> list[str]:
        """``names`` without the weaker attackers' conditions, in order."""
        return [n for n in names if self.judged(n)]

    def weak(self) -> dict[str, str]:
        """The judged conditions whose attacker may be too weak, each with its warning."""
        return {c.condition: c.weak_attacker for c in self.choices if c.weak_attacker}

    def frame(self) -> pd.DataFrame:
        """One row per attacker tried: its system, condition, back-end, dev EER, whether judged.

        Columns ``System, Attacker, Condition, Back-end, Dev EER, Judged, Not judged because``
        (empty for the judged).
        """
        why = self.left_out()
        rows = [
            {
                "System": c.system,
                "Attacker": c.attacker,
                "Condition": t.condition,
                "Back-end": t.backend,
                "Dev EER": t.dev_eer,
                "Judged": t.condition not in why,
                "Not judged because": why.get(t.condition, ""),
            }
            for c in self.choices
            for t in (c.tried if c.compared else (c.judged,))
        ]
        columns = ["System", "Attacker", "Condition", "Back-end", "Dev EER", "Judged"]
        return pd.DataFrame(rows, columns=[*columns, "Not judged because"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the rule, each choice, the conditions left out and the weak attackers."""
        return {
            "rule": STRONGEST_RULE,
            "systems": [c.to_dict() for c in self.choices],
            "not_judged": self.left_out(),
            "weak": self.weak(),
        }


def _base_name(c: Condition) -> str:
    """The condition's name without the ``" [<back-end>]"`` its back-end's condition adds."""
    if c.recipe is not None:
        suffix = f" [{c.recipe.backend}]"
        if c.name.endswith(suffix) and len(c.name) > len(suffix):
            return c.name[: -len(suffix)]
    return c.name


def _dev_eer(c: Condition) -> float | None:
    return None if c.dev is None else dev_figure(c.dev, "eer")


def _choices(system: str, attacker: str, members: Sequence[Condition]) -> list[AttackerChoice]:
    """The choice of one group: the lowest dev EER, or each member when none has dev scores."""
    lone = len(members) == 1
    tried = tuple(
        AttackerTried(
            c.name,
            AS_GIVEN if c.recipe is None else c.recipe.backend,
            None if lone else _dev_eer(c),  # a lone attacker is not compared
        )
        for c in members
    )
    recipes = {c.name: c.recipe for c in members}
    with_dev = [t for t in tried if t.dev_eer is not None]
    if lone or with_dev:
        best = min(with_dev, key=lambda t: t.dev_eer) if with_dev else tried[0]  # type: ignore[arg-type,return-value]
        return [AttackerChoice(system, attacker, best.condition, tried, recipes[best.condition])]
    return [
        AttackerChoice(system, attacker, t.condition, tried, recipes[t.condition], compared=False)
        for t in tried
    ]


def strongest_attackers(conditions: Iterable[Condition]) -> StrongestAttackers:
    """The attacker judged for each system and knowledge level (module docstring).

    Parameters
    ----------
    conditions : iterable of Condition
        The study's conditions.

    Returns
    -------
    StrongestAttackers
        A choice for every group with an attacker recipe; conditions in no group are judged
        as they are.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> from voxmetrics.analysis.attackers import condition_attackers
    >>> study = demo_study(n_speakers=8)
    >>> es = study.get("anon-mild").embeddings
    >>> sweep = condition_attackers(es, backends=["cosine", "lda"])
    >>> study = study.with_condition(sweep.condition("anon-mild [lda]", backend="lda"))
    >>> s = strongest_attackers(study.conditions)
    >>> [(t.condition, t.backend) for t in s.choices[0].tried]
    [('anon-mild', 'scores as given'), ('anon-mild [lda]', 'lda')]
    >>> s.judged(s.choices[0].condition), len(s.left_out())
    (True, 1)
    """
    conds = list(conditions)
    key_of = {c.name: (anonymiser_of(_base_name(c), c.attacker), c.attacker) for c in conds}
    groups: dict[tuple[str, str], list[Condition]] = {}
    for c in conds:
        groups.setdefault(key_of[c.name], []).append(c)
    choices: list[AttackerChoice] = []
    for (system, attacker), members in groups.items():
        if any(c.recipe is not None for c in members):
            choices += _choices(system, attacker, members)
    return StrongestAttackers(tuple(choices))
