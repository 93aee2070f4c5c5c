"""What every page does first: page config, the menu, the study sidebar."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import streamlit as st

from voxmetrics.data.study import Study
from voxmetrics.data.studyfile import study_from_bytes, study_to_bytes
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.one_to_n import one_to_n_views
from voxmetrics.ui.access import logout_button, require_login
from voxmetrics.ui.computing import compute
from voxmetrics.ui.errors import install_error_handler
from voxmetrics.ui.notes import md_escape, reset_notes
from voxmetrics.ui.state import (
    SUBSET_KEY,
    get_study,
    load_demo,
    new_study,
    notify,
    pop_notice,
    set_study,
    shown_study,
)

__all__ = ["MENU", "MenuItem", "md_escape", "one_to_n_study", "page_setup", "require_conditions"]

DATA_PAGE = "pages/2_Data.py"


@dataclass(frozen=True)
class MenuItem:
    """One entry of the sidebar menu."""

    path: str
    """Page script, relative to ``app.py``."""
    label: str
    """Label shown in the menu."""
    icon: str
    """Material icon (``:material/name:``)."""


MENU: list[MenuItem] = [
    MenuItem("app.py", "Home", ":material/home:"),
    MenuItem("pages/1_Overview.py", "Overview", ":material/leaderboard:"),
    MenuItem("pages/9_Threat_model.py", "Threat model", ":material/policy:"),
    MenuItem(DATA_PAGE, "Data", ":material/upload_file:"),
    MenuItem("pages/8_Embeddings.py", "Embeddings", ":material/graphic_eq:"),
    MenuItem("pages/3_LID.py", "LID", ":material/insights:"),
    MenuItem("pages/4_SRD.py", "SRD", ":material/bar_chart:"),
    MenuItem("pages/5_ZEBRA.py", "ZEBRA", ":material/stacked_line_chart:"),
    MenuItem("pages/13_Attackers.py", "Attackers", ":material/security:"),
    MenuItem("pages/11_Verification.py", "Verification", ":material/query_stats:"),
    MenuItem("pages/6_Linkage.py", "Linkage", ":material/link:"),
    MenuItem("pages/7_Soft_biometrics.py", "Soft biometrics", ":material/diversity_3:"),
    MenuItem("pages/12_Privacy_vs_utility.py", "Privacy vs utility", ":material/balance:"),
    MenuItem("pages/10_Report.py", "Report", ":material/summarize:"),
]
"""The pages in menu order; a new page adds one entry here."""


def page_setup(title: str) -> Study:
    """Configure the page, draw the menu and the study sidebar; return the study to show.

    Call it first on every page. The study returned is the session's study restricted to the
    subset chosen in the sidebar (e.g. female trials only,
    :func:`~voxmetrics.ui.state.shown_study`), so every page honours that choice; a page that
    edits the study edits the whole one (:func:`~voxmetrics.ui.state.get_study`). It also
    installs the session's error handler (:func:`voxmetrics.ui.errors.install_error_handler`):
    from then on a bad-input error shows its message and any other error a short apology with
    a details expander, never a traceback.

    Before anything else it is the dashboard's gate (:func:`voxmetrics.ui.access.require_login`):
    a dashboard opened to a network stops every page here until its visitor has logged in.
    """
    st.set_page_config(
        page_title=f"{title} · VoxMetrics", page_icon=":material/graphic_eq:", layout="wide"
    )
    install_error_handler()  # from here on, no page shows a traceback
    require_login()  # shared on a network: nothing below runs before the visitor logs in
    reset_notes()  # the page's warnings, each once (voxmetrics.ui.notes)
    get_study()  # the start-up (or demo) study on the first run of a session
    with st.sidebar:
        st.markdown("### VoxMetrics")
        for item in MENU:
            st.page_link(item.path, label=item.label, icon=item.icon)
        st.divider()
        _study_sidebar(get_study())
        _subset_selector(get_study())
        logout_button()
    return shown_study()


_SUBSET_WIDGET = "vm_subset_widget"


def _store_subset() -> None:
    st.session_state[SUBSET_KEY] = st.session_state.get(_SUBSET_WIDGET) or ""


def _subset_label(option: str) -> str:
    return "All trials" if not option else option.replace("=", " = ", 1)


def _subset_selector(study: Study) -> None:
    """One sidebar widget choosing the subset (attribute = value) that every page shows."""
    options = [""] + [f"{a}={v}" for a, values in study.subset_options().items() for v in values]
    if len(options) == 1:
        st.session_state.pop(SUBSET_KEY, None)
        return
    if st.session_state.get(SUBSET_KEY) not in options:
        st.session_state[SUBSET_KEY] = ""
    # the widget's own key is dropped when a page is left; the choice lives in SUBSET_KEY
    st.session_state[_SUBSET_WIDGET] = st.session_state[SUBSET_KEY]
    st.selectbox(
        "Subset",
        options,
        key=_SUBSET_WIDGET,
        on_change=_store_subset,
        format_func=_subset_label,
        help="Show every page for one subset of the trials (e.g. sex = F), each evaluated on "
        "its own trials and its own enrolled identities, as VoicePrivacy reports female and "
        "male speakers separately. Offered: per-trial attributes every condition has.",
    )


def require_conditions(study: Study) -> None:
    """Explain and stop the page when the study has no condition."""
    if len(study) == 0:
        st.info(
            "The study has no conditions yet. Load the demo study from the sidebar, or add a "
            "condition by loading score files or embeddings on the Data page.",
            icon=":material/info:",
        )
        st.page_link(
            DATA_PAGE, label="Add a condition", icon=":material/add:", query_params={"new": "1"}
        )
        st.stop()


def one_to_n_study(study: Study) -> Study:
    """The study a page of the 1-to-N metrics shows (LID, SRD, linkage, threat model).

    :func:`~voxmetrics.evaluation.one_to_n.one_to_n_views` (kept in the shared result store:
    a page's reruns neither split a large sparse list into its groups again nor hash its
    complete trials again), with a note on each kind of sparse trial list. Stops the page when
    no condition is left.
    """
    views = compute(one_to_n_views, study, warn=False).value
    if views is None:
        st.stop()
    left_out, partial, grouped = views.left_out, views.partial, views.grouped
    if left_out:
        st.info(
            f"Not shown: {', '.join(left_out)}. Their trial lists are sparse and no trial is "
            "listed against every enrolled identity, so the 1-to-N metrics have no trial to "
            "rank (EER, Cllr and ZEBRA use every listed pair: see the Overview and ZEBRA "
            "pages). Choose a subset in the sidebar (e.g. sex) whose trials are complete.",
            icon=":material/info:",
        )
    if partial:
        st.caption(
            f"{', '.join(partial)}: sparse trial lists, shown here on their complete trials "
            "(those listed against every enrolled identity)."
        )
    for attr in sorted(set(grouped.values())):
        names = [name for name, a in grouped.items() if a == attr]
        st.caption(
            f"{', '.join(names)}: sparse trial lists complete within each {attr} group: each "
            f"trial is ranked among its own {attr} group's enrolled identities, and the numbers "
            "are pooled over the groups (as for a VoicePrivacy tree)."
        )
    if not views.study.conditions:
        st.stop()
    return views.study


# ---------------------------------------------------------------- the study sidebar

_MANAGED = "vm_manage_condition"
_NEW_NAME = "vm_rename_to"
_PENDING_REMOVAL = "vm_pending_removal"
_STUDY_FILE = "vm_study_file"
_STUDY_NAME = "vm_study_name"
_STUDY_NAME_OF = "vm_study_name_of"  # the study name the text box was filled with


def _rename_study() -> None:
    new = str(st.session_state.get(_STUDY_NAME, "")).strip()
    study = get_study()
    if not new:
        notify("error", "Type the study's new name first (e.g. my anonymiser comparison).")
        return
    if new == study.name:
        return
    set_study(dataclasses.replace(study, name=new))
    notify("success", f"Renamed the study '{study.name}' to '{new}'.")


def _rename() -> None:
    old = str(st.session_state.get(_MANAGED, ""))  # the selectbox above sets it
    new = st.session_state.get(_NEW_NAME, "")
    try:
        study = get_study().renamed(old, new)
    except VoxMetricsInputError as exc:
        notify("error", str(exc))
        return
    set_study(study)
    st.session_state[_MANAGED] = new.strip()
    st.session_state[_NEW_NAME] = ""
    notify("success", f"Renamed '{old}' to '{new.strip()}'.")


def _ask_removal() -> None:
    st.session_state[_PENDING_REMOVAL] = st.session_state.get(_MANAGED)


def _cancel_removal() -> None:
    st.session_state.pop(_PENDING_REMOVAL, None)


def _remove() -> None:
    name = st.session_state.pop(_PENDING_REMOVAL, None)
    try:
        study = get_study().without(name)
    except VoxMetricsInputError as exc:
        notify("error", str(exc))
        return
    set_study(study)
    notify("success", f"Removed '{name}' from the study.")


def study_file_name(study: Study) -> str:
    """File name of a saved study: its name made safe for a file system, plus ``.vxm``.

    Examples
    --------
    >>> from voxmetrics.data.study import Study
    >>> study_file_name(Study(name="my study/v2"))
    'my_study_v2.vxm'
    """
    stem = re.sub(r"[^\w.-]+", "_", study.name).strip("._") or "study"
    return f"{stem}.vxm"


def _load_study_file() -> None:
    upload = st.session_state.get(_STUDY_FILE)
    if upload is None:
        notify("error", "Choose a study file (.vxm) first.")
        return
    try:
        study = study_from_bytes(upload.getvalue(), name=upload.name)
    except VoxMetricsInputError as exc:
        notify("error", str(exc))
        return
    set_study(study)
    n = len(study)
    notify(
        "success",
        f"Loaded the study '{study.name}' from {upload.name} "
        f"({n} condition{'s' if n != 1 else ''}).",
    )


def _study_files(study: Study) -> None:
    if len(study):
        st.download_button(
            "Save study",
            data=lambda: study_to_bytes(study),
            file_name=study_file_name(study),
            mime="application/zip",
            key="vm_sidebar_save",
            on_click="ignore",
            icon=":material/save:",
            help="The whole study (conditions, dev and eval scores, embeddings, labels and "
            "settings) in one .vxm file, to load here later or to report on with "
            "`python -m voxmetrics report`.",
        )
    with st.expander("Load a study file"):
        st.file_uploader(
            "Study file (.vxm)",
            type=["vxm", "zip"],
            key=_STUDY_FILE,
            help="A file saved with 'Save study' or `python -m voxmetrics demo --format vxm`.",
        )
        st.button(
            "Load study",
            key="vm_load_study",
            on_click=_load_study_file,
            icon=":material/folder_open:",
            width="stretch",
            help="Replaces the current study; save it first to keep it.",
        )


def _study_sidebar(study: Study) -> None:
    n = len(study)
    st.markdown(f"**Study:** {md_escape(study.name)} · {n} condition{'s' if n != 1 else ''}")
    if n:
        lines = []
        for c in study.conditions:
            t, k = c.eval.shape
            dev = " + dev" if c.dev is not None else ""
            lines.append(f"- **{md_escape(c.name)}** :small[:gray[{t}×{k}{dev}]]")
        st.markdown("\n".join(lines))
    else:
        st.caption("No conditions yet.")
    notice = pop_notice()
    if notice is not None:
        kind, text = notice
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)
    st.page_link(
        DATA_PAGE, label="Add a condition", icon=":material/add:", query_params={"new": "1"}
    )
    with st.container(horizontal=True, gap="small"):
        st.button(
            "New empty study",
            key="vm_sidebar_new",
            on_click=new_study,
            icon=":material/note_add:",
            help="Replaces the current study (the demo, say) with an empty one, in one "
            "click; save the current study first to keep it.",
        )
        st.button(
            "Load demo study",
            key="vm_sidebar_demo",
            on_click=load_demo,
            icon=":material/science:",
            help="Replaces the current study with the built-in demo (5 simulated systems).",
        )
    with st.expander("Study name"):
        if (
            st.session_state.get(_STUDY_NAME_OF) != study.name
            or _STUDY_NAME not in st.session_state
        ):
            st.session_state[_STUDY_NAME] = st.session_state[_STUDY_NAME_OF] = study.name
        st.text_input(
            "Name",
            key=_STUDY_NAME,
            on_change=_rename_study,
            help="Shown on every page and in the report; names the saved .vxm file.",
        )
        st.button("Rename the study", key="vm_study_rename", on_click=_rename_study)
    _study_files(study)
    if not n:
        return
    with st.expander("Rename or remove a condition", expanded=_PENDING_REMOVAL in st.session_state):
        if st.session_state.get(_MANAGED) not in study.names:
            st.session_state[_MANAGED] = study.names[0]
        st.selectbox("Condition", study.names, key=_MANAGED)
        st.text_input("New name", key=_NEW_NAME, placeholder="e.g. my-anonymiser")
        rename_col, remove_col = st.columns(2)
        rename_col.button("Rename", key="vm_rename", on_click=_rename, width="stretch")
        remove_col.button("Remove…", key="vm_remove", on_click=_ask_removal, width="stretch")
        pending = st.session_state.get(_PENDING_REMOVAL)
        if pending in study.names:
            st.warning(f"Remove **{md_escape(pending)}** and its data from the study?")
            yes_col, no_col = st.columns(2)
            yes_col.button(
                "Yes, remove",
                key="vm_remove_yes",
                on_click=_remove,
                type="primary",
                width="stretch",
            )
            no_col.button("Cancel", key="vm_remove_no", on_click=_cancel_removal, width="stretch")
