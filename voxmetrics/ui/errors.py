"""The dashboard never shows a traceback: one handler for every page's uncaught exceptions.

:func:`install_error_handler` (called by :func:`~voxmetrics.ui.setup.page_setup`, so by every
page) registers :func:`show_error` as Streamlit's script-error handler for the session: a
:class:`~voxmetrics.errors.VoxMetricsInputError` shows its message (what is wrong, where, how to
fix it); anything else shows a short apology with an error reference in a collapsed
"Details" panel. The traceback goes to the server's log under that reference, never to the page
(it can carry paths, settings or data of the server).
"""

from __future__ import annotations

import logging
import secrets

import streamlit as st

from voxmetrics.errors import VoxMetricsInputError

__all__ = ["APOLOGY", "install_error_handler", "show_error"]

_LOG = logging.getLogger("voxmetrics.ui")

APOLOGY = (
    "Sorry, something went wrong while computing this page. The study is unchanged; try "
    "another setting or condition, and if it happens again please report it with the error "
    "reference below."
)
"""What the page says for an error that is not a problem with the input."""


def show_error(exc: BaseException) -> bool:
    """Show ``exc`` on the page instead of a traceback; returns True (the error was shown)."""
    if isinstance(exc, VoxMetricsInputError):
        st.error(str(exc), icon=":material/error:")
        return True
    if isinstance(exc, MemoryError):
        st.error(
            "This input needs more memory than the server has. Check that it is the intended "
            "file, or use a smaller one (the input limits are set in voxmetrics.toml).",
            icon=":material/error:",
        )
        return True
    reference = secrets.token_hex(4)
    _LOG.error("dashboard error %s", reference, exc_info=exc)  # the traceback: server log only
    st.error(APOLOGY, icon=":material/sentiment_dissatisfied:")
    with st.expander("Details"):
        st.code(
            f"Error reference {reference} ({type(exc).__name__}); the server's log has "
            "the details under this reference.",
            language="text",
        )
    return True


def install_error_handler() -> None:
    """Make :func:`show_error` the handler of every uncaught exception of this session's pages."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None and hasattr(ctx, "on_script_error"):
        ctx.on_script_error = show_error
