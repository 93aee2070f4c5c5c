"""A condition's identity numbers alone: EER, linkability and LID, without the rest of a report.

The dashboard's Threat model page and the Soft biometrics page show, of each condition's
:class:`~voxmetrics.evaluation.result.ConditionReport`, only its 1-to-1 baseline (EER, Cllr,
linkability), its LID (LIDmax, the most exposed trials) and the target ranks.
:func:`evaluate_lid_report` computes those by the same steps as
:func:`~voxmetrics.evaluation.engine.evaluate` (its
:func:`~voxmetrics.evaluation.engine.condition_products` and
:func:`~voxmetrics.evaluation.steps.baseline_of`), so each equals the full report's, bit for
bit; what is left out (the SRD statistics and their model fit, ZEBRA, singling out, the
verification numbers, the bootstrap) is about a third of a condition's report on a large study.
A report already evaluated in full gives the same :class:`LIDReport` with :meth:`LIDReport.of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._types import DEFAULT_LID_VARIANT
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, check_disjoint_speakers
from voxmetrics.evaluation.engine import condition_products
from voxmetrics.evaluation.linkage import stepper
from voxmetrics.evaluation.result import ConditionReport, Progress
from voxmetrics.evaluation.steps import baseline_of, check_options
from voxmetrics.metrics.baseline import BaselineResult
from voxmetrics.metrics.chance import ChanceLevels
from voxmetrics.metrics.legal import LinkabilityRule, check_linkability_rule
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import Ties

__all__ = [
    "LID_REPORT_OPTIONS",
    "LIDReport",
    "evaluate_lid_condition",
    "evaluate_lid_report",
]

LID_REPORT_OPTIONS = ("cross_calibrate", "lid_variant", "seed", "ties", "linkability_rule")
"""The options of :func:`~voxmetrics.evaluation.engine.evaluate` that the numbers of a
:class:`LIDReport` depend on (the bootstrap changes none of them)."""


@dataclass(frozen=True)
class LIDReport:
    """The baseline, LID and target ranks of one condition, each equal to its full report's."""

    name: str
    """Condition label."""
    attacker: str
    """Attacker knowledge level."""
    baseline: BaselineResult
    """EER, ROCCH-EER, Cllr, min Cllr of the listed pairs; linkability of the complete trials."""
    lid: LIDResult | None
    """LID of the complete trials (None without a calibration or without a complete trial)."""
    chance: ChanceLevels | None = field(default=None, repr=False)
    """Chance levels of the 1-to-N metrics (None without a complete trial)."""
    ranks: NDArray[np.int64] | None = field(default=None, repr=False)
    """Target rank of each complete trial under ``ties`` (the SRD ranks; None without one)."""
    ties: str = "reference"
    """Tie rule of the pooled metrics and of ``ranks``."""
    linkability_rule: str = "code"
    """When a trial is linked."""

    @classmethod
    def of(cls, report: ConditionReport) -> LIDReport:
        """The identity numbers of a full report (nothing is computed)."""
        return cls(
            name=report.name,
            attacker=report.attacker,
            baseline=report.baseline,
            lid=report.lid,
            chance=report.chance,
            ranks=None if report.srd is None else report.srd.ranks,
            ties=report.ties,
            linkability_rule=report.linkability_rule,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the numbers under the full report's JSON keys."""
        return {
            **self.baseline.to_dict(),
            "lid": None if self.lid is None else self.lid.to_dict(),
            "ties": self.ties,
            "linkability_rule": self.linkability_rule,
        }


@single_blas_thread()
def evaluate_lid_report(
    eval: ScoreMatrix,
    *,
    dev: ScoreMatrix | None = None,
    name: str = "condition",
    attacker: str = "semi-informed",
    cross_calibrate: int | None = None,
    lid_variant: str = DEFAULT_LID_VARIANT,
    seed: int = 0,
    ties: Ties = "reference",
    linkability_rule: LinkabilityRule = "code",
) -> LIDReport:
    """The identity numbers of one condition, as :func:`~voxmetrics.evaluation.engine.evaluate`.

    The same options mean the same as there and give the same numbers: the baseline of the
    listed pairs and the linkability of the complete trials, LID calibrated on ``dev`` (else
    cross-calibrated with ``cross_calibrate`` folds, else none) and its chance levels, and the
    target ranks under ``ties``.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]],
    ...     trial_ids=["t0", "t1", "t2", "t3"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c", "d"])
    >>> r = evaluate_lid_report(sm)
    >>> r.baseline.eer, r.baseline.linkability, r.lid is None, r.ranks.tolist()
    (0.5, 1.0, True, [1, 1, 1, 1])
    """
    check_options(ties, "similarity")
    check_linkability_rule(linkability_rule)
    if dev is not None:
        check_disjoint_speakers(dev, eval)
    products, _ = condition_products(
        eval, dev, cross_calibrate=cross_calibrate, lid_variant=lid_variant, seed=seed,
        ties=ties, linkability_rule=linkability_rule,
    )  # fmt: skip
    return LIDReport(
        name=name,
        attacker=attacker,
        baseline=baseline_of(products, ties=ties),
        lid=products.lid,
        chance=products.chance,
        ranks=products.ranks,
        ties=ties,
        linkability_rule=linkability_rule,
    )


def evaluate_lid_condition(
    condition: Condition, *, progress: Progress | None = None, **options: Any
) -> LIDReport:
    """:func:`evaluate_lid_report` of a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are its keyword options (:data:`LID_REPORT_OPTIONS`); the numbers equal those
    of :func:`~voxmetrics.evaluation.engine.evaluate_condition` with the same options.
    ``progress`` is told when the work starts and ends (it is one step).
    """
    step = stepper(progress)
    step(0.0, "calibration, LID and ranks")
    report = evaluate_lid_report(
        condition.eval,
        dev=condition.dev,
        name=condition.name,
        attacker=condition.attacker,
        **options,
    )
    step(1.0, "done")
    return report
