"""What every page does first (voxmetrics.ui.setup): the subset selector, the study sidebar."""

from __future__ import annotations

import functools
import io
import zipfile

import numpy as np
import pytest
from app_cases import PAGES, open_app, open_page, text_of
from hostile_inputs import compressed_bomb, deflate_bomb, tampered_study
from sparse_cases import with_mask
from streamlit.testing.v1 import AppTest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.data.studyfile import study_to_bytes
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import study_file_name
from voxmetrics.ui.state import NEW_STUDY_NAME, STUDY_KEY, SUBSET_KEY

OVERVIEW = "pages/1_Overview.py"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def test_subset_selector_restricts_every_page_and_persists():
    at = open_page(OVERVIEW)
    box = at.selectbox(key="vm_subset_widget")
    assert box.options[0] == "All trials" and "sex = F" in box.options
    df_all = at.dataframe[1].value
    box.select("sex=F").run()
    assert not at.exception and at.session_state[SUBSET_KEY] == "sex=F"
    df_f = at.dataframe[1].value
    female = _study(at).subset("sex", "F")  # the study itself is unchanged
    assert list(df_f["T"]) == [c.eval.n_trials for c in female.conditions]
    assert (df_f["T"] < df_all["T"]).all()
    for page in PAGES[1:]:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert at.selectbox(key="vm_subset_widget").value == "sex=F", page
        assert not at.error, (page, [e.value for e in at.error])
    assert _study(at).get("plain").eval.n_trials == df_all["T"].iloc[0]


DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


def test_rename_a_condition():
    at = open_app(timeout=30)
    at.selectbox(key="vm_manage_condition").select("random").run()
    at.text_input(key="vm_rename_to").input("noise").run()
    at.button(key="vm_rename").click().run()
    assert not at.exception
    assert _study(at).names == ["plain", "noise", "anon-mild", "anon-strong", "anon-leaky"]
    assert "Renamed 'random' to 'noise'" in at.sidebar.success[0].value
    assert "**noise**" in text_of(at.sidebar.markdown)
    # renaming keeps the cached metrics valid: the overview shows the new name
    at.switch_page(OVERVIEW).run()
    assert list(at.dataframe[0].value["Condition"])[1] == "noise"


def test_rename_to_an_existing_name_is_refused():
    at = open_app(timeout=30)
    at.selectbox(key="vm_manage_condition").select("random").run()
    at.text_input(key="vm_rename_to").input("plain").run()
    at.button(key="vm_rename").click().run()
    assert not at.exception
    assert "already exists" in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_remove_a_condition_asks_for_confirmation():
    at = open_app(timeout=30)
    at.selectbox(key="vm_manage_condition").select("anon-mild").run()
    at.button(key="vm_remove").click().run()
    assert _study(at).names == DEMO_NAMES  # nothing removed yet
    assert "anon\\-mild" in at.sidebar.warning[0].value
    at.button(key="vm_remove_no").click().run()
    assert _study(at).names == DEMO_NAMES
    assert not at.sidebar.warning
    at.button(key="vm_remove").click().run()
    at.button(key="vm_remove_yes").click().run()
    assert not at.exception
    assert _study(at).names == ["plain", "random", "anon-strong", "anon-leaky"]
    assert "Removed 'anon-mild'" in at.sidebar.success[0].value


TIMEOUT = 240


def test_one_click_replaces_the_demo_with_a_new_empty_study():
    at = open_app(timeout=TIMEOUT, before_first_run=True)
    assert _study(at).name == "demo" and len(_study(at)) == 5
    at.button(key="vm_sidebar_new").click().run()
    assert not at.exception
    assert len(_study(at)) == 0 and _study(at).name == NEW_STUDY_NAME
    assert "new empty study" in at.sidebar.success[0].value
    at.switch_page("pages/1_Overview.py").run()
    assert "no conditions yet" in at.info[0].value
    # the home page has the same action
    at = open_app(timeout=TIMEOUT, before_first_run=True)
    at.button(key="vm_home_new").click().run()
    assert len(_study(at)) == 0


def test_the_study_can_be_renamed_and_the_name_follows_it():
    at = open_app(timeout=TIMEOUT, before_first_run=True, study=Study(name="demo"))
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


def _small_study(name: str = "tiny") -> Study:
    demo = demo_study(n_speakers=6)
    return Study(demo.conditions[:2], name=name, settings=StudySettings(bootstrap=20, seed=3))


def _tampered() -> bytes:
    """A study file whose manifest points outside the archive."""
    buf = io.BytesIO()
    src = zipfile.ZipFile(io.BytesIO(study_to_bytes(_small_study())))
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            zf.writestr(info.filename, src.read(info.filename))
        zf.writestr("../evil.npy", b"x")
    return buf.getvalue()


def test_save_study_button_is_in_the_sidebar():
    at = open_app(timeout=60)
    save = [b for b in at.sidebar.get("download_button") if b.key == "vm_sidebar_save"]
    assert len(save) == 1
    assert save[0].proto.label == "Save study"


def test_loading_a_study_file_replaces_the_study():
    at = open_app(timeout=60)
    data = study_to_bytes(_small_study("from file"))
    at.file_uploader(key="vm_study_file").set_value(("tiny.vxm", data, "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception and not at.sidebar.error
    study = _study(at)
    assert study.name == "from file" and study.names == ["plain", "random"]
    assert study.settings == StudySettings(bootstrap=20, seed=3)
    success = at.sidebar.success[0].value
    assert "from tiny.vxm" in success and "2 conditions" in success


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01 not a zip \xff", "not a zip archive"),
        (b"", "not a zip archive"),
        ("tampered", "unsafe archive"),
    ],
    ids=["garbage", "empty", "tampered"],
)
def test_a_bad_study_file_shows_an_error(content, message):
    at = open_app(timeout=60)
    data = _tampered() if content == "tampered" else content
    at.file_uploader(key="vm_study_file").set_value(("bad.vxm", data, "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    assert len(at.sidebar.error) == 1
    assert "bad.vxm" in at.sidebar.error[0].value and message in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_load_without_a_file_asks_for_one():
    at = open_app(timeout=60)
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    assert "Choose a study file" in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


def _nested(m):
    return "[" * 100_000 + "]" * 100_000


def _null_scores(m):
    m["conditions"][0]["eval"]["scores"] = None


def _bad_attributes(m):
    m["conditions"][0]["eval"]["attributes"] = {"sex": 1}


STUDY_FILES = {
    "deeply-nested": (lambda: tampered_study(_nested), "nested too deeply"),
    "null-scores": (lambda: tampered_study(_null_scores), "must name an array member"),
    "bad-attributes": (lambda: tampered_study(_bad_attributes), "attributes must be a list"),
    "bzip2-bomb": (lambda: compressed_bomb("manifest.json", zipfile.ZIP_BZIP2), "above the cap"),
    "bzip2-array-bomb": (
        lambda: compressed_bomb("arrays/0.npy", zipfile.ZIP_BZIP2, extra={"manifest.json": "{}"}),
        "max_ratio",
    ),
    "deflate-bomb": (lambda: deflate_bomb("manifest.json", 300), "above the cap"),
}


@pytest.mark.parametrize("case", list(STUDY_FILES))
def test_hostile_study_files_show_one_message_in_the_sidebar(case):
    build, expected = STUDY_FILES[case]
    at = open_app(timeout=60)
    names = at.session_state[STUDY_KEY].names
    at.file_uploader(key="vm_study_file").set_value(("bad.vxm", build(), "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    messages = [e.value for e in at.sidebar.error]
    assert len(messages) == 1 and "bad.vxm" in messages[0] and expected in messages[0], messages
    assert at.session_state[STUDY_KEY].names == names


def _sparse(sm: ScoreMatrix, missing: np.ndarray) -> ScoreMatrix:
    """``sm`` without the pairs where ``missing`` (and without its attributes: no groups)."""
    scores = np.where(missing, np.nan, sm.scores)
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        nan_missing=True,
    )


def test_the_1_to_n_pages_say_which_sparse_lists_they_show_and_which_not():
    demo = demo_study(n_speakers=8)
    plain = demo.get("plain")
    t, n = plain.eval.shape
    one_cut = np.zeros((t, n), dtype=bool)
    one_cut[0, 1] = True  # one trial not listed against one identity
    every_cut = np.zeros((t, n), dtype=bool)
    every_cut[np.arange(t), (np.arange(t) + 1) % n] = True  # no trial listed against all
    study = Study(
        conditions=(
            plain,
            Condition(name="cut", eval=_sparse(plain.eval, one_cut), dev=plain.dev),
            Condition(name="nothing", eval=_sparse(plain.eval, every_cut), dev=plain.dev),
        ),
        settings=StudySettings(bootstrap=0),
    )
    at = open_page("pages/3_LID.py", study, timeout=120)
    infos = " ".join(str(i.value) for i in at.info)
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Not shown: nothing." in infos
    assert "cut: sparse trial lists, shown here on their complete trials" in captions
    assert at.dataframe[0].value["Condition"].tolist() == ["plain", "cut"]  # the page goes on
    assert not at.error, [e.value for e in at.error]


def test_the_1_to_n_pages_say_which_sparse_lists_they_show_whole_within_groups():
    demo = demo_study(n_speakers=8)
    plain = demo.get("plain")
    sm = plain.eval
    sex_of = dict(zip(sm.trial_speakers, sm.attributes["sex"], strict=True))
    enrol_sex = np.array([sex_of[s] for s in sm.enrol_speakers])
    per_sex = with_mask(sm, sm.attributes["sex"][:, None] == enrol_sex[None, :])
    assert per_sex.complete_rows() is None  # only within its sex groups is it complete
    study = Study(
        conditions=(plain, Condition(name="per-sex", eval=per_sex, dev=plain.dev)),
        settings=StudySettings(bootstrap=0),
    )
    at = open_page("pages/3_LID.py", study, timeout=120)
    captions = text_of(at.caption)
    assert (
        "per-sex: sparse trial lists complete within each sex group: each trial is ranked among "
        "its own sex group's enrolled identities" in captions
    )
    assert "Not shown" not in text_of(at.info)
    assert at.dataframe[0].value["Condition"].tolist() == ["plain", "per-sex"]
    assert not at.error, [e.value for e in at.error]


def test_the_1_to_n_views_are_worked_out_once_not_on_every_rerun(monkeypatch):
    import voxmetrics.ui.setup as setup

    calls = []
    real = setup.one_to_n_views

    @functools.wraps(real)
    def counted(study):
        calls.append(study.names)
        return real(study)

    monkeypatch.setattr(setup, "one_to_n_views", counted)
    at = open_page("pages/3_LID.py", demo_study(n_speakers=8), timeout=120)
    at.run()  # a rerun (any widget)
    at.switch_page("pages/4_SRD.py").run()  # another 1-to-N page of the same study
    assert not at.exception, at.exception
    assert len(calls) == 1, calls
