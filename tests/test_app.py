"""The dashboard through its entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.ui.state import STUDY_KEY

APP = "../app.py"  # resolved relative to this file
OVERVIEW = "pages/1_Overview.py"
DATA = "pages/2_Data.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
NEW = "➕ New condition"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    return at


def _page(path: str) -> AppTest:
    at = _app()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def _long_csv(speakers=("a", "b", "c"), trials_per_speaker=2, stray=0, seed=0) -> bytes:
    """A small complete long-format score file; ``stray`` trials of a non-enrolled speaker."""
    rng = np.random.default_rng(seed)
    rows = []
    trial_speakers = [s for s in speakers for _ in range(trials_per_speaker)] + ["zz"] * stray
    for i, ts in enumerate(trial_speakers):
        for es in speakers:
            score = rng.normal(2.0 if es == ts else 0.0, 0.5)
            rows.append((f"{ts}-t{i}", ts, es, score))
    df = pd.DataFrame(rows, columns=["trial_id", "trial_speaker", "enrol_speaker", "score"])
    return df.to_csv(index=False).encode()


def _new_condition(at: AppTest, name: str) -> None:
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input(name).run()


def _messages(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


# ---------------------------------------------------------------- smoke tests, one per page


def test_home_opens_on_the_demo_study():
    at = _app()
    assert _study(at).names == DEMO_NAMES
    text = _messages(at.markdown)
    assert "Current study:" in text and "5 conditions" in text
    assert "1-to-N" in text
    assert at.button(key="vm_home_demo").label == "Load demo study"


def test_overview_lists_every_condition():
    at = _page(OVERVIEW)
    df = at.dataframe[1].value  # [0] is the report card (tests/test_app_overview_card.py)
    assert len(df) == 5
    assert list(df["Condition"]) == DEMO_NAMES
    assert {"EER", "Linkability", "Chance (1/N)", "Cllr"} <= set(df.columns)
    assert df["EER"].between(0, 1).all()
    assert [s.value for s in at.subheader] == ["EER vs linkability"]
    captions = _messages(at.caption)
    assert "log-likelihood ratios" in captions
    assert "high EER can coexist with high linkage" in captions
    assert not at.error


def test_data_page_shows_the_selected_condition():
    at = _page(DATA)
    assert at.selectbox(key="vm_data_condition").value == "plain"
    assert [s.value for s in at.subheader] == ["Scores of plain"]
    assert at.radio(key="vm_data_split").options == ["eval", "dev"]
    at.radio(key="vm_data_split").set_value("dev").run()
    assert not at.exception and not at.error


# ---------------------------------------------------------------- uploads


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\x01\x02 this is not a score file \xff\xfe",
        b"just,some,columns\n1,2,3\n",
        b"",
    ],
    ids=["binary", "wrong-columns", "empty"],
)
def test_garbage_score_upload_shows_an_error(content):
    at = _page(DATA)
    _new_condition(at, "garbage")
    at.file_uploader(key="vm_eval_file").set_value(("garbage.csv", content, "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "garbage.csv" in at.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_load_needs_a_name_and_a_file():
    at = _page(DATA)
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.button(key="vm_load_scores").click().run()
    assert "name" in at.error[0].value
    at.text_input(key="vm_data_new_name").input("plain").run()
    at.button(key="vm_load_scores").click().run()
    assert "already exists" in at.error[0].value
    at.text_input(key="vm_data_new_name").input("fresh").run()
    at.button(key="vm_load_scores").click().run()
    assert "eval scores file" in at.error[0].value
    assert not at.exception


def test_valid_upload_adds_a_condition():
    at = _page(DATA)
    _new_condition(at, "uploaded")
    at.file_uploader(key="vm_eval_file").set_value(("scores.csv", _long_csv(stray=1), "text/csv"))
    at.file_uploader(key="vm_dev_file").set_value(
        ("dev.csv", _long_csv(speakers=("d", "e", "f"), seed=1), "text/csv")
    )
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    study = _study(at)
    assert study.names == [*DEMO_NAMES, "uploaded"]
    cond = study.get("uploaded")
    # the stray trial's speaker is not enrolled: its pairs are kept as non-mated pairs
    assert cond.eval.shape == (6, 3) and cond.eval.n_excluded_trials == 0
    assert cond.eval.n_other_trials == 1
    assert cond.dev is not None and cond.dev.shape == (6, 3)
    success = at.success[0].value
    assert "T = 6 trials × N = 3 enrolled, 0 excluded, 1 with a speaker not enrolled" in success
    assert "dev" in success
    assert "not enrolled" in at.warning[0].value
    # the new condition is selected and its scores are drawn
    assert at.selectbox(key="vm_data_condition").value == "uploaded"
    assert [s.value for s in at.subheader] == ["Scores of uploaded"]
    # and the overview has one more row
    at.switch_page(OVERVIEW).run()
    assert len(at.dataframe[0].value) == 6


def test_upload_replaces_an_existing_condition():
    at = _page(DATA)
    at.selectbox(key="vm_data_condition").select("random").run()
    at.file_uploader(key="vm_eval_file").set_value(("r.csv", _long_csv(), "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    study = _study(at)
    assert study.names == DEMO_NAMES
    assert study.get("random").eval.shape == (6, 3)
    assert study.get("random").dev is None


def test_dev_sharing_speakers_with_eval_is_refused():
    at = _page(DATA)
    _new_condition(at, "leaky-dev")
    at.file_uploader(key="vm_eval_file").set_value(("e.csv", _long_csv(), "text/csv"))
    at.file_uploader(key="vm_dev_file").set_value(("d.csv", _long_csv(seed=3), "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert "share" in at.error[0].value
    assert "leaky-dev" not in _study(at).names


def _embeddings_files() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(5)
    rows = [
        (f"{split}-{spk}-{role}{k}", f"{split}-{spk}", role, split)
        for split in ("dev", "eval")
        for spk in "abc"
        for role in ("enrol", "trial")
        for k in range(2)
    ]
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"])
    buf = io.BytesIO()
    np.savez(
        buf, embeddings=rng.normal(size=(len(meta), 8)), utt_ids=meta["utt_id"].to_numpy(dtype=str)
    )
    return buf.getvalue(), meta.to_csv(index=False).encode()


def test_embeddings_upload_adds_a_condition_with_dev_and_eval():
    emb, meta = _embeddings_files()
    at = _page(DATA)
    _new_condition(at, "from-embeddings")
    at.file_uploader(key="vm_emb_file").set_value(("emb.npz", emb, "application/octet-stream"))
    at.file_uploader(key="vm_meta_file").set_value(("meta.csv", meta, "text/csv"))
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception and not at.error
    cond = _study(at).get("from-embeddings")
    assert cond.eval.shape == (6, 3) and cond.dev is not None and cond.dev.shape == (6, 3)
    assert cond.embeddings is not None
    assert "24 utterances" in at.success[0].value


def test_embeddings_without_metadata_shows_an_error():
    emb, _ = _embeddings_files()
    at = _page(DATA)
    _new_condition(at, "no-meta")
    at.file_uploader(key="vm_emb_file").set_value(("emb.npz", emb, "application/octet-stream"))
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "emb.npz" in at.error[0].value
    assert "no-meta" not in _study(at).names


# ---------------------------------------------------------------- the study sidebar


def test_rename_a_condition():
    at = _app()
    at.selectbox(key="vm_manage_condition").select("random").run()
    at.text_input(key="vm_rename_to").input("noise").run()
    at.button(key="vm_rename").click().run()
    assert not at.exception
    assert _study(at).names == ["plain", "noise", "anon-mild", "anon-strong", "anon-leaky"]
    assert "Renamed 'random' to 'noise'" in at.sidebar.success[0].value
    assert "**noise**" in _messages(at.sidebar.markdown)
    # renaming keeps the cached metrics valid: the overview shows the new name
    at.switch_page(OVERVIEW).run()
    assert list(at.dataframe[0].value["Condition"])[1] == "noise"


def test_rename_to_an_existing_name_is_refused():
    at = _app()
    at.selectbox(key="vm_manage_condition").select("random").run()
    at.text_input(key="vm_rename_to").input("plain").run()
    at.button(key="vm_rename").click().run()
    assert not at.exception
    assert "already exists" in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_remove_a_condition_asks_for_confirmation():
    at = _app()
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


def test_empty_study_is_explained_and_the_demo_restores_it():
    at = _app()
    at.session_state[STUDY_KEY] = Study()
    at.switch_page(OVERVIEW).run()
    assert not at.exception
    assert not at.dataframe
    assert "no conditions yet" in at.info[0].value
    at.button(key="vm_sidebar_demo").click().run()
    assert not at.exception
    assert _study(at).names == DEMO_NAMES
    assert len(at.dataframe[0].value) == 5


def test_add_a_condition_link_opens_a_new_condition():
    at = _app()
    at.query_params["new"] = "1"
    at.switch_page(DATA).run()
    assert not at.exception
    assert at.selectbox(key="vm_data_condition").value == NEW
    assert not at.subheader  # nothing to draw for a condition that does not exist yet
