"""The study's settings form on the Report page (voxmetrics.ui.settings.settings_form), AppTest."""

from __future__ import annotations

import pytest
from app_cases import open_app, open_page, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study, StudySettings
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY

PAGE = "pages/10_Report.py"

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _app(study: Study | None = None) -> AppTest:
    return open_app(study)


def _page(study: Study | None = None) -> AppTest:
    return open_page(PAGE, study)


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def _small_study(name: str = "tiny") -> Study:
    demo = demo_study(n_speakers=6)
    return Study(demo.conditions[:2], name=name, settings=StudySettings(bootstrap=20, seed=3))


def test_changing_settings_updates_the_study():
    at = _page()
    at.number_input(key="vm_report_bootstrap").set_value(50)
    at.number_input(key="vm_report_seed").set_value(7)
    at.number_input(key="vm_report_folds").set_value(5)
    at.button(key="vm_report_apply").click().run()
    assert not at.exception and not at.error
    assert _study(at).settings == StudySettings(bootstrap=50, seed=7, cross_calibrate=5)
    assert _study(at).names == DEMO_NAMES  # the conditions are kept
    assert "Settings applied" in at.success[0].value
    assert "50 bootstrap replicates, seed 7, 5-fold cross-calibration" in text_of(at.caption)


def test_the_lid_variant_is_a_study_setting():
    at = _page()
    assert at.radio(key="vm_report_lid_variant").value == "reference-code"  # the default
    at.radio(key="vm_report_lid_variant").set_value("maximum-likelihood")
    at.button(key="vm_report_apply").click().run()
    assert not at.exception and not at.error
    assert _study(at).settings.lid_variant == "maximum-likelihood"
    assert "LID variant maximum-likelihood" in text_of(at.caption)


def test_tie_rule_setting_updates_the_study():
    at = _page()
    assert at.selectbox(key="vm_report_ties").value == "reference"
    assert "ties as the reference code" in text_of(at.caption)
    at.selectbox(key="vm_report_ties").set_value("attacker")
    at.button(key="vm_report_apply").click().run()
    assert not at.exception and not at.error
    assert _study(at).settings == StudySettings(ties="attacker")
    assert "ties for the attacker" in text_of(at.caption)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("vm_report_bootstrap", -1, "bootstrap"),
        ("vm_report_seed", -5, "seed"),
        ("vm_report_folds", 1, "cross_calibrate"),
    ],
)
def test_invalid_settings_show_an_error(key, value, message):
    at = _page()
    at.number_input(key=key).set_value(value)
    at.button(key="vm_report_apply").click().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "Settings not applied" in at.error[0].value and message in at.error[0].value
    assert _study(at).settings == StudySettings()


def test_settings_of_a_loaded_study_fill_the_form():
    at = _page(_small_study())
    assert at.number_input(key="vm_report_bootstrap").value == 20
    assert at.number_input(key="vm_report_seed").value == 3
