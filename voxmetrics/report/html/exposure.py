"""The "Who stays exposed" section: the speakers an attacker still finds, most exposed first.

Per speaker and condition, the rank-1 rate (against chance 1/N), the speaker's highest
per-trial LID (against the ceiling log2 N) and whether the speaker is singled out, with the
speaker's sex and age group where known and the count of conditions under which the speaker
stays exposed: the numbers of the JSON's ``exposed_speakers`` (:mod:`voxmetrics.analysis.exposure`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from voxmetrics._types import MISSING
from voxmetrics.analysis.exposure import EXPOSED_RANK1, SINGLED_OUT_RATE
from voxmetrics.report.html.blocks import esc, names_of, section, swatch
from voxmetrics.report.study import StudyReport

__all__ = ["exposure_section"]


def _reference(chance: float | None) -> str:
    """A condition's reference points: chance 1/N and LID's ceiling log2 N."""
    if chance is None or not chance > 0:
        return ""
    n = round(1.0 / chance)
    return f"chance 1/N = {chance:.3f}; LID at most log2 N = {math.log2(n):.2f} bits"


def _chances(speakers: list[dict[str, Any]], conditions: list[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in conditions:
        out[name] = next(
            (s["conditions"][name]["chance"] for s in speakers if name in s["conditions"]), None
        )
    return out


def _cell(h: Mapping[str, Any] | None) -> str:
    """One speaker under one condition: rank-1 rate, LIDmax, singled out; exposed shaded."""
    if h is None:
        return f'<td class="num">{MISSING}</td>'
    rate = MISSING if h["rank1_rate"] is None else f"{h['rank1_rate']:.3f}"
    lines = [f"<b>{rate}</b>" if h["exposed"] else rate]
    if h.get("lid_max") is not None:
        lines.append(f"<small>LIDmax {h['lid_max']:.2f} bits</small>")
    if h.get("singled_out"):
        lines.append("<small>singled out</small>")
    cls = "num exposed" if h["exposed"] else "num"
    return f'<td class="{cls}">{"<br>".join(lines)}</td>'


def _speakers_table(
    speakers: list[dict[str, Any]], conditions: list[str], colors: Mapping[str, str]
) -> str:
    chances = _chances(speakers, conditions)
    shared = len(set(chances.values())) == 1  # one N: its reference is said once, above
    attrs = [
        (key, label)
        for key, label in (("sex", "Sex"), ("age_group", "Age group"))
        if any(s.get(key) is not None for s in speakers)
    ]
    head = (
        "<th>Speaker</th>"
        + "".join(f"<th>{label}</th>" for _, label in attrs)
        + "<th>Exposed under</th><th>Mean rank-1 rate</th>"
        + "".join(
            f"<th>{swatch(colors.get(c))}{esc(c)}"
            + ("" if shared else f"<br><small>{esc(_reference(chances[c]))}</small>")
            + "</th>"
            for c in conditions
        )
    )
    rows = []
    for s in speakers:
        mean = s["mean_rank1_rate"]
        cells = [f"<td>{esc(s['speaker'])}</td>"]
        cells += [f"<td>{esc(s.get(key) or MISSING)}</td>" for key, _ in attrs]
        cells.append(f'<td class="num">{s["n_exposed"]} of {s["n_conditions"]}</td>')
        cells.append(f'<td class="num">{MISSING if mean is None else f"{mean:.3f}"}</td>')
        cells += [_cell(s["conditions"].get(c)) for c in conditions]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="table-wrap"><table class="exposure"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _per_condition(speakers: list[dict[str, Any]], conditions: list[str]) -> str:
    """How many speakers each condition leaves exposed and singles out."""
    chances = _chances(speakers, conditions)
    rows = []
    for c in conditions:
        hits = [s["conditions"][c] for s in speakers if c in s["conditions"]]
        exposed = sum(1 for h in hits if h["exposed"])
        singled = sum(1 for h in hits if h.get("singled_out"))
        known = any(h.get("singled_out") is not None for h in hits)
        rows.append(
            f"<tr><td>{esc(c)}</td><td class='num'>{exposed} of {len(hits)}</td>"
            f"<td class='num'>{f'{singled} of {len(hits)}' if known else MISSING}</td>"
            f"<td>{esc(_reference(chances[c])) or MISSING}</td></tr>"
        )
    return (
        '<div class="table-wrap"><table><thead><tr><th>Condition</th><th>Speakers exposed</th>'
        "<th>Singled out</th><th>Read against</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def exposure_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """Who stays exposed: each condition's count, then the speakers, most exposed first."""
    exposure = sr.exposure
    if exposure is None or not exposure.conditions:
        return section(
            "exposed",
            "<p>No speaker-level exposure: no condition besides the original speech has ranked "
            "trials.</p>",
        )
    data = exposure.to_dict()
    speakers: list[dict[str, Any]] = data["speakers"]
    conditions: list[str] = data["conditions"]
    left_out = [r.name for r in sr.reports if r.name not in conditions]
    body = (
        "<p>An auditor acts per data subject and a vendor fixes per speaker: beside each "
        "condition's numbers, who is still found. A speaker is <b>exposed</b> under a "
        f"condition when at least {EXPOSED_RANK1:.0%} of its trials rank its own identity first "
        "among the N enrolled (the rank-1 rate, against chance 1/N): an attacker who picks the "
        "top score finds that speaker more often than not, whatever the pooled EER says. "
        "<b>Singled out</b>: the predicate built from its enrolment isolates a single utterance "
        f"in at least {SINGLED_OUT_RATE:.0%} of the draws. LIDmax: the speaker's highest "
        "per-trial LID, in bits (0 = nothing learned, log2 N = identified)."
        + (
            f" The original speech ({names_of(left_out, colors)}) is left out: it exposes "
            "every speaker by design."
            if left_out
            else ""
        )
        + "</p>"
        + _per_condition(speakers, conditions)
    )
    exposed = [s for s in speakers if s["n_exposed"] > 0]
    every = [s["speaker"] for s in speakers if s["n_exposed"] == len(conditions)]
    if every:
        body += (
            f"<p><b>{len(every)} speaker{'s' if len(every) != 1 else ''} "
            f"{'stay' if len(every) != 1 else 'stays'} exposed under every condition</b>: "
            f"{esc(', '.join(every))}.</p>"
        )
    if not exposed:
        return section("exposed", body + "<p>No speaker is exposed under any condition.</p>")
    rest = [s["speaker"] for s in speakers if s["n_exposed"] == 0]
    chances = set(_chances(speakers, conditions).values())
    reference = (
        f"every condition: {_reference(chances.pop())}"
        if len(chances) == 1
        else "each column's head gives its chance 1/N and LID's ceiling log2 N"
    )
    body += (
        f"<h3>The {len(exposed)} speaker{'s' if len(exposed) != 1 else ''} exposed under at "
        "least one condition</h3>"
        "<p>Most exposed first (by the count of conditions, then the mean rank-1 rate over "
        "them). Each cell: the rank-1 rate (bold and shaded: exposed), the speaker's LIDmax and "
        f"whether it is singled out; {esc(reference)}.</p>"
        + _speakers_table(exposed, conditions, colors)
    )
    if rest:
        body += (
            f"<p class='note'>Exposed under no condition ({len(rest)}): {esc(', '.join(rest))} "
            "(their numbers are in the JSON, and in the exposed_speakers.csv of "
            "<code>report --verdicts DIR</code>).</p>"
        )
    return section("exposed", body)
