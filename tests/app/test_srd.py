"""The SRD page through the app's entrypoint with Streamlit's AppTest (style.md 17).

The first view fits the beta-binomial models of every condition and of 40 speakers (seconds on
a loaded machine), so the caches are cleared once per module, before and after it, rather than
between tests; session state is new with every AppTest. Figures are tested in
tests/plots/test_srd.py (AppTest cannot see them).
"""

from __future__ import annotations

import pytest
from app_cases import APP, clear_app_caches, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis import srd as analysis
from voxmetrics.data.study import Study
from voxmetrics.metrics.srd import LOSSES
from voxmetrics.ui import srd_page
from voxmetrics.ui.state import STUDY_KEY

SRD = "pages/4_SRD.py"
DATA = "pages/2_Data.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
TIMEOUT = 240  # first runs fit 5 conditions and 40 speakers; the machine may be shared


@pytest.fixture(scope="module", autouse=True)
def _fresh_caches():
    clear_app_caches()
    yield
    clear_app_caches()


def _srd_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    at.switch_page(SRD).run()
    assert not at.exception, at.exception
    return at


def _stats_table(at: AppTest):
    return at.dataframe[0].value


def test_srd_page_runs_on_the_demo():
    at = _srd_page()
    assert [t.value for t in at.title] == ["SRD: similarity rank disclosure"]
    assert [s.value for s in at.subheader] == [
        "Rank of the true speaker",
        "Disclosure statistics",
        "Mean disclosure per condition",
        "Per speaker",
    ]
    assert at.multiselect(key="vm_srd_conditions").value == DEMO_NAMES
    assert at.multiselect(key="vm_srd_losses").value == ["LL", "CLL"]
    assert at.toggle(key="vm_srd_log").value is True
    df = _stats_table(at)
    data = df[df["Source"] == "data"]
    assert list(data["Condition"]) == DEMO_NAMES
    assert data["MeanD (bits)"].between(0, 5.33).all()
    assert list(df["Source"]) == ["data", "LL model", "CLL model"] * 5
    assert set(df["Fit"]) <= {"–", "converged", "did not converge"}
    # the demo has 320 trials for N = 40 ranks: sparse, the model should be preferred
    assert "Prefer the model" in at.info[0].value
    assert "left out of the data lines" in text_of(at.caption)
    # the per-speaker view: 40 speakers of the first condition, their table
    speakers = at.dataframe[2].value
    assert len(speakers) == 40 and speakers["n_trials"].sum() == 320
    # against chance, with intervals: 4 statistics per condition
    against = at.dataframe[1].value
    assert len(against) == 4 * len(DEMO_NAMES)
    random_mean_d = against[
        (against["Condition"] == "random") & (against["Statistic"] == "MeanD (bits)")
    ].iloc[0]
    assert abs(random_mean_d["Excess over chance"]) < 0.1  # random scores: at chance
    assert random_mean_d["95% low"] <= random_mean_d["Value"] <= random_mean_d["95% high"]
    assert at.selectbox(key="vm_srd_speaker_condition").value == "plain"
    # 40 trial speakers, within AUTO_SPEAKER_MODELS: the per-speaker models are on by default
    assert at.toggle(key="vm_srd_speaker_models").value is True
    assert "per-speaker view is off" not in text_of(at.info)
    assert not at.error


def test_choosing_another_speaker_and_condition():
    at = _srd_page()
    box = at.selectbox(key="vm_srd_speaker_plain")
    assert box.value == "eval-spk000"
    box.select("eval-spk003").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="vm_srd_speaker_plain").value == "eval-spk003"
    at.selectbox(key="vm_srd_speaker_condition").select("anon-leaky").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="vm_srd_speaker_anon-leaky").value == "eval-spk000"
    at.selectbox(key="vm_srd_speaker_anon-leaky").select("eval-spk039").run()
    assert not at.exception
    at.radio(key="vm_srd_speaker_source").set_value("empirical").run()
    assert not at.exception
    assert "converged" in text_of(at.caption)


def test_all_five_losses_and_linear_axes():
    at = _srd_page()
    at.multiselect(key="vm_srd_losses").set_value(list(LOSSES)).run()
    assert not at.exception
    df = _stats_table(at)
    assert list(df["Source"]) == (["data"] + [f"{loss} model" for loss in LOSSES]) * 5
    at.toggle(key="vm_srd_log").set_value(False).run()
    assert not at.exception
    assert "left out of the data lines" not in text_of(at.caption)


def test_fewer_conditions_and_none():
    at = _srd_page()
    at.multiselect(key="vm_srd_conditions").set_value(["anon-leaky", "random"]).run()
    assert not at.exception
    assert list(_stats_table(at)["Condition"].unique()) == ["random", "anon-leaky"]
    assert at.selectbox(key="vm_srd_speaker_condition").options == ["random", "anon-leaky"]
    at.multiselect(key="vm_srd_conditions").set_value([]).run()
    assert not at.exception
    assert "at least one condition" in at.info[0].value
    assert not at.dataframe


def test_empty_study_is_explained():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state[STUDY_KEY] = Study()
    at.switch_page(SRD).run()
    assert not at.exception
    assert "no conditions yet" in at.info[0].value
    assert not at.dataframe


_SPEAKER_SRD_CALLS: list[int] = []
_speaker_srd = analysis.speaker_srd


def _counted_speaker_srd(*args, **kwargs):
    """``analysis.speaker_srd``, counted (a name of its own: its results are stored apart)."""
    _SPEAKER_SRD_CALLS.append(1)
    return _speaker_srd(*args, **kwargs)


def test_the_per_speaker_models_are_on_request_beyond_the_size_limit(monkeypatch):
    monkeypatch.setattr(srd_page, "AUTO_SPEAKER_MODELS", 10)  # the demo has 40
    monkeypatch.setattr(analysis, "speaker_srd", _counted_speaker_srd)
    _SPEAKER_SRD_CALLS.clear()
    at = _srd_page()
    assert not at.error
    assert at.toggle(key="vm_srd_speaker_models").value is False
    assert not _SPEAKER_SRD_CALLS  # nothing fitted per speaker
    assert "The per-speaker view is off: plain has 40 trial speakers" in text_of(at.info)
    assert [s.value for s in at.subheader][-1] == "Per speaker"
    assert len(at.dataframe) == 2  # the statistics and against chance: no speaker table
    assert not [b for b in at.selectbox if b.key == "vm_srd_speaker_plain"]
    assert at.selectbox(key="vm_srd_speaker_condition").value == "plain"
    # the rest of the page as before
    assert list(_stats_table(at)["Source"]) == ["data", "LL model", "CLL model"] * 5

    at.selectbox(key="vm_srd_speaker_condition").select("anon-leaky").run()
    assert not at.exception and not at.error
    assert r"The per-speaker view is off: anon\-leaky has 40 trial speakers" in text_of(at.info)
    assert not _SPEAKER_SRD_CALLS

    at.toggle(key="vm_srd_speaker_models").set_value(True).run()
    assert not at.exception and not at.error
    assert len(_SPEAKER_SRD_CALLS) == 1  # the chosen condition's models, once
    assert "per-speaker view is off" not in text_of(at.info)
    speakers = at.dataframe[2].value
    assert len(speakers) == 40 and speakers["n_trials"].sum() == 320
    assert at.selectbox(key="vm_srd_speaker_anon-leaky").value == "eval-spk000"
    at.selectbox(key="vm_srd_speaker_condition").select("plain").run()
    assert len(_SPEAKER_SRD_CALLS) == 2
    at.selectbox(key="vm_srd_speaker_condition").select("anon-leaky").run()
    assert len(_SPEAKER_SRD_CALLS) == 2  # computed once per condition and kept

    # on for the session: still on after another page (which drops the widgets' state)
    at.switch_page(DATA).run()
    assert not at.exception
    at.switch_page(SRD).run()
    assert not at.exception and not at.error
    assert at.toggle(key="vm_srd_speaker_models").value is True
    assert len(at.dataframe) == 3
    assert len(_SPEAKER_SRD_CALLS) == 2
