"""Report: the study's settings, then one report of every condition to download (issue 9)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.sbls import default_attack
from voxmetrics.data.studyfile import study_to_bytes
from voxmetrics.report.export import (
    find_chromium,
    report_html,
    report_json,
    report_pdf,
    report_zip,
    tables_zip,
)
from voxmetrics.report.study import StudyReport, build_study_report
from voxmetrics.report.tables import TABLE_CAPTIONS, render_tables
from voxmetrics.ui.setup import study_file_name

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

st.subheader("Study settings")
study = ui.settings_form(study)

# ---------------------------------------------------------------- build

st.subheader("Build the report")
reference = st.selectbox(
    "Compare every condition against",
    study.names,
    key="vm_report_reference",
    help="The report's paired comparisons (B vs A, with intervals and Holm-adjusted p-values) "
    "take this condition as A; by default the study's first.",
)
key = f"{ui.content_key(study)}|reference={reference}"  # names, settings, data, reference
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

# every condition's report and attacker from the caches the other pages fill: after the
# Overview (same settings) nothing is evaluated and no attacker trained again
out = ui.compute(
    build_study_report,
    study,
    evaluator=ui.condition_report,
    attack_of=ui.cached(default_attack),
    reference=reference,
    bar="Building the report",
    warn=False,
)
ui.show_warnings(out.warnings, conditions=study.names)  # the library names their conditions
if out.failed:
    st.stop()
sr: StudyReport = out.value
st.caption(f"Report computed {sr.created} for the study '{ui.md_escape(sr.study.name)}'.")

st.markdown("#### Report card")
ui.show_report_card(sr.card)

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
    ui.download_button(
        "HTML report",
        lambda: report_html(sr),
        f"{stem}.html",
        "text/html",
        key="vm_report_html",
        icon=":material/description:",
        help="One self-contained page with every table and figure; opens offline.",
    )
    ui.download_button(
        "JSON (every number)",
        lambda: report_json(sr),
        f"{stem}.json",
        "application/json",
        key="vm_report_json",
        icon=":material/data_object:",
    )
    ui.download_button(
        "HTML + JSON + CSVs (zip)",
        lambda: report_zip(sr),
        f"{stem}.zip",
        "application/zip",
        key="vm_report_zip",
        icon=":material/folder_zip:",
        help="The report page, its JSON, the CSV tables (overview, report card, LID per "
        "trial, worst trials of the call-outs) and the tables for a paper (LaTeX, Markdown).",
    )
    if chromium is not None:
        ui.download_button(
            "PDF",
            lambda: report_pdf(sr, chromium=chromium),
            f"{stem}.pdf",
            "application/pdf",
            key="vm_report_pdf",
            icon=":material/picture_as_pdf:",
            help="The HTML report printed by headless Chromium (takes a few seconds).",
        )
    ui.download_button(
        "Study file (.vxm)",
        lambda: study_to_bytes(sr.study),
        study_file_name(sr.study),
        "application/zip",
        key="vm_report_vxm",
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
    ui.download_button(
        f"This table ({file_name})",
        text,
        file_name,
        "text/plain",
        key="vm_report_table_file",
        icon=":material/table:",
    )
    ui.download_button(
        f"All {len(texts)} tables (zip)",
        lambda: tables_zip(sr, fmt),
        f"{stem}_{fmt}.zip",
        "application/zip",
        key="vm_report_tables_zip",
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
