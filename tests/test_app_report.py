"""The Report page and the sidebar's study files, through the entrypoint (style.md 17).

AppTest cannot read download bytes: the files behind the buttons are checked by calling the
same functions directly.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

import voxmetrics.analysis.sbls as sbls_module
from voxmetrics.data.study import Study, StudySettings
from voxmetrics.data.studyfile import study_from_bytes, study_to_bytes
from voxmetrics.evaluation.options import ALL_PARTS
from voxmetrics.report.export import report_json, report_zip, tables_zip
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import study_file_name
from voxmetrics.ui.state import STUDY_KEY

APP = "../app.py"  # resolved relative to this file
PAGE = "pages/10_Report.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
DOWNLOADS = ["vm_report_html", "vm_report_json", "vm_report_zip", "vm_report_vxm"]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _app(study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    if study is not None:
        at.session_state[STUDY_KEY] = study
    return at


def _page(study: Study | None = None) -> AppTest:
    at = _app(study)
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _small_study(name: str = "tiny") -> Study:
    demo = demo_study(n_speakers=6)
    return Study(demo.conditions[:2], name=name, settings=StudySettings(bootstrap=20, seed=3))


# ---------------------------------------------------------------- the Report page


def test_report_page_renders_settings_and_asks_to_build():
    at = _page()
    assert [s.value for s in at.subheader] == ["Study settings", "Build the report"]
    assert at.number_input(key="vm_report_bootstrap").value == 200
    assert at.number_input(key="vm_report_seed").value == 0
    assert at.number_input(key="vm_report_folds").value == 0
    assert "Build the report" in at.info[0].value
    assert "200 bootstrap replicates, seed 0, no cross-calibration" in _text(at.caption)
    assert not at.error


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
    assert "50 bootstrap replicates, seed 7, 5-fold cross-calibration" in _text(at.caption)


def test_the_lid_variant_is_a_study_setting():
    at = _page()
    assert at.radio(key="vm_report_lid_variant").value == "reference-code"  # the default
    at.radio(key="vm_report_lid_variant").set_value("maximum-likelihood")
    at.button(key="vm_report_apply").click().run()
    assert not at.exception and not at.error
    assert _study(at).settings.lid_variant == "maximum-likelihood"
    assert "LID variant maximum-likelihood" in _text(at.caption)


def test_tie_rule_setting_updates_the_study():
    at = _page()
    assert at.selectbox(key="vm_report_ties").value == "reference"
    assert "ties as the reference code" in _text(at.caption)
    at.selectbox(key="vm_report_ties").set_value("attacker")
    at.button(key="vm_report_apply").click().run()
    assert not at.exception and not at.error
    assert _study(at).settings == StudySettings(ties="attacker")
    assert "ties for the attacker" in _text(at.caption)


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


def test_build_report_shows_card_callouts_and_downloads():
    at = _page(_small_study())
    assert not at.main.get("download_button")
    at.button(key="vm_report_build").click().run()
    assert not at.exception and not at.error
    card = at.dataframe[0].value
    assert list(card["Condition"]) == ["plain", "random"]
    assert "LIDmax (bits)" in card.columns
    assert "Threat call-outs" in _text(at.markdown)
    keys = [b.key for b in at.main.get("download_button")]
    for key in DOWNLOADS:
        assert key in keys, f"{key} is missing"
    # PDF button with Chromium, else the caption that says why there is none
    assert "vm_report_pdf" in keys or "PDF needs Chromium" in _text(at.caption)
    assert "python -m voxmetrics report tiny.vxm --html report.html" in _text(at.code)
    # the tables for a paper: LaTeX by default, Markdown on demand
    assert "vm_report_tables_zip" in keys and "vm_report_table_file" in keys
    assert "\\begin{tabular}" in _text(at.code) and "\\toprule" in _text(at.code)
    at.radio(key="vm_report_table_format").set_value("markdown").run()
    assert not at.exception
    at.selectbox(key="vm_report_table").set_value("zebra").run()
    assert "| Condition | EER | D_ECE (bits) |" in _text(at.code)
    # the report stays built while the study does not change
    at.run()
    assert at.dataframe[0].value["Condition"].tolist() == ["plain", "random"]


# the counters are module globals: the dashboard's cache keys a local function by what it
# closes over and by its default arguments, and a growing list would change its key
_EVAL_CALLS: list[str] = []
_SBLS_CALLS: list[str] = []
_ATTACK = sbls_module.default_attack


def _counted_evaluate(cond, options=None, *, parts=ALL_PARTS, progress=None, **overrides):
    # evaluate_condition's signature: the dashboard passes the options positionally
    from voxmetrics.evaluation.engine import evaluate_condition

    _EVAL_CALLS.append(cond.name)
    return evaluate_condition(cond, options, parts=parts, progress=progress, **overrides)


def _counted_attack(cond):
    import sys

    # the card's and the report's attackers (the paired comparison trains its own)
    if sys._getframe(1).f_code.co_name != "compare_conditions_sbls":
        _SBLS_CALLS.append(cond.name)
    return _ATTACK(cond)


def test_the_report_reuses_the_overviews_condition_reports(monkeypatch):
    # one cache for the study's reports: Overview then Report evaluates each condition once
    from voxmetrics.ui import widgets

    _EVAL_CALLS.clear()
    _SBLS_CALLS.clear()
    calls, sbls_calls = _EVAL_CALLS, _SBLS_CALLS
    monkeypatch.setattr(widgets, "evaluate_condition", _counted_evaluate)
    monkeypatch.setattr(sbls_module, "default_attack", _counted_attack)  # the pages'
    at = _app(_small_study())
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception
    assert calls == ["plain", "random"]
    at.switch_page(PAGE).run()
    at.button(key="vm_report_build").click().run()
    assert not at.exception and not at.error
    assert list(at.dataframe[0].value["Condition"]) == ["plain", "random"]
    assert calls == ["plain", "random"]  # nothing evaluated again
    assert sbls_calls == ["plain", "random"]  # each attacker trained once
    # and the other way round: a stored report, then the Overview computes nothing
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception and calls == ["plain", "random"]


def test_build_report_is_forgotten_when_the_settings_change():
    at = _page(_small_study())
    at.button(key="vm_report_build").click().run()
    assert at.main.get("download_button")
    at.number_input(key="vm_report_bootstrap").set_value(0)
    at.button(key="vm_report_apply").click().run()
    assert not at.exception
    assert "Build the report" in at.info[0].value


def test_empty_study_is_explained():
    at = _page(Study())
    assert not at.exception
    assert "no conditions yet" in at.info[0].value
    assert not at.main.get("download_button")


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")
def test_the_report_files_behind_the_buttons():
    study = _small_study()
    sr = build_study_report(study)  # what cache.study_report stores
    data = json.loads(report_json(sr))
    assert sorted(data["conditions"]) == ["plain", "random"]
    assert data["settings"] == {
        "bootstrap": 20,
        "seed": 3,
        "cross_calibrate": None,
        "lid_variant": "reference-code",
        "ties": "reference",
        "linkability_rule": "code",
    }
    names = zipfile.ZipFile(io.BytesIO(report_zip(sr))).namelist()
    assert "tiny_report.html" in names and "csv/report_card.csv" in names
    assert "latex/lid.tex" in names and "markdown/zebra.md" in names
    tables = zipfile.ZipFile(io.BytesIO(tables_zip(sr, "latex"))).namelist()
    assert "overview.tex" in tables and "lid.tex" in tables
    assert study_from_bytes(study_to_bytes(sr.study)).names == ["plain", "random"]
    assert study_file_name(study) == "tiny.vxm"


# ---------------------------------------------------------------- the sidebar's study files


def test_save_study_button_is_in_the_sidebar():
    at = _app()
    save = [b for b in at.sidebar.get("download_button") if b.key == "vm_sidebar_save"]
    assert len(save) == 1
    assert save[0].proto.label == "Save study"


def test_loading_a_study_file_replaces_the_study():
    at = _app()
    data = study_to_bytes(_small_study("from file"))
    at.file_uploader(key="vm_study_file").set_value(("tiny.vxm", data, "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception and not at.sidebar.error
    study = _study(at)
    assert study.name == "from file" and study.names == ["plain", "random"]
    assert study.settings == StudySettings(bootstrap=20, seed=3)
    success = at.sidebar.success[0].value
    assert "from tiny.vxm" in success and "2 conditions" in success


def _tampered() -> bytes:
    """A study file whose manifest points outside the archive."""
    buf = io.BytesIO()
    src = zipfile.ZipFile(io.BytesIO(study_to_bytes(_small_study())))
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            zf.writestr(info.filename, src.read(info.filename))
        zf.writestr("../evil.npy", b"x")
    return buf.getvalue()


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
    at = _app()
    data = _tampered() if content == "tampered" else content
    at.file_uploader(key="vm_study_file").set_value(("bad.vxm", data, "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    assert len(at.sidebar.error) == 1
    assert "bad.vxm" in at.sidebar.error[0].value and message in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


def test_load_without_a_file_asks_for_one():
    at = _app()
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    assert "Choose a study file" in at.sidebar.error[0].value
    assert _study(at).names == DEMO_NAMES


# ---------------------------------------------------------------- without Chromium


def test_without_chromium_the_pages_say_what_is_missing(monkeypatch):
    import voxmetrics.report.export
    import voxmetrics.ui.widgets

    monkeypatch.setattr(voxmetrics.report.export, "find_chromium", lambda: None)
    monkeypatch.setattr(voxmetrics.ui.widgets, "find_chromium", lambda: None)
    at = _page(_small_study())
    at.button(key="vm_report_build").click().run()
    assert not at.exception
    keys = [b.key for b in at.main.get("download_button")]
    assert "vm_report_pdf" not in keys and "vm_report_html" in keys
    assert "PDF needs Chromium" in _text(at.caption)
    # figure downloads fall back to HTML and say so
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception
    keys = [b.key for b in at.main.get("download_button")]
    assert "vm_dl_report_card.html" in keys and "vm_dl_report_card.png" not in keys
    assert "PNG and SVG export need Chromium" in _text(at.caption)


def test_the_report_compares_against_the_chosen_reference(monkeypatch):
    # the paired comparisons take the chosen condition as A (the first by default)
    import voxmetrics.report.study as report_study

    seen: list[str | None] = []
    build = report_study.build_study_report

    def spy(study, **options):
        seen.append(options.get("reference"))
        return build(study, **options)

    monkeypatch.setattr(report_study, "build_study_report", spy)
    at = _page(_small_study())
    assert at.selectbox(key="vm_report_reference").value == "plain"
    at.selectbox(key="vm_report_reference").set_value("random").run()
    at.button(key="vm_report_build").click().run()
    assert not at.exception and not at.error
    assert seen[-1] == "random"
