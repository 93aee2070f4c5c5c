"""Conditions and studies: what the dashboard and reports compare."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from voxmetrics._types import (
    ATTACKERS,
    DEFAULT_BOOTSTRAP,
    DEFAULT_LID_VARIANT,
    LID_VARIANT_ALIASES,
    LID_VARIANT_NAMES,
    SCORE_KINDS,
    Attacker,
    ScoreKind,
)
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.provenance import InputFile
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["Condition", "Study", "StudySettings", "check_disjoint_speakers"]


def check_disjoint_speakers(dev: ScoreMatrix, eval: ScoreMatrix) -> None:
    """Raise unless dev and eval share no speaker (docs, Methods > Conventions, dev / eval)."""

    def speakers(sm: ScoreMatrix) -> np.ndarray:  # the trials of unenrolled speakers too
        trials = getattr(sm, "all_trial_speakers", sm.trial_speakers)
        return np.union1d(trials, sm.enrol_speakers)

    shared = np.intersect1d(speakers(dev), speakers(eval))
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
    """Knowledge level of the attacker: original, ignorant, lazy-informed, semi-informed or
    informed (:data:`voxmetrics._types.ATTACKERS`)."""
    embeddings: EmbeddingSet | None = None
    """Optional utterance embeddings the score matrices came from."""
    description: str = ""
    """Free text (e.g. how the demo generated it)."""
    score_kind: ScoreKind = "similarity"
    """What the scores are: "similarity" (higher = closer), "llr" (calibrated natural-log LLRs:
    adds actual DCFs) or "distance" (lower = closer; the matrices hold them negated)."""
    utility: Utility | None = None
    """Optional utility numbers of the anonymised speech (WER, UAR, rho_F0)."""
    input_warnings: tuple[str, ...] = ()
    """What was left out of the condition's broken score files, one message per file (read
    with ``allow_incomplete=True``): shown in its JSON, its reports and the dashboard."""
    recipe: AttackerRecipe | None = None
    """How its scores were made (back-end, training data, parameters, how it was chosen);
    None for imported scores of unknown making. Carried into its report (the JSON's
    ``attacker`` block)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_warnings", tuple(map(str, self.input_warnings)))
        if not self.name or not self.name.strip():
            raise VoxMetricsInputError("A condition needs a non-empty name.")
        if self.attacker not in ATTACKERS:
            raise VoxMetricsInputError(
                f"Condition '{self.name}': attacker '{self.attacker}' is unknown; use one of "
                f"{', '.join(ATTACKERS)}."
            )
        if self.score_kind not in SCORE_KINDS:
            raise VoxMetricsInputError(
                f"Condition '{self.name}': score kind '{self.score_kind}' is unknown; use one "
                f"of {', '.join(SCORE_KINDS)}."
            )
        if self.dev is not None:
            check_disjoint_speakers(self.dev, self.eval)

    @property
    def content_hash(self) -> str:
        """Cache key covering everything a condition's metrics depend on.

        Both score matrices, the embeddings (singling out, similarity and SBLS use them), the
        score kind (actual DCFs need LLRs) and the attacker recipe (the report carries it).
        """
        dev = self.dev.content_hash if self.dev is not None else "-"
        emb = self.embeddings.content_hash if self.embeddings is not None else "-"
        kind = "" if self.score_kind == "similarity" else f":{self.score_kind}"
        recipe = ""
        if self.recipe is not None:
            import hashlib
            import json

            text = json.dumps(self.recipe.to_dict(), sort_keys=True).encode()
            recipe = f":{hashlib.sha256(text).hexdigest()[:16]}"
        return f"{self.eval.content_hash}:{dev}:{emb}{kind}{recipe}"

    def complete_rows(self) -> Condition | None:
        """The condition on its complete trials, for the views of the 1-to-N metrics.

        See :meth:`ScoreMatrix.complete_rows`; itself when complete, None when no trial is.

        The dev matrix is restricted likewise (dropped when it has no complete trial).
        """
        if self.eval.is_complete and (self.dev is None or self.dev.is_complete):
            return self
        ev = self.eval.complete_rows()
        if ev is None:
            return None
        dev = None if self.dev is None else self.dev.complete_rows()
        return replace(self, eval=ev, dev=dev)

    def subset(self, attr: str, value: str) -> Condition:
        """The condition restricted to the trials with ``attr == value`` (compared as text).

        The eval matrix keeps those trials and their own enrolled identities
        (:meth:`ScoreMatrix.subset_attribute`); the dev matrix is split likewise when it has
        the attribute (else kept whole); the embeddings keep the utterances whose metadata
        column ``attr`` is ``value``, without that column, constant there (the embeddings are
        dropped when there is no such column).
        """
        dev = self.dev
        if dev is not None and attr in dev.attributes:
            dev = dev.subset_attribute(attr, value)
        es = self.embeddings
        if es is not None:
            if attr in es.meta.columns:
                keep = (es.meta[attr].astype(str) == str(value)).to_numpy()
                # the column is constant within the subset: nothing for SBLS to infer from it
                meta = es.meta.loc[keep].drop(columns=[attr])
                es = EmbeddingSet.from_arrays(es.embeddings[keep], meta, source=es.source)
            else:
                es = None
        return replace(self, eval=self.eval.subset_attribute(attr, value), dev=dev, embeddings=es)


@dataclass(frozen=True)
class StudySettings:
    """Analysis settings saved with a study and used by its reports.

    Examples
    --------
    >>> options = StudySettings.from_dict({"bootstrap": 100}).evaluate_options()
    >>> options  # doctest: +NORMALIZE_WHITESPACE
    {'bootstrap': 100, 'seed': 0, 'cross_calibrate': None, 'lid_variant': 'reference-code',
     'ties': 'reference', 'linkability_rule': 'code'}
    """

    bootstrap: int = DEFAULT_BOOTSTRAP
    """Replicates of the speaker-level bootstrap behind the report's intervals (0 = none)."""
    seed: int = 0
    """Seed of the bootstrap and of the cross-calibration folds."""
    cross_calibrate: int | None = None
    """k of the speaker-disjoint cross-calibration of LID for conditions without a dev set
    (None = no LID for them)."""
    lid_variant: str = DEFAULT_LID_VARIANT
    """LID calibration: "reference-code" (the default: the model of the authors' public code
    for Šterns et al. 2025 Table 3, Table 4 and Figure 4, solved exactly; it stays finite on
    separable dev pools) or "maximum-likelihood" (unpenalised); the old name
    "metrics" is read as "maximum-likelihood"."""
    ties: str = "reference"
    """Tie rule of the pooled metrics: "reference" (each number as its reference code) or
    "attacker" (every tie resolved for the attacker, the conservative audit view)."""
    linkability_rule: str = "code"
    """When a trial is linked: "code" (its own speaker scores at least every other identity,
    a tie is a link: the authors' public code) or "strict" (strictly above: the paper's
    eq. 3)."""

    def __post_init__(self) -> None:
        checks = (
            ("bootstrap", self.bootstrap, 0, "0 (none) or more replicates, e.g. 200"),
            ("seed", self.seed, 0, "a non-negative integer"),
        )
        for name, value, low, hint in checks:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise VoxMetricsInputError(f"setting '{name}' is {value!r}; use {hint}.")
        if self.ties not in ("reference", "attacker"):
            raise VoxMetricsInputError(
                f"setting 'ties' is {self.ties!r}; use 'reference' or 'attacker'."
            )
        if self.linkability_rule not in ("code", "strict"):
            raise VoxMetricsInputError(
                f"setting 'linkability_rule' is {self.linkability_rule!r}; use 'code' or 'strict'."
            )
        k = self.cross_calibrate
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
            raise VoxMetricsInputError(
                f"setting 'cross_calibrate' is {k!r}; turn it off (None) or give a number "
                "of folds of at least 2."
            )
        variant = LID_VARIANT_ALIASES.get(self.lid_variant, self.lid_variant)
        if variant not in LID_VARIANT_NAMES:
            raise VoxMetricsInputError(
                f"setting 'lid_variant' is {self.lid_variant!r}; use one of "
                f"{', '.join(LID_VARIANT_NAMES)}."
            )
        object.__setattr__(self, "lid_variant", variant)  # old alias -> canonical name

    def evaluate_options(self) -> dict[str, Any]:
        """Keyword options of :func:`voxmetrics.evaluation.evaluate_condition`."""
        return {
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "cross_calibrate": self.cross_calibrate,
            "lid_variant": self.lid_variant,
            "ties": self.ties,
            "linkability_rule": self.linkability_rule,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the fields."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> StudySettings:
        """Settings from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise VoxMetricsInputError(
                f"unknown setting(s) {', '.join(unknown)}; the known ones are "
                f"{', '.join(sorted(known))}."
            )
        return cls(**values)


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
    settings: StudySettings = field(default_factory=StudySettings)
    """Analysis settings of the study's reports."""
    inputs: tuple[InputFile, ...] = ()
    """The files the study was built from, fingerprinted (sha256), where known
    (:mod:`voxmetrics.data.provenance`): saved in its ``.vxm`` file and recorded by its
    reports."""
    saved_by: Mapping[str, Any] = field(default_factory=dict)
    """The versions of VoxMetrics and of its libraries that wrote the ``.vxm`` file the study
    was loaded from (empty for a study built in memory)."""

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

    def subset_options(self) -> dict[str, list[str]]:
        """Per-trial attributes to split the study by, with the values every condition has.

        Attributes of every condition's eval matrix; values sorted, as text.

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(np.eye(4), trial_ids=["t1", "t2", "t3", "t4"],
        ...     trial_speakers=["a", "b", "c", "d"], enrol_speakers=["a", "b", "c", "d"],
        ...     attributes={"sex": ["F", "F", "M", "M"]})
        >>> Study((Condition("x", eval=sm),)).subset_options()
        {'sex': ['F', 'M']}
        """
        if not self.conditions:
            return {}
        shared = set.intersection(*(set(c.eval.attributes) for c in self.conditions))
        options = {}
        for attr in sorted(shared):
            values = set.intersection(
                *(set(c.eval.attribute_values(attr)) for c in self.conditions)
            )
            if values:
                options[attr] = sorted(values)
        return options

    def subset(self, attr: str, value: str) -> Study:
        """Every condition restricted to the trials with ``attr == value``.

        See :meth:`Condition.subset`; as VoicePrivacy evaluates female and male speakers
        separately. Condition names and settings are kept; the study's name gets the subset
        (``"study [sex=F]"``), so its reports say which subset they show.

        Raises
        ------
        VoxMetricsInputError
            When a condition lacks the attribute or the value, or the subset has fewer than
            two enrolled identities.

        Examples
        --------
        >>> sm = ScoreMatrix.from_arrays(np.eye(4), trial_ids=["t1", "t2", "t3", "t4"],
        ...     trial_speakers=["a", "b", "c", "d"], enrol_speakers=["a", "b", "c", "d"],
        ...     attributes={"sex": ["F", "F", "M", "M"]})
        >>> Study((Condition("x", eval=sm),)).subset("sex", "M").get("x").eval.shape
        (2, 2)
        """
        conds = []
        for c in self.conditions:
            try:
                conds.append(c.subset(attr, value))
            except VoxMetricsInputError as exc:
                raise VoxMetricsInputError(f"Condition '{c.name}': {exc}") from None
        return replace(self, conditions=tuple(conds), name=f"{self.name} [{attr}={value}]")

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
