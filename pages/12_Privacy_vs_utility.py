"""Privacy vs utility: one front per attacker, VoicePrivacy's ranking and how firm it is, the
call-out."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.ranking import (
    EER_BANDS,
    LEAK_LID_MAX,
    LEAK_LINKABILITY_FACTOR,
    report_callouts,
    report_ranking,
)
from voxmetrics.analysis.strongest import strongest_attackers
from voxmetrics.analysis.tradeoff import has_utility, report_tradeoff
from voxmetrics.analysis.vpc import challenge_group_eers
from voxmetrics.evaluation.stability import ranking_replicates
from voxmetrics.plots.style import condition_colors
from voxmetrics.plots.utility import tradeoff_figure
from voxmetrics.ui.utility_page import (
    front_attacker,
    show_callouts,
    show_no_utility,
    show_ranking,
    show_ranking_stability,
    study_sbls,
    utility_controls,
)

study = ui.page_setup("Privacy vs utility")
st.title("Privacy vs utility")
ui.require_conditions(study)

st.markdown(
    "An anonymiser that destroys the speech hides the speaker for free. VoicePrivacy judges "
    "every system on privacy **against utility**: the word error rate of speech recognition "
    "(**WER**, lower is better), the unweighted average recall of emotion recognition "
    "(**UAR**, higher is better) and the pitch correlation with the original (**ρF0**, higher "
    "is better), all as fractions. Pick a privacy number and a utility number: each condition "
    "is a point, the dashed **Pareto front** joins the conditions no other one beats on both "
    "(one front per attacker: pick the attacker shown), and the star is the original speech."
)

reports = ui.study_reports(study, **study.settings.evaluate_options())
if not reports:
    st.stop()
if not has_utility(reports):
    show_no_utility()
    st.stop()

chosen = ui.compute(utility_controls, study, reports, cache=False).value
if chosen is None:
    st.stop()
sbls = study_sbls(study, reports) if chosen.privacy == "sbls" else None
outcome = ui.compute(
    report_tradeoff,
    reports,
    privacy=chosen.privacy,
    utility=chosen.utility,
    reference=chosen.reference,
    sbls=sbls,
    cache=False,
)
if outcome.failed:
    st.stop()
tradeoff = outcome.value
stem = f"privacy_vs_utility_{chosen.privacy}_{chosen.utility}"

st.subheader("Privacy against utility")
shown = front_attacker(tradeoff, chosen.attacker)
ui.show_figure(
    tradeoff_figure(tradeoff, colors=condition_colors(study.names), attacker=shown),
    f"{stem}_{shown}" if shown else stem,
    show_title=False,
)
st.caption(
    f"The **{shown}** attacker's conditions, labelled by their anonymiser, and the original "
    "speech (the star), with 95 % intervals as error bars where known (the study's bootstrap "
    "for the privacy numbers; utility intervals come with the utility numbers). A point is on "
    "the front when no other condition of the same attacker is at least as private and as "
    "useful and better on one of the two. Coinciding points share one label. The table lists "
    "every attacker's conditions, each flagged against its own attacker's front."
    if shown
    else "No anonymised condition has both numbers."
)
ui.show_table(tradeoff.frame(), f"{stem}.csv")
missing = [p.condition for p in tradeoff.missing]
if missing:
    st.caption(
        f"Not drawn (no {tradeoff.privacy_label} or no {tradeoff.utility_label}): "
        + ", ".join(ui.md_escape(n) for n in missing)
        + "."
    )

st.subheader("VoicePrivacy ranking")
bands = ", ".join(f"{b:.0%}" for b in EER_BANDS)
st.markdown(
    "The VoicePrivacy 2024 evaluation plan (Tomashenko et al. 2024) ranks systems for four "
    f"minimum privacy levels: the EER of the {chosen.attacker} attacker at least {bands}, "
    "compared at the challenge's 0.001 % (and, for a VoicePrivacy tree, the mean of the EERs "
    "of the trial lists the challenge prints: female and male in 2024, each language's in "
    "2026 track 2). A system enters every band its EER reaches; within a band, systems are "
    "ranked twice: by WER (lower first, UAR breaking ties) and by UAR (higher first). A "
    "system tried by several attacker back-ends is banded on the strongest of them (lowest "
    "dev EER; Attackers page), named in the Attacker column; the weaker ones are listed as "
    "not ranked."
)
group_eers = ui.compute(challenge_group_eers, study, cache=False).value
judged = ui.compute(strongest_attackers, study.conditions).value  # the strongest attacker tried
# the ranking and the call-outs judge the same systems the same way
judging = {
    "reference": chosen.reference,
    "attacker": chosen.attacker,
    "group_eers": group_eers,
    "attackers": judged,
    "cache": False,
}
ranking = ui.compute(report_ranking, reports, **judging).value
if ranking is not None:
    show_ranking(ranking)
    settings = study.settings
    replicates = ui.compute(
        ranking_replicates,
        study,
        reports,
        n_boot=settings.bootstrap,
        seed=settings.seed,
        ties=settings.ties,
        linkability_rule=settings.linkability_rule,
        exclude=[chosen.reference] if chosen.reference else [],
        attacker=chosen.attacker,
        spinner="Paired bootstrap replicates of the ranking…",
    ).value
    if replicates is not None:
        ranking = ui.compute(report_ranking, reports, replicates=replicates, **judging).value
    if ranking is not None:
        show_ranking_stability(ranking)

st.subheader("Ranked as private, still leaking")
rule = (
    f"an EER in a band while LIDmax is at least {LEAK_LID_MAX:g} bit or linkability is above "
    f"{LEAK_LINKABILITY_FACTOR:g}x its chance level 1/N"
)
callouts = ui.compute(report_callouts, reports, **judging).value
if callouts is not None:
    show_callouts(callouts, rule)
st.caption(
    "An EER band says how often one comparison is wrong; LIDmax and linkability say whether "
    "some speakers are still found among N. The thresholds are the report card's risk levels "
    "(see the Threat model page)."
)
