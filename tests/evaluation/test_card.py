"""The report card and the study report (issue 9): thresholds, levels, JSON and CSVs."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.card import LEVELS, REPORT_CARD_THRESHOLDS, ZEBRA_TAGS, report_card
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study()


@pytest.fixture(scope="module")
def study_report(study):
    return build_study_report(study, bootstrap=50)


# (metric, value, expected level): the boundaries documented in voxmetrics/evaluation/card.py
BOUNDARIES = [
    ("eer", 0.50, "ok"),
    ("eer", 0.45, "ok"),
    ("eer", 0.4499, "caution"),
    ("eer", 0.30, "caution"),
    ("eer", 0.2999, "risk"),
    ("lid_max", 0.0, "ok"),
    ("lid_max", 0.4999, "ok"),
    ("lid_max", 0.5, "caution"),
    ("lid_max", 0.9999, "caution"),
    ("lid_max", 1.0, "risk"),
    ("zebra_tag", ZEBRA_TAGS.index("0"), "ok"),
    ("zebra_tag", ZEBRA_TAGS.index("A"), "ok"),
    ("zebra_tag", ZEBRA_TAGS.index("B"), "caution"),
    ("zebra_tag", ZEBRA_TAGS.index("C"), "caution"),
    ("zebra_tag", ZEBRA_TAGS.index("D"), "risk"),
    ("zebra_tag", ZEBRA_TAGS.index("F"), "risk"),
    ("linkability_ratio", 1.0, "ok"),
    ("linkability_ratio", 1.5, "ok"),
    ("linkability_ratio", 1.5001, "caution"),
    ("linkability_ratio", 2.0, "caution"),
    ("linkability_ratio", 2.0001, "risk"),
    ("sbls", 0.9, "ok"),
    ("sbls", 0.8999, "caution"),
    ("sbls", 0.75, "caution"),
    ("sbls", 0.7499, "risk"),
    ("sbls", None, "n/a"),
    ("eer", math.nan, "n/a"),
]


@pytest.mark.parametrize(("key", "value", "level"), BOUNDARIES)
def test_documented_boundaries(key, value, level):
    assert REPORT_CARD_THRESHOLDS[key].level(value) == level


@given(st.sampled_from(list(REPORT_CARD_THRESHOLDS)), st.floats(-10, 10), st.floats(0, 5))
def test_levels_are_monotone_in_the_metric(key, a, delta):
    """Moving a metric towards less privacy never gives a safer level."""
    t = REPORT_CARD_THRESHOLDS[key]
    worse = a - delta if t.higher_is_safer else a + delta
    assert LEVELS.index(t.level(worse)) >= LEVELS.index(t.level(a))


def test_card_of_the_demo_study(study, study_report):
    card = study_report.card
    levels = card.frame("level").set_index("Condition")
    values = card.frame("value").set_index("Condition")
    assert list(levels.index) == study.names
    # anon-leaky: near-chance EER, yet its worst trial and its linkage are flagged
    assert levels.loc["anon-leaky", "EER"] == "ok"
    assert levels.loc["anon-leaky", "LIDmax (bits)"] == "risk"
    assert levels.loc["anon-leaky", "Linkability vs chance"] == "risk"
    assert levels.loc["plain", "EER"] == "risk"
    # the values are the library's numbers
    leaky = next(r for r in study_report.reports if r.name == "anon-leaky")
    assert values.loc["anon-leaky", "EER"] == leaky.baseline.eer
    assert values.loc["anon-leaky", "LIDmax (bits)"] == leaky.lid.lid_max
    assert values.loc["anon-leaky", "Linkability vs chance"] == pytest.approx(
        leaky.baseline.linkability * leaky.baseline.n_enrolled
    )
    assert values.loc["anon-leaky", "ZEBRA tag"] == leaky.zebra.tag
    iv = leaky.lid_intervals["lid_q95"]
    assert (
        f"q95 {iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"
        in (card.frame("text").iloc[4]["LIDmax (bits)"])
    )
    assert leaky.lid_intervals["lid_max"].low is None  # a maximum has no percentile interval
    # SBLS of every demo condition (they all have labelled embeddings)
    assert values["SBLS"].notna().all()
    assert values.loc["anon-leaky", "SBLS"] == study_report.sbls["anon-leaky"].sbls


def test_card_without_lid_or_sbls_says_not_available(study):
    reports = evaluate_study(study.without("plain"), bootstrap=0)
    no_lid = [dataclasses.replace(r, lid=None) for r in reports]
    levels = report_card(no_lid).frame("level")
    assert (levels["LIDmax (bits)"] == "n/a").all()
    assert (levels["SBLS"] == "n/a").all()
    assert report_card(no_lid).frame("text")["LIDmax (bits)"].str.contains("no dev").all()


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
    from voxmetrics.evaluation import evaluate_condition

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
    from voxmetrics.errors import VoxMetricsInputError

    with pytest.raises(VoxMetricsInputError, match="no conditions"):
        build_study_report(Study())
