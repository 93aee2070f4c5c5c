"""Every warning names its condition, once, and only on the pages it concerns (issue 27, 4).

A small real-shaped study: the demo's five systems on 5 speakers, where ``plain`` has
separated dev pools (its maximum-likelihood LID calibration does not converge) and a rank
histogram the beta-binomial cannot fit. The command line prints one line per condition and
warning; the dashboard gathers the model-fit notes in one collapsed expander per page, each
line naming its condition, and keeps the SRD fit's note off the Linkage page.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.cli import main
from voxmetrics.data.study import StudySettings
from voxmetrics.data.studyfile import study_to_bytes
from voxmetrics.synth import demo_study
from voxmetrics.ui.notes import note_is_model_fit, note_topic
from voxmetrics.ui.state import STUDY_KEY

APP = "../app.py"
TIMEOUT = 240
LID_NOTE = "the LID calibration did not converge"
SRD_NOTE = "the beta-binomial CLL fit did not converge"


@pytest.fixture(scope="module")
def small_study():
    study = demo_study(n_speakers=5)
    settings = StudySettings(bootstrap=10, lid_variant="maximum-likelihood")
    return dataclasses.replace(study, settings=settings)


# ---------------------------------------------------------------- the library


def test_the_cli_prints_one_named_line_per_condition_and_warning(small_study, tmp_path, capsys):
    path = tmp_path / "small.vxm"
    path.write_bytes(study_to_bytes(small_study))
    assert main(["report", str(path), "--json", str(tmp_path / "r.json")]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "voxmetrics: warning:" in x]
    assert lines and len(lines) == len(set(lines))
    assert all(x.startswith("voxmetrics: warning: plain: ") for x in lines), lines
    assert sum(SRD_NOTE in x for x in lines) == 1
    assert sum(LID_NOTE in x for x in lines) == 1


def test_the_report_lists_each_condition_note_once(small_study):
    from voxmetrics.report.html import study_report_html
    from voxmetrics.report.study import build_study_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(small_study, bootstrap=0)
    # the calibration's, the SRD model's and the LID display range's (clamped numbers)
    assert len(sr.notes) == len(set(sr.notes)) == 3
    assert all(n.startswith("plain: ") and "plain: plain" not in n for n in sr.notes)
    assert sum("beyond the display range" in n for n in sr.notes) == 1
    page = study_report_html(sr)
    assert page.count(f"<b>plain</b>: {SRD_NOTE}") == 1
    assert page.count(f"<b>plain</b>: {LID_NOTE}") == 1


def test_topics_and_model_fit_notes_of_the_library_messages():
    assert note_topic(f"{SRD_NOTE} (alpha = 0.1); do not rely on this model.") == "SRD"
    assert note_topic(f"{LID_NOTE}: the pools are separated") == "LID"
    assert note_topic("singling out skipped: too few trial embeddings") == "Linkage"
    assert note_topic("dev.txt: 3 of 40 trials have a speaker who is not enrolled") == ""
    assert note_is_model_fit(SRD_NOTE) and note_is_model_fit(LID_NOTE)
    assert not note_is_model_fit("3 of 40 trials have a speaker who is not enrolled")


# ---------------------------------------------------------------- the dashboard


def _page(study, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[STUDY_KEY] = study
    at.run()
    assert not at.exception, at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _fit_notes(at: AppTest) -> list[str]:
    """The lines of the page's model-fit notes expanders."""
    boxes = [e for e in at.expander if str(e.label).startswith("Model-fit notes")]
    return [str(m.value) for e in boxes for m in e.markdown]


def _everything(at: AppTest) -> str:
    return "\n".join(str(e.value) for e in (*at.warning, *at.markdown, *at.info))


@pytest.mark.usefixtures("fresh_app_caches")
def test_overview_gathers_the_model_fit_notes_once_naming_their_condition(small_study):
    at = _page(small_study, "pages/1_Overview.py")
    boxes = [e for e in at.expander if str(e.label).startswith("Model-fit notes")]
    assert len(boxes) == 1 and "plain" in str(boxes[0].label)
    notes = "\n".join(_fit_notes(at))
    lines = notes.splitlines()
    assert len(lines) == len(set(lines)) == 3, lines  # with the LID display range's note
    assert all(x.startswith("- **plain**") for x in lines)
    text = notes.replace("\\", "")
    assert LID_NOTE in text and SRD_NOTE in text
    # no anonymous warning box repeats them
    assert not any("did not converge" in str(w.value) for w in at.warning)


@pytest.mark.usefixtures("fresh_app_caches")
def test_the_srd_note_is_on_srd_and_off_linkage(small_study):
    srd = _page(small_study, "pages/4_SRD.py")
    text = "\n".join(_fit_notes(srd)).replace("\\", "")
    assert "the beta-binomial" in text and "plain" in text
    assert LID_NOTE not in text and LID_NOTE not in _everything(srd).replace("\\", "")
    linkage = _page(small_study, "pages/6_Linkage.py")
    assert "beta-binomial" not in "\n".join(_fit_notes(linkage)).replace("\\", "")
    assert "beta-binomial" not in _everything(linkage)


def _notes_script():
    from voxmetrics.ui.notes import add_notes, reset_notes

    reset_notes()
    fit = "the beta-binomial LL fit did not converge (alpha -> 0); do not rely on this model."
    add_notes([fit, "scores_v2.csv: 1 of 7 trials have a speaker who is not enrolled"],
              condition="a")  # fmt: skip
    add_notes([fit], condition="a")  # again: shown once
    add_notes([f"b: {fit}", "the LID calibration did not converge"], conditions=["a", "b"])
    add_notes(["singling out skipped: too few embeddings", fit], condition="c", topics={"SRD"})


def test_notes_are_one_block_each_once_named_and_kept_to_their_topics():
    at = AppTest.from_function(_notes_script).run()
    assert not at.exception
    assert len(at.warning) == 1  # the data warnings: one box
    assert at.warning[0].value == (
        "- **a**: scores\\_v2.csv: 1 of 7 trials have a speaker who is not enrolled"
    )
    (box,) = at.expander
    assert box.label == "Model-fit notes (4): a, b, c"
    lines = box.markdown[0].value.splitlines()
    assert [x.split(":")[0] for x in lines] == [
        "- **a**",
        "- **b**",
        "- the LID calibration did not converge",
        "- **c**",
    ]
    assert "alpha \\-\\> 0" not in lines[0] and "alpha -\\> 0" in lines[0]
    assert not any("singling out" in x for x in lines)  # not the page's topic
