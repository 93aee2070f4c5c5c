"""Overview: the report card, one row of metrics per condition and the EER figures."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.sbls import attack_sbls, default_attack
from voxmetrics.analysis.strongest import strongest_attackers
from voxmetrics.evaluation import compare_conditions, voice_conditions
from voxmetrics.evaluation.card import FLIP_MARK, FLIP_SHARE, report_card
from voxmetrics.plots import eer_linkability_figure
from voxmetrics.plots.card import (
    card_notes_markdown,
    card_rationale,
    card_stability_table,
    card_table,
    report_card_figure,
    thresholds_markdown,
)
from voxmetrics.plots.overview import eer_lidmax_figure
from voxmetrics.report import (
    COMPARISON_COLUMNS,
    INTERVALS_COLUMNS,
    OVERVIEW_COLUMNS,
    comparison_frame,
    intervals_frame,
    labelled,
    number_references,
    overview_frame,
)
from voxmetrics.ui.attackers_page import show_card_attackers

study = ui.page_setup("Overview")
st.title("Overview")
ui.require_conditions(study)
st.caption(
    "Every condition at a glance, then every metric. Conditions are evaluated with the study's "
    "settings (bootstrap replicates, seed, cross-calibration, tie rule), set on the Report page."
)

settings = study.settings
reports = ui.study_reports(study, **settings.evaluate_options())
if not reports:
    st.stop()

# a markdown heading: tests/app/test_overview.py pins the page's st.subheader list
st.markdown("### Report card")
sbls: dict[str, float | None] = {}
attacks = {}
for r in reports:  # the informed attacker of the study report (each trained once)
    spinner = f"Soft-biometric leakage (SBLS) of {r.name}…"
    attack = ui.compute(default_attack, study.get(r.name), spinner=spinner, warn=r.name)
    attacks[r.name] = attack.value
    leak = None if attack.value is None else ui.compute(attack_sbls, attack.value, warn=r.name)
    sbls[r.name] = None if leak is None or leak.value is None else leak.value.sbls
judged = ui.compute(strongest_attackers, study.conditions).value  # the strongest attacker tried
card = report_card(reports, sbls=sbls, attackers=judged)
ui.show_report_card(card)
show_card_attackers(card)  # which attacker each row judges; the weak-attacker warnings
interval = (
    f"its 95 % speaker-bootstrap interval ({settings.bootstrap} replicates) in brackets"
    if settings.bootstrap
    else "no interval (bootstrap off in the study settings)"
)
st.caption(
    f"Each cell is coloured by a fixed threshold (see below). LIDmax: point estimate, {interval} "
    "(for its 0.95 quantile: a maximum has no sound bootstrap interval). ZEBRA tag with the "
    "worst-case log10 l. Linkability: share of trials linked to their speaker among the N "
    "enrolled, against chance 1/N, with its interval. With the bootstrap on, linkability and "
    "LIDmax are coloured only when their interval lies above chance; otherwise they read "
    '"≈ chance": green when chance itself is safe, "uninformative at this N" (never green) when '
    "chance sits at its ceiling log2 N or above a threshold. SBLS: soft-biometric leakage score of "
    "the informed attacker (the built-in classifier trained on the condition's own anonymised "
    "dev embeddings; docs, Methods > SBLS); – when the condition has no attribute-labelled "
    "embeddings. WER and UAR: the utility of the anonymised speech, so that no system looks "
    'good for free ("utility unknown" when the condition has none; see the Privacy vs '
    "utility page). One rule for every cell: a number whose interval reaches from the ok band "
    'into the risk band, or cannot be told from an unsafe chance level, is "uninformative at '
    f'N = n". {FLIP_MARK}: the level is kept by fewer than {FLIP_SHARE:.0%} of the bootstrap '
    "replicates (it flips often)."
)
notes = card_notes_markdown(card)
if notes:
    with st.expander("Why some cells read as they do, and which levels flip", expanded=True):
        st.markdown(notes)
if settings.bootstrap:
    with st.expander("How firm each level is (share of bootstrap replicates keeping it)"):
        stability = card_stability_table(card)
        st.table(stability.fillna("—").set_index("Condition"))
        st.caption(
            f"The share of the {settings.bootstrap} speaker-bootstrap replicates whose number "
            "has the cell's level (utility resampled over its own speakers). —: an "
            "uninformative or n/a cell, or a number without replicates (SBLS here; a utility "
            "known only as a number, taken as fixed)."
        )
        ui.download_table(stability, "report_card_stability.csv", label="Stability (CSV)")
with st.expander("How the card is coloured"):
    st.markdown(thresholds_markdown())
    st.markdown(card_rationale())
    st.caption("These are VoxMetrics' reading aids, not legal limits.")
with st.container(horizontal=True, vertical_alignment="center", gap="small"):
    ui.download_table(card_table(card), "report_card.csv", label="Report card (CSV)")
    ui.download_figure(lambda: report_card_figure(card), "report_card", label="Report card")

st.markdown("### Metrics")
st.caption(
    "One row per condition with every metric available so far. T: trials scored, N: enrolled "
    "identities, Excluded: trials whose speaker is not enrolled."
)

table = overview_frame(reports).rename(columns=OVERVIEW_COLUMNS)
ui.show_table(
    table,
    "overview.csv",
    column_help={
        "EER": "1-to-1 verification equal error rate (0.5 = chance).",
        "Cllr": "Meaningful only when the scores are log-likelihood ratios.",
        "min Cllr": "Cllr after optimal (PAV) calibration: discrimination only.",
        "Linkability": "Share of trials whose own speaker scores highest among the N.",
        "Chance (1/N)": "Linkability of a random guess.",
    },
)
st.caption(
    "Cllr is meaningful only if the scores are log-likelihood ratios (cosine scores are not); "
    "min Cllr measures discrimination after calibration and is always meaningful."
)

# markdown headings: tests/app/test_overview.py pins the page's st.subheader list
st.markdown("### Intervals and excess over chance")
if settings.bootstrap:
    ivs = intervals_frame(reports).merge(
        number_references(reports), on=["condition", "key"], how="left"
    )
    ui.show_table(
        labelled(ivs, {**INTERVALS_COLUMNS, "read_against": "Unit and reference"}),
        "intervals.csv",
        column_help={
            "Unit and reference": "What the number is read against: its unit, its chance "
            "level and its ceiling (LID numbers at most log2 N bits).",
            "95% low": "Speaker-level bootstrap: trial speakers drawn with replacement.",
            "Chance": "Expected value when the scores carry no speaker information, on this "
            "condition's own scores (each trial's identity replaced by a random column).",
            "Excess over chance": "Value minus chance, in the number's unit. A LID chance level "
            "far below 0 bits (a random identity is confidently wrong) makes this exceed "
            "log2 N: read LID numbers against their ceiling instead.",
        },
    )
    st.caption(
        f"95 % intervals from {settings.bootstrap} speaker-level bootstrap replicates. A number "
        "whose interval contains its chance level cannot be told apart from chance. Maxima "
        "(LIDmax, MaxD, log10 l) have no interval: read their q95 rows, the level exceeded by "
        "5 % of trials."
    )
else:
    st.caption("Bootstrap off in the study settings (Report page): no intervals.")

st.markdown("### Compare two conditions")
names = [r.name for r in reports]
if len(names) < 2:
    st.caption("Add a second condition to compare.")
else:
    left, right = st.columns(2)
    name_a = left.selectbox("Condition A", names, index=0, key="compare_a")
    name_b = right.selectbox("Condition B", names, index=1, key="compare_b")
    n_pairs = max(200, settings.bootstrap)
    by_name = {r.name: r for r in reports}
    voices = voice_conditions(study)
    out = ui.compute(
        compare_conditions,
        study.get(name_a),
        study.get(name_b),
        n_boot=n_pairs,
        seed=settings.seed,
        cross_calibrate=settings.cross_calibrate,
        lid_variant=settings.lid_variant,
        ties=settings.ties,
        linkability_rule=settings.linkability_rule,  # as the reports above
        original=study.conditions[0],  # the report's original voices (DeID, G_VD)
        voices=(voices.get(name_a), voices.get(name_b)),  # each anonymiser's voices
        reports=(by_name[name_a], by_name[name_b]),  # their LID, singling out, replicates
        attacks=(attacks[name_a], attacks[name_b]),  # the card's SBLS attackers
        bar="Paired bootstrap",
        warn=False,
    )
    if not out.failed:
        ui.show_table(
            labelled(comparison_frame(out.value), COMPARISON_COLUMNS),
            f"compare_{name_a}_{name_b}.csv",
            column_help={
                "p": "Two-sided p-value of no difference: normal approximation of the paired "
                "speaker-level bootstrap distribution of B − A (z = difference / its bootstrap "
                "sd); not floored.",
                "p (resampled, ≥ 1/(B+1))": "The resampling p-value, for comparison: it can "
                "never go below 1/(B+1).",
                "p (Holm)": "Holm-adjusted over every number of this comparison: read this "
                "one when scanning the whole table.",
                "Not compared because": "Why a number has no difference (e.g. a condition "
                "without utterance embeddings has no singling out, DeID or G_VD).",
            },
        )
        st.caption(
            f"Paired on the speakers the two conditions share ({n_pairs} replicates: the same "
            "speakers drawn for both). p: normal approximation of the bootstrap distribution of "
            "the difference, not floored; the resampling p cannot go below "
            f"1/({n_pairs}+1) = {1 / (n_pairs + 1):.4f}. Many numbers are tested at once; "
            "p (Holm) keeps the chance of any false difference in the table below 5 % at "
            "p < 0.05. Maxima are "
            "compared through their q95 rows. DeID and G_VD: against the voices of "
            f"**{ui.md_escape(study.conditions[0].name)}**, the study's first condition, as in "
            "the report; they describe the anonymiser, so every attacker set-up of one "
            "anonymiser shares them (its lazy-informed embeddings first); they and singling "
            "out need utterance embeddings. B − A reads condition B minus condition A."
        )

st.subheader("EER vs linkability")
fig = eer_linkability_figure(reports)
ui.show_figure(fig, "eer_vs_linkability", show_title=False)
st.caption(
    "A high EER can coexist with high linkage: the EER pools every score of the study, while "
    "linkage asks, trial by trial, whether the right speaker ranks first among the N enrolled. "
    "Dashed: the chance linkability 1/N; dotted: the chance EER 0.5."
)

# a markdown heading: tests/app/test_overview.py pins the page's st.subheader list
st.markdown("### EER vs worst-case disclosure (LIDmax)")
ui.show_figure(eer_lidmax_figure(reports), "eer_vs_lidmax", show_title=False)
no_lid = [r.name for r in reports if r.lid is None]
st.caption(
    "Conditions with the same near-chance EER can expose very different worst cases: LIDmax "
    "is the most information a single trial gives away about its speaker (at most log₂ N "
    "bits). The shaded corner holds the conditions with EER ≥ 0.45 and LIDmax ≥ 1 bit, which "
    "look private on the 1-to-1 view but single out some trials. Dashed: 1 bit; dotted: the "
    "chance EER 0.5 and the log₂ N ceiling."
    + (
        f" Without LID (no dev set to calibrate on): {', '.join(ui.md_escape(n) for n in no_lid)}"
        "; the LID page can cross-calibrate them on eval."
        if no_lid
        else ""
    )
)
st.page_link("pages/3_LID.py", label="LID: trial by trial", icon=":material/insights:")
