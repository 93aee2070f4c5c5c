"""The dashboard's subset selector and sparse trial lists, with Streamlit's AppTest."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.ui.state import STUDY_KEY, SUBSET_KEY

APP = "../app.py"  # resolved relative to this file
OVERVIEW = "pages/1_Overview.py"
DATA = "pages/2_Data.py"
PAGES = [
    "pages/1_Overview.py",
    "pages/9_Threat_model.py",
    "pages/2_Data.py",
    "pages/3_LID.py",
    "pages/4_SRD.py",
    "pages/5_ZEBRA.py",
    "pages/6_Linkage.py",
    "pages/7_Soft_biometrics.py",
    "pages/8_Embeddings.py",
    "pages/10_Report.py",
    "pages/12_Privacy_vs_utility.py",
]
NEW = "➕ New condition"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _page(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def test_subset_selector_restricts_every_page_and_persists():
    at = _page(OVERVIEW)
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
    at = _page(DATA)
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
    assert table.loc["vpc", "Pairs"] == 54 and table.loc["vpc", "T (1-to-N)"] == 0
    assert pd.isna(table.loc["vpc", "Linkability"])
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        if page in ("pages/3_LID.py", "pages/4_SRD.py", "pages/6_Linkage.py"):
            notes = " ".join(str(i.value) for i in at.info)
            assert "Not shown: vpc" in notes and "no trial" in notes, page
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
    at = _page(DATA)
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
    at = _page(DATA)
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("vpc").run()
    at.file_uploader(key="vm_eval_file").set_value(("trials.csv", _sparse_csv(), "text/csv"))
    at.file_uploader(key="vm_attr_file").set_value(("spk.csv", b"speaker,age\nf1,30\n", "text/csv"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert "spk.csv" in at.error[0].value and "not covered" in at.error[0].value
    assert "vpc" not in _study(at).names
