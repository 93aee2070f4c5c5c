"""The report card (voxmetrics.evaluation.card, issue 9): thresholds and levels, the demo's card,
the utility columns, and no "ok" cell where chance itself is uninformative (issue #27)."""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from separable_cases import DEV, EVAL

from voxmetrics.data.study import Condition
from voxmetrics.data.utility import Utility
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate, evaluate_condition, evaluate_study
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


@pytest.fixture(scope="module")
def demo_reports():
    return evaluate_study(demo_study(n_speakers=12), bootstrap=0)


@pytest.mark.parametrize(
    ("key", "value", "level"),
    [
        ("wer", 0.0999, "ok"),
        ("wer", 0.10, "caution"),
        ("wer", 0.2999, "caution"),
        ("wer", 0.30, "risk"),
        ("uar", 0.50, "ok"),
        ("uar", 0.4999, "caution"),
        ("uar", 0.35, "caution"),
        ("uar", 0.3499, "risk"),
    ],
)
def test_card_utility_boundaries(key, value, level):
    from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS

    assert REPORT_CARD_THRESHOLDS[key].level(value) == level


def test_card_utility_columns(demo_reports):
    from voxmetrics.evaluation.card import UTILITY_UNKNOWN, report_card

    card = report_card(demo_reports)
    text = card.frame("text").set_index("Condition")
    levels = card.frame("level").set_index("Condition")
    # random is private on every privacy column, but not for free
    assert levels.loc["random", "WER"] == "risk" and levels.loc["random", "UAR"] == "risk"
    assert text.loc["random", "WER"] == "0.850"
    assert levels.loc["plain", "WER"] == "ok"
    cond = demo_study(n_speakers=12).get("random")
    bare = evaluate_condition(Condition("bare", eval=cond.eval, dev=cond.dev))
    row = report_card([bare]).frame("text").iloc[0]
    assert row["WER"] == UTILITY_UNKNOWN and row["UAR"] == UTILITY_UNKNOWN
    assert report_card([bare]).frame("level").iloc[0]["WER"] == "n/a"
    with_iv = dataclasses.replace(bare, utility=Utility(wer=0.05, intervals={"wer": (0.04, 0.06)}))
    row = report_card([with_iv]).frame("text").iloc[0]
    assert row["WER"] == "0.050 [0.040, 0.060]" and row["UAR"] == UTILITY_UNKNOWN


def original_report(chance_q95: float | None = None):
    """The unprotected original at N = 5 (EER 0, linkability 1), its chance LID q95 set."""
    r = evaluate_original()
    if chance_q95 is None:
        return r
    values = {**r.chance.values, "lid_q95": chance_q95}
    return replace(r, chance=replace(r.chance, values=values))


@functools.cache
def evaluate_original():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate(EVAL, dev=DEV, name="original", attacker="original", bootstrap=200)


def test_the_original_is_unprotected():
    r = evaluate_original()
    assert r.baseline.eer == 0.0 and r.baseline.linkability == 1.0 and r.lid.n_enrolled == 5


@pytest.mark.parametrize("chance", [math.log2(5), math.log2(5) - 1e-6, 2.3185])
def test_no_ok_cell_for_an_unprotected_condition_whose_chance_sits_at_the_ceiling(chance):
    # with N = 5 and a steep calibration, chance LIDmax (its q95) reaches log2 N: the number
    # cannot tell this condition from chance, which says nothing about safety
    r = original_report(chance)
    card = report_card([r])
    levels = card.frame("level").loc[0].tolist()[1:]
    assert "ok" not in levels, levels
    lid_cell = card.cells[0][card.keys.index("lid_max")]
    assert lid_cell.level == "uninformative"
    assert "uninformative at N = 5" in lid_cell.text


def test_at_chance_is_uninformative_when_chance_is_in_the_risk_band():
    # not at the ceiling, but chance itself is above 1 bit: "≈ chance" is no evidence of safety
    iv = evaluate_original().intervals["lid_q95"]
    r = original_report(iv.low + 1e-9)
    assert iv.low + 1e-9 < math.log2(5) - 1e-3
    cell = report_card([r]).cells[0][1]
    assert cell.level == "uninformative" and "≈ chance" in cell.text
