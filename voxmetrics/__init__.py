"""VoxMetrics: how much does anonymised speech still give away about who is speaking.

The public surface: the data model and readers (:mod:`voxmetrics.data`), the metrics
(:mod:`voxmetrics.metrics`), conditions, studies and ``.vxm`` study files, the engine
(:mod:`voxmetrics.evaluation`: one condition's result, evaluate, compare, the report card, the
threat call-outs), reports (:mod:`voxmetrics.report`: the whole study in
:mod:`~voxmetrics.report.study`, the files in :mod:`~voxmetrics.report.export` and
:mod:`~voxmetrics.report.tables`) and the demo generator (:mod:`voxmetrics.synth`).
Definitions: the documentation, Methods.
"""

from voxmetrics import data, errors, evaluation, metrics, report, synth
from voxmetrics._version import __version__
from voxmetrics.data import *  # noqa: F403
from voxmetrics.errors import *  # noqa: F403
from voxmetrics.evaluation import (
    ConditionReport,
    evaluate,
    evaluate_condition,
    evaluate_study,
    threat,
)
from voxmetrics.metrics import *  # noqa: F403
from voxmetrics.report.study import StudyReport, build_study_report

__all__ = [
    *data.__all__,
    *errors.__all__,
    *metrics.__all__,
    "ConditionReport",
    "StudyReport",
    "__version__",
    "build_study_report",
    "evaluate",
    "evaluate_condition",
    "evaluate_study",
    "evaluation",
    "report",
    "synth",
    "threat",
]
