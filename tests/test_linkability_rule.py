"""The linkability rule: the authors' code (a tie is a link) or the paper's strict eq. 3.

``_count_beaters`` and ``_linkability_exact`` re-type ``count_beaters`` and
``linkability(..., estimator="exact")`` / ``_success_probability`` of the file
``legal_eval/metrics/linkability.py`` of legal-eval v2 (the public code of Vauquier et al.
2025). Their score matrix is enrolment x test (the transpose of VoxMetrics'), one test column
per trial; the code counts as beaters the enrolled speakers scoring *strictly* above the true
one, so a tie is a link. The strict rule (the paper's eq. 3) counts ``>=`` instead (the true
speaker's own entry left out).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from voxmetrics.cli import main
from voxmetrics.data import ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate
from voxmetrics.metrics.legal import linkability, linkability_curve, linkability_grid
from voxmetrics.metrics.srd import srd


def _count_beaters(enrol_by_test, true_rows, *, strict=False):
    """legal-eval v2 ``count_beaters``: per test column, enrolled speakers above the true one."""
    n_columns = enrol_by_test.shape[1]
    true_scores = enrol_by_test[true_rows, np.arange(n_columns)]
    if not strict:  # the code: only strictly higher scores beat the true speaker
        return np.count_nonzero(enrol_by_test > true_scores[np.newaxis, :], axis=0)
    # the paper's eq. 3: a tie beats it too (the true speaker's own entry left out)
    return np.count_nonzero(enrol_by_test >= true_scores[np.newaxis, :], axis=0) - 1


def _linkability_exact(beaters, n_enroll_total, n_enroll_speakers):
    """legal-eval v2 ``linkability(..., estimator="exact")`` via ``_success_probability``."""
    n_others = n_enroll_total - 1
    n_sampled = n_enroll_speakers - 1
    if n_sampled == 0:
        return 1.0
    good = n_others - beaters.astype(np.float64)
    with np.errstate(invalid="ignore"):
        log_p = (
            gammaln(good + 1.0)
            - gammaln(good - n_sampled + 1.0)
            - gammaln(n_others + 1.0)
            + gammaln(n_others - n_sampled + 1.0)
        )
    return float(np.mean(np.where(good >= n_sampled, np.exp(log_p), 0.0)))


@st.composite
def tied_matrices(draw):
    n_t = draw(st.integers(1, 12))
    n_e = draw(st.integers(2, 7))
    hi = draw(st.integers(0, 4))  # few values: many ties with the true speaker
    s = np.array(
        draw(st.lists(st.integers(0, hi), min_size=n_t * n_e, max_size=n_t * n_e)), float
    ).reshape(n_t, n_e)
    t = np.array(draw(st.lists(st.integers(0, n_e - 1), min_size=n_t, max_size=n_t)))
    return s, t


@settings(max_examples=150, deadline=None)
@given(tied_matrices())
def test_both_rules_equal_legal_eval_v2(data):
    s, t = data
    n_e = s.shape[1]
    for rule, strict in (("code", False), ("strict", True)):
        beaters = _count_beaters(s.T, t, strict=strict)
        assert linkability(s, t, rule=rule) == pytest.approx(
            _linkability_exact(beaters, n_e, n_e), abs=1e-12
        )
        curve = linkability_curve(s, t, rule=rule)
        assert curve.n.tolist() == linkability_grid(n_e).tolist()
        expected = [_linkability_exact(beaters, n_e, int(m)) for m in curve.n]
        np.testing.assert_allclose(curve.expected, expected, rtol=1e-9, atol=1e-12)
        for ties in ("reference", "attacker"):  # the tie rule of the pooled metrics: no effect
            assert linkability(s, t, ties=ties, rule=rule) == linkability(s, t, rule=rule)
    # the strict rule is SRD's identification rate (ties against the true speaker)
    assert linkability(s, t, rule="strict") == pytest.approx(srd(s, t).stats.idr, abs=1e-12)
    assert linkability(s, t, rule="strict") <= linkability(s, t)


def test_a_tie_for_the_top_score_under_each_rule():
    s = [[0.9, 0.9, 0.1], [0.2, 0.8, 0.1], [0.5, 0.5, 0.5]]
    assert linkability(s, [0, 1, 2]) == 1.0  # the code: every tie is a link
    assert linkability(s, [0, 1, 2], rule="strict") == pytest.approx(1 / 3)
    with pytest.raises(VoxMetricsInputError, match="linkability_rule"):
        linkability(s, [0, 1, 2], rule="paper")


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
        beaters = _count_beaters(sm.scores.T, sm.targets, strict=strict)
        assert r["linkability_rule"] == rule
        assert r["linkability"] == pytest.approx(_linkability_exact(beaters, 3, 3))
        for n, value in r["linkability_vs_n"]:
            assert value == pytest.approx(_linkability_exact(beaters, 3, n), abs=1e-3)
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
