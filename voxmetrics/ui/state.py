"""The study of a browser session, kept in ``st.session_state``.

Parsed data lives here as an immutable :class:`~voxmetrics.data.study.Study`, never only in
widgets, so it survives page changes. Every edit replaces the study with a new one.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from voxmetrics.data.study import Study
from voxmetrics.data.studyfile import load_study
from voxmetrics.synth import demo_study
from voxmetrics.ui.access import server_settings
from voxmetrics.ui.computing import compute

__all__ = [
    "NEW_STUDY_NAME",
    "NOTICE_KEY",
    "STUDY_KEY",
    "SUBSET_KEY",
    "demo",
    "get_study",
    "get_subset",
    "load_demo",
    "new_study",
    "notify",
    "pop_notice",
    "set_study",
    "shown_study",
    "start_study",
]

STUDY_KEY = "vm_study"
"""Session-state key of the current :class:`Study`."""
SUBSET_KEY = "vm_subset"
"""Session-state key of the subset every page shows: ``"attr=value"``, or "" for all trials."""
_SUBSET_CACHE = "vm_subset_study"
NEW_STUDY_NAME = "my study"
"""Name of a new empty study, until the user renames it."""
NOTICE_KEY = "vm_notice"
"""Session-state key of a one-shot message ``(kind, text)`` shown in the sidebar."""


def demo() -> Study:
    """The built-in demo study, simulated once per server (it is immutable)."""
    return compute(demo_study, spinner="Simulating the demo study…").value


def start_study() -> Study:
    """The study a new session opens: ``voxmetrics app STUDY.vxm``'s, else the demo study.

    The operator's study file is read once per server, with the safe reader of
    :func:`~voxmetrics.data.studyfile.load_study`; every session starts from that (immutable)
    study and edits its own copy. A file that cannot be read any more is named in a message
    and the session starts with an empty study.
    """
    path = server_settings().study
    if path is None:
        return demo()
    name = Path(path).name  # the visitor sees the file's name, not where it lies
    if not Path(path).is_file():
        st.error(
            f"The study file {name} given at start is gone; load a study from the sidebar.",
            icon=":material/error:",
        )
        return Study()
    out = compute(load_study, path, name=name, spinner=f"Opening {name}…")
    return Study() if out.failed else out.value


def get_study() -> Study:
    """The session's study; on the first run of a session, :func:`start_study`."""
    if STUDY_KEY not in st.session_state:
        st.session_state[STUDY_KEY] = start_study()
    return st.session_state[STUDY_KEY]


def set_study(study: Study) -> None:
    """Replace the session's study."""
    st.session_state[STUDY_KEY] = study


def get_subset() -> tuple[str, str] | None:
    """The chosen subset ``(attribute, value)``, or None for all trials."""
    chosen = st.session_state.get(SUBSET_KEY) or ""
    if "=" not in chosen:
        return None
    attr, value = chosen.split("=", 1)
    return attr, value


def shown_study() -> Study:
    """The study the pages show: the session's study restricted to the chosen subset.

    The subset is built once per (study, subset) by :meth:`Study.subset` and kept in the
    session; a subset the study no longer has falls back to all trials.
    """
    study = get_study()
    subset = get_subset()
    if subset is None:
        return study
    if subset[1] not in study.subset_options().get(subset[0], []):
        st.session_state[SUBSET_KEY] = ""
        return study
    cached = st.session_state.get(_SUBSET_CACHE)
    if cached is not None and cached[0] is study and cached[1] == subset:
        return cached[2]
    shown = study.subset(*subset)
    st.session_state[_SUBSET_CACHE] = (study, subset, shown)
    return shown


def load_demo() -> None:
    """Replace the session's study with the built-in demo study (a button callback)."""
    study = demo()
    set_study(study)
    notify("success", f"Loaded the demo study ({len(study)} conditions).")


def new_study() -> None:
    """Replace the session's study with a new empty one (a button callback)."""
    set_study(Study(name=NEW_STUDY_NAME))
    notify(
        "success",
        "Started a new empty study: add conditions on the Data or Embeddings page, and name "
        "it under 'Study name'.",
    )


def notify(kind: str, text: str) -> None:
    """Leave a message (``kind`` is "success", "info", "warning" or "error") for the sidebar."""
    st.session_state[NOTICE_KEY] = (kind, text)


def pop_notice() -> tuple[str, str] | None:
    """Take the pending sidebar message, if any."""
    return st.session_state.pop(NOTICE_KEY, None)
