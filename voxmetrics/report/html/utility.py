"""The Privacy vs utility section: one front per attacker, the ranking and how firm it is.

The figures draw one attacker's plane at a time (:func:`~voxmetrics.plots.utility.tradeoff_figure`
with ``attacker``): the report's :attr:`~voxmetrics.report.study.StudyReport.front_attacker`
first (the attacker VoicePrivacy ranks on, when the study has it), then one figure per other
attacker. Below them, VoicePrivacy 2024's ranking, how firm each of its entries is under
resampling of speakers (``p_band``, the rank's interval, ``p_rank1``, Kendall's τ per band) and
the auditors' call-out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from voxmetrics._types import MISSING
from voxmetrics.analysis.ranking import (
    EER_BANDS,
    LEAK_LID_MAX,
    LEAK_LINKABILITY_FACTOR,
    RANKING_ATTACKER,
    VoicePrivacyRanking,
)
from voxmetrics.analysis.tradeoff import NO_UTILITY_HELP, Tradeoff
from voxmetrics.metrics.bootstrap import bounds_text
from voxmetrics.plots.utility import tradeoff_figure
from voxmetrics.report.frames import callouts_frame
from voxmetrics.report.html.blocks import Figures, esc, names_of, section, table_html
from voxmetrics.report.study import StudyReport

__all__ = ["fronts_note", "ranking_stability_block", "utility_section"]

_PLANES = (("eer", "wer", "eer_wer"), ("eer", "uar", "eer_uar"), ("lid_max", "wer", "lidmax_wer"))
"""The planes drawn for the first attacker: (privacy, utility, figure name)."""


def _slug(text: str) -> str:
    """``text`` as a piece of an element id (letters, digits and dashes)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "attacker"


def fronts_note(tradeoff: Tradeoff, colors: Mapping[str, str]) -> str:
    """Each attacker's Pareto front in words, as the JSON's ``fronts`` lists them ("" if none)."""
    items = [
        f"<li><b>{esc(a)}</b>: {names_of([p.condition for p in tradeoff.front_of(a)], colors)}</li>"
        for a in tradeoff.attackers
    ]
    if not items:
        return ""
    return (
        f"<p>The Pareto front of each attacker ({esc(tradeoff.privacy_label)} against "
        f"{esc(tradeoff.utility_label)}), from the most private to the most useful:</p>"
        f'<ul class="fronts">{"".join(items)}</ul>'
    )


def _utility_reference_text(sr: StudyReport) -> str:
    """The original speech's WER and UAR, the reference point of the utility numbers."""
    ref = sr.tradeoff("eer", "wer").reference
    if ref is None:
        return ""
    uar = next(
        (p.utility for p in sr.tradeoff("eer", "uar").references if p.condition == ref.condition),
        None,
    )
    parts = [f"WER {ref.utility:.3f}"] if ref.utility is not None else []
    parts += [f"UAR {uar:.3f}"] if uar is not None else []
    if not parts:
        return ""
    return f" The original speech ({esc(ref.condition)}) has {' and '.join(parts)}."


def _ranking_block(sr: StudyReport, ranking: VoicePrivacyRanking, colors: Mapping[str, str]) -> str:
    bands = ", ".join(f"{b:.0%}" for b in EER_BANDS)
    body = (
        "<h3>VoicePrivacy ranking</h3>"
        f"<p>VoicePrivacy 2024's rule: a system enters every band whose minimum EER ({bands}) "
        f"its {esc(ranking.attacker)} attacker's EER reaches, compared at 0.001 % (banded on "
        f"{esc(ranking.eer_rule)}); within a band, systems are ranked by WER (lower first, UAR "
        "breaking ties) and, in the second table, by UAR (higher first).</p>"
        "<p class='note'>Units: EER, WER and UAR are fractions. EER 0.5 = chance (the "
        "attacker's verification is a coin toss), 0 = every comparison right; WER 0 = every "
        "word recognised, 0.30 = about one word in three garbled; UAR 0.25 = chance among four "
        f"emotions.{_utility_reference_text(sr)}</p>"
    )
    if ranking.rows:
        body += table_html(
            ranking.frame(), colors=colors, name_column="System", formats={"Rank": ".0f"}
        )
    else:
        body += f"<p>No condition under the {esc(RANKING_ATTACKER)} attacker reaches a band.</p>"
    if ranking.uar_rows:
        body += table_html(
            ranking.uar_frame(), colors=colors, name_column="System", formats={"Rank": ".0f"}
        )
    if ranking.unranked:
        body += table_html(ranking.unranked_frame(), colors=colors, name_column="System")
    return body


def _tau_frame(ranking: VoicePrivacyRanking) -> pd.DataFrame:
    """Kendall's τ of each band: median, 95 % interval, replicates where it is defined."""
    stability = ranking.stability
    assert stability is not None
    rows = []
    for band, t in stability.kendall_tau.items():
        low, high = t.get("low"), t.get("high")
        rows.append(
            {
                "EER band": f"EER >= {band:.0%}",
                "Kendall's τ (median)": t.get("median"),
                "95% interval": bounds_text(low, high) or MISSING,
                "Replicates": t.get("n"),
            }
        )
    return pd.DataFrame(rows)


def ranking_stability_block(ranking: VoicePrivacyRanking, colors: Mapping[str, str]) -> str:
    """How firm the ranking is: P(in band), rank interval, P(rank 1), Kendall's τ, the notes.

    The numbers of the JSON's ``ranking.rows`` (``p_band``, ``rank_interval``, ``p_rank1``)
    and ``ranking.stability`` (``p_band`` of every system, ``kendall_tau``, ``fixed``,
    ``notes``); without replicates, a sentence saying that nothing says how firm it is.
    """
    head = '<div class="block" id="ranking-stability"><h3>How firm the ranking is</h3>'
    stability = ranking.stability
    if stability is None:
        return (
            f"{head}<p>No bootstrap: the ranking comes from one draw of the speakers, and "
            "nothing says how firm it is (set the study's bootstrap replicates above 0).</p></div>"
        )
    body = (
        f"<p>Each of {stability.n_replicates} speaker-bootstrap replicates is ranked again by "
        "the same rule, as the literature on the stability of challenge rankings does "
        "(Maier-Hein et al. 2018; the challengeR package). <b>P(in band)</b>: the share of "
        "replicates whose EER reaches the band (1 = always, 0.5 = a coin toss). <b>Rank 95% "
        "interval</b>: the 2.5 and 97.5 percentiles of the system's rank over the replicates "
        "where it is in the band, widened to hold the point rank (a single number: the rank "
        "never moves). <b>P(rank 1)</b>: the share of all the replicates in which it ranks "
        "first in the band. A rank is firm when P(in band) is near 1 and its interval is one "
        "rank.</p>"
    )
    if ranking.rows:
        body += table_html(
            ranking.stability_frame(), colors=colors, name_column="System", formats={"Rank": ".0f"}
        )
    bands = ranking.band_frame()
    bands["Taken as fixed"] = [
        ", ".join(k.upper() for k in stability.fixed.get(s, ())) or MISSING for s in bands["System"]
    ]
    body += (
        "<p>The chance of entering each band, for every system with an EER, ranked or not (a "
        "system just below a band gets its chance of entering it); <em>Taken as fixed</em>: "
        "its numbers without replicates, held at their value in every replicate.</p>"
        + table_html(bands, colors=colors, name_column="System")
        + "<p>Kendall's τ-b between the point ranking of each band and each replicate's "
        "(systems outside the band tied last): 1 = the same order, 0 = no agreement, "
        "−1 = the reverse order.</p>"
        + table_html(_tau_frame(ranking), name_column="EER band", formats={"Replicates": ".0f"})
    )
    if stability.notes:
        notes = "".join(f"<li>{esc(n)}</li>" for n in stability.notes)
        body += f"<p class='note'>How the replicates were drawn:</p><ul class='note'>{notes}</ul>"
    return f"{head}{body}</div>"


def _figures(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """The front attacker's three planes, then each other attacker's EER vs WER plane."""
    first = sr.front_attacker
    out = "".join(
        figure(tradeoff_figure(sr.tradeoff(p, u), colors=colors, attacker=first), name)
        for p, u, name in _PLANES
    )
    eer_wer = sr.tradeoff("eer", "wer")
    for attacker in eer_wer.attackers:
        if attacker != first:
            fig = tradeoff_figure(eer_wer, colors=colors, attacker=attacker)
            out += figure(fig, f"eer_wer_{_slug(attacker)}")
    return out


def utility_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """Privacy against utility: one front per attacker, the ranking, its stability, call-outs."""
    if not sr.has_utility:
        return section("utility", f"<p>{esc(NO_UTILITY_HELP)}</p>")
    eer_wer = sr.tradeoff("eer", "wer")
    others = [a for a in eer_wer.attackers if a != sr.front_attacker]
    planes = (
        f"The figures draw the plane of the <b>{esc(sr.front_attacker)}</b> attacker"
        + (" (the attacker VoicePrivacy ranks on)" if sr.front_attacker == RANKING_ATTACKER else "")
        + (
            f"; the EER against WER of each other attacker ({esc(', '.join(others))}) follows, "
            "one figure each"
            if others
            else ""
        )
        + ". "
        if sr.front_attacker is not None
        else ""
    )
    body = (
        "<p>Each condition's privacy against its utility. Each attacker's conditions have "
        "their own Pareto front, the dashed line (no other anonymised condition under that "
        "attacker is at least as private and as useful, and better on one): a system is never "
        f"dominated by itself under a weaker attacker. {planes}The star is the original speech "
        f"({esc(sr.utility_reference or MISSING)}), the reference point of every plane. Error "
        "bars: 95 % intervals where known.</p>"
        + _figures(sr, colors, figure)
        + fronts_note(eer_wer, colors)
    )
    ranking = sr.ranking()
    body += _ranking_block(sr, ranking, colors) + ranking_stability_block(ranking, colors)
    callouts = sr.utility_callouts()
    rule = (
        f"EER in a band while LIDmax is at least {LEAK_LID_MAX:g} bit or linkability is above "
        f"{LEAK_LINKABILITY_FACTOR:g}x its chance level 1/N"
    )
    body += "<h3>Ranked as private, still leaking</h3>"
    if callouts:
        body += (
            f"<p>Called out: {esc(rule)}. The band ranks these systems as private; the 1-to-N "
            "metrics say some of their speakers are still found.</p>"
            + table_html(callouts_frame(callouts), colors=colors, name_column="System")
        )
    else:
        body += f"<p>No ranked system is called out ({esc(rule)}).</p>"
    return section("utility", body)
