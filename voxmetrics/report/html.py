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
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.offline

from voxmetrics._version import __version__
from voxmetrics.analysis.lid import lid_table
from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.analysis.tradeoff import (
    EER_BANDS,
    LEAK_LID_MAX,
    LEAK_LINKABILITY_FACTOR,
    RANKING_ATTACKER,
)
from voxmetrics.data.study import StudySettings
from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS, ReportCard, report_card
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.threat import CALLOUT_EER, CALLOUT_LID_MAX, CALLOUT_LINKABILITY_FACTOR
from voxmetrics.evaluation.tradeoff import NO_UTILITY_HELP
from voxmetrics.metrics.lid import clamp_lid_number
from voxmetrics.metrics.paired import P_VALUE_METHOD
from voxmetrics.metrics.zebra import ECECurves
from voxmetrics.plots.card import card_legend_html, card_rationale, level_css
from voxmetrics.plots.decimate import decimate_figure
from voxmetrics.plots.lid import lid_ccdf_figure
from voxmetrics.plots.linkage import linkability_vs_n_figure, singling_out_figure
from voxmetrics.plots.overview import eer_lidmax_figure, eer_linkability_figure
from voxmetrics.plots.sbls import components_figure, identity_figure
from voxmetrics.plots.srd import mean_d_bar_figure, rank_distribution_figure
from voxmetrics.plots.style import condition_colors
from voxmetrics.plots.utility import tradeoff_figure
from voxmetrics.plots.verification import ape_figure, det_figure
from voxmetrics.plots.zebra import ZebraProfile, ece_profile_figure
from voxmetrics.report.frames import (
    OVERVIEW_COLUMNS,
    callouts_frame,
    comparison_frame,
    overview_frame,
    verification_frame,
)
from voxmetrics.report.study import StudyReport

__all__ = ["PAPERS", "REPORT_SECTIONS", "json_safe", "report_html", "study_report_html"]

REPORT_SECTIONS: dict[str, str] = {
    "summary": "Summary",
    "report-card": "Report card",
    "threat": "Threat call-outs",
    "overview": "Overview",
    "utility": "Privacy vs utility",
    "lid": "LID: local information disclosure",
    "srd": "SRD: similarity rank disclosure",
    "zebra": "ZEBRA: zero evidence",
    "verification": "Verification: DET, DCF, APE",
    "linkage": "Linkage and singling out",
    "sbls": "SBLS: soft-biometric leakage",
    "intervals": "Intervals and chance",
    "compare": "Paired comparison",
    "methods": "Methods",
    "data": "Data",
}
"""Section ids (the anchors of the page) and their headings, in page order. ``sbls`` is
present only when some condition has an SBLS."""

PAPERS: dict[str, tuple[str, str, str]] = {
    "000": (
        "Goodbye Equal Error Rate, Hello Local Information Disclosure: Evaluating Voice "
        "Anonymisation against 1-to-N Linkage Threats",
        "D. Šterns, K. Drossos, N. Fernandes, T. Bäckström, C. Palamidessi",
        "",
    ),
    "001": (
        "Legally validated evaluation framework for voice anonymization",
        "N. Vauquier, B. M. L. Srivastava, S. A. Hosseini, E. Vincent; Interspeech 2025",
        "",
    ),
    "002": (
        "Privacy Disclosure of Similarity Rank in Speech and Language Processing",
        "T. Bäckström, M. H. Vali, M. Nguyen, S. Rech; IEEE Trans. Audio, Speech and "
        "Language Processing 34, 2026",
        "",
    ),
    "003": (
        "Measuring Soft Biometric Leakage in Speaker De-Identification Systems",
        "S. Seo, O. Aulov, P. J. Phillips; arXiv:2509.14469, 2025",
        "https://arxiv.org/abs/2509.14469",
    ),
    "004": (
        "The Privacy ZEBRA: Zero Evidence Biometric Recognition Assessment",
        "A. Nautsch et al.; Interspeech 2020",
        "https://doi.org/10.21437/Interspeech.2020-1815",
    ),
}
"""The papers behind the metrics: title, authors and venue, and a link (a DOI where the paper
gives one, else a search for the exact title)."""

_PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

_CSS = """
:root { --ink: #1f2328; --muted: #57606a; --rule: #d0d7de; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; color: var(--ink); margin: 0; line-height: 1.45; font-size: 15px; }
main { max-width: 1080px; margin: 0 auto; padding: 1.5rem 1.5rem 3rem; }
header h1 { font-size: 1.7rem; margin: 0 0 .2rem; }
header .sub { color: var(--muted); margin: 0; }
nav.toc { margin: 1rem 0 .5rem; padding: .5rem .8rem; background: #f6f8fa; border-radius: 6px;
  display: flex; flex-wrap: wrap; gap: .2rem 0; }
nav.toc a { margin-right: .9rem; white-space: nowrap; color: #0b5cad; text-decoration: none; }
section { padding-top: .4rem; border-top: 1px solid var(--rule); margin-top: 1.6rem; }
h2 { font-size: 1.35rem; margin: .6rem 0 .6rem; }
h3 { font-size: 1.08rem; margin: 1.1rem 0 .4rem; }
p.note { color: var(--muted); font-size: .92rem; }
.table-wrap { overflow-x: auto; margin: .5rem 0 1rem; }
table { border-collapse: collapse; font-size: .88rem; }
th, td { border: 1px solid var(--rule); padding: 3px 7px; vertical-align: top; }
th { background: #f6f8fa; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.wide { font-size: .8rem; }
.swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px;
  margin-right: .35em; vertical-align: -0.05em; }
td.lvl { white-space: nowrap; }
.lvl-tag { font-size: .72rem; text-transform: uppercase; letter-spacing: .03em;
  margin-left: .45em; opacity: .85; }
.verdict { background: #f6f8fa; border-left: 4px solid #0072B2; padding: .6rem .9rem;
  margin: .8rem 0; }
.verdict p { margin: .3rem 0; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem;
  margin: .5rem 0; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; }
.callout { border: 1px solid #e3b3a0; border-left: 5px solid #D55E00; border-radius: 4px;
  padding: .5rem .9rem; margin: .8rem 0; background: #fff8f4; }
.figure { margin: .6rem 0 1.2rem; width: 100%; }
dl.defs dt { font-weight: 600; margin-top: .5rem; }
dl.defs dd { margin: .1rem 0 0 1.2rem; }
button.download { font: inherit; padding: .3rem .8rem; cursor: pointer; }
footer { color: var(--muted); font-size: .85rem; margin-top: 2rem; }
@page { size: A4; margin: 12mm 11mm; }
@media print {
  body { font-size: 10.5pt; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  main { max-width: none; padding: 0; }
  nav.toc, button.download { display: none; }
  section { break-before: page; border-top: none; margin-top: 0; }
  section#summary, section#report-card, section#threat { break-before: auto; }
  section#report-card, section#threat { margin-top: 1.2rem; }
  .modebar-container { display: none !important; }
  .figure, .callout, tr, .verdict, dl.meta { break-inside: avoid; page-break-inside: avoid; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  thead { display: table-header-group; }
  .table-wrap { overflow: visible; }
  table { font-size: 8.5pt; }
  table.wide { font-size: 6.8pt; }
  th, td { padding: 2px 4px; }
  a { color: inherit; }
}
"""

_DOWNLOAD_JS = """
document.getElementById("voxmetrics-download").addEventListener("click", function () {
  var text = document.getElementById("voxmetrics-data").textContent;
  var blob = new Blob([text], {type: "application/json"});
  var a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = this.dataset.filename;
  document.body.appendChild(a); a.click(); a.remove();
});
"""


# ---------------------------------------------------------------- helpers


def json_safe(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None, NumPy values as Python ones, tuples as lists.

    What strict JSON (``allow_nan=False``, JavaScript's ``JSON.parse``) accepts.

    Examples
    --------
    >>> json_safe({"a": float("nan"), "b": (np.float64(1.5), np.int64(2)), "c": [np.inf]})
    {'a': None, 'b': [1.5, 2], 'c': [None]}
    """
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is pd.NA or obj is pd.NaT:
        return None
    return obj


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _missing(v: Any) -> bool:
    if v is None or v is pd.NA:
        return True
    return isinstance(v, float | np.floating) and math.isnan(v)


def _fmt(v: Any, spec: str = ".3f") -> str:
    if _missing(v):
        return "–"
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return format(float(v), spec)
    return _e(v)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
        v, bool | np.bool_
    )


def _swatch(color: str | None) -> str:
    return "" if color is None else f'<span class="swatch" style="background:{color}"></span>'


def _table(
    df: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    name_column: str = "Condition",
    formats: Mapping[str, str] | None = None,
    wide: bool = False,
) -> str:
    """A DataFrame as an escaped HTML table; condition names get their colour swatch."""
    head = "".join(f"<th>{_e(c)}</th>" for c in df.columns)
    rows = []
    for values in df.itertuples(index=False, name=None):
        cells = []
        for col, v in zip(df.columns, values, strict=True):
            if col == name_column and colors is not None and not _missing(v):
                cells.append(f"<td>{_swatch(colors.get(str(v)))}{_e(v)}</td>")
            elif _is_number(v) or _missing(v):
                cells.append(f'<td class="num">{_fmt(v, (formats or {}).get(col, ".3f"))}</td>')
            else:
                cells.append(f"<td>{_fmt(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cls = ' class="wide"' if wide else ""
    return (
        f'<div class="table-wrap"><table{cls}><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _names(names: Iterable[str], colors: Mapping[str, str]) -> str:
    """Condition names with their swatches, joined in prose."""
    parts = [f"{_swatch(colors.get(n))}<strong>{_e(n)}</strong>" for n in names]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


class _Figures:
    """Turns figures into divs (no plotly.js: it is in the head once) with unique ids.

    A figure of more than :data:`~voxmetrics.plots.decimate.MAX_POINTS` points is decimated
    first (:func:`~voxmetrics.plots.decimate.decimate_figure`): the page stays drawable, and
    its JSON and CSV files keep every number.
    """

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, fig: go.Figure, name: str) -> str:
        self.n += 1
        fig = decimate_figure(fig, full="the JSON and CSV files have every number")
        div = fig.to_html(
            full_html=False,
            include_plotlyjs=False,
            include_mathjax=False,
            config=_PLOTLY_CONFIG,
            div_id=f"vx-fig-{self.n}-{name}",
        )
        return f'<div class="figure" data-figure="{_e(name)}">{div}</div>'


def _interval(
    intervals: Mapping[str, Any] | None, key: str, digits: int, n_enrolled: int | None = None
) -> str:
    """``[low, high]``; with ``n_enrolled``, LID bits shown within [-64, log2 N]."""
    iv = (intervals or {}).get(key)
    if iv is None or _missing(iv.low) or _missing(iv.high):
        return "–"
    low, high = iv.low, iv.high
    if n_enrolled is not None:
        low, high = (clamp_lid_number(key, x, n_enrolled) for x in (low, high))
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _section(sid: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{_e(REPORT_SECTIONS[sid])}</h2>{body}</section>'


# ---------------------------------------------------------------- sections


def _verdict(sr: StudyReport, colors: Mapping[str, str]) -> str:
    labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
    risk: list[tuple[str, list[str]]] = []
    caution: list[tuple[str, list[str]]] = []
    ok: list[str] = []
    for name, row in zip(sr.card.conditions, sr.card.cells, strict=True):
        bad = [lab for lab, c in zip(labels, row, strict=True) if c.level == "risk"]
        warn = [  # an uninformative number is no evidence of safety
            lab
            for lab, c in zip(labels, row, strict=True)
            if c.level in ("caution", "uninformative")
        ]
        if bad:
            risk.append((name, bad))
        elif warn:
            caution.append((name, warn))
        else:
            ok.append(name)
    n = len(sr.card.conditions)
    parts = []
    if risk:
        items = "; ".join(
            f"{_swatch(colors.get(c))}<strong>{_e(c)}</strong> ({_e(', '.join(m))})"
            for c, m in risk
        )
        parts.append(
            f"<p><strong>{len(risk)} of {n}</strong> condition{'s' if n != 1 else ''} "
            f"{'is' if len(risk) == 1 else 'are'} at risk on at least one metric: {items}.</p>"
        )
    if caution:
        items = "; ".join(
            f"{_swatch(colors.get(c))}<strong>{_e(c)}</strong> ({_e(', '.join(m))})"
            for c, m in caution
        )
        parts.append(f"<p>Caution, no metric at risk: {items}.</p>")
    if ok:
        parts.append(
            f"<p>Within the report card's thresholds on every metric available: "
            f"{_names(ok, colors)}.</p>"
        )
    if sr.callouts:
        for c in sr.callouts:
            parts.append(
                f"<p><strong>Looks private on the EER but is not:</strong> "
                f"{_names([c.condition], colors)} has an EER of {c.eer:.3f}, yet "
                f"{_e('; '.join(c.reasons))} (see <a href='#threat'>Threat call-outs</a>).</p>"
            )
    else:
        parts.append(
            "<p>No condition looks private on the EER while still linking or singling out "
            "its trials (see <a href='#threat'>Threat call-outs</a>).</p>"
        )
    parts.append(
        "<p class='note'>Levels follow the thresholds of the <a href='#report-card'>report "
        "card</a>: reading aids, not legal limits.</p>"
    )
    return f'<div class="verdict">{"".join(parts)}</div>'


def _summary(sr: StudyReport, colors: Mapping[str, str]) -> str:
    st = sr.settings
    used = st.bootstrap
    settings = f"bootstrap {used} replicates" if used else "no bootstrap intervals"
    settings += f", seed {st.seed}, "
    settings += (
        f"LID cross-calibration {st.cross_calibrate}-fold for conditions without a dev set"
        if st.cross_calibrate
        else "no LID cross-calibration (LID needs a dev set)"
    )
    settings += f", LID calibration variant {st.lid_variant}"
    rows = [
        ("Study", _e(sr.study.name)),
        ("Computed", _e(sr.created)),
        ("VoxMetrics", _e(__version__)),
        ("Settings", _e(settings)),
        ("Conditions", f"{len(sr.reports)}: {_names([r.name for r in sr.reports], colors)}"),
    ]
    meta = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    described = [
        (r.name, sr.study.get(r.name).description, r.attacker)
        for r in sr.reports
        if r.name in sr.study.names
    ]
    desc = "".join(
        f"<tr><td>{_swatch(colors.get(n))}{_e(n)}</td><td>{_e(a)}</td><td>{_e(d) or '–'}</td></tr>"
        for n, d, a in described
    )
    table = (
        '<div class="table-wrap"><table><thead><tr><th>Condition</th><th>Attacker</th>'
        f"<th>Description</th></tr></thead><tbody>{desc}</tbody></table></div>"
    )
    return _section(
        "summary", f'<dl class="meta">{meta}</dl><h3>Verdict</h3>{_verdict(sr, colors)}{table}'
    )


def _card(sr: StudyReport, colors: Mapping[str, str]) -> str:
    thresholds = list(REPORT_CARD_THRESHOLDS.values())
    head = "<th>Condition</th>" + "".join(f"<th>{_e(t.label)}</th>" for t in thresholds)
    rows = []
    for name, row in zip(sr.card.conditions, sr.card.cells, strict=True):
        cells = [f"<td>{_swatch(colors.get(name))}{_e(name)}</td>"]
        for t, c in zip(thresholds, row, strict=True):
            cells.append(
                f'<td class="lvl lvl-{c.level.replace("/", "")}" style="{level_css(c.level)}" '
                f'title="{_e(t.label)}: {_e(c.level)}">'
                f'{_e(c.text)}<span class="lvl-tag">{_e(c.level)}</span></td>'
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = (
        f'<div class="table-wrap"><table class="card"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    legend = "".join(
        f"<tr><td>{_e(t.label)}</td><td>{_e(t.explanation)}</td></tr>" for t in thresholds
    )
    rationale = "".join(
        "<p class='note'>" + re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(p)) + "</p>"
        for p in card_rationale().split("\n\n")
        if p.strip()
    )
    return _section(
        "report-card",
        "<p>One line per condition; each number is coloured by the level its threshold gives "
        "(n/a: not available). With the bootstrap, linkability shows its 95 % interval and "
        "LIDmax its 0.95 quantile with that quantile's interval; both are coloured only when "
        "the interval lies above the chance level of the condition's scores (else "
        '"≈ chance": green only when chance itself is safe; "uninformative at this N" when '
        "chance sits at its ceiling log2 N or above a threshold).</p>"
        f"{table}<h3>Legend</h3><p class='legend-levels'>{card_legend_html()}</p>"
        '<div class="table-wrap"><table class="thresholds"><thead><tr><th>Metric</th>'
        f"<th>Thresholds</th></tr></thead><tbody>{legend}</tbody></table></div>{rationale}",
    )


def _notes(sr: StudyReport) -> str:
    """The warnings of the conditions, once each, naming their condition (none: nothing)."""
    if not sr.notes:
        return ""
    items = []
    for note in sr.notes:
        name = next((n for n in sr.study.names if note.startswith(f"{n}: ")), "")
        text = note[len(name) + 2 :] if name else note
        items.append(f"<li><b>{_e(name)}</b>: {_e(text)}</li>" if name else f"<li>{_e(text)}</li>")
    return (
        '<section class="notes"><h3>Notes on the data and the model fits</h3>'
        "<p class='note'>Warnings raised evaluating the conditions, each once: a model or "
        "calibration that did not converge, trials left out. The numbers that rest on them are "
        f"reported; read them with care.</p><ul>{''.join(items)}</ul></section>"
    )


def _input_warnings(reports: Iterable[ConditionReport]) -> str:
    """What was left out of the conditions' incomplete input files, by condition (else "")."""
    items = [
        f"<li><b>{_e(r.name)}</b>: {_e(message)}</li>"
        for r in reports
        for message in r.input_warnings
    ]
    if not items:
        return ""
    return (
        '<section class="notes" id="input-warnings"><h3>Incomplete input files</h3>'
        "<p class='note'>These score files were broken (key pairs without a score, NaN scores "
        "or rows that end early) and were read as asked for, leaving the broken pairs out: "
        "the numbers of these conditions rest on the listed pairs only.</p>"
        f"<ul>{''.join(items)}</ul></section>"
    )


def _threat(sr: StudyReport, colors: Mapping[str, str]) -> str:
    rule = (
        f"EER at least {CALLOUT_EER:g} (looks private on the 1-to-1 view) and either LIDmax at "
        f"least {CALLOUT_LID_MAX:g} bit or linkability above {CALLOUT_LINKABILITY_FACTOR:g}x "
        "chance (1/N)"
    )
    if not sr.callouts:
        return _section(
            "threat",
            f"<p>No condition crossed the call-out thresholds: {_e(rule)}.</p>",
        )
    blocks = []
    for c in sr.callouts:
        lid = "–" if c.lid_max is None else f"{c.lid_max:.2f} bits"
        reasons = "".join(f"<li>{_e(r)}</li>" for r in c.reasons)
        blocks.append(
            f'<div class="callout"><h3>{_swatch(colors.get(c.condition))}{_e(c.condition)}</h3>'
            f"<p>EER {c.eer:.3f}, linkability {c.linkability:.1%} (chance "
            f"{c.chance_linkability:.1%}), LIDmax {lid}.</p><ul>{reasons}</ul>"
            f"<p>Its most exposed trials:</p>{_table(c.worst_trials)}</div>"
        )
    return _section(
        "threat",
        f"<p>Called out: {_e(rule)}. An EER near 0.5 says that verification of one pair is at "
        "chance, not that a 1-to-N search fails.</p>" + "".join(blocks),
    )


def linkability_rule_note(rule: str) -> str:
    """What linkability counts under the study's rule, in words (the report states it).

    Examples
    --------
    >>> linkability_rule_note("strict")[:48]
    'linkability: share of trials whose own speaker s'
    """
    if rule == "strict":
        return (
            "linkability: share of trials whose own speaker scores strictly highest, a tie "
            "for the top score counting as no link (the paper's eq. 3, the strict rule; chance "
            "1/N)"
        )
    return (
        "linkability: share of trials whose own speaker scores highest, a tie for the top "
        "score counting as a link (the authors' public code, the default rule; chance 1/N)"
    )


def _linkability_rule(reports: Sequence[ConditionReport]) -> str:
    """The rule the reports' linkability used (a study evaluates every condition with one)."""
    rules = {r.linkability_rule for r in reports}
    return rules.pop() if len(rules) == 1 else "code"


def _overview(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    df = overview_frame(sr.reports).rename(columns=OVERVIEW_COLUMNS)
    return _section(
        "overview",
        _table(df, colors=colors, wide=True)
        + "<p class='note'>EER: VoicePrivacy 2024 definition; Cllr is meaningful only when the "
        "scores are log-likelihood ratios; "
        + linkability_rule_note(_linkability_rule(sr.reports))
        + ".</p>"
        + figure(eer_linkability_figure(sr.reports), "eer_linkability")
        + figure(eer_lidmax_figure(sr.reports), "eer_lidmax"),
    )


def _utility(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    if not sr.has_utility:
        return _section("utility", f"<p>{_e(NO_UTILITY_HELP)}</p>")
    bands = ", ".join(f"{b:.0%}" for b in EER_BANDS)
    body = (
        "<p>Each condition's privacy against its utility; the dashed line is the Pareto front "
        "(no other anonymised condition is at least as private and as useful, and better on "
        "one); the star is the original speech "
        f"({_e(sr.utility_reference or '–')}). Error bars: 95 % intervals where known.</p>"
        + figure(tradeoff_figure(sr.tradeoff("eer", "wer"), colors=colors), "eer_wer")
        + figure(tradeoff_figure(sr.tradeoff("eer", "uar"), colors=colors), "eer_uar")
        + figure(tradeoff_figure(sr.tradeoff("lid_max", "wer"), colors=colors), "lidmax_wer")
    )
    ranking = sr.ranking()
    body += (
        "<h3>VoicePrivacy ranking</h3>"
        f"<p>VoicePrivacy 2024's rule: a system enters every band whose minimum EER ({bands}) "
        f"its {_e(ranking.attacker)} attacker's EER reaches; within a band, systems are ranked "
        "by WER (lower first), then UAR (higher first).</p>"
    )
    if ranking.rows:
        body += _table(
            ranking.frame(), colors=colors, name_column="System", formats={"Rank": ".0f"}
        )
    else:
        body += f"<p>No condition under the {_e(RANKING_ATTACKER)} attacker reaches a band.</p>"
    if ranking.unranked:
        body += _table(ranking.unranked_frame(), colors=colors, name_column="System")
    callouts = sr.utility_callouts()
    rule = (
        f"EER in a band while LIDmax is at least {LEAK_LID_MAX:g} bit or linkability is above "
        f"{LEAK_LINKABILITY_FACTOR:g}x its chance level 1/N"
    )
    body += "<h3>Ranked as private, still leaking</h3>"
    if callouts:
        body += (
            f"<p>Called out: {_e(rule)}. The band ranks these systems as private; the 1-to-N "
            "metrics say some of their speakers are still found.</p>"
            + _table(callouts_frame(callouts), colors=colors, name_column="System")
        )
    else:
        body += f"<p>No ranked system is called out ({_e(rule)}).</p>"
    return _section("utility", body)


def _lid(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    with_lid = {r.name: r.lid for r in sr.reports if r.lid is not None}
    without = [r.name for r in sr.reports if r.lid is None]
    body = ""
    if with_lid:
        table = lid_table(with_lid).drop(columns="b")
        ivs = [(r.lid_intervals, r.lid.n_enrolled) for r in sr.reports if r.lid is not None]
        table.insert(4, "ALID 95% CI", [_interval(iv, "alid", 3, n) for iv, n in ivs])
        table.insert(10, "LID q95 95% CI", [_interval(iv, "lid_q95", 2, n) for iv, n in ivs])
        table = table.rename(columns={"Ceiling log2 N (bits)": "Ceiling log2 N"})
        body += (
            "<p>LID<sub>i</sub> = log<sub>2</sub>(N p<sub>i</sub>) bits: what trial i's "
            "calibrated scores tell the attacker about its speaker, against a random guess among "
            "the N enrolled (0 = nothing; log<sub>2</sub> N = identified).</p>"
            + figure(lid_ccdf_figure(with_lid, colors=colors), "lid_ccdf")
            + _table(table, colors=colors)
        )
    if without:
        body += (
            f"<p>Without LID: {_names(without, colors)}. LID is calibrated on a dev set of "
            "other speakers; add one, or set the study's cross-calibration (k folds on eval, "
            "labelled as such).</p>"
        )
    return _section("lid", body)


def _srd(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    ranked = [r for r in sr.reports if r.srd is not None]  # not: sparse, no complete trial
    results = {r.name: r.srd for r in ranked}
    fits = {r.name: [r.srd_model] for r in ranked}
    return _section(
        "srd",
        "<p>The rank of each trial's own speaker among the N enrolled; disclosure of rank k is "
        "log<sub>2</sub>(N p<sub>k</sub>) bits. Dotted: the beta-binomial model fitted with the "
        "CLL loss.</p>"
        + figure(rank_distribution_figure(results, fits, colors=colors), "rank_distribution")
        + figure(mean_d_bar_figure(ranked, colors=colors), "mean_d")
        + _table(
            srd_table(results, fits, eer={r.name: r.baseline.eer for r in ranked}),
            colors=colors,
            formats={"α": ".4g", "β": ".4g"},
        ),
    )


def _zebra(
    sr: StudyReport,
    colors: Mapping[str, str],
    figure: _Figures,
    curves: Mapping[str, ECECurves] | None,
) -> str:
    rows = [
        {
            "Condition": r.name,
            "EER": r.baseline.eer,
            "D_ECE (bits)": r.zebra.d_ece,
            "D_ECE 95% CI": _interval(r.zebra_intervals, "d_ece", 3),
            "log10 l": r.zebra.log10_l,
            "|log10 LR| q95 95% CI": _interval(r.zebra_intervals, "log10_l_q95", 2),
            "Tag": r.zebra.tag,
            "Posterior odds (flat prior)": r.zebra.odds,
            "Worst case from": "mated score" if r.zebra.worst_is_mated else "non-mated score",
        }
        for r in sr.reports
    ]
    body = (
        "<p>Expected disclosure D_ECE (bits, at most 0.721) and the worst-case strength of "
        "evidence log<sub>10</sub> l with its categorical tag (0, A to F).</p>"
        + _table(pd.DataFrame(rows), colors=colors)
    )
    curves = curves or {}
    profiles = [
        ZebraProfile(r.name, r.zebra, curves[r.name]) for r in sr.reports if r.name in curves
    ]
    if profiles:
        fig = ece_profile_figure(profiles, colors=colors)
        # a legend title beside a wrapping horizontal legend can push its first row off the
        # figure at print width: put it above the entries
        fig.update_layout(legend={"title": {"side": "top"}})
        body += figure(fig, "ece_profiles")
    return _section("zebra", body)


def _range(low: Any, high: Any, digits: int = 3) -> str:
    if _missing(low) or _missing(high):
        return "–"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _intervals(sr: StudyReport, colors: Mapping[str, str]) -> str:
    df = sr.intervals()  # DeID and G_VD rows included
    sbls_rows = [
        {
            "condition": name,
            "key": key,
            "number": label,
            "value": iv.estimate,
            "low": iv.low,
            "high": iv.high,
            "chance": None,
            "excess": None,
        }
        for name, ivs in sr.sbls_intervals.items()
        for key, label in (
            ("sbls", "SBLS"),
            ("p_attr", "P_attr"),
            ("p_assoc", "P_assoc"),
            ("p_subgroup", "P_subgroup"),
        )
        if key in ivs
        for iv in (ivs[key],)
    ]
    if sbls_rows:  # each condition's SBLS rows after its identity rows
        order = {r.name: k for k, r in enumerate(sr.reports)}
        df = pd.concat([df, pd.DataFrame(sbls_rows, columns=df.columns)], ignore_index=True)
        df = df.sort_values("condition", key=lambda c: c.map(order), kind="stable")
    if not sr.settings.bootstrap:
        return _section(
            "intervals",
            "<p>No intervals: the report was computed without the bootstrap (set the study's "
            "bootstrap replicates above 0).</p>",
        )
    table = pd.DataFrame(
        {
            "Condition": df["condition"],
            "Number": df["number"],
            "Value": df["value"],
            "95% interval": [_range(lo, hi) for lo, hi in zip(df["low"], df["high"], strict=True)],
            "Chance": df["chance"],
            "Excess over chance": df["excess"],
        }
    )
    n_boot = sr.settings.bootstrap
    return _section(
        "intervals",
        f"<p>Every number with its 95 % speaker-level bootstrap interval ({n_boot} replicates: "
        "trial speakers drawn with replacement, enrolled identities and calibration held "
        "fixed; for SBLS and its components the eval speakers of the attacked utterances, the "
        "attacker held fixed) and, for linkability, LID and SRD, its chance level: the value "
        "expected when the scores carry no speaker information, on this condition's own "
        "scores (each trial's identity replaced by a random column). Read the excess over "
        "chance: a number whose interval contains its chance level is not distinguishable from "
        "chance. A sample maximum (LIDmax, MaxD, log10 l) has no interval: the bootstrap of a "
        "maximum is not valid (for LIDmax its upper bound is the estimate itself); its q95 "
        "row, the level exceeded by 5 % of trials, carries the interval instead. Singling out "
        "resamples the predicate speakers; DeID and G_VD, measured against the voices of "
        f"{_e(sr.original or '–')}, resample the speakers of the similarity matrices, the "
        "matrices held fixed (no chance level).</p>" + _table(table, colors=colors, wide=True),
    )


def _compare(sr: StudyReport, colors: Mapping[str, str]) -> str:
    if not sr.comparisons:
        return _section(
            "compare",
            "<p>No paired comparison: it needs the bootstrap and at least two conditions "
            "sharing trial speakers.</p>",
        )
    floors = {c.p_floor for comp in sr.comparisons.values() for c in comp.values() if c.p_floor}
    floor_text = (
        ", ".join(f"{f:.4f}" for f in sorted(floors)) if floors else "no floor (no replicate)"
    )
    reference = sr.reference or sr.reports[0].name
    reference_text = f"the reference condition, {reference}"
    body = (
        f"<p>Each condition against {_e(reference_text)}, on the speakers they share: the "
        "difference B − A of every number, its 95 % interval and a two-sided p-value from a "
        "paired speaker-level bootstrap (the same speakers drawn for both conditions): "
        f"{_e(P_VALUE_METHOD)} = {_e(floor_text)}. Many numbers "
        "are compared at once, so read <em>p (Holm)</em>, Holm's adjustment over the numbers "
        "of one pair, which keeps the chance of any false difference in the pair below the "
        "level; pairs are not adjusted against each other. SBLS and its three components, "
        "when both conditions have them, form a family of their own (the attacker of each "
        "condition is trained once, the eval speakers are drawn as for the other numbers), and "
        "so do singling out, DeID and G_VD, resampled with the same speakers; a condition "
        "without utterance embeddings has none of them, and the last column says so.</p>"
    )
    for pair, comp in sr.comparisons.items():
        df = comparison_frame(comp)
        table = pd.DataFrame(
            {
                "Number": df["number"],
                "A": df["a"],
                "B": df["b"],
                "B − A": df["difference"],
                "95% interval": [
                    _range(lo, hi) for lo, hi in zip(df["low"], df["high"], strict=True)
                ],
                "p": df["p_value"],
                "p (Holm)": df["p_adjusted"],
                "p (resampled, ≥ 1/(B+1))": df["p_resampled"],
            }
        )
        if df["reason"].notna().any():
            table["Not compared because"] = df["reason"].fillna("")
        body += f"<h3>{_e(pair)}</h3>" + _table(table, name_column="Number")
    return _section("compare", body)


def _verification(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    results = {r.name: r.verification for r in sr.reports if r.verification is not None}
    if not results:
        return _section("verification", "<p>No condition has verification results.</p>")
    kinds = {r.name: r.score_kind for r in sr.reports}
    distances = [n for n in results if kinds.get(n) == "distance"]
    body = (
        "<p>The standard speaker-verification outputs of the 1-to-1 comparisons, to set "
        "beside published ASV and VoicePrivacy results: normalised minimum detection cost "
        "(minDCF) per target prior, the actual cost (actDCF) where the scores are LLRs, and "
        "d'. A DCF of 1 is no better than deciding by the prior alone.</p>"
        + _table(
            verification_frame(results, eer={r.name: r.baseline.eer for r in sr.reports}),
            colors=colors,
        )
    )
    if distances:
        body += f"<p>{_names(distances, colors)}: distance scores, negated on reading.</p>"
    first = next(iter(results.values()))
    body += figure(
        det_figure({n: v.det for n, v in results.items()}, colors=colors), "det_curves"
    ) + figure(
        ape_figure(
            {n: v.ape for n, v in results.items()},
            colors=colors,
            p_targets=first.dcf.p_targets.tolist(),
        ),
        "ape_plot",
    )
    return _section("verification", body)


def _linkage(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    reports = {r.name: r for r in sr.reports}
    body = _table(linkage_table(reports, *sr.distinctiveness()), colors=colors)
    body += (
        f"<p class='note'>{linkability_rule_note(sr.settings.linkability_rule).capitalize()}.</p>"
    )
    body += (
        f"<p>DeID and G_VD against the voices of {_names([sr.original], colors)}, taken as the "
        "original (unprocessed) ones; empty for conditions without utterance embeddings.</p>"
        if sr.original is not None
        else ""
    ) + figure(
        linkability_vs_n_figure(
            {r.name: r.linkability_curve for r in sr.reports if r.linkability_curve is not None},
            colors=colors,
            bands={
                r.name: r.replicates.curve_band() for r in sr.reports if r.replicates is not None
            },
        ),
        "linkability_vs_n",
    )
    singled = {r.name: r.singling_out for r in sr.reports if r.singling_out is not None}
    lacking = [r.name for r in sr.reports if r.singling_out is None]
    if singled:
        body += figure(singling_out_figure(singled, colors=colors), "singling_out")
    if lacking:
        body += (
            f"<p>Without singling out: {_names(lacking, colors)} (it needs utterance embeddings "
            "with several trials per speaker).</p>"
        )
    return _section("linkage", body)


def _sbls(sr: StudyReport, colors: Mapping[str, str], figure: _Figures) -> str:
    results = {r.name: sr.sbls[r.name] for r in sr.reports if sr.sbls.get(r.name) is not None}
    rows, attrs = [], []
    intervals = {n: dict(iv) for n, iv in sr.sbls_intervals.items() if n in results}
    for name, s in results.items():
        assert s is not None
        row: dict[str, Any] = {"Condition": name}
        for key, label in (
            ("sbls", "SBLS"),
            ("p_attr", "P_attr"),
            ("p_assoc", "P_assoc"),
            ("p_subgroup", "P_subgroup"),
        ):
            row[label] = getattr(s, key)
            if intervals:
                row[f"{label} 95% CI"] = _interval(intervals.get(name), key, 3)
        rows.append({**row, "Attacker": s.attacker})
        attrs += [
            {
                "Condition": name,
                "Attribute": a.name,
                "AUC": a.auc,
                "Balanced accuracy": a.balanced_accuracy,
                "Leakage L_a": a.leakage,
                "NMI": a.nmi,
            }
            for a in s.attributes
        ]
    lacking = [r.name for r in sr.reports if sr.sbls.get(r.name) is None]
    body = (
        "<p>Protection scores in [0, 1]: 1 = no measurable leakage of the speakers' attributes "
        "(higher is safer, unlike LID). Attacker: the built-in logistic regression trained on "
        "each condition's own anonymised dev embeddings (an informed attacker), the default of "
        "the dashboard and of the <code>sbls</code> command too.</p>"
        + (
            f"<p>95 % intervals: speaker-level bootstrap ({sr.settings.bootstrap} replicates), "
            "the attacker held fixed (trained once) and the eval speakers resampled.</p>"
            if intervals
            else ""
        )
        + _table(pd.DataFrame(rows), colors=colors, wide=bool(intervals))
        + figure(components_figure(results, intervals or None), "sbls_components")  # type: ignore[arg-type]
    )
    undefined = [n for n, s in results.items() if s is not None and s.sbls is None]
    if undefined:
        sizes = sorted({s.min_group_size for s in results.values() if s is not None})
        body += (
            f"<p>No SBLS for {_names(undefined, colors)}: no intersection of the attributes "
            f"reaches the minimum subgroup size ({', '.join(map(str, sizes))} trials), so "
            "P_subgroup, and with it SBLS, is not defined; P_attr and P_assoc are.</p>"
        )
    if len(undefined) < len(results):
        body += figure(
            identity_figure(results, sr.reports, colors=colors),  # type: ignore[arg-type]
            "sbls_identity",
        )
    body += "<h3>Per attribute</h3>" + _table(pd.DataFrame(attrs), colors=colors)
    if lacking:
        body += (
            f"<p>Without SBLS: {_names(lacking, colors)} (it needs embeddings with attribute "
            "columns and a dev split).</p>"
        )
    return _section("sbls", body)


def _paper(key: str) -> str:
    title, authors, url = PAPERS[key]
    if not url:
        url = "https://scholar.google.com/scholar?q=" + urllib.parse.quote_plus(f'"{title}"')
    by = f", {_e(authors)}" if authors else ""
    return f'<a class="paper" href="{_e(url)}" rel="noopener noreferrer">{_e(title)}</a>{by}'


def _methods() -> str:
    defs = [
        (
            "EER, Cllr, min Cllr",
            "1-to-1 verification baselines on the pooled mated and non-mated scores: EER as in "
            "VoicePrivacy 2024 (0.5 = chance), Cllr of the scores taken as LLRs and after PAV "
            "calibration.",
            None,
        ),
        (
            "Linkability",
            "Share of trials whose own speaker scores highest among the N enrolled, a tie "
            "being a link (chance 1/N); against N' candidates as an exact expectation.",
            "001",
        ),
        (
            "LID, ALID, PDR, LIDmax",
            "Per-trial disclosure in bits after calibrating row z-scores on a dev set of other "
            "speakers; ALID its mean, PDR the share above 0, LIDmax the worst trial. Variant "
            "maximum-likelihood: unpenalised fit; reference-code: the authors' public code "
            "(sample sd, balanced, L2 penalty C = 1), the model of their Table 3, Table 4 and "
            "Figure 4 solved exactly (their published code stops its solver early, up to a few "
            "hundredths of a bit per trial away).",
            "000",
        ),
        (
            "SRD: MeanD, IdR",
            "Disclosure of the rank of the true speaker, log2(N p_k), averaged (MeanD); IdR is "
            "the rank-1 rate; beta-binomial models of the rank distribution.",
            "002",
        ),
        (
            "ZEBRA: D_ECE, log10 l, tag",
            "Expected disclosure as the area between the zero-evidence and the PAV-calibrated "
            "ECE profiles, and the worst-case strength of evidence.",
            "004",
        ),
        (
            "Singling out",
            "Probability that a predicate built from one speaker's voice isolates exactly one "
            "of N test speakers (chance (1 − 1/N)^(N−1) → 1/e).",
            "001",
        ),
        (
            "SBLS",
            "Protection of soft biometric attributes: attribute inference, systematic linkage "
            "and subgroup recovery, combined into one score (1 = no leakage).",
            "003",
        ),
        (
            "Privacy vs utility",
            "WER (ASR), UAR (macro recall of emotion recognition) and ρF0 as fractions beside "
            "each privacy number. Pareto front: the anonymised conditions no other one "
            "dominates. VoicePrivacy ranking (Tomashenko et al. 2024): systems grouped by the "
            "semi-informed attacker's EER (at least 10, 20, 30, 40 %), ranked by WER then UAR. "
            "Call-out: a ranked system with LIDmax of at least 1 bit or linkability above 2x "
            "chance.",
            None,
        ),
        (
            "Intervals",
            "95 % percentile intervals from a speaker-level bootstrap (all trials of a resampled "
            "speaker move together), calibration held fixed.",
            None,
        ),
    ]
    items = "".join(
        f"<dt>{_e(t)}</dt><dd>{_e(d)}{'' if p is None else ' (' + _paper(p) + ')'}</dd>"
        for t, d, p in defs
    )
    refs = "".join(f"<li>{_paper(k)}</li>" for k in PAPERS)
    return _section(
        "methods",
        f'<dl class="defs">{items}</dl><h3>Papers</h3><ul>{refs}</ul>'
        "<p class='note'>Exact definitions, including where VoxMetrics departs from a paper's "
        "text, are in the VoxMetrics documentation (Methods).</p>",
    )


def _data(sr: StudyReport) -> str:
    payload = json.dumps(json_safe(sr.to_dict()), allow_nan=False, ensure_ascii=False)
    # inside <script> only "</" and "<!--" can end or confuse the element: escape every < > &
    payload = payload.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    filename = f"{sr.study.name or 'study'}_report.json"
    return _section(
        "data",
        "<p>Every number of this report is embedded in this page as JSON (the script element "
        "<code>voxmetrics-data</code>); <code>python -m voxmetrics report STUDY.vxm --json "
        "OUT</code> writes the same object, and <code>--csv DIR</code> the tables.</p>"
        f'<p><button type="button" class="download" id="voxmetrics-download" '
        f'data-filename="{_e(filename)}">Download the JSON</button></p>'
        f'<script type="application/json" id="voxmetrics-data">{payload}</script>'
        f"<script>{_DOWNLOAD_JS}</script>",
    )


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
    figure = _Figures()
    title = title if title is not None else f"VoxMetrics report: {sr.study.name}"
    sections = [
        _summary(sr, colors),
        _card(sr, colors),
        _input_warnings(sr.reports),
        _notes(sr),
        _threat(sr, colors),
        _overview(sr, colors, figure),
        _utility(sr, colors, figure),
        _lid(sr, colors, figure),
        _srd(sr, colors, figure),
        _zebra(sr, colors, figure, sr.ece_curves),
        _verification(sr, colors, figure),
        _linkage(sr, colors, figure),
    ]
    present = [s for s in REPORT_SECTIONS if s != "sbls" or _has_sbls(sr)]
    if _has_sbls(sr):
        sections.append(_sbls(sr, colors, figure))
    sections += [_intervals(sr, colors), _compare(sr, colors), _methods(), _data(sr)]
    return _page(title, present, sections, created=sr.created, what=f"study {sr.study.name}")


def _page(
    title: str, present: Iterable[str], sections: Iterable[str], *, created: str, what: str
) -> str:
    """The styled, self-contained page around ``sections`` (table of contents: ``present``)."""
    toc = " ".join(f'<a href="#{s}">{_e(REPORT_SECTIONS[s])}</a>' for s in present)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="VoxMetrics {_e(__version__)}">'
        f"<title>{_e(title)}</title><style>{_CSS}</style>"
        f'<script type="text/javascript" id="plotlyjs">{plotly.offline.get_plotlyjs()}</script>'
        "</head><body><main>"
        f'<header><h1>{_e(title)}</h1><p class="sub">Privacy metrics of anonymised speech, '
        f"computed {_e(created)} by VoxMetrics {_e(__version__)}.</p></header>"
        f'<nav class="toc">{toc}</nav>'
        + "".join(sections)
        + f"<footer>VoxMetrics {_e(__version__)} · {_e(what)} · "
        f"{_e(created)}</footer></main></body></html>\n"
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
    figure = _Figures()
    sr: Any = view  # the sections read only .reports and .card
    sections = [
        _card(sr, colors),
        _input_warnings(view.reports),
        _overview(sr, colors, figure),
        _lid(sr, colors, figure),
        _srd(sr, colors, figure),
        _methods(),
    ]
    present = ["report-card", "overview", "lid", "srd", "methods"]
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    names = ", ".join(r.name for r in view.reports)
    return _page(title, present, sections, created=created, what=names)
