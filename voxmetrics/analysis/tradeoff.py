"""Privacy against utility: the Pareto front of each attacker's conditions.

Every condition (one anonymisation system under one attacker) is a point: one privacy number
(EER, ROCCH-EER, LIDmax, ALID, linkability, D_ECE or SBLS) against one utility number (WER, UAR
or ρF0). The numbers of each condition come in as :class:`ConditionNumbers`
(:func:`condition_numbers` reads them off the condition reports; :func:`report_tradeoff` takes
the reports); nothing here computes a metric.

**Directions.** A higher EER, ROCCH-EER or SBLS is more private; a lower LIDmax, ALID,
linkability or D_ECE is more private (:data:`PRIVACY_METRICS`). A lower WER and a higher UAR or
ρF0 is more useful (:data:`UTILITY_HIGHER_IS_BETTER`).

**Pareto front** (:func:`pareto_front`). A point dominates another when it is at least as
private and at least as useful, and strictly better on one of the two. The front is the set of
points no other point dominates; points with equal numbers do not dominate each other, so both
stay on it. Each attacker's conditions have their own front: a system is never dominated by
itself under a weaker attacker, and the attacker VoicePrivacy ranks on (the semi-informed one)
keeps a front of its own. The original speech (every condition under attacker ``original``,
and a reference condition chosen by name) is drawn for comparison in every attacker's plane and
never on a front: it is not an anonymisation system.

**VoicePrivacy ranking** and the **auditors' call-out**: :mod:`voxmetrics.analysis.ranking`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from voxmetrics.analysis._numbers import (
    REFERENCE_ATTACKER,
    ConditionNumbers,
    condition_numbers,
    has_utility,
    reference_condition,
)
from voxmetrics.analysis._result import ConditionResult
from voxmetrics.data.utility import UTILITY_METRICS
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "NO_UTILITY_HELP",
    "PRIVACY_METRICS",
    "REFERENCE_ATTACKER",
    "UTILITY_HIGHER_IS_BETTER",
    "UTILITY_LABELS",
    "ConditionNumbers",
    "PrivacyMetric",
    "Tradeoff",
    "TradeoffPoint",
    "condition_numbers",
    "has_utility",
    "pareto_front",
    "privacy_utility_tradeoff",
    "reference_condition",
    "report_tradeoff",
]


@dataclass(frozen=True)
class PrivacyMetric:
    """A privacy number the trade-off can use, with its direction."""

    key: str
    """Key of the number (as in the JSON)."""
    label: str
    """Display label."""
    higher_is_better: bool
    """Whether a higher value means more privacy."""


PRIVACY_METRICS: dict[str, PrivacyMetric] = {
    m.key: m
    for m in (
        PrivacyMetric("eer", "EER", True),
        PrivacyMetric("eer_rocch", "EER (ROCCH)", True),
        PrivacyMetric("lid_max", "LIDmax (bits)", False),
        PrivacyMetric("alid", "ALID (bits)", False),
        PrivacyMetric("linkability", "Linkability", False),
        PrivacyMetric("d_ece", "D_ECE (bits)", False),
        PrivacyMetric("sbls", "SBLS", True),
    )
}
"""The privacy numbers of the trade-off by key, with their directions (module docstring)."""

UTILITY_LABELS: dict[str, str] = {"wer": "WER", "uar": "UAR", "rho_f0": "ρF0"}
"""Display label of each utility number."""
UTILITY_HIGHER_IS_BETTER: dict[str, bool] = {"wer": False, "uar": True, "rho_f0": True}
"""Whether a higher value of each utility number is more useful."""


def _check_metrics(privacy: str, utility: str) -> None:
    if privacy not in PRIVACY_METRICS:
        raise VoxMetricsInputError(
            f"privacy metric '{privacy}' is unknown; use one of {', '.join(PRIVACY_METRICS)}."
        )
    if utility not in UTILITY_METRICS:
        raise VoxMetricsInputError(
            f"utility metric '{utility}' is unknown; use one of {', '.join(UTILITY_METRICS)}."
        )


def pareto_front(
    privacy: ArrayLike,
    utility: ArrayLike,
    *,
    privacy_higher_is_better: bool = True,
    utility_higher_is_better: bool = True,
) -> NDArray[np.bool_]:
    """Which points no other point dominates (at least as good on both, better on one).

    Parameters
    ----------
    privacy, utility : array_like, shape (n,)
        The two numbers of each point (finite).
    privacy_higher_is_better, utility_higher_is_better : bool
        The directions of the two numbers.

    Returns
    -------
    ndarray of bool, shape (n,)
        True for the points on the front; equal points are both on it or both off it.

    Examples
    --------
    >>> pareto_front([0.5, 0.3, 0.2], [0.4, 0.1, 0.2], utility_higher_is_better=False)
    array([ True,  True, False])
    """
    p = np.asarray(privacy, dtype=np.float64).reshape(-1)
    u = np.asarray(utility, dtype=np.float64).reshape(-1)
    if p.shape != u.shape:
        raise VoxMetricsInputError(
            f"privacy and utility must have one value per point; got {p.size} and {u.size}."
        )
    if not (np.isfinite(p).all() and np.isfinite(u).all()):
        raise VoxMetricsInputError("the Pareto front needs finite numbers; drop the unknown ones.")
    if not privacy_higher_is_better:
        p = -p
    if not utility_higher_is_better:
        u = -u
    # dominated[i, j]: point j is at least as good as i on both and strictly better on one
    ge = (p[None, :] >= p[:, None]) & (u[None, :] >= u[:, None])
    gt = (p[None, :] > p[:, None]) | (u[None, :] > u[:, None])
    dominated: NDArray[np.bool_] = np.asarray((ge & gt).any(axis=1))
    return ~dominated


@dataclass(frozen=True)
class TradeoffPoint:
    """One condition in the privacy-utility plane."""

    condition: str
    """Condition name."""
    attacker: str
    """Attacker knowledge level."""
    privacy: float | None
    """The privacy number (None when unknown)."""
    utility: float | None
    """The utility number (None when unknown)."""
    privacy_interval: tuple[float, float] | None = None
    """Its 95 % interval, where known."""
    utility_interval: tuple[float, float] | None = None
    """Its 95 % interval, where known."""
    reference: bool = False
    """Whether this is the original speech (drawn as the reference, never on the front)."""
    on_front: bool = False
    """Whether no other anonymised condition under the same attacker dominates it (its
    attacker's front)."""

    @property
    def plotted(self) -> bool:
        """Whether both numbers are known."""
        return self.privacy is not None and self.utility is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {
            "condition": self.condition,
            "attacker": self.attacker,
            "privacy": self.privacy,
            "utility": self.utility,
            "privacy_interval": None if self.privacy_interval is None else [*self.privacy_interval],
            "utility_interval": None if self.utility_interval is None else [*self.utility_interval],
            "reference": self.reference,
            "on_front": self.on_front,
        }


@dataclass(frozen=True)
class Tradeoff:
    """One privacy number against one utility number for every condition, and the front."""

    privacy_metric: str
    """Key of the privacy number (:data:`PRIVACY_METRICS`)."""
    utility_metric: str
    """Key of the utility number (:data:`~voxmetrics.data.utility.UTILITY_METRICS`)."""
    points: tuple[TradeoffPoint, ...]
    """Every condition, in input order (with unknown numbers as None)."""

    @property
    def privacy_label(self) -> str:
        """Display label of the privacy number."""
        return PRIVACY_METRICS[self.privacy_metric].label

    @property
    def utility_label(self) -> str:
        """Display label of the utility number."""
        return UTILITY_LABELS[self.utility_metric]

    @property
    def privacy_higher_is_better(self) -> bool:
        """The privacy number's direction."""
        return PRIVACY_METRICS[self.privacy_metric].higher_is_better

    @property
    def utility_higher_is_better(self) -> bool:
        """The utility number's direction."""
        return UTILITY_HIGHER_IS_BETTER[self.utility_metric]

    @property
    def front(self) -> list[TradeoffPoint]:
        """The points on their attacker's front, from the most private to the most useful.

        With several attackers, each attacker's front in turn (:attr:`attackers` order).
        """
        return [p for a in self.attackers for p in self.front_of(a)]

    @property
    def attackers(self) -> list[str]:
        """The attackers of the anonymised conditions drawn, in input order."""
        return list(dict.fromkeys(p.attacker for p in self.points if p.plotted and not p.reference))

    def front_of(self, attacker: str) -> list[TradeoffPoint]:
        """The front of one attacker's conditions, from the most private to the most useful."""
        pts = [p for p in self.points if p.on_front and p.attacker == attacker]
        sign = -1.0 if self.privacy_higher_is_better else 1.0
        return sorted(pts, key=lambda p: (sign * (p.privacy or 0.0), p.condition))

    def of_attacker(self, attacker: str) -> Tradeoff:
        """The conditions of one attacker and the original speech: one attacker's plane."""
        return replace(
            self, points=tuple(p for p in self.points if p.reference or p.attacker == attacker)
        )

    @property
    def references(self) -> list[TradeoffPoint]:
        """The original speech's points.

        The reference and every condition under attacker ``original``.
        """
        return [p for p in self.points if p.reference]

    @property
    def reference(self) -> TradeoffPoint | None:
        """The first original speech's point (None when the study has none)."""
        return next((p for p in self.points if p.reference), None)

    @property
    def missing(self) -> list[TradeoffPoint]:
        """The points left out of the plane (a number unknown)."""
        return [p for p in self.points if not p.plotted]

    def frame(self) -> pd.DataFrame:
        """One row per condition: both numbers, their intervals, reference and front flags."""
        rows = []
        for p in self.points:
            piv, uiv = p.privacy_interval, p.utility_interval
            rows.append(
                {
                    "Condition": p.condition,
                    "Attacker": p.attacker,
                    self.privacy_label: p.privacy,
                    f"{self.privacy_label} 95% low": None if piv is None else piv[0],
                    f"{self.privacy_label} 95% high": None if piv is None else piv[1],
                    self.utility_label: p.utility,
                    f"{self.utility_label} 95% low": None if uiv is None else uiv[0],
                    f"{self.utility_label} 95% high": None if uiv is None else uiv[1],
                    "Original speech": p.reference,
                    "On the Pareto front": p.on_front,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the two metrics, their directions and every point."""
        return {
            "privacy": self.privacy_metric,
            "utility": self.utility_metric,
            "privacy_higher_is_better": self.privacy_higher_is_better,
            "utility_higher_is_better": self.utility_higher_is_better,
            "points": [p.to_dict() for p in self.points],
            "fronts": {a: [p.condition for p in self.front_of(a)] for a in self.attackers},
        }


def privacy_utility_tradeoff(
    numbers: Iterable[ConditionNumbers],
    *,
    privacy: str = "eer",
    utility: str = "wer",
    reference: str | None = None,
) -> Tradeoff:
    """Each condition's ``privacy`` number against its ``utility`` number, and the front.

    Parameters
    ----------
    numbers : iterable of ConditionNumbers
        The conditions.
    privacy : str
        A key of :data:`PRIVACY_METRICS`.
    utility : str
        A key of :data:`~voxmetrics.data.utility.UTILITY_METRICS`.
    reference : str, optional
        The condition of the original speech; by default the first one whose attacker is
        ``original``. It, and every condition under attacker ``original``, is marked as the
        original speech and left off the front.

    Returns
    -------
    Tradeoff

    Examples
    --------
    >>> cs = [ConditionNumbers("orig", "original", {"eer": 0.02, "wer": 0.018}),
    ...       ConditionNumbers("a", "semi-informed", {"eer": 0.30, "wer": 0.05}),
    ...       ConditionNumbers("b", "semi-informed", {"eer": 0.20, "wer": 0.08}),
    ...       ConditionNumbers("c", "semi-informed", {"eer": 0.40, "wer": 0.30})]
    >>> [p.condition for p in privacy_utility_tradeoff(cs).front]
    ['c', 'a']
    """
    _check_metrics(privacy, utility)
    numbers = list(numbers)
    if reference is None:
        reference = next((c.condition for c in numbers if c.attacker == REFERENCE_ATTACKER), None)
    points = [
        TradeoffPoint(
            condition=c.condition,
            attacker=c.attacker,
            privacy=c.value(privacy),
            utility=c.value(utility),
            privacy_interval=c.interval(privacy),
            utility_interval=c.interval(utility),
            reference=c.condition == reference or c.attacker == REFERENCE_ATTACKER,
        )
        for c in numbers
    ]
    candidates = [k for k, p in enumerate(points) if p.plotted and not p.reference]
    for attacker in dict.fromkeys(points[k].attacker for k in candidates):
        group = [k for k in candidates if points[k].attacker == attacker]
        # every one (candidates are plotted: both numbers known)
        xs = [x for k in group if (x := points[k].privacy) is not None]
        ys = [y for k in group if (y := points[k].utility) is not None]
        mask = pareto_front(
            xs,
            ys,
            privacy_higher_is_better=PRIVACY_METRICS[privacy].higher_is_better,
            utility_higher_is_better=UTILITY_HIGHER_IS_BETTER[utility],
        )
        for k, on in zip(group, mask, strict=True):
            if on:
                points[k] = replace(points[k], on_front=True)
    return Tradeoff(privacy_metric=privacy, utility_metric=utility, points=tuple(points))


# ---------------------------------------------------------------- condition reports

NO_UTILITY_HELP = (
    "No condition has utility numbers (WER, UAR, ρF0), so privacy cannot be weighed against "
    "what the anonymisation costs. Add them when building the study: a VoicePrivacy (2024, 2026) "
    "evaluation tree brings its results files' WER and UAR (voxmetrics study build OUT.vxm "
    "ROOT, or the Data page's VoicePrivacy upload), or give transcripts, emotion predictions "
    "or audio for each condition (study build --wer / --uar / --rho-f0, or the Data page's "
    "Utility tab). The demo study has them (Load demo study)."
)
"""What the Privacy vs utility page and report section say when no condition has a utility
number: how to add them."""


def _numbers(
    reports: Iterable[ConditionResult],
    sbls: Mapping[str, float | None] | None,
    sbls_intervals: Mapping[str, Any] | None,
) -> list[ConditionNumbers]:
    sbls, sbls_intervals = sbls or {}, sbls_intervals or {}
    return [
        condition_numbers(r, sbls=sbls.get(r.name), sbls_interval=sbls_intervals.get(r.name))
        for r in reports
    ]


def report_tradeoff(
    reports: Iterable[ConditionResult],
    *,
    privacy: str = "eer",
    utility: str = "wer",
    reference: str | None = None,
    sbls: Mapping[str, float | None] | None = None,
    sbls_intervals: Mapping[str, Any] | None = None,
) -> Tradeoff:
    """:func:`privacy_utility_tradeoff` of condition reports.

    ``reference`` names the original speech's condition (default: the first under attacker
    ``original``); ``sbls`` maps condition names to their SBLS, ``sbls_intervals`` to its
    interval.
    """
    reports = list(reports)
    return privacy_utility_tradeoff(
        _numbers(reports, sbls, sbls_intervals),
        privacy=privacy,
        utility=utility,
        reference=reference_condition(reports, reference),
    )
