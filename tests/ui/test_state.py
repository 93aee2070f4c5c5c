"""The study of a browser session (voxmetrics.ui.state), run in a one-function AppTest."""

from __future__ import annotations

import pytest
from app_cases import run_function
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import NEW_STUDY_NAME, NOTICE_KEY, STUDY_KEY, SUBSET_KEY

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _subset_page():
    import streamlit as st

    from voxmetrics.ui.state import get_subset, shown_study

    st.write(f"subset={get_subset()!r}")
    st.write(f"trials={[c.eval.n_trials for c in shown_study().conditions]}")


def _written(at: AppTest) -> list[str]:
    return [str(m.value) for m in at.markdown]


@pytest.fixture(scope="module")
def study() -> Study:
    return demo_study(n_speakers=6)


def test_all_trials_without_a_subset(study):
    at = run_function(_subset_page, timeout=60, **{STUDY_KEY: study, SUBSET_KEY: ""})
    assert _written(at) == [
        "subset=None",
        f"trials={[c.eval.n_trials for c in study.conditions]}",
    ]


def test_a_subset_restricts_the_shown_study_not_the_sessions(study):
    female = study.subset("sex", "F")
    at = run_function(_subset_page, timeout=60, **{STUDY_KEY: study, SUBSET_KEY: "sex=F"})
    assert _written(at) == [
        "subset=('sex', 'F')",
        f"trials={[c.eval.n_trials for c in female.conditions]}",
    ]
    assert at.session_state[STUDY_KEY] is study  # the session's study is unchanged
    at.run()  # the subset study is kept for the next run
    assert _written(at)[1] == f"trials={[c.eval.n_trials for c in female.conditions]}"


def test_a_subset_the_study_does_not_have_falls_back_to_all_trials(study):
    at = run_function(_subset_page, timeout=60, **{STUDY_KEY: study, SUBSET_KEY: "sex=X"})
    assert _written(at)[1] == f"trials={[c.eval.n_trials for c in study.conditions]}"
    assert at.session_state[SUBSET_KEY] == ""


def _new_study_page():
    import streamlit as st

    from voxmetrics.ui.state import get_study, new_study, pop_notice

    new_study()
    st.write(f"study={get_study().name}:{len(get_study())}")
    kind, text = pop_notice()
    st.write(f"notice={kind}: {text}")
    st.write(f"again={pop_notice()!r}")


def test_a_new_study_is_empty_and_leaves_one_notice(study):
    at = run_function(_new_study_page, timeout=60, **{STUDY_KEY: study})
    shown = _written(at)
    assert shown[0] == f"study={NEW_STUDY_NAME}:0"
    assert shown[1].startswith("notice=success: Started a new empty study")
    assert shown[2] == "again=None"  # taken once
    assert NOTICE_KEY not in at.session_state


def _first_run_page():
    import streamlit as st

    from voxmetrics.ui.state import get_study

    st.write(f"names={get_study().names}")


def test_a_new_session_opens_the_demo_study(monkeypatch):
    from voxmetrics.dashboard import SETTINGS_ENV

    monkeypatch.delenv(SETTINGS_ENV, raising=False)  # no study given at start
    at = run_function(_first_run_page, timeout=60)
    assert _written(at) == [f"names={demo_study().names}"]
