"""The Soft biometrics page through the app's entrypoint (AppTest, style.md 17); the library
calls behind it are tested in tests/analysis/test_sbls_attacks.py and test_sbls_replicates.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_cases import APP, open_app, open_page, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis.sbls import Attack, embeddings_attack
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Condition, Study
from voxmetrics.metrics.sbls import DEFAULT_ATTACKER
from voxmetrics.synth import demo_study

PAGE = "pages/7_Soft_biometrics.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
COMPONENT_COLUMNS = ["Condition", "Attacker", "P_attr", "P_assoc", "P_subgroup", "SBLS"]
HEADERS = [
    "Protection per condition",
    "Per attribute",
    "Subgroups",
    "Attributes and identity together",
]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study()


def _page(*, boot: int | None = 0, study: Study | None = None, **state) -> AppTest:
    if boot is not None:  # None: the page's default replicates
        state = {"vm_sbls_boot": boot, **state}
    return open_page(PAGE, study, timeout=240, state=state)


def _components(at: AppTest) -> pd.DataFrame:
    df = at.dataframe[0].value
    assert list(df.columns[:6]) == COMPONENT_COLUMNS
    return df


def _predictions_csv(attack: Attack) -> bytes:
    rows = [
        (u, a, c, float(p.scores[i, k]))
        for a, p in attack.predictions.items()
        for i, u in enumerate(attack.utt_ids)
        for k, c in enumerate(p.classes)
    ]
    df = pd.DataFrame(rows, columns=["utt_id", "attribute", "class", "score"])
    return df.to_csv(index=False).encode()


# ---------------------------------------------------------------- the page on the demo


def test_page_runs_on_the_demo_with_intervals():
    at = _page(boot=8)
    assert not at.error
    assert [h.value for h in at.header] == HEADERS
    df = _components(at)
    assert list(df["Condition"]) == DEMO_NAMES
    for col in ("P_attr", "P_assoc", "P_subgroup", "SBLS"):
        assert df[col].between(0, 1).all(), col
    assert df["SBLS CI"].str.match(r"^\[0\.\d{3}, [01]\.\d{3}\]$").all()
    assert (df["Groups used"] == "6 of 6").all()  # smallest demo subgroup: 36 >= 30
    assert (df["Attacker"] == "anonymised (own dev)").all()  # the default attacker
    info = text_of(at.info)
    assert "higher = more protection" in info and "LID" in info
    markdown = text_of(at.markdown)
    assert "**Attacker:**" in markdown and "plain" in markdown
    assert "Minimum group size." in markdown and "36 eval utterances from 3" in markdown
    assert "speaker-level bootstrap, 8 replicates" in text_of(at.caption)
    # the identity table: SBLS beside EER and LIDmax for every condition
    identity = at.dataframe[-1].value
    assert list(identity.columns[:5]) == ["Condition", "SBLS", "P_attr", "EER", "LIDmax (bits)"]
    assert list(identity["Condition"]) == DEMO_NAMES
    np.testing.assert_allclose(identity["SBLS"], df["SBLS"])
    # the attribute view opens on the lowest SBLS other than the original speech
    others = df[df["Condition"] != "plain"]
    assert (
        at.selectbox(key="vm_sbls_inspect").value
        == others.loc[others["SBLS"].idxmin(), "Condition"]
    )


def test_default_replicates_give_every_number_its_interval_from_the_library(demo):
    """The page's default (200 replicates) and the analysis module's intervals agree."""
    from voxmetrics.analysis.sbls import SBLSOptions, default_attack, sbls_intervals
    from voxmetrics.ui.sbls_page import DEFAULT_REPLICATES

    at = _page(boot=None)
    assert at.session_state["vm_sbls_boot"] == DEFAULT_REPLICATES == 200
    df = _components(at).set_index("Condition")
    assert "speaker-level bootstrap, 200 replicates" in text_of(at.caption)
    ivs = sbls_intervals(default_attack(demo.get("anon-mild")), SBLSOptions(), n_boot=200)
    for key, label in (("sbls", "SBLS"), ("p_attr", "P_attr"), ("p_subgroup", "P_subgroup")):
        iv = ivs[key]
        assert df.loc["anon-mild", f"{label} CI"] == f"[{iv.low:.3f}, {iv.high:.3f}]"
        assert df.loc["anon-mild", label] == iv.estimate


def test_switching_the_attacker_retrains_it():
    at = _page()
    # the default is the informed attacker, as in the study report and the sbls command
    assert at.radio(key="vm_sbls_attacker").value == "anonymised" == DEFAULT_ATTACKER
    informed = _components(at).set_index("Condition")
    assert (informed["Attacker"] == "anonymised (own dev)").all()
    assert at.selectbox(key="vm_sbls_original").disabled
    assert "own anonymised dev speech" in text_of(at.markdown)
    at.radio(key="vm_sbls_attacker").set_value("original").run()
    assert not at.exception and not at.error
    original = _components(at).set_index("Condition")
    assert not at.selectbox(key="vm_sbls_original").disabled
    # same data, another attacker: the scores move (anon-mild: 0.675 -> 0.639 on the demo)
    assert informed.loc["anon-mild", "SBLS"] != pytest.approx(original.loc["anon-mild", "SBLS"])
    assert informed[["P_attr", "P_assoc", "P_subgroup", "SBLS"]].stack().between(0, 1).all()


def test_options_reach_the_score():
    at = _page(vm_sbls_min_group=40, vm_sbls_lambda=1.0)
    assert not at.error
    df = _components(at)
    assert (df["Groups used"] != "6 of 6").all()  # the 36-utterance group is left out
    warning = text_of(at.warning)
    assert "Left out of P_subgroup (fewer than 40 utterances)" in warning
    assert "M · 56\\+ (n = 36)" in warning


def test_weights_that_do_not_sum_to_one_are_explained():
    at = _page(vm_sbls_w_sub=0.5)
    assert not at.exception
    assert len(at.error) == 1 and "sum to 1" in at.error[0].value
    assert not at.dataframe  # nothing computed with invalid weights


# ---------------------------------------------------------------- uploads


@pytest.mark.parametrize(
    "content",
    [b"\x00\x01\x02 not a table \xff\xfe", b"utt_id,attribute,score\nx,sex,0.3\n", b""],
    ids=["binary", "wrong-columns", "empty"],
)
def test_garbage_predictions_upload_shows_an_error(content):
    at = _page()
    at.selectbox(key="vm_sbls_upload_condition").select("anon-mild").run()
    at.file_uploader(key="vm_sbls_upload_file").set_value(("garbage.csv", content, "text/csv"))
    at.button(key="vm_sbls_use_upload").click().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "garbage.csv" in at.error[0].value
    # the page goes on with the built-in attacker
    df = _components(at)
    assert list(df["Condition"]) == DEMO_NAMES
    assert not df["Attacker"].str.contains("upload").any()


def test_upload_without_a_file_asks_for_one():
    at = _page()
    at.button(key="vm_sbls_use_upload").click().run()
    assert not at.exception
    assert "Choose a predictions file" in at.error[0].value


def test_uploaded_predictions_replace_the_builtin_attacker(demo):
    attack = embeddings_attack(demo.get("anon-mild"), original=demo.get("plain"))
    at = _page()
    builtin = _components(at).set_index("Condition")
    at.selectbox(key="vm_sbls_upload_condition").select("anon-mild").run()
    at.file_uploader(key="vm_sbls_upload_file").set_value(
        ("pred.csv", _predictions_csv(attack), "text/csv")
    )
    at.button(key="vm_sbls_use_upload").click().run()
    assert not at.exception and not at.error
    assert "480 eval utterances" in at.success[0].value
    uploaded = _components(at).set_index("Condition")
    assert uploaded.loc["anon-mild", "Attacker"] == "upload: pred.csv"
    # the same predictions, read back from the CSV: the same numbers
    for col in ("P_attr", "P_assoc", "P_subgroup", "SBLS"):
        assert uploaded.loc["anon-mild", col] == pytest.approx(builtin.loc["anon-mild", col])
    # the upload survives a rerun and can be forgotten
    at.run()
    assert _components(at).set_index("Condition").loc["anon-mild", "Attacker"].startswith("upload")
    at.button(key="vm_sbls_forget_anon-mild").click().run()
    assert not at.exception
    assert (
        _components(at).set_index("Condition").loc["anon-mild", "Attacker"]
        == "anonymised (own dev)"
    )


def test_score_only_study_explains_and_accepts_uploads(demo):
    plain = demo.get("plain")
    scores_only = Study(
        conditions=(Condition("scores-only", eval=plain.eval, dev=plain.dev),), name="scores"
    )
    at = _page(study=scores_only)
    assert not at.error
    info = text_of(at.info)
    assert "scores\\-only" in info and "no utterance embeddings" in info
    assert "Upload the predictions" in info
    assert not at.dataframe  # nothing to score yet
    assert at.radio(key="vm_sbls_attacker").disabled
    # hard predictions for its eval trials (the score file carries sex and age_group)
    ev = plain.eval
    rows = [
        (t, a, str(v))
        for a in ("sex", "age_group")
        for t, v in zip(ev.trial_ids, ev.attributes[a], strict=True)
    ]
    data = pd.DataFrame(rows, columns=["utt_id", "attribute", "predicted"]).to_csv(index=False)
    at.file_uploader(key="vm_sbls_upload_file").set_value(("hard.csv", data.encode(), "text/csv"))
    at.button(key="vm_sbls_use_upload").click().run()
    assert not at.exception and not at.error
    df = _components(at)
    assert list(df["Condition"]) == ["scores-only"]
    # a perfect hard attacker: no attribute or subgroup protection; P_assoc keeps a little
    # because NMI is normalised by ln K and the age groups are unbalanced (sbls.md section 2)
    assert (df.loc[0, "P_attr"], df.loc[0, "P_subgroup"]) == (0.0, 0.0)
    assert 0.0 < df.loc[0, "P_assoc"] < 0.1
    assert df.loc[0, "SBLS"] == pytest.approx(0.4 * df.loc[0, "P_assoc"])
    assert "no class scores, so no AUC matrix" in text_of(at.info)


# ---------------------------------------------------------------- identity numbers on request


def _identity_shown(at: AppTest) -> bool:
    return any("LIDmax (bits)" in d.value.columns for d in at.dataframe)


def test_identity_numbers_are_on_request_beyond_the_threshold(monkeypatch, demo):
    from voxmetrics.evaluation import evaluate_condition
    from voxmetrics.ui import sbls_page

    monkeypatch.setattr(sbls_page, "AUTO_IDENTITY_SPEAKERS", 10)  # the demo has 40
    at = _page()
    assert not _identity_shown(at)
    assert "The identity numbers are off: with 40 trial speakers" in text_of(at.info)
    at.toggle(key=sbls_page.IDENTITY_KEY).set_value(True).run()
    assert not at.exception, at.exception
    identity = at.dataframe[-1].value
    assert list(identity["Condition"]) == DEMO_NAMES
    lid_max = {c.name: evaluate_condition(c).lid.lid_max for c in demo.conditions}
    assert identity.set_index("Condition")["LIDmax (bits)"].to_dict() == lid_max


def test_identity_numbers_another_page_computed_are_shown_at_once(monkeypatch):
    from voxmetrics.ui import sbls_page

    monkeypatch.setattr(sbls_page, "AUTO_IDENTITY_SPEAKERS", 10)
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["vm_sbls_boot"] = 0
    at.switch_page("pages/9_Threat_model.py").run()  # the identity numbers of every condition
    assert not at.exception, at.exception
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert _identity_shown(at)
    assert not at.toggle or all(t.key != sbls_page.IDENTITY_KEY for t in at.toggle)


TIMEOUT = 240


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
    at = open_app(
        timeout=TIMEOUT, before_first_run=True, study=Study(conditions=(plain, unlabelled))
    )
    at.switch_page("pages/7_Soft_biometrics.py").run()
    assert not at.exception
    # (plain's 5 speakers are too few for P_subgroup: that error is about group sizes)
    assert not any("attribute" in str(e.value) for e in at.error), [e.value for e in at.error]
    info = "\n".join(str(i.value) for i in at.info)
    assert "unlabelled: no attribute labels" in info and "`sex`" in info
