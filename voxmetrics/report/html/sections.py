"""The sections of the numbers, then the methods and the data.

Overview, LID, SRD, ZEBRA, verification, linkage (with DeID and G_VD per anonymiser), SBLS, the
intervals and the paired comparisons, each number with its unit and reference point; privacy
against utility is :mod:`~voxmetrics.report.html.utility`'s.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from voxmetrics._types import MISSING
from voxmetrics.analysis.lid import lid_table
from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.bootstrap import bounds_text
from voxmetrics.metrics.paired import P_VALUE_METHOD
from voxmetrics.metrics.zebra import ECECurves
from voxmetrics.plots.lid import lid_ccdf_figure
from voxmetrics.plots.linkage import linkability_vs_n_figure, singling_out_figure
from voxmetrics.plots.overview import eer_lidmax_figure, eer_linkability_figure
from voxmetrics.plots.sbls import components_figure, identity_figure
from voxmetrics.plots.srd import mean_d_bar_figure, rank_distribution_figure
from voxmetrics.plots.verification import ape_figure, det_figure
from voxmetrics.plots.zebra import ZebraProfile, ece_profile_figure
from voxmetrics.report.frames import (
    OVERVIEW_COLUMNS,
    comparison_frame,
    number_references,
    overview_frame,
    verification_frame,
)
from voxmetrics.report.html.blocks import (
    PAPERS,
    Figures,
    asset,
    esc,
    interval_cell,
    json_name,
    json_safe,
    method_definitions,
    names_of,
    section,
    table_html,
)
from voxmetrics.report.study import StudyReport

__all__ = [
    "compare_section",
    "data_section",
    "intervals_section",
    "lid_section",
    "linkability_rule_note",
    "linkage_section",
    "methods_section",
    "overview_section",
    "sbls_section",
    "srd_section",
    "verification_section",
    "zebra_section",
]


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


_SBLS_READ_AGAINST = "score in [0, 1]; 1 = no measurable leakage (higher is safer)"
"""What SBLS and its components are read against (the number references have no SBLS)."""


def _read_against(sr: StudyReport) -> dict[tuple[str, str], str]:
    """(condition, key) -> the number's unit and reference point, SBLS and its parts included."""
    refs = number_references(sr.reports)
    out = {
        (c, k): t
        for c, k, t in zip(refs["condition"], refs["key"], refs["read_against"], strict=True)
    }
    for r in sr.reports:
        for key in ("sbls", "p_attr", "p_assoc", "p_subgroup"):
            out.setdefault((r.name, key), _SBLS_READ_AGAINST)
    return out


def overview_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """The overview: the headline table, its notes and the EER-against-privacy figures."""
    df = overview_frame(sr.reports).rename(columns=OVERVIEW_COLUMNS)
    return section(
        "overview",
        table_html(df, colors=colors, wide=True)
        + "<p class='note'>EER: VoicePrivacy 2024 definition; Cllr is meaningful only when the "
        "scores are log-likelihood ratios; "
        + linkability_rule_note(_linkability_rule(sr.reports))
        + ".</p><p class='note'>Units and reference points: EER is a fraction of errors (0.5 = "
        "chance, the attacker's verification a coin toss); linkability and IdR are shares of "
        "trials, read against their chance level 1/N (its own column); ALID, LIDmax and MeanD "
        "are bits, 0 = nothing learned and at most log2 N (identified); D_ECE is bits, at most "
        "0.72; singling out a probability; WER and UAR fractions (WER 0 = every word right, "
        "UAR 0.25 = chance among four emotions); min Cllr and Cllr bits, 1 = no information. "
        "The <a href='#intervals'>Intervals</a> table gives each number's reference beside it."
        "</p>"
        + figure(eer_linkability_figure(sr.reports), "eer_linkability")
        + figure(eer_lidmax_figure(sr.reports), "eer_lidmax"),
    )


def lid_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """LID: the CCDF figure and the table with intervals; the conditions without LID."""
    with_lid = {r.name: r.lid for r in sr.reports if r.lid is not None}
    without = [r.name for r in sr.reports if r.lid is None]
    body = ""
    if with_lid:
        table = lid_table(with_lid).drop(columns="b")
        ivs = [(r.lid_intervals, r.lid.n_enrolled) for r in sr.reports if r.lid is not None]
        table.insert(4, "ALID 95% CI", [interval_cell(iv, "alid", 3, n) for iv, n in ivs])
        table.insert(10, "LID q95 95% CI", [interval_cell(iv, "lid_q95", 2, n) for iv, n in ivs])
        table = table.rename(columns={"Ceiling log2 N (bits)": "Ceiling log2 N"})
        body += (
            "<p>LID<sub>i</sub> = log<sub>2</sub>(N p<sub>i</sub>) bits: what trial i's "
            "calibrated scores tell the attacker about its speaker, against a random guess among "
            "the N enrolled (0 = nothing; log<sub>2</sub> N = identified).</p>"
            + figure(lid_ccdf_figure(with_lid, colors=colors), "lid_ccdf")
            + table_html(table, colors=colors)
        )
    if without:
        body += (
            f"<p>Without LID: {names_of(without, colors)}. LID is calibrated on a dev set of "
            "other speakers; add one, or set the study's cross-calibration (k folds on eval, "
            "labelled as such).</p>"
        )
    return section("lid", body)


def srd_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """SRD: the rank distributions with their beta-binomial models, MeanD, the table."""
    ranked = [r for r in sr.reports if r.srd is not None]  # not: sparse, no complete trial
    results = {r.name: r.srd for r in ranked if r.srd is not None}  # all of ranked: typed non-None
    fits = {r.name: [r.srd_model] if r.srd_model is not None else [] for r in ranked}
    return section(
        "srd",
        "<p>The rank of each trial's own speaker among the N enrolled; disclosure of rank k is "
        "log<sub>2</sub>(N p<sub>k</sub>) bits. Dotted: the beta-binomial model fitted with the "
        "CLL loss.</p>"
        + figure(rank_distribution_figure(results, fits, colors=colors), "rank_distribution")
        + figure(mean_d_bar_figure(ranked, colors=colors), "mean_d")
        + table_html(
            srd_table(results, fits, eer={r.name: r.baseline.eer for r in ranked}),
            colors=colors,
            formats={"α": ".4g", "β": ".4g"},
        ),
    )


def zebra_section(
    sr: StudyReport,
    colors: Mapping[str, str],
    figure: Figures,
    curves: Mapping[str, ECECurves] | None,
) -> str:
    """ZEBRA: the table with intervals and the ECE profiles (when the report has them)."""
    rows = [
        {
            "Condition": r.name,
            "EER": r.baseline.eer,
            # a report without the zebra part shows its numbers as missing
            "D_ECE (bits)": None if r.zebra is None else r.zebra.d_ece,
            "D_ECE 95% CI": interval_cell(r.zebra_intervals, "d_ece", 3),
            "log10 l": None if r.zebra is None else r.zebra.log10_l,
            "|log10 LR| q95 95% CI": interval_cell(r.zebra_intervals, "log10_l_q95", 2),
            "Tag": None if r.zebra is None else r.zebra.tag,
            "Posterior odds (flat prior)": None if r.zebra is None else r.zebra.odds,
            "Worst case from": None
            if r.zebra is None
            else ("mated score" if r.zebra.worst_is_mated else "non-mated score"),
        }
        for r in sr.reports
    ]
    body = (
        "<p>Expected disclosure D_ECE (bits, at most 0.721) and the worst-case strength of "
        "evidence log<sub>10</sub> l with its categorical tag (0, A to F).</p>"
        + table_html(pd.DataFrame(rows), colors=colors)
    )
    curves = curves or {}
    profiles = [
        ZebraProfile(r.name, r.zebra, curves[r.name])
        for r in sr.reports
        if r.name in curves and r.zebra is not None
    ]
    if profiles:
        fig = ece_profile_figure(profiles, colors=colors)
        # a legend title beside a wrapping horizontal legend can push its first row off the
        # figure at print width: put it above the entries
        fig.update_layout(legend={"title": {"side": "top"}})
        body += figure(fig, "ece_profiles")
    return section("zebra", body)


def verification_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """Verification: minDCF, actDCF and d' per condition, the DET curves and the APE plot."""
    results = {r.name: r.verification for r in sr.reports if r.verification is not None}
    if not results:
        return section("verification", "<p>No condition has verification results.</p>")
    kinds = {r.name: r.score_kind for r in sr.reports}
    distances = [n for n in results if kinds.get(n) == "distance"]
    body = (
        "<p>The standard speaker-verification outputs of the 1-to-1 comparisons, to set "
        "beside published ASV and VoicePrivacy results: normalised minimum detection cost "
        "(minDCF) per target prior, the actual cost (actDCF) where the scores are LLRs, and "
        "d'. A DCF of 1 is no better than deciding by the prior alone.</p>"
        + table_html(
            verification_frame(results, eer={r.name: r.baseline.eer for r in sr.reports}),
            colors=colors,
        )
    )
    if distances:
        body += f"<p>{names_of(distances, colors)}: distance scores, negated on reading.</p>"
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
    return section("verification", body)


def _anonymiser_block(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """DeID and G_VD per anonymiser: one value per system, shared by its attacker set-ups."""
    anonymisers = sr.voice_similarity()["anonymisers"]
    if not anonymisers:
        return ""

    def ci(entry: Mapping[str, Any], key: str, digits: int) -> str:
        low, high = (entry.get("intervals") or {}).get(key) or (None, None)
        return bounds_text(low, high, f".{digits}f") or MISSING

    table = pd.DataFrame(
        [
            {
                "Anonymiser": name,
                "DeID": e["deid"],
                "DeID 95% CI": ci(e, "deid", 3),
                "G_VD (dB)": e["g_vd"],
                "G_VD 95% CI": ci(e, "g_vd", 2),
                "Voices from": e["voices_from"] or MISSING,
                "Shared by": ", ".join(e["conditions"]),
            }
            for name, e in anonymisers.items()
        ]
    )
    return (
        '<div class="block" id="anonymisers"><h3>DeID and G_VD per anonymiser</h3>'
        "<p>DeID and G_VD describe the anonymiser, not the attacker: one value per system, "
        "measured on the embeddings of the condition in <em>Voices from</em> and shared by its "
        "attacker set-ups (<em>Shared by</em>). DeID: 0 = the voices are unchanged, 1 = no "
        "trace of the original voices. G_VD, in dB: 0 = the anonymised voices are as distinct "
        "from each other as the originals, below 0 = less distinct (−10 dB: ten times "
        "less).</p>"
        + table_html(table, colors=colors, name_column="Anonymiser", formats={"G_VD (dB)": ".2f"})
        + "</div>"
    )


def linkage_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """Linkage: the table, linkability against N' with its bands, singling out."""
    reports = {r.name: r for r in sr.reports}
    body = table_html(linkage_table(reports, *sr.distinctiveness()), colors=colors)
    body += (
        f"<p class='note'>{linkability_rule_note(sr.settings.linkability_rule).capitalize()}.</p>"
    )
    body += (
        f"<p>DeID and G_VD against the voices of {names_of([sr.original], colors)}, taken as the "
        "original (unprocessed) ones; empty for conditions without utterance embeddings.</p>"
        if sr.original is not None
        else ""
    )
    body += _anonymiser_block(sr, colors) + figure(
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
            f"<p>Without singling out: {names_of(lacking, colors)} (it needs utterance embeddings "
            "with several trials per speaker).</p>"
        )
    return section("linkage", body)


def sbls_section(sr: StudyReport, colors: Mapping[str, str], figure: Figures) -> str:
    """SBLS: the components with intervals, their figures and the table per attribute."""
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
                row[f"{label} 95% CI"] = interval_cell(intervals.get(name), key, 3)
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
        + table_html(pd.DataFrame(rows), colors=colors, wide=bool(intervals))
        + figure(components_figure(results, intervals or None), "sbls_components")  # type: ignore[arg-type]
    )
    undefined = [n for n, s in results.items() if s is not None and s.sbls is None]
    if undefined:
        sizes = sorted({s.min_group_size for s in results.values() if s is not None})
        body += (
            f"<p>No SBLS for {names_of(undefined, colors)}: no intersection of the attributes "
            f"reaches the minimum subgroup size ({', '.join(map(str, sizes))} trials), so "
            "P_subgroup, and with it SBLS, is not defined; P_attr and P_assoc are.</p>"
        )
    if len(undefined) < len(results):
        body += figure(
            identity_figure(results, sr.reports, colors=colors),  # type: ignore[arg-type]
            "sbls_identity",
        )
    body += "<h3>Per attribute</h3>" + table_html(pd.DataFrame(attrs), colors=colors)
    if lacking:
        body += (
            f"<p>Without SBLS: {names_of(lacking, colors)} (it needs embeddings with attribute "
            "columns and a dev split).</p>"
        )
    return section("sbls", body)


def intervals_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """Every number with its bootstrap interval and chance level (or why there is none)."""
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
        return section(
            "intervals",
            "<p>No intervals: the report was computed without the bootstrap (set the study's "
            "bootstrap replicates above 0).</p>",
        )
    refs = _read_against(sr)
    table = pd.DataFrame(
        {
            "Condition": df["condition"],
            "Number": df["number"],
            "Value": df["value"],
            "95% interval": [
                bounds_text(lo, hi) or MISSING for lo, hi in zip(df["low"], df["high"], strict=True)
            ],
            "Chance": df["chance"],
            "Excess over chance": df["excess"],
            "Unit and reference": [
                refs.get((c, k), MISSING) for c, k in zip(df["condition"], df["key"], strict=True)
            ],
        }
    )
    refs_note = (
        "<p class='note'>Unit and reference: what each number is read against, its unit, "
        "chance level and ceiling. A LID number's chance level can lie far below 0 bits (a "
        "random identity's calibrated score is confidently wrong), so its excess over chance "
        "can exceed log2 N: read ALID, LID+ and LIDmax against their ceiling log2 N beside "
        "it, not as bits learned.</p>"
    )
    n_boot = sr.settings.bootstrap
    return section(
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
        f"{esc(sr.original or MISSING)}, resample the speakers of the similarity matrices, the "
        "matrices held fixed (no chance level).</p>"
        + refs_note
        + table_html(table, colors=colors, wide=True),
    )


def compare_section(sr: StudyReport, colors: Mapping[str, str]) -> str:
    """The paired comparisons against the reference condition, one table per pair."""
    if not sr.comparisons:
        return section(
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
        f"<p>Each condition (B, named first in each heading and first among the columns) "
        f"against {esc(reference_text)} (A), on the speakers they share: the "
        "difference B − A of every number, in the number's unit (0 = no difference; its unit "
        "and reference point in the <em>Unit and reference</em> column, for B), "
        "its 95 % interval and a two-sided p-value from a "
        "paired speaker-level bootstrap (the same speakers drawn for both conditions): "
        f"{esc(P_VALUE_METHOD)} = {esc(floor_text)}. Many numbers "
        "are compared at once, so read <em>p (Holm)</em>, Holm's adjustment over the numbers "
        "of one pair, which keeps the chance of any false difference in the pair below the "
        "level; pairs are not adjusted against each other. SBLS and its three components, "
        "when both conditions have them, form a family of their own (the attacker of each "
        "condition is trained once, the eval speakers are drawn as for the other numbers), and "
        "so do singling out, DeID and G_VD, resampled with the same speakers; a condition "
        "without utterance embeddings has none of them, and the last column says so.</p>"
    )
    refs = _read_against(sr)
    for pair, comp in sr.comparisons.items():
        df = comparison_frame(comp)
        b_name = pair.removesuffix(f" vs {reference}") if pair.endswith(f" vs {reference}") else ""
        b_col, a_col = (f"B: {b_name}", f"A: {reference}") if b_name else ("B", "A")
        table = pd.DataFrame(
            {
                "Number": df["number"],
                b_col: df["b"],
                a_col: df["a"],
                "B − A": df["difference"],
                "95% interval": [
                    bounds_text(lo, hi) or MISSING
                    for lo, hi in zip(df["low"], df["high"], strict=True)
                ],
                "p": df["p_value"],
                "p (Holm)": df["p_adjusted"],
                "p (resampled, ≥ 1/(B+1))": df["p_resampled"],
                "Unit and reference": [refs.get((b_name, k), MISSING) for k in df["key"]],
            }
        )
        if df["reason"].notna().any():
            table["Not compared because"] = df["reason"].fillna("")
        heading = (
            f"{esc(b_name)} vs {esc(reference)} <small>(B − A: {esc(b_name)} minus "
            f"{esc(reference)})</small>"
            if b_name
            else esc(pair)
        )
        body += f"<h3>{heading}</h3>" + table_html(table, name_column="Number", wide=True)
    return section("compare", body)


def _paper(key: str) -> str:
    title, authors, url = PAPERS[key]
    if not url:
        url = "https://scholar.google.com/scholar?q=" + urllib.parse.quote_plus(f'"{title}"')
    by = f", {esc(authors)}" if authors else ""
    return f'<a class="paper" href="{esc(url)}" rel="noopener noreferrer">{esc(title)}</a>{by}'


def methods_section() -> str:
    """The methods: the definitions (``assets/methods.md``) and the papers."""
    items = "".join(
        f"<dt>{esc(t)}</dt><dd>{esc(d)}{'' if p is None else ' (' + _paper(p) + ')'}</dd>"
        for t, d, p in method_definitions()
    )
    refs = "".join(f"<li>{_paper(k)}</li>" for k in PAPERS)
    return section(
        "methods",
        f'<dl class="defs">{items}</dl><h3>Papers</h3><ul>{refs}</ul>'
        "<p class='note'>Exact definitions, including where VoxMetrics departs from a paper's "
        "text, are in the VoxMetrics documentation (Methods).</p>",
    )


def data_section(sr: StudyReport) -> str:
    """Every number as JSON in the page, and the button that downloads it."""
    payload = json.dumps(json_safe(sr.to_dict()), allow_nan=False, ensure_ascii=False)
    # inside <script> only "</" and "<!--" can end or confuse the element: escape every < > &
    payload = payload.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    filename = json_name(sr.study.name)
    return section(
        "data",
        "<p>Every number of this report is embedded in this page as JSON (the script element "
        "<code>voxmetrics-data</code>); <code>python -m voxmetrics report STUDY.vxm --json "
        "OUT</code> writes the same object, and <code>--csv DIR</code> the tables.</p>"
        f'<p><button type="button" class="download" id="voxmetrics-download" '
        f'data-filename="{esc(filename)}">Download the JSON</button></p>'
        f'<script type="application/json" id="voxmetrics-data">{payload}</script>'
        f"<script>\n{asset('download.js')}</script>",
    )
