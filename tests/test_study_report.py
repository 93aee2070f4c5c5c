"""The study report (report.study) of the demo: its JSON, tables, settings, evaluators, errors."""

from __future__ import annotations

import dataclasses
import json

import pytest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study()


@pytest.fixture(scope="module")
def study_report(study):
    return build_study_report(study, bootstrap=50)


def test_study_report_json_has_every_number(study, study_report):
    d = json.loads(json.dumps(study_report.to_dict(), allow_nan=False))
    assert list(d["conditions"]) == study.names
    for r in study_report.reports:
        c = d["conditions"][r.name]
        assert c["eer"] == r.baseline.eer
        assert c["lid"]["lid_max"] == r.lid.lid_max
        assert c["lid"]["intervals"]["lid_max"] == [
            r.lid_intervals["lid_max"].low,
            r.lid_intervals["lid_max"].high,
        ]
        assert c["sbls"]["sbls"] == study_report.sbls[r.name].sbls
    assert [c["condition"] for c in d["threat_callouts"]] == ["anon-leaky"]
    # the settings used: the study's, with the override bootstrap=50
    assert d["settings"] == {
        "bootstrap": 50,
        "seed": 0,
        "cross_calibrate": None,
        "lid_variant": "reference-code",
        "ties": "reference",
        "linkability_rule": "code",
    }
    assert study.settings.bootstrap == 200
    assert set(d["report_card"]["thresholds"]) == set(REPORT_CARD_THRESHOLDS)


def test_study_report_tables(study, study_report):
    tables = study_report.tables()
    assert set(tables) == {
        "overview.csv",
        "report_card.csv",
        "report_card_levels.csv",
        "callout_worst_trials.csv",
        "lid_per_trial.csv",
        "verification.csv",
        "privacy_vs_utility.csv",  # the demo has utility numbers
        "voiceprivacy_ranking.csv",
        "utility_callouts.csv",
    }
    assert tables["verification.csv"]["Condition"].tolist() == study.names
    lid = tables["lid_per_trial.csv"]
    assert len(lid) == sum(c.eval.n_trials for c in study.conditions)
    worst = tables["callout_worst_trials.csv"]
    assert set(worst["condition"]) == {"anon-leaky"}
    assert list(worst.columns[:3]) == ["condition", "trial", "speaker"]


def test_study_report_uses_the_settings_and_reports_progress(study):
    from voxmetrics.data import StudySettings

    small = dataclasses.replace(
        demo_study(n_speakers=6), settings=StudySettings(bootstrap=0, seed=1)
    )
    seen = []
    sr = build_study_report(small, progress=lambda f, m: seen.append((f, m)))
    assert all(r.lid_intervals is None for r in sr.reports)
    assert seen[0] == (0.0, "Evaluating plain") and seen[-1] == (1.0, "Done")
    with_boot = build_study_report(small, bootstrap=20)
    assert all(r.lid_intervals is not None for r in with_boot.reports)


def test_study_report_through_given_evaluators_is_the_same_report():
    # the dashboard builds the report through its caches: same numbers, each condition
    # evaluated once with the study's options and each attacker trained once
    from voxmetrics.analysis.sbls import default_attack
    from voxmetrics.data import StudySettings

    small = dataclasses.replace(
        demo_study(n_speakers=6), settings=StudySettings(bootstrap=20, seed=2)
    )
    calls: list[tuple[str, dict]] = []
    attacked: list[str] = []

    def evaluator(cond, **options):
        calls.append((cond.name, options))
        return evaluate_condition(cond, **options)

    def attack_of(cond):
        attacked.append(cond.name)
        return default_attack(cond)

    direct = build_study_report(small)
    hooked = build_study_report(small, evaluator=evaluator, attack_of=attack_of)
    assert [name for name, _ in calls] == attacked == small.names
    assert all(options == small.settings.evaluate_options() for _, options in calls)
    a, b = direct.to_dict(), hooked.to_dict()
    a.pop("created"), b.pop("created")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert any(v is not None for v in hooked.sbls.values())
    # no attack: no SBLS, and the card says so
    none = build_study_report(small, attack_of=lambda cond: None)
    assert all(v is None for v in none.sbls.values()) and not none.sbls_intervals


def test_empty_study_report_is_a_clear_error():
    from voxmetrics.data import Study

    with pytest.raises(VoxMetricsInputError, match="no conditions"):
        build_study_report(Study())
