"""Metrics: pure functions of arrays returning numbers or frozen result objects.

Each function follows ``shared/docs/metrics.md``; the section is named in its docstring.
"""

from voxmetrics.metrics.baseline import BaselineResult, baseline_metrics, mated_pools
from voxmetrics.metrics.cllr import cllr, min_cllr
from voxmetrics.metrics.eer import EERResult, eer, eer_result, eer_rocch
from voxmetrics.metrics.legal import linkability
from voxmetrics.metrics.pav import pav_llrs, rocch

__all__ = [
    "BaselineResult",
    "EERResult",
    "baseline_metrics",
    "cllr",
    "eer",
    "eer_result",
    "eer_rocch",
    "linkability",
    "mated_pools",
    "min_cllr",
    "pav_llrs",
    "rocch",
]
