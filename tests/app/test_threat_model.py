"""The Threat model page through the app's entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import pandas as pd
import pytest
from app_cases import APP, open_page, table_with, text_of, unescaped_text
from streamlit.testing.v1 import AppTest
from verdict_cases import two_system_study

from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.threat import PAPER_EXAMPLE_SCORES, PAPER_EXAMPLE_TARGETS
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY

THREAT_PAGE = "pages/9_Threat_model.py"
MATRIX_KEY = "vm_threat_matrix"
HEADERS = [
    "1. One matrix, two readings",
    "2. Generator: watch the numbers move apart",
    "3. The regulation's words, the metrics' numbers",
    "4. Your study",
]
METRIC_LABELS = [
    "EER", "ROCCH-EER", "Linkability", "Chance (1/N)", "ALID (bits)", "LIDmax (bits)",
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _threat_page(study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    if study is not None:
        at.session_state[STUDY_KEY] = study
    at.switch_page(THREAT_PAGE).run()
    assert not at.exception, at.exception
    return at


def _metric_rows(at: AppTest) -> list[dict[str, str]]:
    """The page's metric rows, in order: [the 4x4 example, the generator] when both render."""
    values = [(m.label, m.value) for m in at.metric]
    rows = [dict(values[k : k + 6]) for k in range(0, len(values), 6)]
    for row in rows:
        assert list(row) == METRIC_LABELS
    return rows


def _edited_example(cells: dict[tuple[str, str], float]) -> pd.DataFrame:
    """The paper's example as the page keeps it, with ``{(trial, column): value}`` replaced."""
    frame = pd.DataFrame(
        PAPER_EXAMPLE_SCORES,
        columns=[f"speaker {j + 1}" for j in range(4)],
        index=[f"trial {i + 1}" for i in range(4)],
    )
    frame["own speaker"] = [float(t + 1) for t in PAPER_EXAMPLE_TARGETS]
    for (trial, column), value in cells.items():
        frame.loc[trial, column] = value
    return frame


# ---------------------------------------------------------------- smoke test


def test_page_renders_every_section_on_the_demo():
    at = _threat_page()
    assert [h.value for h in at.header] == HEADERS
    assert at.title[0].value == "Threat model: why a 50 % EER does not mean safe"
    assert not at.error
    rows = _metric_rows(at)
    assert len(rows) == 2  # the example and the generator
    text = unescaped_text(at.markdown)
    for term in ("Singling out", "Linkability", "Inference", "1-to-N search", "Recital 26"):
        assert term in text
    assert "Opinion 05/2014" in text


# ---------------------------------------------------------------- 1. the 4x4 example


def test_paper_example_numbers_come_from_the_library():
    at = _threat_page()
    example = _metric_rows(at)[0]
    assert example["EER"] == "0.500"
    assert example["Linkability"] == "1.000"
    assert example["ROCCH-EER"] == "0.375"
    assert example["Chance (1/N)"] == "0.250"
    assert example["ALID (bits)"] == example["LIDmax (bits)"] == "1.87"
    assert "4 of 4" in unescaped_text(at.markdown)
    assert at.slider(key="vm_threat_w").value == 1.5


def test_w_changes_lid_only():
    at = _threat_page()
    at.slider(key="vm_threat_w").set_value(0.0).run()
    assert not at.exception
    example = _metric_rows(at)[0]
    assert example["ALID (bits)"] == "0.00"
    assert example["EER"] == "0.500" and example["Linkability"] == "1.000"


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ({("trial 2", "speaker 3"): float("nan")}, "Some cells are empty: trial 2 (speaker 3)"),
        ({("trial 1", "own speaker"): float("nan")}, "trial 1 (own speaker)"),
        ({("trial 3", "own speaker"): 7.0}, "between 1 and 4"),
        ({("trial 3", "own speaker"): 0.0}, "between 1 and 4"),
        ({("trial 4", "own speaker"): 2.5}, "whole number from 1 to 4"),
    ],
    ids=["empty-score", "empty-own", "own-too-large", "own-zero", "own-fraction"],
)
def test_invalid_edits_show_a_message_not_a_traceback(cells, message):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[MATRIX_KEY] = _edited_example(cells)
    at.switch_page(THREAT_PAGE).run()
    assert not at.exception, at.exception
    errors = unescaped_text(at.error)
    assert message in errors
    # the example's metrics are gone, the generator's remain; the other sections still render
    assert len(_metric_rows(at)) == 1
    assert [h.value for h in at.header] == HEADERS


def test_reset_restores_the_paper_example():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[MATRIX_KEY] = _edited_example({("trial 1", "speaker 2"): 0.95})
    at.switch_page(THREAT_PAGE).run()
    assert _metric_rows(at)[0]["Linkability"] == "0.750"
    at.button(key="vm_threat_reset").click().run()
    assert not at.exception
    assert _metric_rows(at)[0]["Linkability"] == "1.000"
    assert _metric_rows(at)[0]["EER"] == "0.500"


def test_the_edited_matrix_survives_a_page_change():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[MATRIX_KEY] = _edited_example({("trial 1", "speaker 2"): 0.95})
    at.switch_page(THREAT_PAGE).run()
    at.switch_page("pages/1_Overview.py").run()
    at.switch_page(THREAT_PAGE).run()
    assert not at.exception
    assert _metric_rows(at)[0]["Linkability"] == "0.750"


def test_sliders_survive_a_page_change():
    at = _threat_page()
    at.slider(key="vm_threat_w").set_value(0.5).run()
    at.slider(key="vm_threat_n").set_value(50).run()
    at.switch_page("pages/1_Overview.py").run()
    at.switch_page(THREAT_PAGE).run()
    assert not at.exception
    assert at.slider(key="vm_threat_w").value == 0.5
    assert at.slider(key="vm_threat_n").value == 50
    assert _metric_rows(at)[1]["Chance (1/N)"] == "0.020"


# ---------------------------------------------------------------- 2. generator


def test_generator_slider_moves_the_numbers():
    at = _threat_page()
    before = _metric_rows(at)[1]
    at.slider(key="vm_threat_spread").set_value(4.0).run()
    assert not at.exception
    after = _metric_rows(at)[1]
    assert float(after["EER"]) > float(before["EER"])
    # the offsets shift whole rows: the 1-to-N numbers do not move
    for label in ("Linkability", "ALID (bits)", "LIDmax (bits)"):
        assert after[label] == before[label]
    at.slider(key="vm_threat_noise").set_value(2.0).run()
    noisy = _metric_rows(at)[1]
    assert float(noisy["Linkability"]) < float(after["Linkability"])


def test_generator_without_margin_or_noise_explains():
    at = _threat_page()
    at.slider(key="vm_threat_margin").set_value(0.0).run()
    at.slider(key="vm_threat_noise").set_value(0.0).run()
    assert not at.exception
    assert "no noise and no margin" in unescaped_text(at.error)
    assert len(_metric_rows(at)) == 1


# ---------------------------------------------------------------- 4. the study


def test_anon_leaky_is_called_out_on_the_demo():
    at = _threat_page()
    callouts = [w for w in at.warning if "looks private on the EER" in str(w.value)]
    assert len(callouts) == 1
    assert "anon-leaky" in unescaped_text(callouts)
    assert "LIDmax" in unescaped_text(callouts) and "chance" in unescaped_text(callouts)
    worst = [d.value for d in at.dataframe if "margin" in d.value.columns]
    assert len(worst) == 1
    assert list(worst[0]["LID (bits)"]) == sorted(worst[0]["LID (bits)"], reverse=True)
    checked = next(d.value for d in at.dataframe if "Called out" in d.value.columns)
    assert checked.set_index("Condition")["Called out"].to_dict() == {
        "plain": False,
        "random": False,
        "anon-mild": False,
        "anon-strong": False,
        "anon-leaky": True,
    }


def test_condition_without_dev_is_checked_on_linkability_only():
    demo = demo_study()
    study = Study(
        conditions=(Condition("leaky-no-dev", eval=demo.get("anon-leaky").eval),), name="nodev"
    )
    at = _threat_page(study)
    assert "leaky-no-dev" in unescaped_text(at.warning)  # still called out, on linkability
    assert "no dev set, so no LID" in unescaped_text(at.caption)


def test_the_studys_settings_reach_the_checked_numbers():
    """The study's cross-calibration gives a condition without dev set its LID here too (the
    page used to evaluate with the default settings, so it showed none)."""
    demo = demo_study()
    cond = Condition("leaky-no-dev", eval=demo.get("anon-leaky").eval)
    study = Study(conditions=(cond,), name="cv", settings=StudySettings(cross_calibrate=3))
    at = _threat_page(study)
    checked = next(d.value for d in at.dataframe if "Called out" in d.value.columns)
    expected = evaluate_condition(cond, cross_calibrate=3).lid.lid_max
    assert checked["LIDmax (bits)"].tolist() == [expected]
    assert "no dev set, so no LID" not in unescaped_text(at.caption)


def test_a_report_another_page_evaluated_is_read_not_evaluated_again(monkeypatch):
    import voxmetrics.evaluation.engine as engine

    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/1_Overview.py").run()  # the full reports, under the study's settings
    assert not at.exception, at.exception
    calls = []
    real = engine.evaluate
    monkeypatch.setattr(engine, "evaluate", lambda *a, **k: calls.append(1) or real(*a, **k))
    at.switch_page(THREAT_PAGE).run()
    assert not at.exception, at.exception
    assert not calls
    checked = next(d.value for d in at.dataframe if "Called out" in d.value.columns)
    assert checked["Called out"].sum() == 1


def test_no_callout_says_what_was_checked():
    demo = demo_study()
    at = _threat_page(Study(conditions=(demo.get("plain"), demo.get("random")), name="safe"))
    assert not [w for w in at.warning if "looks private" in str(w.value)]
    success = unescaped_text(at.success)
    assert "No condition crosses the thresholds" in success
    assert "EER ≥ 0.45" in success and "LIDmax ≥ 1 bit" in success


def test_empty_study_keeps_sections_one_to_three():
    at = _threat_page(Study())
    assert [h.value for h in at.header] == HEADERS
    assert len(_metric_rows(at)) == 2
    assert _metric_rows(at)[0]["EER"] == "0.500"
    info = unescaped_text(at.info)
    assert "no conditions yet" in info and "example and the generator above" in info
    assert not at.dataframe or all("Called out" not in d.value.columns for d in at.dataframe)


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_who_stays_exposed_and_the_verdicts_checked():
    at = open_page("pages/9_Threat_model.py", two_system_study(), timeout=180)
    assert not at.error
    assert "#### Who stays exposed" in text_of(at.markdown)
    exposed = table_with(at, "Exposed under")
    assert exposed["Exposed under"].is_monotonic_decreasing
    assert "original: rank-1 rate" not in exposed.columns  # the original speech left out
    assert {"Sex", "Age group"} <= set(exposed.columns)
    checked = table_with(at, "Called out")
    assert {"LIDmax verdict", "Linkability verdict"} <= set(checked.columns)
