"""A page's warnings, each naming its condition, shown once (voxmetrics.ui.notes)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.ui.notes import md_escape, note_is_model_fit, note_topic


def test_md_escape_shows_a_name_literally():
    assert md_escape("anon_mild*2 [v1]") == r"anon\_mild\*2 \[v1\]"
    assert md_escape("a-b.c") == r"a\-b\.c"
    assert md_escape("plain") == "plain"


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("the beta-binomial CLL fit did not converge", "SRD"),
        ("the LID calibration did not converge", "LID"),
        ("singling out skipped: 1 trial per speaker", "Linkage"),
        ("ECE is undefined without target trials", "ZEBRA"),
        ("d' needs both pools", "Verification"),
        ("the attribute classifier saw one class", "SBLS"),
        ("3 of 40 trials have a speaker who is not enrolled", ""),
    ],
)
def test_each_message_has_the_topic_of_its_first_matching_words(message, topic):
    assert note_topic(message) == topic


def test_only_fits_that_did_not_converge_are_model_fit_notes():
    assert note_is_model_fit("the LID calibration did not converge: separated pools")
    assert not note_is_model_fit("the LID calibration converged")


def _notes_page():
    import streamlit as st

    from voxmetrics.ui.notes import add_notes, reset_notes

    reset_notes()
    conditions = ("plain", "anon_1")
    add_notes(["3 trials excluded"], condition="plain")
    add_notes(["3 trials excluded"], condition="plain")  # the same note once
    add_notes(["anon_1: 2 trials excluded"], conditions=conditions)  # named in the message
    add_notes(
        ["the LID calibration did not converge", "the beta-binomial LL fit did not converge"],
        condition="anon_1",
        topics={"SRD"},  # an SRD page: the LID note is not its own
    )
    st.write("done")


def test_notes_are_shown_once_per_condition_with_the_fits_apart():
    at = AppTest.from_function(_notes_page, default_timeout=30).run()
    assert not at.exception
    (warning,) = at.warning
    assert warning.value.splitlines() == [
        "- **plain**: 3 trials excluded",
        r"- **anon\_1**: 2 trials excluded",
    ]
    (fits,) = at.expander
    assert fits.label == "Model-fit notes (1): anon_1"
    text = "\n".join(str(m.value) for m in fits.markdown)
    assert "beta-binomial LL fit did not converge" in text and "LID" not in text
