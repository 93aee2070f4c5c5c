"""The report card of a study's report: :mod:`voxmetrics.evaluation.card`'s names, here too.

The card grades condition results, so it lives with the engine
(:mod:`voxmetrics.evaluation.card`: the thresholds, the cells, :func:`report_card`); the report,
its files and the dashboard read it from this module.
"""

from voxmetrics.evaluation.card import (
    LEVELS,
    REPORT_CARD_THRESHOLDS,
    UTILITY_UNKNOWN,
    ZEBRA_TAGS,
    CardCell,
    CardThreshold,
    ReportCard,
    report_card,
)

__all__ = [
    "LEVELS",
    "REPORT_CARD_THRESHOLDS",
    "UTILITY_UNKNOWN",
    "ZEBRA_TAGS",
    "CardCell",
    "CardThreshold",
    "ReportCard",
    "report_card",
]
