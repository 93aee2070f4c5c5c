"""Overview: one row per condition and the EER vs linkability figure."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.plots import eer_linkability_figure
from voxmetrics.plots.overview import eer_lidmax_figure
from voxmetrics.report import OVERVIEW_COLUMNS, overview_frame

study = ui.page_setup("Overview")
st.title("Overview")
ui.require_conditions(study)

st.caption(
    "One row per condition with every metric available so far. T: trials scored, N: enrolled "
    "identities, Excluded: trials whose speaker is not enrolled."
)
reports = ui.study_reports(study)
if not reports:
    st.stop()

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

st.subheader("EER vs linkability")
fig = eer_linkability_figure(reports)
ui.show_figure(fig, "eer_vs_linkability", show_title=False)
st.caption(
    "A high EER can coexist with high linkage: the EER pools every score of the study, while "
    "linkage asks, trial by trial, whether the right speaker ranks first among the N enrolled. "
    "Dashed: the chance linkability 1/N; dotted: the chance EER 0.5."
)

# a markdown heading: tests/test_app.py pins the page's st.subheader list
st.markdown("### EER vs worst-case disclosure (LIDmax)")
ui.show_figure(eer_lidmax_figure(reports), "eer_vs_lidmax", show_title=False)
no_lid = [r.name for r in reports if r.lid is None]
st.caption(
    "Conditions with the same near-chance EER can expose very different worst cases: LIDmax "
    "is the most information a single trial gives away about its speaker (at most log₂ N "
    "bits). The shaded corner holds the conditions with EER ≥ 0.45 and LIDmax > 1 bit, which "
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
