"""The linkability rule through evaluate(), the study settings, the study file, report and CLI.

The rule itself (the authors' code: a tie is a link; the paper's strict eq. 3) is tested
against legal-eval v2 in ``tests/metrics/legal/test_linking.py``, whose re-typed reference
(``count_beaters``, ``linkability_exact``) these tests share. Left here: these are tests of
voxmetrics.evaluation, voxmetrics.data.study / studyfile, voxmetrics.report.html and the CLI,
whose test files other modules' owners keep.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.metrics.legal.legal_cases import count_beaters, linkability_exact
from voxmetrics.cli import main
from voxmetrics.data import ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate


def _matrix():
    s = np.array(
        [[0.9, 0.9, 0.1], [0.5, 0.6, 0.5], [0.3, 0.3, 0.3], [0.2, 0.8, 0.1], [0.7, 0.1, 0.2]]
    )
    return ScoreMatrix.from_arrays(
        s,
        trial_ids=list("vwxyz"),
        trial_speakers=list("abcaa"),
        enrol_speakers=list("abc"),
    )


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_evaluate_reports_the_rule_and_its_numbers(ties):
    sm = _matrix()
    for rule, strict in (("code", False), ("strict", True)):
        r = evaluate(sm, ties=ties, linkability_rule=rule, bootstrap=30).to_dict()
        beaters = count_beaters(sm.scores.T, sm.targets, strict=strict)
        assert r["linkability_rule"] == rule
        assert r["linkability"] == pytest.approx(linkability_exact(beaters, 3, 3))
        for n, value in r["linkability_vs_n"]:
            assert value == pytest.approx(linkability_exact(beaters, 3, n), abs=1e-3)
        assert r["intervals"]["linkability"][0] <= r["linkability"]
        assert r["linkability"] <= r["intervals"]["linkability"][1]
    with pytest.raises(VoxMetricsInputError, match="linkability_rule"):
        evaluate(sm, linkability_rule="paper")


def test_study_settings_carry_the_rule():
    assert StudySettings().linkability_rule == "code"
    assert StudySettings.from_dict({"bootstrap": 0}).linkability_rule == "code"  # older files
    s = StudySettings(linkability_rule="strict")
    assert StudySettings.from_dict(s.to_dict()) == s
    assert s.evaluate_options()["linkability_rule"] == "strict"
    with pytest.raises(VoxMetricsInputError, match="linkability_rule"):
        StudySettings(linkability_rule="paper")


def test_study_file_report_and_cli(tmp_path, capsys):
    from voxmetrics.data.studyfile import load_study, save_study
    from voxmetrics.report.html import linkability_rule_note

    study = Study(
        [Condition("plain", eval=_matrix())],
        settings=StudySettings(bootstrap=0, linkability_rule="strict"),
    )
    path = save_study(study, tmp_path / "s.vxm")
    assert load_study(path).settings.linkability_rule == "strict"
    assert "strictly highest" in linkability_rule_note("strict")
    assert "counting as a link" in linkability_rule_note("code")
    # evaluate --linkability-rule strict
    csv = tmp_path / "scores.csv"
    _matrix().to_long_frame().to_csv(csv, index=False)
    for rule, expected in (("code", 0.8), ("strict", 0.4)):
        assert main(["evaluate", str(csv), "--linkability-rule", rule]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["linkability_rule"], out["linkability"]) == (rule, pytest.approx(expected))
