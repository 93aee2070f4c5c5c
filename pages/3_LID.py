"""LID: local information disclosure, trial by trial (Šterns et al. 2025; docs, Methods > LID)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import lid as analysis
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.one_to_n import condition_calibration_curve
from voxmetrics.plots.lid import (
    calibration_figure,
    condition_colors,
    display_name,
    lid_ccdf_figure,
    lid_histogram_figure,
    p_target_histogram_figure,
    trial_figure,
)
from voxmetrics.plots.overview import LOCAL_EER, LOCAL_LID_MAX
from voxmetrics.ui.lid_page import (
    calibration_caption,
    ceiling_example,
    lid_controls,
    show_notices,
    trial_card,
    trial_condition,
    trial_table,
    trial_table_key,
)

study = ui.page_setup("LID")
st.title("LID: local information disclosure")
ui.require_conditions(study)
study = ui.one_to_n_study(study)  # sparse lists: complete groups whole, else complete trials

st.markdown(
    "**How much does one anonymised utterance tell an attacker about who is speaking?** "
    "The attacker compares the utterance (a *trial*) with the N speakers in their database. "
    "Before that, each speaker is a 1-in-N guess. A calibration learned on a separate dev set "
    "turns the trial's N scores into a probability for each speaker. **LID** measures how far "
    "the true speaker's probability moved away from 1/N, in **bits**: +1 bit means it doubled, "
    "−1 bit means it halved."
)
st.markdown(
    "- **Positive LID**: the trial points towards its own speaker, so some privacy is lost.\n"
    "- **Zero**: the attacker learned nothing.\n"
    "- **Negative LID**: the trial points away from its speaker and misleads the attacker.\n"
    "- **log₂ N** is the ceiling: at that value the attacker is certain of the speaker "
    f"({ceiling_example(study)}).\n\n"
    "The EER pools all trials together, so it can look safe while a few trials are fully "
    "exposed. **LIDmax**, the largest disclosure of any single trial, shows those worst cases."
)

# ---------------------------------------------------------------- controls
colors = condition_colors(study.names)
chosen, options, n_boot = lid_controls(study)
if not chosen:
    st.info("Pick at least one condition above.", icon=":material/info:")
    st.stop()
rows = []
chances = {}
# the study's EER, linkability, LID and chance levels under the page's LID options (the same
# numbers as the Overview's, read from its reports when they are the study's settings)
lid_options = {
    "cross_calibrate": options.cross_calibrate,
    "lid_variant": options.variant,
    "seed": options.seed,
}
found = ui.identity_reports(study, chosen, lid_options=lid_options)
for name in chosen:
    cond = study.get(name)
    report = found.get(name)
    if report is None:  # bad input (its message is above): the EER and min Cllr alone
        alone = ui.compute(
            evaluate_condition,
            cond,
            parts=("pairwise", "linkability"),
            ties=study.settings.ties,
            linkability_rule=study.settings.linkability_rule,
            spinner=f"EER and min Cllr of {name}…",
            warn=False,
        )
        baseline = None if alone.failed else alone.value.baseline
        lid = chance = None
    else:
        baseline, lid, chance = report.baseline, report.lid, report.chance
    if lid is not None and chance is not None:
        chances[name] = chance
    intervals = None
    if lid is not None and n_boot > 0:
        intervals = ui.compute(
            analysis.condition_intervals,
            cond,
            lid,
            n_boot=n_boot,
            seed=options.seed,
            spinner=f"Bootstrap of {name}…",
            warn=name,
        ).value
    status = analysis.lid_status(lid, failed=report is None)
    rows.append(
        analysis.LIDRow(
            condition=cond,
            report=None,
            baseline=baseline,
            lid=lid,
            intervals=intervals,
            status=status,
        )
    )
with_lid = {row.name: row.lid for row in rows if row.lid is not None}

# ---------------------------------------------------------------- 1. summary
st.header("Summary", divider="gray")
ui.show_table(
    analysis.lid_summary_frame(rows),
    "lid_summary.csv",
    decimals=2,
    column_help=analysis.SUMMARY_HELP,
)
st.caption(
    "Lower ALID, PDR, LID+ and LIDmax mean more privacy. ALID = PDR·LID+ + NDR·LID−. "
    "EER and min Cllr are the 1-to-1 baselines (higher = more private)."
)

flagged = analysis.localised_vulnerabilities(rows, eer=LOCAL_EER, lid_max=LOCAL_LID_MAX)
show_notices(rows, flagged)

if n_boot > 0 and any(row.intervals for row in rows):
    st.subheader("95 % intervals")
    ui.show_table(
        analysis.interval_table(rows),
        "lid_intervals.csv",
        decimals=2,
        column_help=analysis.INTERVAL_HELP,
    )
    st.caption(
        f"Speaker-level bootstrap: the trial speakers are resampled with replacement "
        f"({int(n_boot):,} replicates, seed {options.seed}) with the calibration held fixed; "
        "percentile intervals. 'undefined': the metric was undefined in most replicates. "
        "LIDmax has no interval: a resampled maximum never exceeds the observed one, so its "
        "0.95 quantile (LID q95) carries the worst case's interval."
    )
    ui.download_table(
        analysis.interval_frame(rows),
        "lid_intervals_numbers.csv",
        label="Intervals as numbers (CSV)",
    )
elif with_lid:
    st.caption("Bootstrap intervals are off (0 replicates).")
if not with_lid:
    st.stop()

# a markdown heading: the page's st.subheader list is pinned by its tests
st.markdown("#### Against chance")
ui.show_table(
    analysis.chance_frame(rows, chances),
    "lid_against_chance.csv",
    decimals=2,
    column_help=analysis.CHANCE_HELP,
)
st.caption(
    "Chance is not 0: under the same calibration a random identity still gets some trials "
    "with LID > 0, and LIDmax over many trials is large by chance alone. ALID and PDR have "
    "closed forms; LID+ and LIDmax are averaged over 200 random draws."
)

# ---------------------------------------------------------------- 2. CCDF
st.header("How many trials disclose how much", divider="gray")
log_y = st.toggle(
    "Logarithmic y axis",
    key="vm_lid_logy",
    help="Makes the rare trials with large disclosures visible.",
)
# the figures of every trial are kept: a rerun (a click elsewhere on the page) redraws them
ccdf = ui.compute(lid_ccdf_figure, with_lid, log_y=log_y, colors=colors, warn=False).value
ui.show_figure(ccdf, "lid_ccdf", show_title=False)
st.caption(
    "Read a curve at x: the share of trials that give away more than x bits about their "
    "speaker. A curve that stays high far to the right means many trials leak a lot. A curve "
    "that drops at 0 means nothing is learned. Dotted: 0 bits. Dashed: log₂ N, the most a "
    "trial can disclose."
)

# ---------------------------------------------------------------- 3. posterior of the target
st.header("Posterior of the true speaker", divider="gray")
posterior = ui.compute(p_target_histogram_figure, with_lid, colors=colors, warn=False).value
ui.show_figure(posterior, "lid_p_target", show_title=False)
st.caption(
    "For each trial, the probability the calibrated attacker gives to the right speaker. The "
    "dotted line is a random guess, 1/N. Trials to its right disclose (LID > 0) and trials "
    "to its left mislead (LID < 0). Bars show the share of the condition's trials."
)

# ---------------------------------------------------------------- 4. LID histogram
st.header("Per-trial disclosure", divider="gray")
histogram = ui.compute(lid_histogram_figure, with_lid, colors=colors, warn=False).value
ui.show_figure(histogram, "lid_histogram", show_title=False)
st.caption(
    "LID of every trial in bits, on the same bins for every condition. Dotted: 0 bits (no "
    "information). Dashed: the log₂ N ceiling. A long left tail means the trials actively "
    "mislead; a bump near the ceiling means some speakers are identified with near certainty."
)

# ---------------------------------------------------------------- 5. calibration
st.header("Calibration", divider="gray")
ui.show_table(
    analysis.calibration_frame(rows),
    "lid_calibration.csv",
    decimals=3,
    column_help=analysis.CALIBRATION_HELP,
)
cal_col, cal_log_col = st.columns([3, 1], vertical_alignment="bottom")
cal_name = cal_col.selectbox("Condition", list(with_lid), key="vm_lid_cal_condition")
cal_log = cal_log_col.toggle("Logarithmic y axis", key="vm_lid_cal_logy")
cal_result = with_lid[cal_name]
cal_cond = study.get(cal_name)
view = ui.compute(condition_calibration_curve, cal_cond, cal_result).value
if view is not None:
    fig = calibration_figure(
        view.curve,
        name=display_name(cal_name, cal_result),
        matrix=view.matrix,
        color=colors[cal_name],
        log_y=cal_log,
    )
    ui.show_figure(fig, f"lid_calibration_{cal_name}")
    st.caption(calibration_caption(view.matrix, options, group=view.group))

# ---------------------------------------------------------------- 6. trial explorer
st.header("Trial explorer", divider="gray")
trial_name = trial_condition(with_lid, flagged)
trial_result = with_lid[trial_name]
trial_cond = study.get(trial_name)
trials = analysis.trial_frame(trial_cond, trial_result)
st.caption(
    f"{len(trials):,} trials of {ui.md_escape(display_name(trial_name, trial_result))}, largest "
    "LID first. Click a row to see that trial; click a column header to sort."
)
table_col, card_col = st.columns([3, 1])
with table_col:
    key = trial_table_key(trial_cond, options)
    index, selected = trial_table(trials, key, f"lid_trials_{trial_name}.csv")
with card_col:
    trial_card(trial_cond, trial_result, index, selected=selected)
ev = trial_cond.eval
p = analysis.trial_posterior(trial_cond, trial_result, index)
fig = trial_figure(
    ev.scores[index],
    p,
    ev.enrol_speakers,
    int(ev.targets[index]),
    title=f"Trial {ev.trial_ids[index]} of speaker {ev.trial_speakers[index]} "
    f"({display_name(trial_name, trial_result)})",
)
ui.show_figure(fig, f"lid_trial_{trial_name}_{ev.trial_ids[index]}")
st.caption(
    "Top: the trial's raw score against each enrolled identity. Bottom: the attacker's "
    "posterior after calibration, which keeps the order of the scores. The trial's own "
    "speaker is highlighted. The dotted line is the prior 1/N: a bar above it is more likely "
    "than a random guess."
)
if "cross-calibrated" in trial_result.label:
    st.caption(
        "Cross-calibrated: the posterior is drawn with the mean of the folds' calibrations; "
        "the trial's LID in the table used its own fold's, so the two can differ slightly."
    )
