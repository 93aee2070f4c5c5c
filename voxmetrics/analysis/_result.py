"""What the analyses read of a condition's evaluated result, as a type.

The engine (:mod:`voxmetrics.evaluation`) sits above the analyses and evaluates a condition into
a :class:`~voxmetrics.evaluation.result.ConditionReport`; the tables here that take one only
read the parts below, all of them metric results. :class:`ConditionResult` names those parts,
so the analyses need nothing from above them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from voxmetrics.data.utility import Utility
from voxmetrics.metrics.baseline import BaselineResult
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels
from voxmetrics.metrics.legal import SinglingOutResult
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.srd import BetaBinomialFit, SRDResult
from voxmetrics.metrics.uncertainty import ConditionReplicates
from voxmetrics.metrics.zebra import ZebraResult

__all__ = ["ConditionResult"]


class ConditionResult(Protocol):
    """A condition's evaluated result as the analyses read it (a ``ConditionReport`` is one).

    A report computed for some parts only (``evaluate(parts=...)``) has the fields of the
    others None.
    """

    @property
    def name(self) -> str:
        """Condition label."""

    @property
    def attacker(self) -> str:
        """Attacker knowledge level."""

    @property
    def baseline(self) -> BaselineResult:
        """EER, ROCCH-EER, Cllr, min Cllr, linkability."""

    @property
    def lid(self) -> LIDResult | None:
        """LID (None without a calibration)."""

    @property
    def srd(self) -> SRDResult | None:
        """The target ranks and their statistics (None without complete trials)."""

    @property
    def srd_model(self) -> BetaBinomialFit | None:
        """The beta-binomial model of the rank distribution fitted with the CLL loss."""

    @property
    def singling_out(self) -> SinglingOutResult | None:
        """Singling out (None without utterance embeddings)."""

    @property
    def singling_out_interval(self) -> BootstrapInterval | None:
        """Speaker-level interval of singling out, when bootstrapped."""

    @property
    def intervals(self) -> Mapping[str, BootstrapInterval]:
        """Interval of every headline number by key (empty without a bootstrap)."""

    @property
    def zebra(self) -> ZebraResult | None:
        """ZEBRA (None without its part)."""

    @property
    def utility(self) -> Utility | None:
        """The condition's utility numbers (None when unknown)."""

    @property
    def replicates(self) -> ConditionReplicates | None:
        """Every headline number in each speaker-bootstrap replicate (None without one)."""

    @property
    def chance(self) -> ChanceLevels | None:
        """Chance levels of linkability, the SRD statistics and LID on these scores."""

    @property
    def trials_used(self) -> Any:
        """Which trials each metric family used (None when not recorded).

        Its ``reason`` says why the 1-to-N numbers are null.
        """

    @property
    def chance_linkability(self) -> float | None:
        """1/N of the identities the 1-to-N metrics ranked against (None when they are null)."""
