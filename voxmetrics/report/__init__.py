"""Reports: from a condition's scores to the numbers, tables and files a user takes away.

- :mod:`~voxmetrics.report.condition`: evaluate one condition (or each condition of a study)
  into a :class:`ConditionReport`, its JSON object, comparisons between conditions.
- :mod:`~voxmetrics.report.study`: everything a study's report holds, computed once
  (:func:`build_study_report`).
- :mod:`~voxmetrics.report.card`: the report card and its thresholds.
- :mod:`~voxmetrics.report.tables`: the report's tables as LaTeX and Markdown.
- :mod:`~voxmetrics.report.export`: writing a study's report to HTML, JSON, CSV and PDF files.

The names of :mod:`~voxmetrics.report.condition` are importable from here.
"""

from voxmetrics.report.condition import *  # noqa: F403
from voxmetrics.report.condition import __all__ as _condition_all

__all__ = [*_condition_all]
