"""The sections that say what the study found: summary, verdict, report card, notes, threats."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from voxmetrics._types import MISSING
from voxmetrics._version import __version__
from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.threat import CALLOUT_EER, CALLOUT_LID_MAX, CALLOUT_LINKABILITY_FACTOR
from voxmetrics.plots.card import card_legend_html, card_rationale, level_css
from voxmetrics.report.html.blocks import esc, names_of, section, swatch, table_html
from voxmetrics.report.html.card import card_notes_block
from voxmetrics.report.study import StudyReport

__all__ = [
    "card_section",
    "input_warnings_section",
    "notes_section",
    "summary_section",
    "threat_section",
]


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
            f"{swatch(colors.get(c))}<strong>{esc(c)}</strong> ({esc(', '.join(m))})"
            for c, m in risk
        )
        parts.append(
            f"<p><strong>{len(risk)} of {n}</strong> condition{'s' if n != 1 else ''} "
            f"{'is' if len(risk) == 1 else 'are'} at risk on at least one metric: {items}.</p>"
        )
    if caution:
        items = "; ".join(
            f"{swatch(colors.get(c))}<strong>{esc(c)}</strong> ({esc(', '.join(m))})"
            for c, m in caution
        )
        parts.append(f"<p>Caution, no metric at risk: {items}.</p>")
    if ok:
        parts.append(
            f"<p>Within the report card's thresholds on every metric available: "
            f"{names_of(ok, colors)}.</p>"
        )
    if sr.callouts:
        for c in sr.callouts:
            parts.append(
                f"<p><strong>Looks private on the EER but is not:</strong> "
                f"{names_of([c.condition], colors)} has an EER of {c.eer:.3f}, yet "
                f"{esc('; '.join(c.reasons))} (see <a href='#threat'>Threat call-outs</a>).</p>"
            )
    else:
        parts.append(
            "<p>No condition looks private on the EER while still linking or singling out "
            "its trials (see <a href='#threat'>Threat call-outs</a>).</p>"
        )
    # which attacker each row is judged against, and the weak-attacker warnings
    lead = {"judged": "Judged against", "weak": "Warning", "not judged": "Not judged"}
    for name, kind, text in sr.card.attacker_notes():
        css = "" if kind == "weak" else " class='note'"
        parts.append(
            f"<p{css}><strong>{lead[kind]}</strong> ({names_of([name], colors)}): {esc(text)}.</p>"
        )
    parts.append(
        "<p class='note'>Levels follow the thresholds of the <a href='#report-card'>report "
        "card</a>: reading aids, not legal limits.</p>"
    )
    return f'<div class="verdict">{"".join(parts)}</div>'


def summary_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """The summary: study, settings, conditions, the verdict and the conditions' descriptions."""
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
        ("Study", esc(sr.study.name)),
        ("Computed", esc(sr.created)),
        ("VoxMetrics", esc(__version__)),
        ("Settings", esc(settings)),
        (
            "Conditions",
            f"{len(sr.reports)}: {names_of([r.name for r in sr.reports], colors)}",
        ),
    ]
    meta = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    described = [
        (r.name, sr.study.get(r.name).description, r.attacker)
        for r in sr.reports
        if r.name in sr.study.names
    ]
    desc = "".join(
        f"<tr><td>{swatch(colors.get(n))}{esc(n)}</td><td>{esc(a)}</td>"
        f"<td>{esc(d) or MISSING}</td></tr>"
        for n, d, a in described
    )
    table = (
        '<div class="table-wrap"><table><thead><tr><th>Condition</th><th>Attacker</th>'
        f"<th>Description</th></tr></thead><tbody>{desc}</tbody></table></div>"
    )
    return section(
        "summary", f'<dl class="meta">{meta}</dl><h3>Verdict</h3>{_verdict(sr, colors)}{table}'
    )


def card_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """The report card: the graded numbers, their legend, thresholds and rationale."""
    thresholds = list(REPORT_CARD_THRESHOLDS.values())
    head = "<th>Condition</th>" + "".join(f"<th>{esc(t.label)}</th>" for t in thresholds)
    rows = []
    for name, row in zip(sr.card.conditions, sr.card.cells, strict=True):
        cells = [f"<td>{swatch(colors.get(name))}{esc(name)}</td>"]
        for t, c in zip(thresholds, row, strict=True):
            cells.append(
                f'<td class="lvl lvl-{c.level.replace("/", "")}" style="{level_css(c.level)}" '
                f'title="{esc(t.label)}: {esc(c.level)}">'
                f'{esc(c.text)}<span class="lvl-tag">{esc(c.level)}</span></td>'
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = (
        f'<div class="table-wrap"><table class="card"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    legend = "".join(
        f"<tr><td>{esc(t.label)}</td><td>{esc(t.explanation)}</td></tr>" for t in thresholds
    )
    rationale = "".join(
        "<p class='note'>" + re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(p)) + "</p>"
        for p in card_rationale().split("\n\n")
        if p.strip()
    )
    return section(
        "report-card",
        "<p>One line per condition; each number is coloured by the level its threshold gives "
        "(n/a: not available). With the bootstrap, linkability shows its 95 % interval and "
        "LIDmax its 0.95 quantile with that quantile's interval; both are coloured only when "
        "the interval lies above the chance level of the condition's scores (else "
        '"≈ chance": green only when chance itself is safe; "uninformative at this N" when '
        "chance sits at its ceiling log2 N or above a threshold).</p>"
        f"{table}{card_notes_block(sr.card)}"
        f"<h3>Legend</h3><p class='legend-levels'>{card_legend_html()}</p>"
        '<div class="table-wrap"><table class="thresholds"><thead><tr><th>Metric</th>'
        f"<th>Thresholds</th></tr></thead><tbody>{legend}</tbody></table></div>{rationale}",
    )


def notes_section(sr: StudyReport) -> str:
    """The warnings of the conditions, once each, naming their condition (none: nothing)."""
    if not sr.notes:
        return ""
    items = []
    for note in sr.notes:
        name = next((n for n in sr.study.names if note.startswith(f"{n}: ")), "")
        text = note[len(name) + 2 :] if name else note
        items.append(
            f"<li><b>{esc(name)}</b>: {esc(text)}</li>" if name else f"<li>{esc(text)}</li>"
        )
    return (
        '<section class="notes"><h3>Notes on the data and the model fits</h3>'
        "<p class='note'>Warnings raised evaluating the conditions, each once: a model or "
        "calibration that did not converge, trials left out. The numbers that rest on them are "
        f"reported; read them with care.</p><ul>{''.join(items)}</ul></section>"
    )


def input_warnings_section(reports: Iterable[ConditionReport]) -> str:
    """What was left out of the conditions' incomplete input files, by condition (else "")."""
    items = [
        f"<li><b>{esc(r.name)}</b>: {esc(message)}</li>"
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


def threat_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """The threat call-outs: conditions that look private on the EER but link or single out."""
    rule = (
        f"EER at least {CALLOUT_EER:g} (looks private on the 1-to-1 view) and either LIDmax at "
        f"least {CALLOUT_LID_MAX:g} bit or linkability above {CALLOUT_LINKABILITY_FACTOR:g}x "
        "chance (1/N)"
    )
    if not sr.callouts:
        return section(
            "threat",
            f"<p>No condition crossed the call-out thresholds: {esc(rule)}.</p>",
        )
    blocks = []
    for c in sr.callouts:
        lid = MISSING if c.lid_max is None else f"{c.lid_max:.2f} bits"
        reasons = "".join(f"<li>{esc(r)}</li>" for r in c.reasons)
        blocks.append(
            f'<div class="callout"><h3>{swatch(colors.get(c.condition))}{esc(c.condition)}</h3>'
            f"<p>EER {c.eer:.3f}, linkability {c.linkability:.1%} (chance "
            f"{c.chance_linkability:.1%}), LIDmax {lid}.</p><ul>{reasons}</ul>"
            f"<p>Its most exposed trials:</p>{table_html(c.worst_trials)}</div>"
        )
    return section(
        "threat",
        f"<p>Called out: {esc(rule)}. An EER near 0.5 says that verification of one pair is at "
        "chance, not that a 1-to-N search fails.</p>" + "".join(blocks),
    )
