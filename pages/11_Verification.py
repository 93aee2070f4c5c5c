"""Verification: the standard ASV outputs (DET curve, minDCF / actDCF, APE plot, d')."""

import math

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.verification import eer_of, parse_priors, verification_of
from voxmetrics.plots.verification import ape_figure, det_figure
from voxmetrics.plots.zebra import condition_colors
from voxmetrics.report import verification_frame

CONDITIONS = "vm_verif_conditions"

study = ui.page_setup("Verification")
st.title("Verification: DET curves, detection costs and the APE plot")
ui.require_conditions(study)

st.markdown(
    "The outputs every speaker-verification and VoicePrivacy paper reports, so that published "
    "numbers can be set beside these. They look at one comparison at a time (a trial against "
    "one enrolled identity), like the EER:\n"
    "- **DET curve**: miss rate against false-alarm rate at every threshold, on normal-deviate "
    "axes; the dotted markers are the ROC convex hull (the best any recalibration can do).\n"
    "- **minDCF**: the normalised detection cost C_miss·P_target·P_miss + "
    "C_fa·(1-P_target)·P_fa at the best threshold, divided by the cost of always deciding "
    "by the prior (1 = no better than that). **actDCF** is the cost at the Bayes threshold "
    "of the scores taken as log-likelihood ratios (only for LLR scores).\n"
    "- **APE plot** (Brümmer & du Preez 2006): that normalised error over all priors.\n"
    "- **d'**: the separation of the mated and non-mated score means in pooled standard "
    "deviations."
)

if [n for n in st.session_state.get(CONDITIONS, study.names) if n not in study.names]:
    st.session_state[CONDITIONS] = [n for n in st.session_state[CONDITIONS] if n in study.names]
selected = st.multiselect(
    "Conditions", study.names, default=study.names, key=CONDITIONS, placeholder="Pick conditions"
)
p_col, miss_col, fa_col = st.columns([2, 1, 1])
priors_text = p_col.text_input(
    "Target priors P_target",
    value="0.01, 0.001",
    key="vm_verif_priors",
    help="Comma-separated, each strictly between 0 and 1 (VoicePrivacy: 0.01 and 0.001).",
)
c_miss = miss_col.number_input(
    "C_miss", min_value=0.001, value=1.0, step=1.0, key="vm_verif_cmiss", help="Cost of a miss."
)
c_fa = fa_col.number_input(
    "C_fa", min_value=0.001, value=1.0, step=1.0, key="vm_verif_cfa", help="Cost of a false alarm."
)
as_llrs = st.checkbox(
    "My scores are calibrated LLRs",
    key="vm_verif_llr",
    help="Adds actDCF and the actual APE curve (dashed). Conditions loaded as LLRs on the Data "
    "page always get them. Cosine similarities are not LLRs: leave this off for them.",
)
priors = ui.compute(parse_priors, priors_text, cache=False).value
if priors is None:
    st.stop()
if not selected:
    st.info("Pick at least one condition.", icon=":material/info:")
    st.stop()

results, eers = {}, {}
for name in selected:
    cond = study.get(name)
    result = ui.compute(
        verification_of,
        cond.eval,
        p_targets=tuple(priors),
        c_miss=float(c_miss),
        c_fa=float(c_fa),
        scores_are_llrs=as_llrs or cond.score_kind == "llr",
        warn=name,
    )
    if not result.failed:
        results[name] = result.value
        eer = ui.compute(eer_of, cond.eval)
        if not eer.failed:
            eers[name] = eer.value
if not results:
    st.stop()
distances = [n for n in results if study.get(n).score_kind == "distance"]
if distances:
    st.info(
        f"{', '.join(distances)}: distance scores, negated on reading (thresholds are minus "
        "the distance).",
        icon=":material/info:",
    )
colors = condition_colors(study.names)

st.subheader("Detection costs and d'")
ui.show_table(
    verification_frame(results, eer=eers),
    "verification.csv",
    column_help={
        "EER": "Equal error rate of the same scores (0.5 = chance).",
        "d'": "(mean mated - mean non-mated) / sqrt((var mated + var non-mated) / 2)",
    },
)

st.subheader("DET curves")
ui.show_figure(
    det_figure({n: r.det for n, r in results.items()}, colors=colors),
    "verification_det",
    show_title=False,
)
st.caption(
    "Solid: every operating point (the steppy empirical curve). Dotted with markers: the ROC "
    "convex hull, whose crossing with the dashed line is the ROCCH-EER. Both axes are warped "
    "to normal deviates, so Gaussian score distributions give straight lines."
)

st.subheader("APE plot (normalised Bayes error)")
ui.show_figure(
    ape_figure(
        {n: r.ape for n, r in results.items()},
        colors=colors,
        p_targets=[p for p in priors if 0 < p < 1 and math.isfinite(p)],
    ),
    "verification_ape",
    show_title=False,
)
st.caption(
    "The Bayes error rate divided by that of the default system (always the prior's "
    "decision: black dotted line at 1) against the prior log-odds. Solid: the minimum, with "
    "the best threshold at every prior (minDCF at the marked priors, for unit costs). Dashed: "
    "the scores used as LLRs (actDCF)."
)
