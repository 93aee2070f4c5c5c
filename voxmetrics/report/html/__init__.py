"""The report's HTML pages: the study report, and the overview page of ``evaluate --html``.

:func:`study_report_html` draws a :class:`~voxmetrics.report.study.StudyReport` as one page:
every table, the interactive figures of the builders of :mod:`voxmetrics.plots`, plotly.js
embedded once in the head and the JSON of every number in a ``<script
type="application/json">`` island. The page loads nothing from the network (no CDN, no MathJax,
no web fonts); its only external addresses are plain links to the papers. Its print style sheet
starts each section on a new page and keeps figures and tables whole, since the PDF is printed
from it (:func:`voxmetrics.report.export.html_to_pdf`).

It takes results and computes nothing: the ECE profiles of the ZEBRA section come with the
report (:attr:`StudyReport.ece_curves`). :func:`report_html` is the page ``evaluate --html``
writes: the same style, with the sections that condition reports alone can fill.

One module per role: :mod:`~voxmetrics.report.html.blocks` (section ids, papers, escaping,
tables, figures, the package data), :mod:`~voxmetrics.report.html.verdict` (summary, report
card, notes, threat call-outs), :mod:`~voxmetrics.report.html.card` (under the card: the
rule's notes, the levels that flip, each cell's stability), :mod:`~voxmetrics.report.html.exposure`
(who stays exposed), :mod:`~voxmetrics.report.html.utility` (privacy vs utility: one front per
attacker, the ranking and how firm it is), :mod:`~voxmetrics.report.html.sections` (the other
sections of the numbers, the methods and the data), :mod:`~voxmetrics.report.html.provenance`
(versions, input fingerprints, settings, how to verify) and
:mod:`~voxmetrics.report.html.page` (the two pages). The
style sheet, the download script and the method definitions are files of
``voxmetrics/report/assets``. The names below are the package's public surface.
"""

from __future__ import annotations

from voxmetrics.report.html.blocks import PAPERS, REPORT_SECTIONS, json_safe
from voxmetrics.report.html.page import report_html, study_report_html
from voxmetrics.report.html.sections import linkability_rule_note

__all__ = [
    "PAPERS",
    "REPORT_SECTIONS",
    "json_safe",
    "linkability_rule_note",
    "report_html",
    "study_report_html",
]
