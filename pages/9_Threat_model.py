"""Threat model: why a 50 % EER does not mean safe (Šterns et al. 2025, section 4)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.tradeoff import reference_condition
from voxmetrics.evaluation.threat import (
    CALLOUT_EER,
    EXAMPLE_OWN_COLUMN,
    checked_conditions,
    example_frame,
    example_view,
    study_exposure,
    threat_callouts,
    threat_scenario,
)
from voxmetrics.plots.threat import (
    lid_per_trial_figure,
    pooled_view_figure,
    row_view_figure,
    scenario_metrics_figure,
)
from voxmetrics.ui import threat_page as text
from voxmetrics.ui.threat_page import EDITOR_VERSION_KEY, MATRIX_KEY, W_KEY

study = ui.page_setup("Threat model")
st.title("Threat model: why a 50 % EER does not mean safe")
st.markdown(text.INTRO)

# ---------------------------------------------------------------- 1. the 4x4 example
st.header("1. One matrix, two readings", divider="gray")
st.markdown(text.EXAMPLE_INTRO)
if MATRIX_KEY not in st.session_state:
    st.session_state[MATRIX_KEY] = example_frame()
text.restore_widgets()
editor_col, w_col = st.columns([3, 2], gap="large")
with editor_col:
    frame = st.session_state[MATRIX_KEY]
    n_example = frame.shape[1] - 1
    column_config = {
        c: st.column_config.NumberColumn(
            c, format="%.2f", step=0.01, width=90, help=f"Score of the trial against enrolled {c}."
        )
        for c in frame.columns[:-1]
    }
    column_config[EXAMPLE_OWN_COLUMN] = st.column_config.NumberColumn(
        EXAMPLE_OWN_COLUMN, format="%d", step=1, width=110,
        help=f"Which enrolled speaker really spoke the trial: a column number from 1 to "
        f"{n_example}.",
    )  # fmt: skip
    edited = st.data_editor(
        frame,
        key=f"vm_threat_editor_{st.session_state.get(EDITOR_VERSION_KEY, 0)}",
        num_rows="fixed",
        column_config=column_config,
    )
    st.session_state[MATRIX_KEY] = edited
    st.button("Reset to the paper's example", key="vm_threat_reset",
              on_click=text.reset_example, icon=":material/restart_alt:")  # fmt: skip
with w_col:
    w = st.slider("Attacker's confidence w", min_value=0.0, max_value=5.0, step=0.1, key=W_KEY,
                  help=text.W_HELP)  # fmt: skip
    st.caption(text.W_CAPTION)

view = ui.compute(example_view, edited, w=w).value
if view is not None:
    text.metric_row(view)
    b = view.baseline
    verdict = (
        "which looks like perfect privacy" if b.eer >= CALLOUT_EER
        else "so even the 1-to-1 view sees a leak"
    )  # fmt: skip
    st.markdown(
        f"**Same {b.n_trials * b.n_enrolled} numbers, two verdicts.** Pooled, the EER is "
        f"{b.eer:.1%}, {verdict}. Row by row, the attacker who picks the highest score of "
        f"each trial finds the right speaker in **{int(view.linked.sum())} of {b.n_trials}** "
        f"trials (a random guess: 1 in {b.n_enrolled}), and the most exposed trial discloses "
        f"**{view.lid.lid_max:.2f} bits** of at most {view.lid.ceiling:.2f}."
    )
    pooled_col, rows_col = st.columns(2, gap="medium")
    with pooled_col:
        ui.show_figure(pooled_view_figure(view), "threat_example_pooled")
        st.caption(text.POOLED_CAPTION)
    with rows_col:
        ui.show_figure(row_view_figure(view), "threat_example_rows")
        st.caption(text.ROWS_CAPTION)
    lid_col, table_col = st.columns([1, 2], gap="medium")
    with lid_col:
        ui.show_figure(lid_per_trial_figure(view), "threat_example_lid")
    with table_col:
        st.markdown("**Trial by trial**")
        ui.show_table(view.trial_frame(), "threat_example_trials.csv",
                      column_help=text.TRIAL_HELP)  # fmt: skip
    with st.expander("The maths", icon=":material/functions:"):
        for k, part in enumerate(text.MATHS):
            (st.latex if k % 2 else st.markdown)(part)

# ---------------------------------------------------------------- 2. generator
st.header("2. Generator: watch the numbers move apart", divider="gray")
st.markdown(text.GENERATOR_INTRO)
with st.container(border=True):
    columns = st.columns(3, gap="large")
    for k, (key, options) in enumerate(text.GENERATOR_SLIDERS.items()):
        columns[k // 2].slider(key=key, **options)
    columns[2].number_input("Seed", min_value=0, max_value=2**31 - 1, step=1,
                            key="vm_threat_seed")  # fmt: skip
text.keep_widgets()

state = st.session_state
scenario = ui.compute(
    threat_scenario,
    n_enrolled=int(state["vm_threat_n"]),
    n_trials=int(state["vm_threat_trials"]),
    margin=float(state["vm_threat_margin"]),
    offset_spread=float(state["vm_threat_spread"]),
    noise=float(state["vm_threat_noise"]),
    seed=int(state["vm_threat_seed"]),
).value
if scenario is not None:
    text.metric_row(scenario)
    s = scenario.summary()
    st.markdown(
        f"**What moved apart.** The EER is {s['eer']:.1%}"
        + (", close to the 50 % of a coin toss" if s["eer"] >= CALLOUT_EER else "")
        + f", yet {s['linkability']:.1%} of the trials are linked to their speaker "
        f"({s['linkability'] / s['chance_linkability']:.1f}× the chance of "
        f"{s['chance_linkability']:.1%}), and the most exposed trial discloses "
        f"{s['lid_max']:.2f} of at most {s['lid_ceiling']:.2f} bits."
    )
    st.caption(text.GENERATOR_CAPTION)
    metrics_col, lid_col = st.columns(2, gap="medium")
    with metrics_col:
        ui.show_figure(scenario_metrics_figure(scenario, title="The numbers side by side"),
                       "threat_generator_metrics")  # fmt: skip
    with lid_col:
        ui.show_figure(lid_per_trial_figure(scenario), "threat_generator_lid")
    pooled_col, rows_col = st.columns(2, gap="medium")
    with pooled_col:
        ui.show_figure(pooled_view_figure(scenario), "threat_generator_pooled")
    with rows_col:
        ui.show_figure(row_view_figure(scenario, max_rows=20), "threat_generator_rows")

# ---------------------------------------------------------------- 3. GDPR vocabulary
st.header("3. The regulation's words, the metrics' numbers", divider="gray")
st.markdown(text.GDPR_INTRO)
st.markdown(text.GDPR_TABLE)
st.markdown(text.PAPERS)

# ---------------------------------------------------------------- 4. the study
st.header("4. Your study", divider="gray")
if len(study) == 0:
    st.info(text.NO_STUDY, icon=":material/info:")
    st.page_link("pages/2_Data.py", label="Add a condition", icon=":material/add:",
                 query_params={"new": "1"})  # fmt: skip
    st.stop()
st.markdown(
    f"Every condition of **{ui.md_escape(study.name)}** is checked for the pattern above: "
    f"{text.CHECKED}."
)
study = ui.one_to_n_study(study)  # sparse lists: complete groups whole, else complete trials
reports = list(ui.identity_reports(study, topics={"LID", "Linkage"}).values())  # what it reads
callouts = ui.compute(threat_callouts, study, reports, cache=False).value if reports else None
for c in callouts or []:
    st.warning(
        f"**{ui.md_escape(c.condition)}** looks private on the EER ({c.eer:.3f}; chance is "
        f"0.5) but is not: " + "; ".join(c.reasons) + ".",
        icon=":material/crisis_alert:",
    )
    if c.judged_attacker:  # the strongest attacker tried on its system
        st.caption(f"Judged against its attacker: {ui.md_escape(c.judged_attacker)}.")
    st.markdown(f"Its most exposed trials ({ui.md_escape(c.condition)}):")
    ui.show_table(c.worst_trials, f"threat_worst_trials_{c.condition}.csv",
                  column_help=text.WORST_HELP)  # fmt: skip
if callouts:
    st.page_link("pages/3_LID.py", label="LID: every trial", icon=":material/insights:")
elif callouts is not None:
    st.success(f"No condition crosses the thresholds: none has {text.CHECKED}.",
               icon=":material/check_circle:")  # fmt: skip
if reports:
    st.markdown("**Every condition checked**")
    ui.show_table(checked_conditions(reports, callouts or []), "threat_conditions.csv",
                  column_help=text.CHECKED_HELP)  # fmt: skip
    no_lid = [r.name for r in reports if r.lid is None]
    if no_lid:
        st.caption(
            f"{', '.join(ui.md_escape(n) for n in no_lid)}: no dev set, so no LID; checked "
            "on linkability only. The LID page can cross-calibrate them on eval."
        )

    # ---- who stays exposed: per data subject, under every condition
    st.markdown("#### Who stays exposed")
    st.markdown(text.EXPOSED_INTRO)
    original = reference_condition(reports, study.conditions[0].name)
    exposure = ui.compute(study_exposure, study, reports, exclude=[original], cache=False).value
    if exposure is not None and exposure.conditions:
        ui.show_table(exposure.frame(), "exposed_speakers.csv", column_help=text.EXPOSED_HELP)
        st.caption(
            f"The original speech (**{ui.md_escape(original)}**) is left out: it exposes every "
            "speaker by design. Sorted by the count of conditions that leave a speaker "
            "exposed, then by the mean rank-1 rate. Singling out needs utterance embeddings "
            "and is computed in the report (Report page)."
        )
    else:
        st.caption("No condition with ranked trials besides the original speech.")
