"""Conditions and studies (design.md, Concepts): what the dashboard and reports compare."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from voxmetrics._types import ATTACKERS, Attacker
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["Condition", "Study", "check_disjoint_speakers"]


def check_disjoint_speakers(dev: ScoreMatrix, eval: ScoreMatrix) -> None:
    """Raise unless dev and eval share no speaker (metrics.md section 0, dev / eval)."""
    shared = np.intersect1d(
        np.union1d(dev.trial_speakers, dev.enrol_speakers),
        np.union1d(eval.trial_speakers, eval.enrol_speakers),
    )
    if shared.size:
        raise VoxMetricsInputError(
            f"dev ({dev.source or 'dev set'}) and eval ({eval.source or 'eval set'}) share "
            f"{shared.size} speaker(s), e.g. '{shared[0]}'; calibration must be learned on "
            "speakers disjoint from the evaluated ones. Use a dev set of other speakers."
        )


@dataclass(frozen=True, eq=False)
class Condition:
    """One anonymisation system under one attacker.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[1.0, 0.0], [0.0, 1.0]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> Condition("plain", eval=sm).attacker
    'semi-informed'
    """

    name: str
    """Label shown everywhere (unique within a study)."""
    eval: ScoreMatrix
    """The evaluated score matrix."""
    dev: ScoreMatrix | None = None
    """Optional calibration matrix of disjoint speakers."""
    attacker: Attacker = "semi-informed"
    """Knowledge level of the attacker: ignorant, lazy-informed or semi-informed."""
    embeddings: EmbeddingSet | None = None
    """Optional utterance embeddings the score matrices came from."""
    description: str = ""
    """Free text (e.g. how the demo generated it)."""

    def __post_init__(self) -> None:
        if not self.name or not self.name.strip():
            raise VoxMetricsInputError("A condition needs a non-empty name.")
        if self.attacker not in ATTACKERS:
            raise VoxMetricsInputError(
                f"Condition '{self.name}': attacker '{self.attacker}' is unknown; use one of "
                f"{', '.join(ATTACKERS)}."
            )
        if self.dev is not None:
            check_disjoint_speakers(self.dev, self.eval)

    @property
    def content_hash(self) -> str:
        """Cache key covering everything a condition's metrics depend on.

        Both score matrices and the embeddings (singling out, similarity and SBLS use them).
        """
        dev = self.dev.content_hash if self.dev is not None else "-"
        emb = self.embeddings.content_hash if self.embeddings is not None else "-"
        return f"{self.eval.content_hash}:{dev}:{emb}"


@dataclass(frozen=True, eq=False)
class Study:
    """An ordered set of conditions with unique names; every edit returns a new study.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[1.0, 0.0], [0.0, 1.0]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> s = Study().with_condition(Condition("x", eval=sm)).renamed("x", "y")
    >>> s.names
    ['y']
    """

    conditions: tuple[Condition, ...] = ()
    """The conditions, in display order."""
    name: str = "study"
    """Label of the study."""

    @property
    def names(self) -> list[str]:
        """Condition names in order."""
        return [c.name for c in self.conditions]

    def __len__(self) -> int:
        return len(self.conditions)

    def get(self, name: str) -> Condition:
        """The condition called ``name``."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise VoxMetricsInputError(
            f"There is no condition '{name}' in the study (it has: {', '.join(self.names)})."
        )

    def with_condition(self, condition: Condition) -> Study:
        """Add ``condition``, replacing the one of the same name in place."""
        if condition.name in self.names:
            conds = tuple(condition if c.name == condition.name else c for c in self.conditions)
        else:
            conds = (*self.conditions, condition)
        return replace(self, conditions=conds)

    def without(self, name: str) -> Study:
        """Remove the condition called ``name``."""
        self.get(name)
        return replace(self, conditions=tuple(c for c in self.conditions if c.name != name))

    def renamed(self, old: str, new: str) -> Study:
        """Rename a condition; the new name must be non-empty and unused."""
        new = new.strip()
        if not new:
            raise VoxMetricsInputError("A condition needs a non-empty name.")
        if new != old and new in self.names:
            raise VoxMetricsInputError(
                f"A condition called '{new}' already exists; pick another name."
            )
        cond = self.get(old)
        return replace(
            self,
            conditions=tuple(
                replace(cond, name=new) if c.name == old else c for c in self.conditions
            ),
        )
