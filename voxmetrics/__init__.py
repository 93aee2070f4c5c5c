"""VoxMetrics: how much does anonymised speech still give away about who is speaking.

The public surface: the data model and readers (:mod:`voxmetrics.data`), the metrics
(:mod:`voxmetrics.metrics`), conditions and studies, reports (:mod:`voxmetrics.report`) and the
demo generator (:mod:`voxmetrics.synth`). Definitions: ``shared/docs/metrics.md``.
"""

from voxmetrics import card, data, errors, metrics, report, synth, threat
from voxmetrics._version import __version__
from voxmetrics.data import *  # noqa: F403
from voxmetrics.errors import *  # noqa: F403
from voxmetrics.metrics import *  # noqa: F403
from voxmetrics.report import ConditionReport, evaluate, evaluate_condition, evaluate_study

__all__ = [
    *data.__all__,
    *errors.__all__,
    *metrics.__all__,
    "ConditionReport",
    "__version__",
    "evaluate",
    "evaluate_condition",
    "evaluate_study",
    "card",
    "report",
    "synth",
    "threat",
]
