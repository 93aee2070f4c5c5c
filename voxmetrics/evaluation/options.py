"""What an evaluation is asked for: its options, validated once, and the parts of its report.

:class:`EvaluationOptions` holds every option of
:func:`~voxmetrics.evaluation.engine.evaluate` (and of the blockwise executor), checked when it
is made: an unknown tie rule, score kind, linkability rule or LID variant is refused there,
before any work. :data:`PARTS` names the parts of a
:class:`~voxmetrics.evaluation.result.ConditionReport` a caller can ask for; each part declares
the intermediate products it needs (as pyannote.metrics' metric components declare theirs), the
parts it builds on, and the options its numbers depend on, so a page that shows fewer numbers
asks the same ``evaluate`` for fewer parts, and a stored report of the same options and more
parts serves it too (:meth:`EvaluationOptions.for_parts`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from voxmetrics._types import DEFAULT_LID_VARIANT, SCORE_KINDS, ScoreKind
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.dcf import DEFAULT_P_TARGETS
from voxmetrics.metrics.legal import LinkabilityRule, check_linkability_rule
from voxmetrics.metrics.lid import resolve_lid_variant
from voxmetrics.metrics.pools import Ties, check_ties

__all__ = [
    "ALL_PARTS",
    "PARTS",
    "EvaluationOptions",
    "Part",
    "PartName",
    "check_parts",
    "subset_parts",
]

PartName = Literal["pairwise", "verification", "zebra", "linkability", "srd", "lid", "singling_out"]
"""A part of a condition's report (:data:`PARTS`)."""


@dataclass(frozen=True)
class Part:
    """One part of a condition's report: what it holds and what it is computed from."""

    name: PartName
    """Its name, as ``evaluate(parts=...)`` takes it."""
    holds: str
    """The numbers it holds (the report's fields and JSON keys)."""
    products: tuple[str, ...]
    """The intermediate products it is derived from (besides the sorted pools every part
    reads for the EER): ``cllr_sums``, ``link_ranks``, ``srd_ranks``, ``calibration``,
    ``chance``, ``embeddings``."""
    options: tuple[str, ...]
    """The options its numbers depend on (those of :class:`EvaluationOptions`)."""
    requires: tuple[PartName, ...] = ()
    """Parts it builds on, computed with it."""


PARTS: dict[str, Part] = {
    p.name: p
    for p in (
        Part(
            "pairwise",
            "ROCCH-EER, Cllr and min Cllr of the listed pairs (the EER is in every report)",
            ("cllr_sums",),
            ("ties",),
        ),
        Part(
            "verification",
            "normalised minDCF / actDCF, the DET and APE curves, d', the TAR at FAR 1 % and 0.1 %",
            (),
            ("ties", "score_kind", "p_targets", "c_miss", "c_fa"),
        ),
        Part("zebra", "D_ECE, worst case log10 l and its tag", (), ("ties",)),
        Part(
            "linkability",
            "linkability and its curve against N' of the complete trials",
            ("link_ranks",),
            ("linkability_rule",),
        ),
        Part(
            "srd",
            "the target-rank histogram, its statistics, its CLL beta-binomial model and the "
            "chance levels of the 1-to-N numbers",
            ("srd_ranks", "chance"),
            ("ties", "seed"),
            ("linkability",),
        ),
        Part(
            "lid",
            "LID (calibrated on dev, else cross-calibrated, else none) and its chance levels",
            ("calibration", "chance"),
            ("cross_calibrate", "lid_variant", "seed", "ties"),
        ),
        Part("singling_out", "singling out of the utterance embeddings", ("embeddings",), ()),
    )
}
"""The parts of a condition's report, by name (in the order of the report)."""

ALL_PARTS: frozenset[str] = frozenset(PARTS)
"""Every part: a full report."""

_EVERY_PART = ("bootstrap", "by")
"""Options every part's numbers depend on (its intervals, its subsets)."""


def check_parts(parts: Iterable[str]) -> frozenset[str]:
    """``parts`` with the parts they build on, or the error naming an unknown one.

    Examples
    --------
    >>> sorted(check_parts(["srd"]))
    ['linkability', 'srd']
    """
    given = frozenset(parts)
    unknown = sorted(given - ALL_PARTS)
    if unknown:
        raise VoxMetricsInputError(
            f"unknown report part(s) {', '.join(map(repr, unknown))}; the parts are "
            f"{', '.join(PARTS)}."
        )
    return given | {r for p in given for r in PARTS[p].requires}


@dataclass(frozen=True)
class EvaluationOptions:
    """Every option of an evaluation, validated when made.

    Examples
    --------
    >>> EvaluationOptions(bootstrap=200).bootstrap
    200
    >>> EvaluationOptions(ties="nearest")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    voxmetrics.errors.VoxMetricsInputError: `ties` must be one of ... got 'nearest'.
    """

    cross_calibrate: int | None = None
    """Without a dev set: calibrate LID by speaker-disjoint k-fold cross-calibration on eval
    with this k (ignored with a dev set)."""
    lid_variant: str = DEFAULT_LID_VARIANT
    """LID calibration (:data:`~voxmetrics.metrics.lid.LID_VARIANTS`; the old alias
    "metrics" is read as "maximum-likelihood")."""
    bootstrap: int = 0
    """Replicates of the speaker-level bootstrap (0 = none)."""
    seed: int = 0
    """Seed of the cross-calibration folds, the chance levels' draws and the bootstrap."""
    score_kind: ScoreKind = "similarity"
    """What the scores are: similarity, llr (adds the actual DCFs) or distance (negated)."""
    p_targets: tuple[float, ...] = tuple(DEFAULT_P_TARGETS)
    """Target priors of the normalised minDCF / actDCF."""
    c_miss: float = 1.0
    """Cost of a miss."""
    c_fa: float = 1.0
    """Cost of a false alarm."""
    ties: Ties = "reference"
    """Tie rule of the pooled metrics and the SRD ranks ("reference" or "attacker")."""
    linkability_rule: LinkabilityRule = "code"
    """When a trial is linked: "code" (the authors' code) or "strict" (the paper's eq. 3)."""
    by: str | None = None
    """A per-trial attribute whose values are also evaluated on their own (``by`` block)."""

    def __post_init__(self) -> None:
        check_ties(self.ties)
        check_linkability_rule(self.linkability_rule)
        if self.score_kind not in SCORE_KINDS:
            raise VoxMetricsInputError(
                f"score_kind '{self.score_kind}' is unknown; use one of {', '.join(SCORE_KINDS)}."
            )
        object.__setattr__(self, "lid_variant", resolve_lid_variant(self.lid_variant))
        object.__setattr__(self, "p_targets", tuple(float(p) for p in self.p_targets))
        if int(self.bootstrap) < 0:
            raise VoxMetricsInputError(
                f"bootstrap must be 0 (no intervals) or a number of replicates, got "
                f"{self.bootstrap}."
            )

    @classmethod
    def of(
        cls, options: EvaluationOptions | Mapping[str, Any] | None = None, **overrides: Any
    ) -> EvaluationOptions:
        """``options`` (an object, a mapping of its fields, or the defaults) with ``overrides``.

        Examples
        --------
        >>> o = EvaluationOptions.of({"seed": 3}, bootstrap=10)
        >>> o.seed, o.bootstrap
        (3, 10)
        """
        if options is None:
            return cls(**overrides)
        if isinstance(options, EvaluationOptions):
            return replace(options, **overrides) if overrides else options
        return cls(**{**options, **overrides})

    def for_parts(self, parts: Collection[str]) -> EvaluationOptions:
        """These options with those that no number of ``parts`` depends on at their defaults.

        Two requests for the same parts whose options differ only there give the same
        numbers, so they may share a result (the dashboard's store keys on this).

        Examples
        --------
        >>> o = EvaluationOptions(cross_calibrate=5, linkability_rule="strict")
        >>> o.for_parts({"linkability"}) == EvaluationOptions(linkability_rule="strict")
        True
        """
        used = set(_EVERY_PART)
        for name in check_parts(parts):
            used.update(PARTS[name].options)
        defaults = EvaluationOptions()
        return replace(
            self, **{f.name: getattr(defaults, f.name) for f in fields(self) if f.name not in used}
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the fields."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["p_targets"] = list(self.p_targets)
        return out


def subset_parts(parts: Collection[str]) -> Sequence[str]:
    """``parts`` in the order of :data:`PARTS` (for messages and the JSON)."""
    return [p for p in PARTS if p in parts]
