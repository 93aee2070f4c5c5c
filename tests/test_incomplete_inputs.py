"""Incomplete score files read as asked for: counted and warned in the JSON, the reports
(``evaluate --html``, the study report), the ``.vxm`` file and the dashboard's Data page.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.cli import main
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.studyfile import manifest_problems, study_from_bytes, study_to_bytes
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.report.html import report_html, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.uploads import condition_from_score_files

T, N = 6, 8
SPK = [f"s{j}" for j in range(N)]
LEFT_OUT = "19 pair(s) are left out"


def _cut_kaldi() -> tuple[bytes, bytes]:
    """Kaldi scores cut at 29 of their 48 lines, and their complete key."""
    rng = np.random.default_rng(7)
    scores, key = [], []
    for e in SPK:
        for i in range(T):
            own = SPK[i % N] == e
            scores.append(f"{e} t{i} {rng.normal() + 3 * own:.4f}\n")
            key.append(f"{e} t{i} {'target' if own else 'nontarget'}\n")
    return "".join(scores[:29]).encode(), "".join(key).encode()


@dataclass
class _Upload:
    name: str
    data: bytes

    def getvalue(self) -> bytes:
        return self.data


def _condition(name: str = "cut") -> Condition:
    scores, key = _cut_kaldi()
    with pytest.warns(IncompleteScoresWarning, match=r"19 pair\(s\) are left out"):
        return condition_from_score_files(
            name,
            _Upload("scores", scores),
            eval_trials=_Upload("trials", key),
            allow_incomplete=True,
        )


def test_an_upload_is_refused_unless_asked_and_then_carries_its_warnings():
    scores, key = _cut_kaldi()
    with pytest.raises(VoxMetricsInputError, match="have no score"):
        condition_from_score_files(
            "cut", _Upload("scores", scores), eval_trials=_Upload("trials", key)
        )
    cond = _condition()
    assert len(cond.input_warnings) == 1 and LEFT_OUT in cond.input_warnings[0]
    again = _condition()  # the second read comes from the store: the same warnings
    assert again.input_warnings == cond.input_warnings


def test_input_warnings_reach_the_json_and_survive_the_study_file():
    cond = _condition()
    report = evaluate_condition(cond)
    assert report.to_dict()["input_warnings"] == list(cond.input_warnings)
    plain = demo_study(n_speakers=6).conditions[0]
    assert "input_warnings" not in evaluate_condition(plain).to_dict()
    back = study_from_bytes(study_to_bytes(Study((plain, cond))))
    assert back.get("cut").input_warnings == cond.input_warnings
    assert back.get(plain.name).input_warnings == ()
    problems = manifest_problems(
        {"conditions": [{"name": "x", "eval": None, "input_warnings": "not a list"}]}
    )
    assert "conditions[0].input_warnings must be a list of texts" in problems


def test_the_study_report_shows_them_with_the_condition_name():
    plain = demo_study(n_speakers=6).conditions[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(Study((plain, _condition("cut <b>"))), bootstrap=0)
    assert LEFT_OUT in sr.to_dict()["conditions"]["cut <b>"]["input_warnings"][0]
    page = study_report_html(sr)
    assert 'id="input-warnings"' in page and "<b>cut &lt;b&gt;</b>: trials: 19 of" in page
    assert LEFT_OUT in page
    clean = study_report_html(build_study_report(Study((plain,)), bootstrap=0))
    assert 'id="input-warnings"' not in clean
    assert 'id="input-warnings"' in report_html([evaluate_condition(_condition())])


def test_evaluate_html_shows_the_pairs_left_out(tmp_path, capsys):
    scores, key = _cut_kaldi()
    (tmp_path / "scores").write_bytes(scores)
    (tmp_path / "trials").write_bytes(key)
    out, js = tmp_path / "r.html", tmp_path / "r.json"
    args = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "trials")]
    assert main([*args, "--allow-incomplete", "--html", str(out), "--json", str(js)]) == 0
    assert LEFT_OUT in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert 'id="input-warnings"' in page and LEFT_OUT in page
    assert LEFT_OUT in json.loads(js.read_text())["input_warnings"][0]


@pytest.mark.usefixtures("fresh_app_caches")
def test_the_data_page_box_is_off_by_default_and_names_the_condition():
    scores, key = _cut_kaldi()
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.run()
    at.switch_page("pages/2_Data.py").run()
    at.selectbox(key="vm_data_condition").select("➕ New condition").run()
    at.text_input(key="vm_data_new_name").input("cutcond").run()
    at.file_uploader(key="vm_eval_file").set_value(("scores", scores, "text/plain"))
    at.file_uploader(key="vm_eval_key").set_value(("trials", key, "text/plain"))
    assert at.checkbox(key="vm_allow_incomplete").value is False
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "have no score" in at.error[0].value
    assert "cutcond" not in at.session_state[STUDY_KEY].names
    at.checkbox(key="vm_allow_incomplete").check().run()
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    assert at.session_state[STUDY_KEY].get("cutcond").input_warnings
    shown = " ".join(w.value for w in at.warning)
    assert "cutcond" in shown and "19 pair(s) are left out" in shown.replace("\\", "")
