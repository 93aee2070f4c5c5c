"""The study of a browser session, kept in ``st.session_state``.

Parsed data lives here as an immutable :class:`~voxmetrics.data.study.Study`, never only in
widgets, so it survives page changes. Every edit replaces the study with a new one.
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.data.study import Study
from voxmetrics.ui.cache import demo_study_cached

__all__ = [
    "NOTICE_KEY",
    "STUDY_KEY",
    "get_study",
    "load_demo",
    "notify",
    "pop_notice",
    "set_study",
]

STUDY_KEY = "vm_study"
"""Session-state key of the current :class:`Study`."""
NOTICE_KEY = "vm_notice"
"""Session-state key of a one-shot message ``(kind, text)`` shown in the sidebar."""


def get_study() -> Study:
    """The session's study; on the first run of a session, the built-in demo study."""
    if STUDY_KEY not in st.session_state:
        st.session_state[STUDY_KEY] = demo_study_cached()
    return st.session_state[STUDY_KEY]


def set_study(study: Study) -> None:
    """Replace the session's study."""
    st.session_state[STUDY_KEY] = study


def load_demo() -> None:
    """Replace the session's study with the built-in demo study (a button callback)."""
    study = demo_study_cached()
    set_study(study)
    notify("success", f"Loaded the demo study ({len(study)} conditions).")


def notify(kind: str, text: str) -> None:
    """Leave a message (``kind`` is "success", "info", "warning" or "error") for the sidebar."""
    st.session_state[NOTICE_KEY] = (kind, text)


def pop_notice() -> tuple[str, str] | None:
    """Take the pending sidebar message, if any."""
    return st.session_state.pop(NOTICE_KEY, None)
