"""Reports: from the condition results to the tables, pages and files a user takes away.

- :mod:`~voxmetrics.report.frames`: the condition reports as tables (overview, intervals,
  comparisons, verification).
- :mod:`~voxmetrics.report.study`: everything a study's report holds, computed once
  (:func:`build_study_report`).
- :mod:`~voxmetrics.report.tables`: the report's tables as LaTeX and Markdown.
- :mod:`~voxmetrics.report.html`: the study report's HTML page and the overview page of
  ``evaluate --html``.
- :mod:`~voxmetrics.report.export`: writing a study's report to HTML, JSON, CSV and PDF files.

The engine's names (:mod:`voxmetrics.evaluation`: :func:`evaluate`, :class:`ConditionReport`,
the comparisons), the tables of :mod:`~voxmetrics.report.frames` and :func:`report_html` are
importable from here.
"""

from typing import Any

from voxmetrics.evaluation import *  # noqa: F403
from voxmetrics.evaluation import __all__ as _evaluation_all
from voxmetrics.report.frames import *  # noqa: F403
from voxmetrics.report.frames import __all__ as _frames_all

__all__ = [*_evaluation_all, *_frames_all, "report_html"]  # noqa: F405


def __getattr__(name: str) -> Any:
    """:func:`~voxmetrics.report.html.report_html`, imported on first use.

    Not with the package: its module draws Plotly figures.
    """
    if name == "report_html":
        from voxmetrics.report.html import report_html

        return report_html
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
