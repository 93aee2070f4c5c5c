"""The Report page and the sidebar's study files, through the entrypoint (style.md 17).

AppTest cannot read download bytes: the files behind the buttons are checked by calling the
same functions directly.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from app_cases import open_app, open_page, text_of
from streamlit.testing.v1 import AppTest

import voxmetrics.analysis.sbls as sbls_module
from voxmetrics.data.study import Study, StudySettings
from voxmetrics.data.studyfile import study_from_bytes, study_to_bytes
from voxmetrics.evaluation.options import ALL_PARTS
from voxmetrics.report.export import report_json, report_zip, tables_zip
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import study_file_name

PAGE = "pages/10_Report.py"
DOWNLOADS = ["vm_report_html", "vm_report_json", "vm_report_zip", "vm_report_vxm"]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _app(study: Study | None = None) -> AppTest:
    return open_app(study)


def _page(study: Study | None = None) -> AppTest:
    return open_page(PAGE, study)


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
    assert "200 bootstrap replicates, seed 0, no cross-calibration" in text_of(at.caption)
    assert not at.error


def test_build_report_shows_card_callouts_and_downloads():
    at = _page(_small_study())
    assert not at.main.get("download_button")
    at.button(key="vm_report_build").click().run()
    assert not at.exception and not at.error
    card = at.dataframe[0].value
    assert list(card["Condition"]) == ["plain", "random"]
    assert "LIDmax (bits)" in card.columns
    assert "Threat call-outs" in text_of(at.markdown)
    keys = [b.key for b in at.main.get("download_button")]
    for key in DOWNLOADS:
        assert key in keys, f"{key} is missing"
    # PDF button with Chromium, else the caption that says why there is none
    assert "vm_report_pdf" in keys or "PDF needs Chromium" in text_of(at.caption)
    assert "python -m voxmetrics report tiny.vxm --html report.html" in text_of(at.code)
    # the tables for a paper: LaTeX by default, Markdown on demand
    assert "vm_report_tables_zip" in keys and "vm_report_table_file" in keys
    assert "\\begin{tabular}" in text_of(at.code) and "\\toprule" in text_of(at.code)
    at.radio(key="vm_report_table_format").set_value("markdown").run()
    assert not at.exception
    at.selectbox(key="vm_report_table").set_value("zebra").run()
    assert "| Condition | EER | D_ECE (bits) |" in text_of(at.code)
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
    assert "PDF needs Chromium" in text_of(at.caption)
    # figure downloads fall back to HTML and say so
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception
    keys = [b.key for b in at.main.get("download_button")]
    assert "vm_dl_report_card.html" in keys and "vm_dl_report_card.png" not in keys
    assert "PNG and SVG export need Chromium" in text_of(at.caption)


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
