"""Report: the study's settings, then one report of every condition to download (issue 9)."""

import dataclasses

import streamlit as st

from voxmetrics import ui
from voxmetrics.data.study import Study, StudySettings
from voxmetrics.data.studyfile import study_to_bytes
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.plots.card import card_legend_html, card_styler
from voxmetrics.report.card import REPORT_CARD_THRESHOLDS
from voxmetrics.report.export import (
    find_chromium,
    report_html,
    report_json,
    report_pdf,
    report_zip,
    tables_zip,
)
from voxmetrics.report.study import StudyReport
from voxmetrics.report.tables import TABLE_CAPTIONS, render_tables
from voxmetrics.ui.cache import study_report, study_report_key
from voxmetrics.ui.setup import study_file_name

BOOT, SEED, FOLDS = "vm_report_bootstrap", "vm_report_seed", "vm_report_folds"
LID_VARIANT = "vm_report_lid_variant"
LID_VARIANT_LABELS = {
    "maximum-likelihood": "maximum likelihood (unpenalised)",
    "reference-code": "authors' code (Šterns et al. 2025 tables)",
}
TIES = "vm_report_ties"
TIE_RULES = {
    "reference": "As the reference code",
    "attacker": "For the attacker",
}
SHOWN_SETTINGS = "vm_report_settings_shown"  # the settings the widgets were last filled from
BUILT = "vm_report_built"  # key of the study whose report the user asked for

study = ui.page_setup("Report")
st.title("Report")
ui.require_conditions(study)
st.caption(
    "One report of the whole study: every metric of every condition with the study's "
    "settings, the report card and the threat call-outs, as an HTML page (figures included, "
    "works offline), the JSON of every number, the CSV tables and a PDF."
)

# ---------------------------------------------------------------- settings


def _fill_settings_widgets(study: Study) -> None:
    """Show the study's settings in the form: on arrival (widget state is dropped when the user
    changes page) and when they changed elsewhere (e.g. a loaded study file)."""
    settings = study.settings
    if st.session_state.get(SHOWN_SETTINGS) != settings or BOOT not in st.session_state:
        st.session_state[BOOT] = settings.bootstrap
        st.session_state[SEED] = settings.seed
        st.session_state[FOLDS] = settings.cross_calibrate or 0
        st.session_state[LID_VARIANT] = settings.lid_variant
        st.session_state[TIES] = settings.ties
        st.session_state[SHOWN_SETTINGS] = settings


st.subheader("Study settings")
_fill_settings_widgets(study)
with st.form("vm_report_settings", border=True):
    boot_col, seed_col, folds_col, ties_col = st.columns(4)
    boot_col.number_input(
        "Bootstrap replicates",
        step=50,
        key=BOOT,
        help="Speaker-level bootstrap behind the intervals of LID and ZEBRA (0 = no intervals). "
        "200 takes about half a second per demo condition.",
    )
    seed_col.number_input(
        "Seed", step=1, key=SEED, help="Seed of the bootstrap and of the cross-calibration folds."
    )
    folds_col.number_input(
        "Cross-calibration folds (0 = off)",
        step=1,
        key=FOLDS,
        help="For conditions without a dev set: calibrate LID by speaker-disjoint k-fold "
        "cross-calibration on eval (k ≥ 2). Off: those conditions have no LID.",
    )
    ties_col.selectbox(
        "Tied scores",
        list(TIE_RULES),
        format_func=TIE_RULES.get,
        key=TIES,
        help="How the pooled metrics order a target and a non-target with the same score. As "
        "the reference code: each number equals its reference implementation (EER: SpeechBrain; "
        "ROCCH-EER and min Cllr: BOSARIS / PYLLR; ZEBRA: the code of Nautsch et al. 2020). For "
        "the attacker: every tie counts for the attacker, the conservative audit view.",
    )
    st.radio(
        "LID calibration variant",
        list(LID_VARIANT_LABELS),
        format_func=LID_VARIANT_LABELS.get,
        key=LID_VARIANT,
        horizontal=True,
        help="Maximum likelihood: population-sd z-scores, unweighted, no penalty. Authors' "
        "code: sample sd, balanced class weights, L2 penalty C = 1 (reproduces Šterns et al. "
        "2025 Table 3, Table 4 and Figure 4). Saved with the study.",
    )
    applied = st.form_submit_button("Apply settings", key="vm_report_apply", icon=":material/tune:")

if applied:
    folds = int(st.session_state[FOLDS])
    try:
        new = StudySettings(
            **{
                **study.settings.to_dict(),
                "bootstrap": int(st.session_state[BOOT]),
                "seed": int(st.session_state[SEED]),
                "cross_calibrate": folds or None,
                "lid_variant": st.session_state[LID_VARIANT],
                "ties": str(st.session_state[TIES]),
            }
        )
    except VoxMetricsInputError as exc:
        st.error(
            f"Settings not applied: {exc}"
            + (
                " Here 0 folds turns cross-calibration off."
                if "cross_calibrate" in str(exc)
                else ""
            ),
            icon=":material/error:",
        )
    else:
        if new != study.settings:
            ui.set_study(dataclasses.replace(ui.get_study(), settings=new))  # the whole study
            study = dataclasses.replace(study, settings=new)
            st.session_state[SHOWN_SETTINGS] = new
        st.success(
            "Settings applied; the Overview's report card and this report use them, and "
            "'Save study' keeps them.",
            icon=":material/check:",
        )
s = study.settings
st.caption(
    f"Current settings: {s.bootstrap} bootstrap replicates, seed {s.seed}, "
    + (
        f"{s.cross_calibrate}-fold cross-calibration"
        if s.cross_calibrate
        else "no cross-calibration"
    )
    + " of conditions without a dev set; ties "
    + TIE_RULES[s.ties].lower()
    + f"; LID variant {s.lid_variant}."
)

# ---------------------------------------------------------------- build

st.subheader("Build the report")
key = study_report_key(study)
if st.button("Build report", key="vm_report_build", type="primary", icon=":material/summarize:"):
    st.session_state[BUILT] = key
if st.session_state.get(BUILT) != key:
    st.info(
        "Build the report to compute every metric of the "
        f"{len(study)} condition{'s' if len(study) != 1 else ''} with these settings "
        "(a few seconds for the demo study); it is kept until the study or its settings change.",
        icon=":material/info:",
    )
    st.stop()

out = ui.call(study_report, study)
if out is None:
    st.stop()
ui.show_warnings(out.warnings)
sr: StudyReport = out.value
st.caption(f"Report computed {sr.created} for the study '{ui.md_escape(sr.study.name)}'.")

st.markdown("#### Report card")
st.dataframe(
    card_styler(sr.card),
    hide_index=True,
    column_config={
        t.label: st.column_config.TextColumn(t.label, help=t.explanation)
        for t in REPORT_CARD_THRESHOLDS.values()
    },
)
st.markdown(card_legend_html(), unsafe_allow_html=True)

st.markdown("#### Threat call-outs")
if not sr.callouts:
    st.caption("No condition looks private on the EER while disclosing identity trial by trial.")
for c in sr.callouts:
    st.warning(
        f"**{ui.md_escape(c.condition)}**: " + "; ".join(ui.md_escape(r) for r in c.reasons) + ".",
        icon=":material/report:",
    )
st.page_link("pages/9_Threat_model.py", label="The threat model", icon=":material/policy:")

# ---------------------------------------------------------------- downloads

st.subheader("Downloads")
stem = study_file_name(sr.study).removesuffix(".vxm") + "_report"


chromium = find_chromium()
with st.container(horizontal=True, gap="small"):
    st.download_button(
        "HTML report",
        data=lambda: report_html(sr),
        file_name=f"{stem}.html",
        mime="text/html",
        key="vm_report_html",
        on_click="ignore",
        icon=":material/description:",
        help="One self-contained page with every table and figure; opens offline.",
    )
    st.download_button(
        "JSON (every number)",
        data=lambda: report_json(sr),
        file_name=f"{stem}.json",
        mime="application/json",
        key="vm_report_json",
        on_click="ignore",
        icon=":material/data_object:",
    )
    st.download_button(
        "HTML + JSON + CSVs (zip)",
        data=lambda: report_zip(sr),
        file_name=f"{stem}.zip",
        mime="application/zip",
        key="vm_report_zip",
        on_click="ignore",
        icon=":material/folder_zip:",
        help="The report page, its JSON, the CSV tables (overview, report card, LID per "
        "trial, worst trials of the call-outs) and the tables for a paper (LaTeX, Markdown).",
    )
    if chromium is not None:
        st.download_button(
            "PDF",
            data=lambda: report_pdf(sr, chromium=chromium),
            file_name=f"{stem}.pdf",
            mime="application/pdf",
            key="vm_report_pdf",
            on_click="ignore",
            icon=":material/picture_as_pdf:",
            help="The HTML report printed by headless Chromium (takes a few seconds).",
        )
    st.download_button(
        "Study file (.vxm)",
        data=lambda: study_to_bytes(sr.study),
        file_name=study_file_name(sr.study),
        mime="application/zip",
        key="vm_report_vxm",
        on_click="ignore",
        icon=":material/save:",
        help="The study with its settings, to rebuild this report later or on the command line.",
    )
if chromium is None:
    st.caption(
        "PDF needs Chromium (install it or set BROWSER_PATH); the HTML report prints to PDF "
        "from any browser."
    )

st.markdown("#### Tables for a paper")
st.caption(
    "The results tables with the bootstrap intervals beside their values, "
    '"0.47 [0.44, 0.50]", ready to paste: LaTeX needs `\\usepackage{booktabs}`.'
)
fmt_col, table_col = st.columns([1, 2])
fmt = fmt_col.radio(
    "Format",
    ["latex", "markdown"],
    format_func={"latex": "LaTeX (booktabs)", "markdown": "Markdown"}.get,
    horizontal=True,
    key="vm_report_table_format",
)
texts = {n.rsplit(".", 1)[0]: (n, text) for n, text in render_tables(sr, fmt).items()}
chosen = table_col.selectbox(
    "Table", list(texts), format_func=TABLE_CAPTIONS.get, key="vm_report_table"
)
file_name, text = texts[chosen]
st.code(text, language="latex" if fmt == "latex" else "markdown")
with st.container(horizontal=True, gap="small"):
    st.download_button(
        f"This table ({file_name})",
        data=text,
        file_name=file_name,
        mime="text/plain",
        key="vm_report_table_file",
        on_click="ignore",
        icon=":material/table:",
    )
    st.download_button(
        f"All {len(texts)} tables (zip)",
        data=lambda: tables_zip(sr, fmt),
        file_name=f"{stem}_{fmt}.zip",
        mime="application/zip",
        key="vm_report_tables_zip",
        on_click="ignore",
        icon=":material/folder_zip:",
    )

with st.expander("Command line"):
    st.markdown("The same report without the dashboard, from a saved study file:")
    st.code(
        f"python -m voxmetrics report {study_file_name(sr.study)} --html report.html "
        "--pdf report.pdf --json report.json",
        language="bash",
    )
    st.caption(
        "Save the study with 'Study file (.vxm)' above or 'Save study' in the sidebar. Add "
        "`--csv DIR` for the tables, `--latex DIR` and `--markdown DIR` for the tables for a "
        "paper; `--bootstrap` and `--seed` override the study's settings."
    )
