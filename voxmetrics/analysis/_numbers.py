"""The numbers of one condition as the privacy-utility views read them.

What this is: :class:`ConditionNumbers` (a condition's privacy and utility numbers, their
intervals and the report card's notes on them) and how they are read off a condition's report
(:func:`condition_numbers`), with the original speech's condition (:func:`reference_condition`).
What this is not: the front, the ranking or the call-outs, which read them
(:mod:`voxmetrics.analysis.tradeoff` re-exports every name here).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from voxmetrics.analysis._result import ConditionResult
from voxmetrics.analysis.verdicts import lid_max_verdict, linkability_verdict
from voxmetrics.data.utility import UTILITY_METRICS

__all__ = [
    "REFERENCE_ATTACKER",
    "ConditionNumbers",
    "condition_numbers",
    "has_utility",
    "reference_condition",
]

REFERENCE_ATTACKER = "original"
"""The attacker label of the original, unprocessed speech: the reference point."""


@dataclass(frozen=True)
class ConditionNumbers:
    """The privacy and utility numbers of one condition, as the trade-off reads them.

    Examples
    --------
    >>> c = ConditionNumbers("b1", "semi-informed", {"eer": 0.3, "wer": 0.05})
    >>> c.value("eer"), c.value("uar")
    (0.3, None)
    """

    condition: str
    """Condition name."""
    attacker: str
    """Attacker knowledge level (``original`` for the original speech)."""
    values: Mapping[str, float | None]
    """Privacy and utility numbers by key (keys of :data:`PRIVACY_METRICS` and
    :data:`~voxmetrics.data.utility.UTILITY_METRICS`); a missing key is unknown."""
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """95 % intervals (low, high) by key, where known."""
    chance_linkability: float | None = None
    """Chance level of linkability, 1/N (None when linkability is null)."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Why the report card's verdict on a number is not its threshold's, by key ("lid_max",
    "linkability": "≈ chance", "uninformative at N = n: ..."); such a number is never cited
    as leaking (one verdict per number, :mod:`voxmetrics.analysis.verdicts`)."""

    def value(self, key: str) -> float | None:
        """The number called ``key``, None when unknown or not finite."""
        v = self.values.get(key)
        if v is None:
            return None
        v = float(v)
        return v if math.isfinite(v) else None

    def interval(self, key: str) -> tuple[float, float] | None:
        """The interval of ``key``, None when unknown or not finite."""
        iv = self.intervals.get(key)
        if iv is None or iv[0] is None or iv[1] is None:
            return None
        lo, hi = float(iv[0]), float(iv[1])
        return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


_INTERVAL_KEYS = ("eer", "eer_rocch", "alid", "linkability", "d_ece")
"""Privacy numbers whose bootstrap interval is drawn (LIDmax, a sample maximum, has none)."""


def _interval(iv: Any) -> tuple[float, float] | None:
    return None if iv is None else iv.bounds


def condition_numbers(
    report: ConditionResult,
    *,
    sbls: float | None = None,
    sbls_interval: Any = None,
) -> ConditionNumbers:
    """The privacy and utility numbers of one report, with their intervals.

    ``sbls`` is the condition's SBLS (it is not part of the report) and ``sbls_interval`` its
    bootstrap interval.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_condition
    >>> from voxmetrics.synth import demo_study
    >>> n = condition_numbers(evaluate_condition(demo_study(n_speakers=6).get("random")))
    >>> n.value("eer") > 0.3, n.value("wer") is not None
    (True, True)
    """
    b, lid, u = report.baseline, report.lid, report.utility
    values: dict[str, float | None] = {
        "eer": b.eer,
        "eer_rocch": b.eer_rocch,
        "lid_max": None if lid is None else lid.lid_max,
        "alid": None if lid is None else lid.alid,
        "linkability": b.linkability,
        "d_ece": None if report.zebra is None else report.zebra.d_ece,
        "sbls": sbls,
    }
    ivs = report.intervals
    intervals = {k: iv for k in _INTERVAL_KEYS if (iv := _interval(ivs.get(k))) is not None}
    if (iv := _interval(sbls_interval)) is not None:
        intervals["sbls"] = iv
    if u is not None:
        values.update({k: u.value(k) for k in UTILITY_METRICS})
        intervals.update(
            {k: (float(lo), float(hi)) for k, (lo, hi) in u.intervals.items() if k in values}
        )
    notes = {
        "lid_max": lid_max_verdict(report).note,
        "linkability": linkability_verdict(report).note,
    }
    return ConditionNumbers(
        condition=report.name,
        attacker=report.attacker,
        values=values,
        intervals=intervals,
        chance_linkability=report.chance_linkability if b.linkability is not None else None,
        notes={k: v for k, v in notes.items() if v},
    )


def has_utility(reports: Iterable[ConditionResult]) -> bool:
    """Whether any report carries a utility number.

    Examples
    --------
    >>> has_utility([])
    False
    """
    return any(
        r.utility is not None and any(r.utility.value(k) is not None for k in UTILITY_METRICS)
        for r in reports
    )


def reference_condition(
    reports: Iterable[ConditionResult], default: str | None = None
) -> str | None:
    """The original speech's condition: the first under attacker ``original``, else ``default``.

    Examples
    --------
    >>> reference_condition([], "plain")
    'plain'
    """
    return next((r.name for r in reports if r.attacker == REFERENCE_ATTACKER), default)
