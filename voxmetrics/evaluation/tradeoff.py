"""Privacy against utility of evaluated conditions: their numbers, front, ranking and call-out.

Reads each :class:`~voxmetrics.evaluation.result.ConditionReport` (and the SBLS of its
condition, where known) into the :class:`~voxmetrics.analysis.tradeoff.ConditionNumbers` of
:mod:`voxmetrics.analysis.tradeoff`, where the Pareto front, VoicePrivacy's ranking by EER bands
and the auditors' call-out are defined.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from voxmetrics.analysis.tradeoff import (
    REFERENCE_ATTACKER,
    ConditionNumbers,
    Tradeoff,
    UtilityCallout,
    VoicePrivacyRanking,
    privacy_utility_tradeoff,
    utility_callouts,
    voiceprivacy_ranking,
)
from voxmetrics.data.utility import UTILITY_METRICS
from voxmetrics.evaluation.result import ConditionReport

__all__ = [
    "NO_UTILITY_HELP",
    "condition_numbers",
    "has_utility",
    "reference_condition",
    "report_callouts",
    "report_ranking",
    "report_tradeoff",
]

NO_UTILITY_HELP = (
    "No condition has utility numbers (WER, UAR, ρF0), so privacy cannot be weighed against "
    "what the anonymisation costs. Add them when building the study: a VoicePrivacy 2024 "
    "evaluation tree brings its results files' WER and UAR (voxmetrics study build OUT.vxm "
    "ROOT, or the Data page's VoicePrivacy upload), or give transcripts, emotion predictions "
    "or audio for each condition. The demo study has them (Load demo study)."
)
"""What the Privacy vs utility page and report section say when no condition has a utility
number: how to add them."""

_INTERVAL_KEYS = ("eer", "eer_rocch", "alid", "linkability", "d_ece")
"""Privacy numbers whose bootstrap interval is drawn (LIDmax, a sample maximum, has none)."""


def _interval(iv: Any) -> tuple[float, float] | None:
    if iv is None or iv.low is None or iv.high is None:
        return None
    return (float(iv.low), float(iv.high))


def condition_numbers(
    report: ConditionReport,
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
        "d_ece": report.zebra.d_ece,
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
    return ConditionNumbers(
        condition=report.name,
        attacker=report.attacker,
        values=values,
        intervals=intervals,
        chance_linkability=report.chance_linkability if b.linkability is not None else None,
    )


def _numbers(
    reports: Iterable[ConditionReport],
    sbls: Mapping[str, float | None] | None,
    sbls_intervals: Mapping[str, Any] | None,
) -> list[ConditionNumbers]:
    sbls, sbls_intervals = sbls or {}, sbls_intervals or {}
    return [
        condition_numbers(r, sbls=sbls.get(r.name), sbls_interval=sbls_intervals.get(r.name))
        for r in reports
    ]


def has_utility(reports: Iterable[ConditionReport]) -> bool:
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
    reports: Iterable[ConditionReport], default: str | None = None
) -> str | None:
    """The original speech's condition: the first under attacker ``original``, else ``default``.

    Examples
    --------
    >>> reference_condition([], "plain")
    'plain'
    """
    return next((r.name for r in reports if r.attacker == REFERENCE_ATTACKER), default)


def report_tradeoff(
    reports: Iterable[ConditionReport],
    *,
    privacy: str = "eer",
    utility: str = "wer",
    reference: str | None = None,
    sbls: Mapping[str, float | None] | None = None,
    sbls_intervals: Mapping[str, Any] | None = None,
) -> Tradeoff:
    """:func:`~voxmetrics.analysis.tradeoff.privacy_utility_tradeoff` of condition reports.

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


def report_ranking(
    reports: Iterable[ConditionReport], *, reference: str | None = None, **options: Any
) -> VoicePrivacyRanking:
    """:func:`~voxmetrics.analysis.tradeoff.voiceprivacy_ranking` of condition reports.

    ``options`` (``bands``, ``attacker``) go to it; ``reference`` is left out of it.
    """
    reports = list(reports)
    return voiceprivacy_ranking(
        _numbers(reports, None, None), reference=reference_condition(reports, reference), **options
    )


def report_callouts(
    reports: Iterable[ConditionReport], *, reference: str | None = None, **options: Any
) -> list[UtilityCallout]:
    """:func:`~voxmetrics.analysis.tradeoff.utility_callouts` of condition reports."""
    reports = list(reports)
    return utility_callouts(
        _numbers(reports, None, None), reference=reference_condition(reports, reference), **options
    )
