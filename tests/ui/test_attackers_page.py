"""The Attackers page's widgets (voxmetrics.ui.attackers_page), each in a one-function AppTest.

The comparisons are of the 6-speaker demo's conditions with two or three back-ends (a tenth
of a second each); the whole page through the app is tests/app/test_attackers.py.
"""

from __future__ import annotations

import dataclasses

import pytest
from app_cases import run_function

from voxmetrics.analysis.weak_attacker import WeakAttackerCheck
from voxmetrics.data.recipe import WEAK_ATTACKER
from voxmetrics.data.study import Study
from voxmetrics.embeddings.backends import BACKENDS
from voxmetrics.evaluation.attackers import AttackerComparison, compare_attackers
from voxmetrics.evaluation.card import ReportCard
from voxmetrics.synth import demo_study
from voxmetrics.ui.attackers_page import AttackerChoices, conditions_with_embeddings
from voxmetrics.ui.notes import md_escape
from voxmetrics.ui.state import NOTICE_KEY, STUDY_KEY, SUBSET_KEY

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


@pytest.fixture(scope="module")
def study() -> Study:
    return demo_study(n_speakers=6)


@pytest.fixture(scope="module")
def leaky(study) -> AttackerComparison:
    """lda beats cosine on dev; procrustes is skipped (no original voices); no check fires."""
    return compare_attackers(study.get("anon-leaky"), backends=["cosine", "lda", "procrustes"])


@pytest.fixture(scope="module")
def mild(study) -> AttackerComparison:
    """cosine is the strongest, every trained back-end weaker: the weak-attacker check fires."""
    return compare_attackers(study.get("anon-mild"), backends=["cosine", "lda"])


# ------------------------------------------------------------------ conditions_with_embeddings


def test_conditions_with_embeddings_splits_the_study_in_its_order(study):
    bare = dataclasses.replace(study.get("random"), embeddings=None)
    with_es, without = conditions_with_embeddings(study.with_condition(bare))
    assert with_es == ["plain", "anon-mild", "anon-strong", "anon-leaky"]
    assert without == ["random"]
    assert conditions_with_embeddings(Study()) == ([], [])


# ------------------------------------------------------------------ attacker_choices


def _choices_page(study, names):
    import streamlit as st

    from voxmetrics.errors import VoxMetricsInputError
    from voxmetrics.ui.attackers_page import attacker_choices

    try:
        st.session_state["chosen"] = attacker_choices(study, names)
    except VoxMetricsInputError as exc:
        st.session_state["chosen"] = None
        st.error(str(exc))


def test_the_pickers_default_to_every_backend_by_dev_eer_without_original(study):
    at = run_function(_choices_page, study, ["anon-mild", "plain"])
    assert at.session_state["chosen"] == AttackerChoices(
        condition="anon-mild",
        backends=tuple(BACKENDS),
        select_by="eer",
        calibrate=False,
        original=None,
    )
    # the original voices: none, or any other condition (never the one attacked)
    assert at.selectbox(key="vm_attackers_original_anon-mild").options == ["(none)", "plain"]
    assert at.selectbox(key="vm_attackers_select").options[:2] == ["eer", "eer_rocch"]


def test_the_original_voices_default_to_a_condition_under_the_original_attacker(study):
    original = dataclasses.replace(study.get("plain"), attacker="original")
    at = run_function(
        _choices_page, study.with_condition(original), ["anon-mild", "plain", "random"]
    )
    assert at.selectbox(key="vm_attackers_original_anon-mild").value == "plain"
    chosen = at.session_state["chosen"]
    assert chosen.original == "plain" and chosen.condition == "anon-mild"
    # another pick: the choices follow the widgets
    at.selectbox(key="vm_attackers_select").set_value("linkability").run()
    at.multiselect(key="vm_attackers_backends").set_value(["cosine", "plda"]).run()
    at.toggle(key="vm_attackers_calibrate").set_value(True).run()
    chosen = at.session_state["chosen"]
    assert (chosen.select_by, chosen.backends, chosen.calibrate) == (
        "linkability",
        ("cosine", "plda"),
        True,
    )


def test_no_backend_chosen_is_an_input_error(study):
    at = run_function(_choices_page, study, ["anon-mild"])
    at.multiselect(key="vm_attackers_backends").set_value([]).run()
    assert at.session_state["chosen"] is None
    assert at.error[0].value == "Choose at least one back-end to try (e.g. cosine and plda)."


# ------------------------------------------------------------------ show_strongest


def _strongest_page(cmp):
    from voxmetrics.ui.attackers_page import show_strongest

    show_strongest(cmp)


def test_the_strongest_chosen_on_dev_beside_cosine_with_its_training_data(leaky):
    at = run_function(_strongest_page, leaky)
    assert [s.value for s in at.success] == [
        "**lda** is the strongest of 2 back-ends: chosen on dev by its eer (39.6 %), reported "
        "on eval: EER 54.2 % (cosine scoring, today's attacker: 41.7 %). "
        "Trained on: dev (cross-fitted)."
    ]
    assert not at.caption  # no notes


def test_cosine_as_the_strongest_is_not_compared_with_itself(mild):
    at = run_function(_strongest_page, mild)
    assert at.success[0].value == (
        "**cosine** is the strongest of 2 back-ends: chosen on dev by its eer (16.7 %), "
        "reported on eval: EER 14.2 %."
    )


def test_a_dev_figure_that_is_not_a_rate_is_shown_as_a_number(study):
    cmp = compare_attackers(study.get("random"), backends=["cosine", "lda"], select_by="min_cllr")
    o = cmp.sweep.strongest
    at = run_function(_strongest_page, cmp)
    assert f"chosen on dev by its min_cllr ({o.dev_value:.3f})" in at.success[0].value
    assert " %)" not in at.success[0].value.split("reported")[0]


def test_a_single_backend_and_the_notes_of_those_left_out(study):
    ignorant = dataclasses.replace(study.get("anon-mild"), attacker="ignorant")
    cmp = compare_attackers(ignorant, backends=["cosine", "procrustes"])
    at = run_function(_strongest_page, cmp)
    eer = cmp.reports["cosine"].baseline.eer
    assert at.success[0].value == (
        f"**cosine** is the only back-end tried, reported on eval: EER {100 * eer:.1f} %."
    )
    assert [c.value for c in at.caption] == [
        md_escape(
            "anon-mild: procrustes left out: a mapping attack needs an attacker who knows the "
            "anonymiser (lazy-informed, semi-informed)"
        )
    ]


# ------------------------------------------------------------------ show_skipped


def _skipped_page(cmp):
    from voxmetrics.ui.attackers_page import show_skipped

    show_skipped(cmp)


def test_the_skipped_backends_each_with_why(leaky, mild):
    at = run_function(_skipped_page, leaky)
    (caption,) = at.caption
    why = md_escape(
        "a mapping attack needs the original embeddings of the attacker's training utterances "
        "(paired on utt_id); 0 of its 72 training utterances have one"
    )
    assert caption.value == f"Not tried here: **procrustes**: {why}."
    assert not run_function(_skipped_page, mild).caption  # every back-end tried: nothing said


# ------------------------------------------------------------------ show_weak_attacker


def _weak_page(cmp):
    from voxmetrics.ui.attackers_page import show_weak_attacker

    show_weak_attacker(cmp)


def test_the_weak_attacker_warning_with_its_reasons(mild):
    at = run_function(_weak_page, mild)
    (reason,) = mild.check.reasons
    assert "every trained back-end is weaker than plain cosine scoring" in reason
    assert at.warning[0].value == (
        f"**{WEAK_ATTACKER[0].upper()}{WEAK_ATTACKER[1:]}.**\n\n- {md_escape(reason)}"
    )
    assert at.caption[0].value == (
        "Weak-attacker checks run (docs, Methods > Attackers): trained_vs_cosine (fired). "
        "Choose the original voices above to check the attacker on unprotected speech too."
    )


def test_checks_that_passed_are_named_and_no_warning_shown(mild):
    passed = dataclasses.replace(
        mild, check=WeakAttackerCheck(findings=(), ran=("trained_vs_cosine", "original_speech"))
    )
    at = run_function(_weak_page, passed)
    assert not at.warning
    assert at.caption[0].value == (
        "Weak-attacker checks run (docs, Methods > Attackers): trained_vs_cosine (passed), "
        "original_speech (passed)."
    )


def test_no_check_could_run_says_how_to_run_one(mild):
    none = dataclasses.replace(mild, check=WeakAttackerCheck(findings=(), ran=()))
    at = run_function(_weak_page, none)
    assert not at.warning
    assert at.caption[0].value.startswith("No weak-attacker check could run: choose the original")


# ------------------------------------------------------------------ add_buttons


def _buttons_page(cmp):
    from voxmetrics.ui.attackers_page import add_buttons

    add_buttons(cmp)


def test_the_strongest_and_every_backend_but_the_conditions_own_scores(study, leaky):
    at = run_function(_buttons_page, leaky, **{STUDY_KEY: study})
    strongest = at.button(key="vm_attackers_add_strongest")
    every = at.button(key="vm_attackers_add_all")
    assert (strongest.label, strongest.disabled) == ("Add the strongest (lda)", False)
    assert (every.label, every.disabled) == ("Add every back-end (1)", False)  # lda; not cosine
    captions = [c.value for c in at.caption]
    assert captions[0].startswith(r"Each is named **anon\-leaky [back-end]**, keeps")
    assert captions[1] == "cosine: the condition's own scores (nothing new to add)."
    strongest.click().run()
    assert not at.exception, at.exception
    added = at.session_state[STUDY_KEY].get("anon-leaky [lda]")
    assert added.recipe.backend == "lda" and added.attacker == "semi-informed"
    assert added.utility == study.get("anon-leaky").utility
    assert at.session_state[NOTICE_KEY] == ("success", "Added anon-leaky [lda] to the study.")
    assert at.session_state[STUDY_KEY].names == [*study.names, "anon-leaky [lda]"]


def test_the_strongest_being_the_own_scores_is_not_added(study, mild):
    at = run_function(_buttons_page, mild, **{STUDY_KEY: study})
    strongest = at.button(key="vm_attackers_add_strongest")
    assert (strongest.label, strongest.disabled) == ("Add the strongest (cosine)", True)
    assert strongest.help == "The strongest is the condition's own scores: it is judged as it is."
    at.button(key="vm_attackers_add_all").click().run()
    assert at.session_state[STUDY_KEY].names == [*study.names, "anon-mild [lda]"]
    assert at.session_state[NOTICE_KEY] == ("success", "Added anon-mild [lda] to the study.")


def test_a_subset_adds_nothing_and_says_why(study, leaky):
    at = run_function(_buttons_page, leaky, **{STUDY_KEY: study, SUBSET_KEY: "sex=F"})
    assert not at.button
    assert "choose **All trials** to add attackers' conditions" in at.info[0].value


# ------------------------------------------------------------------ show_card_attackers


def _card_page(card):
    from unittest import mock

    import streamlit as st

    from voxmetrics.ui.attackers_page import show_card_attackers

    def link(page, *, label, icon):  # the app's pages are not registered in a one-function app
        st.write(f"link to {page}: {label}")

    with mock.patch.object(st, "page_link", link):
        show_card_attackers(card)


def test_the_cards_attackers_their_warnings_and_those_left_off():
    card = ReportCard(
        conditions=("sys_1", "sys_1 [lda]"),
        cells=((), ()),
        attackers={"sys_1 [lda]": "lda, the strongest of 2 attackers tried"},
        not_judged={"sys_1": "weaker than sys_1 [lda]"},
        weak_attackers={"sys_1 [lda]": "the attacker may be too weak, too few data"},
    )
    at = run_function(_card_page, card)
    assert [w.value for w in at.warning] == [
        r"**sys\_1 \[lda\]**: the attacker may be too weak, too few data."
    ]
    assert at.markdown[0].value == (
        "**Which attacker each row is judged against**\n\n"
        r"- **sys\_1 \[lda\]**: lda, the strongest of 2 attackers tried" + "\n"
        r"- *sys\_1* (not on the card): weaker than sys\_1 \[lda\]"
    )
    assert at.markdown[1].value == "link to pages/13_Attackers.py: Attackers: every back-end"


def test_a_card_without_attackers_shows_nothing():
    at = run_function(_card_page, ReportCard(conditions=("plain",), cells=((),)))
    assert not at.warning and not at.markdown
