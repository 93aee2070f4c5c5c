"""The warnings of a page, each naming its condition, shown once in one place.

A library warning (:class:`~voxmetrics.errors.VoxMetricsWarning`) concerns one condition and
one metric: "the beta-binomial CLL fit did not converge" is about a condition's SRD model.
Every :func:`~voxmetrics.ui.compute` of a page hands its warnings here with the condition's
name (:func:`add_notes`), and the page shows them in one block, drawn where the first one
arrives and redrawn as more come: the data warnings in one warning box, the model-fit notes
(a fit or calibration that did not converge) in one collapsed "Model-fit notes" expander, one
line per condition and message, however many calls raised it. A page that shows a
condition's report only beside its own numbers (SRD, Linkage) keeps the warnings of its own
metric (:func:`note_topic`) and the general ones (e.g. excluded trials), not those of the
other metrics. :func:`~voxmetrics.ui.page_setup` starts every run of a page with no notes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

__all__ = ["add_notes", "md_escape", "note_is_model_fit", "note_topic", "reset_notes"]

NOTES_KEY = "vm_page_notes"
"""Session-state key of the notes of the page being drawn."""

# (topic, words of its messages): the first topic whose words appear in a message is its own
_TOPIC_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SRD", ("beta-binomial", "SRD")),
    ("LID", ("LID", "calibration")),
    ("Linkage", ("singling out", "DeID", "G_VD", "similarity matri", "conversation")),
    ("ZEBRA", ("ZEBRA", "ECE")),
    ("Verification", ("d'", "DCF")),
    ("SBLS", ("SBLS", "classifier")),
)


def md_escape(text: str) -> str:
    """Escape Markdown so a user's condition name (or a message) is shown literally."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", text)


def note_topic(message: str) -> str:
    """The metric a warning is about ("SRD", "LID", "Linkage"...), "" for a general one.

    Examples
    --------
    >>> note_topic("the beta-binomial CLL fit did not converge; do not rely on this model.")
    'SRD'
    >>> note_topic("the LID calibration did not converge: the pools are separated")
    'LID'
    >>> note_topic("3 of 40 trials have a speaker who is not enrolled")
    ''
    """
    for topic, words in _TOPIC_WORDS:
        if any(w in message for w in words):
            return topic
    return ""


def note_is_model_fit(message: str) -> bool:
    """Whether a warning is about a model or calibration fit (shown with the model-fit notes).

    Examples
    --------
    >>> note_is_model_fit("the beta-binomial LL fit did not converge (alpha = 0.1)")
    True
    >>> note_is_model_fit("3 speaker(s) with a single utterance left out")
    False
    """
    return "did not converge" in message


@dataclass
class _Notes:
    """The notes of one run of a page and where they are drawn."""

    items: dict[tuple[str, str], None] = field(default_factory=dict)
    """(condition, message) in the order they came, each once."""
    placeholder: Any = None
    """The ``st.empty`` the block is drawn into (made at the first note)."""


def reset_notes() -> None:
    """Start the page's run with no notes (called by :func:`~voxmetrics.ui.page_setup`)."""
    st.session_state[NOTES_KEY] = _Notes()


def _notes() -> _Notes:
    notes = st.session_state.get(NOTES_KEY)
    if not isinstance(notes, _Notes):
        notes = st.session_state[NOTES_KEY] = _Notes()
    return notes


def _message_escape(text: str) -> str:
    """Escape what Markdown would read as markup in a message (file names, arrows, $...)."""
    return re.sub(r"([\\`*_\[\]<>~$|#])", r"\\\1", text)


def _lines(items: Iterable[tuple[str, str]]) -> str:
    return "\n".join(
        f"- **{md_escape(c)}**: {_message_escape(m)}" if c else f"- {_message_escape(m)}"
        for c, m in items
    )


def _draw(notes: _Notes) -> None:
    if notes.placeholder is None:  # in the page's main area, wherever the call sits
        notes.placeholder = st._main.empty()
    fits = [k for k in notes.items if note_is_model_fit(k[1])]
    data = [k for k in notes.items if not note_is_model_fit(k[1])]
    with notes.placeholder.container():
        if data:
            st.warning(_lines(data), icon=":material/warning:")
        if fits:
            names = list(dict.fromkeys(c for c, _ in fits if c))
            about = f": {', '.join(names)}" if names else ""
            with st.expander(f"Model-fit notes ({len(fits)}){about}", icon=":material/info:"):
                st.markdown(_lines(fits))
                st.caption(
                    "A model or calibration that did not converge: the numbers that rest on it "
                    "are shown, but read them with care (each note says which to avoid)."
                )


def _split(message: str, condition: str, conditions: Collection[str]) -> tuple[str, str]:
    """(condition, message) of a message that may start with its condition's name."""
    for name in (condition,) if condition else conditions:
        if message.startswith(f"{name}: "):
            return name, message[len(name) + 2 :]
    return condition, message


def add_notes(
    messages: Iterable[str],
    *,
    condition: str = "",
    topics: Collection[str] | None = None,
    conditions: Collection[str] = (),
) -> None:
    """Add warnings of ``condition`` to the page's notes and redraw them (each once).

    ``topics`` keeps only the warnings about those metrics (:func:`note_topic`) and the
    general ones; None keeps every warning. Without a ``condition``, a message that starts
    with ``"name: "`` for one of ``conditions`` (as the library names them,
    :func:`voxmetrics.errors.warnings_of`) is that condition's.
    """
    notes = _notes()
    before = len(notes.items)
    for m in messages:
        key = _split(m, condition, conditions)
        topic = note_topic(key[1])
        if topics is None or not topic or topic in topics:
            notes.items[key] = None
    if len(notes.items) != before:
        _draw(notes)
