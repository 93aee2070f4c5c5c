"""The pages: the study report (:func:`study_report_html`) and the page of ``evaluate --html``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import plotly.offline

from voxmetrics._version import __version__
from voxmetrics.data.study import StudySettings
from voxmetrics.evaluation.card import ReportCard, report_card
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.plots.style import condition_colors
from voxmetrics.report.html.blocks import REPORT_SECTIONS, Figures, asset, esc, json_name
from voxmetrics.report.html.exposure import exposure_section
from voxmetrics.report.html.provenance import provenance_section
from voxmetrics.report.html.sections import (
    compare_section,
    data_section,
    intervals_section,
    lid_section,
    linkage_section,
    methods_section,
    overview_section,
    sbls_section,
    srd_section,
    verification_section,
    zebra_section,
)
from voxmetrics.report.html.utility import utility_section
from voxmetrics.report.html.verdict import (
    card_section,
    input_warnings_section,
    notes_section,
    summary_section,
    threat_section,
)
from voxmetrics.report.study import StudyReport

__all__ = [
    "report_html",
    "study_report_html",
]


def study_report_html(
    sr: StudyReport,
    *,
    title: str | None = None,
) -> str:
    """The study report as one self-contained HTML page.

    Parameters
    ----------
    sr : StudyReport
        The evaluated study (:func:`voxmetrics.report.study.build_study_report`).
    title : str, optional
        Page title; default "VoxMetrics report: <study name>".

    Returns
    -------
    str
        The page: sections with the ids of :data:`REPORT_SECTIONS` (``sbls`` only when a
        condition has an SBLS), plotly.js once in the head, every figure interactive, the
        JSON of :meth:`StudyReport.to_dict` (NaN as null) in
        ``<script type="application/json" id="voxmetrics-data">``. Every user string is
        HTML-escaped.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> page = study_report_html(build_study_report(demo_study(n_speakers=6), bootstrap=0))
    >>> page.count("plotly.js v"), 'id="report-card"' in page
    (1, True)
    """
    colors = condition_colors([r.name for r in sr.reports])
    figure = Figures()
    title = title if title is not None else f"VoxMetrics report: {sr.study.name}"
    sections = [
        summary_section(sr, colors),
        card_section(sr, colors),
        input_warnings_section(sr.reports),
        notes_section(sr),
        threat_section(sr, colors),
        exposure_section(sr, colors),
        overview_section(sr, colors, figure),
        utility_section(sr, colors, figure),
        lid_section(sr, colors, figure),
        srd_section(sr, colors, figure),
        zebra_section(sr, colors, figure, sr.ece_curves),
        verification_section(sr, colors, figure),
        linkage_section(sr, colors, figure),
    ]
    present = [s for s in REPORT_SECTIONS if s != "sbls" or _has_sbls(sr)]
    if _has_sbls(sr):
        sections.append(sbls_section(sr, colors, figure))
    sections += [
        intervals_section(sr, colors),
        compare_section(sr, colors),
        methods_section(),
        provenance_section(sr.provenance, json_name=json_name(sr.study.name)),
        data_section(sr),
    ]
    return _page(title, present, sections, created=sr.created, what=f"study {sr.study.name}")


def _page(
    title: str, present: Iterable[str], sections: Iterable[str], *, created: str, what: str
) -> str:
    """The styled, self-contained page around ``sections`` (table of contents: ``present``)."""
    toc = " ".join(f'<a href="#{s}">{esc(REPORT_SECTIONS[s])}</a>' for s in present)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="VoxMetrics {esc(__version__)}">'
        f"<title>{esc(title)}</title><style>\n{asset('report.css')}</style>"
        f'<script type="text/javascript" id="plotlyjs">{plotly.offline.get_plotlyjs()}</script>'
        "</head><body><main>"
        f'<header><h1>{esc(title)}</h1><p class="sub">Privacy metrics of anonymised speech, '
        f"computed {esc(created)} by VoxMetrics {esc(__version__)}.</p></header>"
        f'<nav class="toc">{toc}</nav>'
        + "".join(sections)
        + f"<footer>VoxMetrics {esc(__version__)} · {esc(what)} · "
        f"{esc(created)}</footer></main></body></html>\n"
    )


def _has_sbls(sr: StudyReport) -> bool:
    return any(v is not None for v in sr.sbls.values())


@dataclass(frozen=True)
class _Reports:
    """What the report's card, overview, LID and SRD sections read, from condition reports."""

    reports: tuple[ConditionReport, ...]
    card: ReportCard

    @property
    def settings(self) -> StudySettings:
        """The settings the overview's notes read (the linkability rule of the reports)."""
        rule = next((r.linkability_rule for r in self.reports), "code")
        return StudySettings(linkability_rule=rule)


def report_html(reports: Iterable[ConditionReport], *, title: str = "VoxMetrics report") -> str:
    """The page of ``evaluate --html``: the study report's style, from condition reports alone.

    The report card, the overview (table and figures), LID and SRD sections of
    :func:`study_report_html`, with the same style, plotly.js once in the head and the methods;
    the sections that need the scores or the study (ZEBRA's ECE curves, comparisons, voice
    similarity) are those of ``report --html``.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> page = report_html(evaluate_study(demo_study(n_speakers=6)))
    >>> page.startswith("<!doctype html>"), 'id="report-card"' in page, 'id="overview"' in page
    (True, True, True)
    """
    listed = tuple(reports)
    view = _Reports(listed, report_card(listed))
    colors = condition_colors([r.name for r in view.reports])
    figure = Figures()
    sr: Any = view  # the sections read only .reports and .card
    sections = [
        card_section(sr, colors),
        input_warnings_section(view.reports),
        overview_section(sr, colors, figure),
        lid_section(sr, colors, figure),
        srd_section(sr, colors, figure),
        methods_section(),
    ]
    present = ["report-card", "overview", "lid", "srd", "methods"]
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    names = ", ".join(r.name for r in view.reports)
    return _page(title, present, sections, created=created, what=names)
