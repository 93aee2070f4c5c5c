"""A new user's first steps (issue 27, 6): an empty study in one click, its name, SBLS labels."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Condition, Study
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import study_file_name
from voxmetrics.ui.state import NEW_STUDY_NAME, STUDY_KEY

pytestmark = pytest.mark.usefixtures("fresh_app_caches")

APP = "../app.py"
TIMEOUT = 240


def _app(study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if study is not None:
        at.session_state[STUDY_KEY] = study
    at.run()
    assert not at.exception, at.exception
    return at


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def test_one_click_replaces_the_demo_with_a_new_empty_study():
    at = _app()
    assert _study(at).name == "demo" and len(_study(at)) == 5
    at.button(key="vm_sidebar_new").click().run()
    assert not at.exception
    assert len(_study(at)) == 0 and _study(at).name == NEW_STUDY_NAME
    assert "new empty study" in at.sidebar.success[0].value
    at.switch_page("pages/1_Overview.py").run()
    assert "no conditions yet" in at.info[0].value
    # the home page has the same action
    at = _app()
    at.button(key="vm_home_new").click().run()
    assert len(_study(at)) == 0


def test_the_study_can_be_renamed_and_the_name_follows_it():
    at = _app(Study(name="demo"))
    assert at.text_input(key="vm_study_name").value == "demo"
    at.text_input(key="vm_study_name").set_value("McAdams on LibriSpeech").run()
    assert not at.exception
    study = _study(at)
    assert study.name == "McAdams on LibriSpeech"
    assert study_file_name(study) == "McAdams_on_LibriSpeech.vxm"
    assert "McAdams on LibriSpeech" in "\n".join(str(m.value) for m in at.sidebar.markdown)
    # an empty name is refused, the study keeps its name
    at.text_input(key="vm_study_name").set_value("  ").run()
    at.button(key="vm_study_rename").click().run()
    assert _study(at).name == "McAdams on LibriSpeech"
    assert at.sidebar.error
    # a study loaded (the demo) shows its own name in the box
    at.button(key="vm_sidebar_demo").click().run()
    assert at.text_input(key="vm_study_name").value == "demo"


def test_the_embeddings_page_asks_for_the_attribute_columns():
    at = _app(Study())
    at.switch_page("pages/8_Embeddings.py").run()
    assert not at.exception
    intro = "\n".join(str(m.value) for m in at.markdown)
    assert "`sex`" in intro and "`age_group`" in intro and "SBLS" in intro


def test_a_condition_without_attribute_labels_is_an_info_not_an_error():
    demo = demo_study(n_speakers=5)
    plain = demo.get("plain")
    es = plain.embeddings
    bare = EmbeddingSet.from_arrays(
        es.embeddings, es.meta.drop(columns=["sex", "age_group"]), source="bare"
    )
    unlabelled = Condition(
        "unlabelled", eval=bare.score_matrix("eval"), dev=bare.score_matrix("dev"), embeddings=bare
    )
    at = _app(Study(conditions=(plain, unlabelled)))
    at.switch_page("pages/7_Soft_biometrics.py").run()
    assert not at.exception
    # (plain's 5 speakers are too few for P_subgroup: that error is about group sizes)
    assert not any("attribute" in str(e.value) for e in at.error), [e.value for e in at.error]
    info = "\n".join(str(i.value) for i in at.info)
    assert "unlabelled: no attribute labels" in info and "`sex`" in info
