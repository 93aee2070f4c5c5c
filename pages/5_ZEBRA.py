"""ZEBRA: expected (D_ECE) and worst-case (log10 l, tag) disclosure of each condition."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import zebra as az
from voxmetrics.analysis.zebra import worst_trial, worst_trial_frame, zebra_table
from voxmetrics.data.summary import score_histogram
from voxmetrics.plots.zebra import (
    ZebraProfile,
    condition_colors,
    ece_profile_figure,
    pav_transform_figure,
)
from voxmetrics.ui.zebra_page import zebra_reports

CONDITIONS = "vm_zebra_conditions"
CHOSEN = "vm_zebra_chosen"

study = ui.page_setup("ZEBRA")
st.title("ZEBRA: zero evidence biometric recognition assessment")
ui.require_conditions(study)

# ---- 1. what the numbers mean
st.markdown(
    "ZEBRA asks how much an attacker learns about *who is speaking* from one comparison "
    "(a trial against an enrolled identity), once the scores are turned into optimally "
    "calibrated likelihood ratios (PAV). Two numbers per condition:\n"
    "- **Expected disclosure D_ECE** (bits), averaged over every prior belief the attacker "
    "could hold: **0** means zero evidence (perfect privacy), **0.721** means the mated and "
    "non-mated scores are fully separated (no privacy).\n"
    "- **Worst case log10 l**: the strongest evidence any single comparison gives, as a base-10 "
    "likelihood ratio (3 means 1000 : 1), with a **tag** from 0 and A (weak) to F (over a "
    "million to one) and the posterior odds it stands for under a flat prior."
)

# ---- options
if [n for n in st.session_state.get(CONDITIONS, study.names) if n not in study.names]:
    st.session_state[CONDITIONS] = [n for n in st.session_state[CONDITIONS] if n in study.names]
pick_col, boot_col, seed_col = st.columns([3, 1, 1])
selected = pick_col.multiselect(
    "Conditions", study.names, default=study.names, key=CONDITIONS, placeholder="Pick conditions"
)
n_boot = boot_col.number_input(
    "Bootstrap replicates",
    min_value=0,
    max_value=5000,
    value=200,
    step=100,
    key="vm_zebra_boot",
    help="Speaker-level bootstrap for 95% intervals of D_ECE and of the 0.95 quantile of "
    "|log10 LR| (0 = off).",
)
seed = seed_col.number_input(
    "Seed", min_value=0, value=0, step=1, key="vm_zebra_seed", help="Seed of the bootstrap."
)
as_llrs = st.checkbox(
    "My scores are calibrated LLRs",
    key="vm_zebra_llr",
    help="Also draw the actual ECE of the scores taken as natural-log likelihood ratios "
    "(dashed). Cosine similarities are not LLRs: leave this off for them.",
)
if not selected:
    st.info("Pick at least one condition.", icon=":material/info:")
    st.stop()

# ---- compute (cached)
colors = condition_colors(study.names)
# the Overview's reports when they have these settings, else ZEBRA alone (the same numbers)
reports = zebra_reports(study, selected, n_boot=n_boot, seed=seed)
results, profiles, intervals, eers = {}, [], {}, {}
for name, report in reports.items():
    curves = ui.compute(az.ece_curves_of, study.get(name).eval, scores_are_llrs=as_llrs, warn=name)
    if curves.failed:
        continue
    eers[name] = report.baseline.eer
    results[name] = report.zebra
    profiles.append(ZebraProfile(name, report.zebra, curves.value))
    if report.zebra_intervals is not None:
        intervals[name] = report.zebra_intervals
if not results:
    st.stop()

# ---- 2. ECE profiles
st.subheader("ECE profiles")
ui.show_figure(ece_profile_figure(profiles, colors=colors), "zebra_ece_profiles", show_title=False)
st.caption(
    "Empirical cross entropy (ECE, bits) left to resolve *is it this speaker?* at each prior "
    "belief of the attacker (x: prior log10 odds). Black: zero evidence (an attacker who "
    "learns nothing). Each condition's solid curve: its PAV-calibrated scores; the larger the "
    "gap below the black curve, the more is disclosed, and that gap integrated over the prior "
    "is D_ECE. Legend: condition (D_ECE, log10 l, tag), sorted by D_ECE."
    + (" Dashed: the actual ECE of the scores as given." if as_llrs else "")
)

# ---- 3. the table
st.subheader("Expected and worst-case disclosure")
table = zebra_table(results, intervals if n_boot > 0 else None, eer=eers)
ui.show_table(
    table,
    "zebra.csv",
    column_help={
        "EER": "1-to-1 verification equal error rate of the same scores (0.5 = chance).",
        "D_ECE (bits)": "Expected disclosure: 0 = zero evidence, 0.721 = no privacy.",
        "log10 l": "Worst case: the largest |log10 LR| of any comparison (PAV with Laplace).",
        "Tag": "0: no evidence; A: up to 10:1; B: up to 100:1; C: up to 10^4:1; D: up to "
        "10^5:1; E: up to 10^6:1; F: beyond.",
        "Posterior odds (flat prior)": "What the tag means for an attacker with a 50:50 prior.",
        "|log10 LR| q95": "The |log10 LR| exceeded by 5 % of comparisons: the worst case "
        "that carries an interval (a maximum such as log10 l has no sound bootstrap interval).",
    },
)
if n_boot > 0:
    st.caption(
        f"95% percentile intervals from {n_boot} speaker-level bootstrap replicates (seed "
        f"{seed}): trial speakers are redrawn with replacement and PAV is refitted each time. "
        "log10 l, a maximum, has no interval (the bootstrap of a maximum is not valid); its "
        "neighbour |log10 LR| q95 carries the worst case's interval."
    )

# ---- 4. PAV transform of one condition
st.subheader("PAV calibration of one condition")
if st.session_state.get(CHOSEN) not in results:
    st.session_state[CHOSEN] = next(iter(results))
chosen = st.selectbox("Condition", list(results), key=CHOSEN)
sm = study.get(chosen).eval
result = results[chosen]
transform = ui.compute(az.pav_transform_of, sm).value
if transform is None:
    st.stop()
histogram = ui.compute(score_histogram, sm).value
ui.show_figure(
    pav_transform_figure(transform, name=chosen, result=result, histogram=histogram),
    f"zebra_pav_{chosen}",
    show_title=False,
)
st.caption(
    "Pool-adjacent-violators turns the scores into the best monotone log-likelihood ratios "
    "(shown in base 10). Dashed: plain PAV, used for D_ECE, where the lowest and highest bins "
    "can be ±∞. Solid: with Laplace's rule (two dummy comparisons at each end), which keeps "
    "every value finite and gives the worst case. Lower panel: score densities."
)

# ---- 5. the worst case
st.subheader("The worst case")
worst = worst_trial(sm, result, transform)
kind = "mated (same speaker)" if worst.mated else "non-mated (different speakers)"
claim = "the same speaker" if worst.log10_lr > 0 else "different speakers"
verdict = "correct" if worst.mated == (worst.log10_lr > 0) else "misleading"
st.markdown(
    f"In **{ui.md_escape(chosen)}**, the strongest evidence comes from trial "
    f"**`{worst.trial_id}`** (speaker {ui.md_escape(worst.trial_speaker)}) scored against "
    f"enrolled identity **{ui.md_escape(worst.enrolled)}**: a {kind} score of "
    f"{worst.score:.4g}, which calibrates to log10 LR = {worst.log10_lr:+.2f}, i.e. about "
    f"10^{abs(worst.log10_lr):.1f} : 1 that they are {claim} ({verdict} evidence). "
    f"Tag **{result.tag}**: {result.odds}."
)
ui.show_table(
    worst_trial_frame(chosen, worst, result),
    f"zebra_worst_{chosen}.csv",
    decimals=4,
)
