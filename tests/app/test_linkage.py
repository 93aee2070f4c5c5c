"""The Linkage page through the app's entrypoint (AppTest, style.md 17) and its cached helpers.

AppTest cannot see Plotly figures or download bytes: the figures are tested in
``tests/plots/test_linkage.py``; here the page's widgets, metrics, messages and table are checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_cases import APP, open_page, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis import linkage
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Condition, Study
from voxmetrics.metrics.similarity import voice_similarity
from voxmetrics.synth import demo_study
from voxmetrics.ui import compute, condition_report
from voxmetrics.ui.state import STUDY_KEY

LINKAGE = "pages/6_Linkage.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
SUBHEADERS = [
    "Linkability vs number of enrolled speakers",
    "Singling out",
    "Voice similarity matrices",
    "Mean scores by speaker",
    "Summary",
]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study()


def _page(study: Study | None = None) -> AppTest:
    return open_page(LINKAGE, study, timeout=90)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _summary(at: AppTest) -> pd.DataFrame:
    return at.dataframe[-1].value


def _scores_only(condition: Condition, name: str) -> Condition:
    return Condition(name, eval=condition.eval, dev=condition.dev)


# ---------------------------------------------------------------- the demo


def test_linkage_page_runs_on_the_demo(demo):
    at = _page()
    assert [s.value for s in at.subheader] == SUBHEADERS
    assert not at.error and not at.warning
    assert at.multiselect(key="vm_link_conditions").value == DEMO_NAMES
    # every figure states its assumptions: linkability, singling out (at N and vs N), length,
    # similarity, mean scores
    markdown = text_of(at.markdown)
    assert markdown.count("**Assumptions**") == 7
    assert "20 random sets of N of the speakers" in markdown
    assert "tie counts as a link" in markdown
    assert "Vauquier et al. 2025, figure 1" in markdown and "ROCCH-EER" in markdown
    # 1, 3 and the longest the demo allows (8 trial utterances per speaker), none skipped
    assert at.text_input(key="vm_link_legal_lengths").value == "1, 3, 8"
    assert "Skipped (too few utterances)" not in markdown
    assert "exact expectation" in markdown
    assert "Threshold rule" in markdown
    assert "PAV + Laplace" in markdown and "VoicePAT" in markdown
    # the original defaults to plain, the calibration to PAV + Laplace
    assert at.selectbox(key="vm_link_original").value == "plain"
    assert at.radio(key="vm_link_calibration").value == "pav"
    df = _summary(at)
    assert list(df["Condition"]) == DEMO_NAMES
    assert df["N enrolled"].tolist() == [40] * 5
    assert df["Chance 1/N"].tolist() == pytest.approx([1 / 40] * 5)
    assert df["Chance (1-1/N)^(N-1)"].tolist() == pytest.approx([(39 / 40) ** 39] * 5)
    assert df["Singling out"].between(0, 1).all()
    plain = df.set_index("Condition").loc["plain"]
    assert plain["DeID"] == 0.0 and plain["G_VD (dB)"] == 0.0  # the original against itself
    assert plain["Linkability"] > 0.9  # no anonymisation: nearly every trial linked
    # the intervals of the study's bootstrap: every linkability and singling out, DeID and
    # G_VD of every condition but the original against itself
    pattern = r"\[-?\d+\.\d+, -?\d+\.\d+\]"
    assert df["Linkability 95% CI"].str.fullmatch(pattern).all()
    assert df["Singling out 95% CI"].str.fullmatch(pattern).all()
    assert plain["DeID 95% CI"] == "–"
    assert df.set_index("Condition").drop("plain")["DeID 95% CI"].str.fullmatch(pattern).all()


def test_deid_and_gvd_are_shown_for_the_chosen_condition(demo):
    at = _page()
    at.selectbox(key="vm_link_anonymised").select("anon-mild").run()
    assert not at.exception and not at.error
    expected = voice_similarity(
        demo.get("plain").embeddings, demo.get("anon-mild").embeddings
    ).distinctiveness
    metrics = _metrics(at)
    assert metrics["DeID"] == f"{expected.deid:.3f}"
    assert metrics["G_VD"] == f"{expected.g_vd:.2f} dB"
    assert metrics["D_diag(M_oo)"] == f"{expected.d_diag_oo:.3f}"
    row = _summary(at).set_index("Condition").loc["anon-mild"]
    assert row["DeID"] == pytest.approx(expected.deid)
    assert row["G_VD (dB)"] == pytest.approx(expected.g_vd)
    # the raw calibration (VoicePAT) gives other numbers, also in the table
    at.radio(key="vm_link_calibration").set_value("raw").run()
    assert not at.exception
    raw = voice_similarity(
        demo.get("plain").embeddings, demo.get("anon-mild").embeddings, calibration="raw"
    ).distinctiveness
    assert _metrics(at)["DeID"] == f"{raw.deid:.3f}" != f"{expected.deid:.3f}"
    assert _summary(at).set_index("Condition").loc["anon-mild", "DeID"] == pytest.approx(raw.deid)
    assert "Now: Raw scores (VoicePAT)" in text_of(at.markdown) or "now: Raw scores" in text_of(
        at.markdown
    )


def test_another_original_can_be_chosen(demo):
    at = _page()
    at.selectbox(key="vm_link_original").select("anon-strong").run()
    assert not at.exception and not at.error
    anonymised = at.selectbox(key="vm_link_anonymised")
    assert "anon-strong" not in anonymised.options
    expected = voice_similarity(
        demo.get("anon-strong").embeddings, demo.get(anonymised.value).embeddings
    ).distinctiveness
    assert _metrics(at)["DeID"] == f"{expected.deid:.3f}"
    assert _summary(at).set_index("Condition").loc["anon-strong", "DeID"] == 0.0


def test_sampled_estimate_is_described_beside_its_figure():
    at = _page()
    assert at.number_input(key="vm_link_draws").disabled
    at.toggle(key="vm_link_sampled").set_value(True).run()
    assert not at.exception and not at.error
    assert not at.number_input(key="vm_link_draws").disabled
    assert "sampled** as in the paper, 20 random subsets per trial" in text_of(at.markdown)
    at.number_input(key="vm_link_draws").set_value(50).run()
    assert not at.exception
    assert "50 random subsets per trial" in text_of(at.markdown)


def test_no_condition_chosen_is_explained():
    at = _page()
    at.multiselect(key="vm_link_conditions").set_value([]).run()
    assert not at.exception
    assert "Choose at least one condition" in at.info[0].value
    assert not at.dataframe


# ---------------------------------------------------------------- score-only conditions


def test_a_score_only_condition_gets_the_mean_score_heat_map(demo):
    study = demo.with_condition(_scores_only(demo.get("anon-leaky"), "leaky-scores"))
    at = _page(study)
    assert not at.error
    # singling out and the similarity matrices say they need embeddings
    info = text_of(at.info)
    assert "**leaky\\-scores**: scores only, no utterance embeddings" in info  # md-escaped
    # the mean-score heat map defaults to the score-only condition
    picker = at.selectbox(key="vm_link_mean_condition")
    assert picker.value == "leaky-scores"
    assert "leaky-scores (scores only)" in picker.options
    assert "Needs only the score matrix" in text_of(at.markdown)
    assert "leaky-scores" not in at.selectbox(key="vm_link_anonymised").options
    row = _summary(at).set_index("Condition").loc["leaky-scores"]
    assert row["Linkability"] == pytest.approx(
        _summary(at).set_index("Condition").loc["anon-leaky", "Linkability"]
    )
    assert pd.isna(row["Singling out"]) and pd.isna(row["DeID"]) and pd.isna(row["G_VD (dB)"])


def test_a_study_without_embeddings(demo):
    study = Study(
        conditions=tuple(_scores_only(c, c.name) for c in demo.conditions[:2]), name="scores"
    )
    at = _page(study)
    assert not at.error
    info = text_of(at.info)
    assert "scores only" in info
    assert "no condition of the study has embeddings" in info
    assert not at.metric
    assert at.selectbox(key="vm_link_mean_condition").value == "plain"
    df = _summary(at)
    assert df["DeID"].isna().all() and df["Singling out"].isna().all()
    assert "DeID and G_VD need original and anonymised embeddings" in text_of(at.caption)


def test_anonymised_utterances_with_other_ids_are_flagged(demo):
    plain = demo.get("plain").embeddings
    meta = plain.meta.assign(utt_id="copy-" + plain.meta["utt_id"])
    es = EmbeddingSet.from_arrays(plain.embeddings[:, ::-1], meta, source="copy")
    copy = Condition("copy", eval=es.score_matrix("eval"), embeddings=es)
    study = Study(conditions=(demo.get("plain"), copy))
    at = _page(study)
    assert not at.exception and not at.error
    assert at.selectbox(key="vm_link_anonymised").value == "copy"
    warning = text_of(at.warning)
    assert "None of the 480 anonymised utterances shares an utterance id" in warning


# used to fail: the report cache keyed on the score matrices only, not the embeddings
def test_condition_report_cache_tells_embeddings_apart():
    demo = demo_study(n_speakers=6)
    leaky = demo.get("anon-leaky")
    scores_only = Condition("scores-only", eval=leaky.eval, dev=leaky.dev)
    assert condition_report(leaky).singling_out is not None
    assert condition_report(scores_only).singling_out is None


# ---------------------------------------------------------------- the cached helpers


def test_cached_similarity_equals_the_library(demo):
    o, a = demo.get("plain").embeddings, demo.get("anon-strong").embeddings
    out = compute(linkage.similarity, o, a, calibration="raw")
    assert out.value.to_dict() == voice_similarity(o, a, calibration="raw").to_dict()


def test_sampled_linkability_is_cached_per_option(demo):
    sm = demo.get("anon-mild").eval
    first = compute(linkage.sampled_linkability, sm, n_draws=5, seed=1).value
    again = compute(linkage.sampled_linkability, sm, n_draws=5, seed=1).value
    other = compute(linkage.sampled_linkability, sm, n_draws=5, seed=2).value
    assert first.n_draws == 5 and first.sampled is not None
    np.testing.assert_array_equal(first.sampled, again.sampled)
    assert not np.array_equal(first.sampled, other.sampled)


def test_single_utterance_speakers_are_left_out_with_a_note(demo):
    def thinned(name: str) -> Condition:
        es = demo.get(name).embeddings
        meta = es.meta
        spk = meta.loc[meta["split"] == "eval", "speaker"].iloc[0]
        first = meta.loc[meta["speaker"] == spk, "utt_id"].iloc[0]
        keep = ((meta["speaker"] != spk) | (meta["utt_id"] == first)).to_numpy()
        sub = EmbeddingSet.from_arrays(es.embeddings[keep], meta[keep], source=name)
        return Condition(name, eval=sub.score_matrix("eval"), embeddings=sub)

    at = _page(Study(conditions=(thinned("plain"), thinned("anon-mild"))))
    assert not at.exception and not at.error
    assert "1 speaker(s) with a single utterance in split 'eval' left out" in text_of(at.warning)
    assert "1 speaker(s) with a single utterance in a set are left out" in text_of(at.caption)
    assert "DeID" in _metrics(at)


def test_figure_1_lengths_are_chosen_by_the_user(demo):
    at = _page()
    at.text_input(key="vm_link_legal_lengths").set_value("1, 2").run()
    assert not at.exception and not at.error
    assert "Skipped (too few utterances)" not in text_of(at.markdown)
    at.text_input(key="vm_link_legal_lengths").set_value("1, two").run()
    assert not at.exception
    assert "whole numbers" in at.error[0].value


def test_cached_legal_evaluation_equals_the_library(demo):
    from voxmetrics.metrics.legal import legal_evaluation

    es = demo.get("anon-mild").embeddings
    out = compute(linkage.legal, es, (3, 1))
    assert out.value.to_dict() == legal_evaluation(es, (1, 3)).to_dict()


# ---------------------------------------------------------------- the linkage numbers alone


def test_the_curves_are_on_request_beyond_the_size_limit(monkeypatch):
    from voxmetrics.ui import linkage_page

    monkeypatch.setattr(linkage_page, "AUTO_CURVES_SPEAKERS", 10)  # the demo has 40
    at = _page()
    assert not at.exception and not at.error
    assert at.toggle(key="vm_link_curves").value is False
    assert "The three singling-out curves are off: with 40 trial speakers" in text_of(at.info)
    markdown = text_of(at.markdown)
    assert markdown.count("**Assumptions**") == 4  # linkability, singling out, similarity, means
    assert "figure 1" not in markdown
    assert list(_summary(at)["Condition"]) == DEMO_NAMES  # the numbers do not need them
    at.toggle(key="vm_link_curves").set_value(True).run()
    assert not at.exception and not at.error
    assert text_of(at.markdown).count("**Assumptions**") == 7
    assert at.text_input(key="vm_link_legal_lengths").value == "1, 3, 8"
    at.switch_page("pages/2_Data.py").run()  # the switch stays on for the session
    at.switch_page(LINKAGE).run()
    assert not at.exception
    assert at.toggle(key="vm_link_curves").value is True


def _page_setups(path: str, study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    if study is not None:
        at.session_state[STUDY_KEY] = study
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def test_a_condition_with_other_speakers_empties_only_its_own_deid():
    study = demo_study(n_speakers=8)
    other = demo_study(n_speakers=8, seed=5).get("anon-mild").embeddings
    meta = other.meta.assign(
        speaker="x" + other.meta["speaker"].astype(str), utt_id="x" + other.meta["utt_id"]
    )
    es = EmbeddingSet.from_arrays(other.embeddings, meta)
    study = study.with_condition(
        Condition("others", eval=es.score_matrix("eval"), dev=es.score_matrix("dev"), embeddings=es)
    )
    at = _page_setups(LINKAGE, study)
    # the pair shown fails (no speaker in common with the original voices) ...
    at.selectbox(key="vm_link_anonymised").select("others").run()
    assert not at.exception
    summary = at.dataframe[-1].value.set_index("Condition")
    # ... but only its own row loses DeID and G_VD
    assert pd.isna(summary.loc["others", "DeID"])
    assert summary.drop("others")["DeID"].notna().all()
    assert summary.loc["plain", "DeID"] == 0.0
