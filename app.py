"""VoxMetrics dashboard: home page (run with ``voxmetrics app``)."""

import streamlit as st

from voxmetrics import ui

study = ui.page_setup("Home")

st.title("VoxMetrics")
st.markdown(
    "**How much does anonymised speech still give away about who is speaking?** "
    "VoxMetrics sets the usual 1-to-1 verification error (EER) next to 1-to-N linkage, "
    "i.e. how often an attacker picks the right speaker among N enrolled identities, "
    "because a system can look safe on the first and still leak on the second."
)

if len(study):
    names = ", ".join(ui.md_escape(n) for n in study.names)
    st.markdown(
        f"**Current study:** {ui.md_escape(study.name)}, {len(study)} "
        f"condition{'s' if len(study) != 1 else ''} ({names})."
    )
else:
    st.markdown("**Current study:** empty. Load the demo study or add a condition.")

st.page_link(
    "pages/9_Threat_model.py",
    label="Auditor or regulator? Start with the threat model: why a 50 % EER does not mean safe",
    icon=":material/policy:",
)

overview_col, data_col, demo_col, new_col = st.columns(4, vertical_alignment="center")
with overview_col:
    st.page_link(
        "pages/1_Overview.py",
        label="Overview: compare the conditions",
        icon=":material/leaderboard:",
    )
with data_col:
    st.page_link(
        "pages/2_Data.py", label="Data: load scores or embeddings", icon=":material/upload_file:"
    )
with demo_col:
    st.button(
        "Load demo study",
        key="vm_home_demo",
        on_click=ui.load_demo,
        icon=":material/science:",
        help="Replaces the current study with the built-in demo (5 simulated systems).",
    )
with new_col:
    st.button(
        "New empty study",
        key="vm_home_new",
        on_click=ui.new_study,
        icon=":material/note_add:",
        help="Replaces the current study with an empty one, to add your own conditions.",
    )

st.caption(
    "The demo study simulates five anonymisers on 40 speakers (dev and eval disjoint), from "
    "no anonymisation (plain) to none of the speaker left (random); anon-leaky has a "
    "near-chance EER while 10 % of its speakers keep most of their identity."
)
st.caption(
    "Save the study from the sidebar (a .vxm file) to reopen it later or to build its report "
    "on the command line; the Report page exports everything as HTML, PDF, JSON and CSV."
)
