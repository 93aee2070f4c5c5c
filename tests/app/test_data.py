"""The Data page through the app's entrypoint (AppTest, style.md 17): score and embedding
uploads, conditions added or replaced, sparse trial lists and speaker tables."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from app_cases import PAGES, open_app, open_page
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.ui.state import STUDY_KEY

OVERVIEW = "pages/1_Overview.py"
DATA = "pages/2_Data.py"
NEW = "➕ New condition"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def _sparse_csv() -> bytes:
    rows = []
    speakers = {"f1": "F", "f2": "F", "f3": "F", "m1": "M", "m2": "M", "m3": "M"}
    for s, sex in speakers.items():
        for k in range(3):
            for e, esex in speakers.items():
                if esex == sex:  # VoicePrivacy: each trial against its own sex only
                    score = (2.0 if e == s else 0.0) + 0.1 * k + 0.01 * len(rows) % 0.3
                    rows.append((f"{s}-{k}", s, e, round(score, 4), sex))
    df = pd.DataFrame(rows, columns=["trial_id", "trial_speaker", "enrol_speaker", "score", "sex"])
    return df.to_csv(index=False).encode()


def test_sparse_upload_shows_its_pairs_and_every_page_copes():
    at = open_page(DATA)
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("vpc").run()
    at.file_uploader(key="vm_eval_file").set_value(("trials.csv", _sparse_csv(), "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    assert "sparse trial list of 54 pairs" in at.success[0].value
    assert _study(at).get("vpc").eval.mask is not None
    at.switch_page(OVERVIEW).run()
    assert not at.exception
    table = at.dataframe[1].value.set_index("Condition")
    # no trial is listed against every enrolled speaker, but each is within its sex: the 1-to-N
    # metrics run within each complete group and pool (as on a VoicePrivacy tree)
    assert table.loc["vpc", "Pairs"] == 54 and table.loc["vpc", "T (1-to-N)"] == 18
    assert not pd.isna(table.loc["vpc", "Linkability"])
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert not at.error, (page, [e.value for e in at.error])  # e.g. LID's calibration curve
        if page in ("pages/3_LID.py", "pages/4_SRD.py", "pages/6_Linkage.py"):
            notes = " ".join(str(i.value) for i in at.info)
            assert "Not shown: vpc" not in notes, page
            captions = " ".join(str(c.value) for c in at.caption)
            assert "complete within each sex group" in captions, page
        if page == "pages/5_ZEBRA.py":  # ZEBRA uses every listed pair, bootstrap included
            assert not at.error, [e.value for e in at.error]
    at.switch_page(OVERVIEW).run()
    at.selectbox(key="vm_subset_widget").select("sex=F").run()
    assert not at.exception
    table = at.dataframe[1].value.set_index("Condition")
    assert table.loc["vpc", "T (1-to-N)"] == 9  # complete within one sex


def test_kaldi_upload_with_a_speaker_table_gets_the_subset_selector():
    df = pd.read_csv(pd.io.common.BytesIO(_sparse_csv()))
    scores = "".join(
        f"{e} {t} {s}\n" for e, t, s in zip(df.enrol_speaker, df.trial_id, df.score, strict=True)
    )
    label = [
        "target" if a == b else "nontarget"
        for a, b in zip(df.trial_speaker, df.enrol_speaker, strict=True)
    ]
    key = "".join(
        f"{e} {t} {k}\n" for e, t, k in zip(df.enrol_speaker, df.trial_id, label, strict=True)
    )
    table = (
        df[["trial_speaker", "sex"]].drop_duplicates().rename(columns={"trial_speaker": "speaker"})
    )
    at = open_page(DATA)
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("vpc").run()
    at.file_uploader(key="vm_eval_file").set_value(("scores", scores.encode(), "text/plain"))
    at.file_uploader(key="vm_eval_key").set_value(("trials", key.encode(), "text/plain"))
    at.file_uploader(key="vm_attr_file").set_value(
        ("spk2sex.csv", table.to_csv(index=False).encode(), "text/csv")
    )
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    cond = _study(at).get("vpc")
    assert cond.eval.mask is not None and sorted(set(cond.eval.attributes["sex"])) == ["F", "M"]
    at.switch_page(OVERVIEW).run()
    at.selectbox(key="vm_subset_widget").select("sex=M").run()
    table = at.dataframe[1].value.set_index("Condition")
    assert table.loc["vpc", "T (1-to-N)"] == 9 and table.loc["vpc", "Pairs"] == 27


def test_a_table_that_misses_trials_is_refused():
    at = open_page(DATA)
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("vpc").run()
    at.file_uploader(key="vm_eval_file").set_value(("trials.csv", _sparse_csv(), "text/csv"))
    at.file_uploader(key="vm_attr_file").set_value(("spk.csv", b"speaker,age\nf1,30\n", "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert "spk.csv" in at.error[0].value and "not covered" in at.error[0].value
    assert "vpc" not in _study(at).names


DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


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


def test_data_page_shows_the_selected_condition():
    at = open_page(DATA)
    assert at.selectbox(key="vm_data_condition").value == "plain"
    assert [s.value for s in at.subheader] == ["Scores of plain"]
    assert at.radio(key="vm_data_split").options == ["eval", "dev"]
    at.radio(key="vm_data_split").set_value("dev").run()
    assert not at.exception and not at.error


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
    at = open_page(DATA)
    _new_condition(at, "garbage")
    at.file_uploader(key="vm_eval_file").set_value(("garbage.csv", content, "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "garbage.csv" in at.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_load_needs_a_name_and_a_file():
    at = open_page(DATA)
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
    at = open_page(DATA)
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
    at = open_page(DATA)
    at.selectbox(key="vm_data_condition").select("random").run()
    at.file_uploader(key="vm_eval_file").set_value(("r.csv", _long_csv(), "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    study = _study(at)
    assert study.names == DEMO_NAMES
    assert study.get("random").eval.shape == (6, 3)
    assert study.get("random").dev is None


def test_dev_sharing_speakers_with_eval_is_refused():
    at = open_page(DATA)
    _new_condition(at, "leaky-dev")
    at.file_uploader(key="vm_eval_file").set_value(("e.csv", _long_csv(), "text/csv"))
    at.file_uploader(key="vm_dev_file").set_value(("d.csv", _long_csv(seed=3), "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert "share" in at.error[0].value
    assert "leaky-dev" not in _study(at).names


def test_embeddings_upload_adds_a_condition_with_dev_and_eval():
    emb, meta = _embeddings_files()
    at = open_page(DATA)
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
    at = open_page(DATA)
    _new_condition(at, "no-meta")
    at.file_uploader(key="vm_emb_file").set_value(("emb.npz", emb, "application/octet-stream"))
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "emb.npz" in at.error[0].value
    assert "no-meta" not in _study(at).names


def test_add_a_condition_link_opens_a_new_condition():
    at = open_app(timeout=30)
    at.query_params["new"] = "1"
    at.switch_page(DATA).run()
    assert not at.exception
    assert at.selectbox(key="vm_data_condition").value == NEW
    assert not at.subheader  # nothing to draw for a condition that does not exist yet
