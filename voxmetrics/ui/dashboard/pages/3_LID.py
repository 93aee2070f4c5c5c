"""LID: local information disclosure, trial by trial (Šterns et al. 2025; docs, Methods > LID)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import lid as analysis
from voxmetrics.analysis.lid import LIDOptions, LIDRow
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
from voxmetrics.ui.cache_lid import (
    calibration_curve_cached,
    lid_chance,
    lid_intervals,
    lid_result,
    trial_table_key,
)

VARIANTS = {
    "maximum-likelihood": "maximum likelihood: population sd, unweighted, unpenalised",
    "reference-code": "authors' code: sample sd, balanced, L2 penalty (C = 1)",
}

study = ui.page_setup("LID")
st.title("LID: local information disclosure")
ui.require_conditions(study)
study = ui.one_to_n_study(study)  # a sparse trial list: its complete trials

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
    "(5.3 bits for N = 40).\n\n"
    "The EER pools all trials together, so it can look safe while a few trials are fully "
    "exposed. **LIDmax**, the largest disclosure of any single trial, shows those worst cases."
)

# ---------------------------------------------------------------- controls
colors = condition_colors(study.names)
with st.container(border=True):
    shown = st.session_state.get("vm_lid_conditions")
    if shown is None:  # first visit: every condition
        st.session_state["vm_lid_conditions"] = list(study.names)
    elif any(n not in study.names for n in shown):  # drop names that left the study
        st.session_state["vm_lid_conditions"] = [n for n in shown if n in study.names]
    chosen = st.multiselect("Conditions", study.names, key="vm_lid_conditions")
    variant_col, boot_col, seed_col = st.columns([3, 1, 1])
    if st.session_state.get("vm_lid_variant") not in VARIANTS:  # first visit: the study's
        st.session_state["vm_lid_variant"] = study.settings.lid_variant
    variant = variant_col.radio(
        "Calibration variant",
        list(VARIANTS),
        format_func=VARIANTS.get,
        key="vm_lid_variant",
        help="Maximum likelihood fits w, b without penalty on population-sd z-scores. The "
        "authors' public code (Šterns et al. 2025) uses the sample sd, balanced class weights "
        "and scikit-learn's default L2 penalty (C = 1); use it to reproduce the paper's "
        "Table 3, Table 4 and Figure 4. The default follows the study's settings.",
    )
    n_boot = boot_col.number_input(
        "Bootstrap replicates",
        min_value=0,
        max_value=20_000,
        value=1000,
        step=100,
        key="vm_lid_boot",
        help="Speaker-level bootstrap of the 95 % intervals of ALID, PDR, NDR, LID+, LID- and "
        "LID q95 (trial speakers resampled, calibration held fixed). 0 = no intervals.",
    )
    seed = seed_col.number_input(
        "Seed",
        min_value=0,
        max_value=2**31 - 1,
        value=0,
        step=1,
        key="vm_lid_seed",
        help="Seed of the bootstrap and of the cross-calibration folds.",
    )
    no_dev = [n for n in chosen if study.get(n).dev is None]
    cv_col, k_col = st.columns([3, 1])
    cross = cv_col.toggle(
        "Cross-calibrate conditions without a dev set (k-fold on eval)",
        key="vm_lid_crosscal",
        disabled=not no_dev,
        help="Without a dev set there is nothing to learn w, b on. Cross-calibration splits "
        "the eval speakers into k folds and calibrates each fold on the others; its numbers "
        "are labelled 'cross-calibrated' everywhere.",
    )
    k = k_col.number_input(
        "Folds k", min_value=2, max_value=20, value=5, step=1, key="vm_lid_k", disabled=not cross
    )
    if no_dev:
        names = ", ".join(ui.md_escape(n) for n in no_dev)
        cv_col.caption(f"Without a dev set: {names}.")
    else:
        cv_col.caption(
            "Every selected condition has a dev set, so cross-calibration is not needed."
        )

if not chosen:
    st.info("Pick at least one condition above.", icon=":material/info:")
    st.stop()

options = LIDOptions(
    cross_calibrate=int(k) if cross and no_dev else None,
    variant=variant,
    seed=int(seed),
)

# ---------------------------------------------------------------- library calls (cached)
rows: list[LIDRow] = []
for name in chosen:
    cond = study.get(name)
    report = ui.call(ui.condition_report, cond)
    out = ui.call(lid_result, cond, options)
    result = out.value if out is not None else None
    if out is not None:
        ui.show_warnings([f"{name}: {m}" for m in out.warnings])
    intervals = None
    if result is not None and n_boot > 0:
        intervals = ui.safe_call(lid_intervals, cond, result, options, n_boot=int(n_boot))
    rows.append(
        LIDRow(
            condition=cond,
            report=report.value if report is not None else None,
            lid=result,
            intervals=intervals,
            status=analysis.lid_status(result, failed=out is None),
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
for row in flagged:
    st.warning(
        f"**{ui.md_escape(row.name)}: localised vulnerability.** Its EER is "
        f"{row.report.baseline.eer:.2f}, close to chance (0.5), so the 1-to-1 view calls it "
        f"private. Yet its most exposed trial discloses {row.lid.lid_max:.2f} bits "
        f"(LIDmax > {LOCAL_LID_MAX:g} bit): some speakers are still singled out.",
        icon=":material/crisis_alert:",
    )
if not flagged and with_lid:
    st.caption(
        f"No selected condition has a near-chance EER (≥ {LOCAL_EER:g}) together with "
        f"LIDmax > {LOCAL_LID_MAX:g} bit."
    )
missing = [row.name for row in rows if row.status == analysis.NEEDS_CALIBRATION]
if missing:
    st.info(
        f"{', '.join(ui.md_escape(n) for n in missing)}: no dev set, so LID needs "
        "calibration. Turn on cross-calibration above to calibrate on the eval speakers "
        "themselves (k-fold), or add a dev set on the Data page.",
        icon=":material/info:",
    )

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
        f"({int(n_boot):,} replicates, seed {int(seed)}) with the calibration held fixed; "
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
chances = {}
for row in rows:
    if row.lid is not None:
        got = ui.safe_call(lid_chance, row.condition, row.lid, options)
        if got is not None:
            chances[row.name] = got
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
ui.show_figure(lid_ccdf_figure(with_lid, log_y=log_y, colors=colors), "lid_ccdf", show_title=False)
st.caption(
    "Read a curve at x: the share of trials that give away more than x bits about their "
    "speaker. A curve that stays high far to the right means many trials leak a lot. A curve "
    "that drops at 0 means nothing is learned. Dotted: 0 bits. Dashed: log₂ N, the most a "
    "trial can disclose."
)

# ---------------------------------------------------------------- 3. posterior of the target
st.header("Posterior of the true speaker", divider="gray")
ui.show_figure(p_target_histogram_figure(with_lid, colors=colors), "lid_p_target", show_title=False)
st.caption(
    "For each trial, the probability the calibrated attacker gives to the right speaker. The "
    "dotted line is a random guess, 1/N. Trials to its right disclose (LID > 0) and trials "
    "to its left mislead (LID < 0). Bars show the share of the condition's trials."
)

# ---------------------------------------------------------------- 4. LID histogram
st.header("Per-trial disclosure", divider="gray")
ui.show_figure(lid_histogram_figure(with_lid, colors=colors), "lid_histogram", show_title=False)
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
curve_out = ui.safe_call(calibration_curve_cached, cal_cond, cal_result, options)
if curve_out is not None:
    curve, matrix = curve_out
    fig = calibration_figure(
        curve,
        name=display_name(cal_name, cal_result),
        matrix=matrix,
        color=colors[cal_name],
        log_y=cal_log,
    )
    ui.show_figure(fig, f"lid_calibration_{cal_name}")
    notes = [
        "Each marker is the share of mated pairs among the (trial, enrolled identity) pairs "
        "whose row z-score falls in the bin; its size grows with the number of pairs. The line "
        "is the fitted logistic curve."
    ]
    if matrix == "eval":
        notes.append(
            "This condition is cross-calibrated: the curve is computed on eval with the mean "
            "of the folds' calibrations (each trial's LID used its own fold's)."
        )
    if options.reference_code:
        notes.append(
            "With balanced class weights the fitted curve sits above the mated rate by design. "
            "Only its slope w matters for LID."
        )
    st.caption(" ".join(notes))

# ---------------------------------------------------------------- 6. trial explorer
st.header("Trial explorer", divider="gray")
flagged_names = [row.name for row in flagged]
explorer_options = list(with_lid)
default_name = flagged_names[0] if flagged_names else explorer_options[0]
if st.session_state.get("vm_lid_trial_condition") not in explorer_options:
    st.session_state["vm_lid_trial_condition"] = default_name
trial_name = st.selectbox(
    "Condition",
    explorer_options,
    key="vm_lid_trial_condition",
    help="Opens on a condition with a localised vulnerability, when there is one.",
)
trial_result = with_lid[trial_name]
trial_cond = study.get(trial_name)
trials = analysis.trial_frame(trial_cond, trial_result)
st.caption(
    f"{len(trials):,} trials of {ui.md_escape(display_name(trial_name, trial_result))}, largest "
    "LID first. Click a row to see that trial; click a column header to sort."
)
table_key = trial_table_key(trial_cond, options)
table_col, card_col = st.columns([3, 1])
with table_col:
    event = st.dataframe(
        trials,
        hide_index=True,
        key=table_key,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": [0]}},
        height=390,
        column_config={
            "Rank": st.column_config.NumberColumn(
                "Rank", help="Position of the true speaker among the N (1 = top).", format="%d"
            ),
            "p(target)": st.column_config.NumberColumn(
                "p(target)", help="Posterior of the true speaker.", format="%.4f"
            ),
            "LID (bits)": st.column_config.NumberColumn("LID (bits)", format="%.3f"),
        },
    )
    ui.download_table(trials, f"lid_trials_{trial_name}.csv")
selected = event.selection.rows
position = selected[0] if selected and selected[0] < len(trials) else 0
index = int(trials.index[position])
ev = trial_cond.eval
n_enrolled = trial_result.n_enrolled
with card_col:
    st.markdown(f"**Trial {ui.md_escape(str(ev.trial_ids[index]))}**")
    st.caption(f"Speaker {ui.md_escape(str(ev.trial_speakers[index]))}")
    if not selected:
        st.caption("No row selected: the trial with the largest LID.")
    st.metric(
        "LID",
        f"{float(trial_result.lid[index]):.2f} bits",
        help=f"log₂(N · p(target)); at most log₂ N = {trial_result.ceiling:.2f} bits.",
    )
    st.metric(
        "p(target)",
        f"{float(trial_result.p_target[index]):.3f}",
        help="The attacker's posterior of the true speaker.",
    )
    st.caption(f"A random guess gives 1/N = {1 / n_enrolled:.3f}.")
    st.metric(
        "Rank of the true speaker",
        f"{int(trial_result.rank[index])} of {n_enrolled:,}",
        help="Position by raw score; ties count against the attacker.",
    )
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
