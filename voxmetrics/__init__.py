"""VoxMetrics: how much does anonymised speech still give away about who is speaking.

The public surface: the data model and readers (:mod:`voxmetrics.data`), the metrics
(:mod:`voxmetrics.metrics`), conditions, studies and ``.vxm`` study files, the engine
(:mod:`voxmetrics.evaluation`: one condition's result, evaluate, compare, the report card, the
threat call-outs), reports (:mod:`voxmetrics.report`: the whole study in
:mod:`~voxmetrics.report.study`, the files in :mod:`~voxmetrics.report.export` and
:mod:`~voxmetrics.report.tables`) and the demo generator (:mod:`voxmetrics.synth`).
Definitions: the documentation, Methods.
"""

from typing import TYPE_CHECKING

from voxmetrics._lazy import lazy_names

if TYPE_CHECKING:  # for static tools; at run time each name is imported on first use
    from voxmetrics import data, errors, evaluation, metrics, report, synth  # noqa: F401
    from voxmetrics._version import __version__  # noqa: F401
    from voxmetrics.data import *  # noqa: F403
    from voxmetrics.errors import *  # noqa: F403
    from voxmetrics.evaluation import (  # noqa: F401
        ConditionReport,
        evaluate,
        evaluate_condition,
        evaluate_study,
        threat,
    )
    from voxmetrics.metrics import *  # noqa: F403
    from voxmetrics.report.study import StudyReport, build_study_report  # noqa: F401

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        ".": "data errors evaluation metrics report synth",
        "._version": "__version__",
        ".evaluation": "ConditionReport evaluate evaluate_condition evaluate_study threat",
        ".report.study": "StudyReport build_study_report",
    },
    star=("voxmetrics.data", "voxmetrics.errors", "voxmetrics.metrics"),
)
"""Every public name (``__all__`` included) is imported when first read, so that
``import voxmetrics`` and the command line load only what they use: the names of
:mod:`voxmetrics.data`, :mod:`voxmetrics.errors` and :mod:`voxmetrics.metrics`, the engine's
entry points and the study report."""
