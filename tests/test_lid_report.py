"""The identity numbers alone (``evaluate_lid_report``): equal to the full report's, bit for bit.

The Threat model and Soft biometrics pages read a condition's baseline (EER, linkability), its
LID and its target ranks; they now compute these alone instead of the whole report (SRD fits,
ZEBRA, singling out, the bootstrap). The reference is the full report itself
(:meth:`LIDReport.of`), on complete, sparse, tied and incomplete trial lists, under both tie
rules, both linkability rules, both LID variants and cross-calibration.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from condition_cases import incomplete, sparse, tied

from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.lid import (
    LID_REPORT_OPTIONS,
    LIDReport,
    evaluate_lid_condition,
    evaluate_lid_report,
)
from voxmetrics.evaluation.steps import options_among
from voxmetrics.evaluation.threat import checked_conditions, threat_callouts
from voxmetrics.synth import demo_study


def assert_same(alone: LIDReport, full: LIDReport) -> None:
    """Every number of two LID reports equal (``==``; arrays element by element)."""
    assert alone.to_dict() == full.to_dict()
    assert alone.baseline == full.baseline
    if full.ranks is None:
        assert alone.ranks is None
    else:
        np.testing.assert_array_equal(alone.ranks, full.ranks)
    if full.lid is None:
        assert alone.lid is None
    else:
        for f in ("lid", "p_target", "rank"):
            np.testing.assert_array_equal(getattr(alone.lid, f), getattr(full.lid, f))
        assert alone.lid.calibration == full.lid.calibration
        assert alone.lid.fold_w == full.lid.fold_w
    assert (alone.chance is None) == (full.chance is None)
    if full.chance is not None:
        assert alone.chance.values == full.chance.values
    assert (alone.name, alone.attacker, alone.ties, alone.linkability_rule) == (
        full.name,
        full.attacker,
        full.ties,
        full.linkability_rule,
    )


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study(n_speakers=10)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
def test_equals_the_full_report_on_every_demo_condition(demo, ties, rule):
    for cond in demo.conditions:
        options = {"ties": ties, "linkability_rule": rule}
        full = LIDReport.of(evaluate_condition(cond, bootstrap=20, **options))
        assert_same(evaluate_lid_condition(cond, **options), full)


@pytest.mark.parametrize("variant", ["reference-code", "maximum-likelihood"])
def test_equals_the_full_report_under_each_lid_variant(demo, variant):
    cond = demo.get("anon-leaky")
    full = LIDReport.of(evaluate_condition(cond, lid_variant=variant))
    assert_same(evaluate_lid_condition(cond, lid_variant=variant), full)


def test_cross_calibrated_without_dev_equals_the_full_report(demo):
    cond = dataclasses.replace(demo.get("anon-mild"), dev=None)
    for k in (None, 3):
        options = {"cross_calibrate": k, "seed": 7}
        alone = evaluate_lid_condition(cond, **options)
        assert_same(alone, LIDReport.of(evaluate_condition(cond, **options)))
        assert (alone.lid is None) == (k is None)


@pytest.mark.parametrize(
    "make",
    [
        lambda c: tied(c, 1, keep_dev=True),
        lambda c: tied(c, 2),
        lambda c: sparse(c),
        lambda c: incomplete(c),
    ],
    ids=["tied-with-dev", "tied", "sparse", "incomplete"],
)
@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_equals_the_full_report_on_tied_sparse_and_incomplete_lists(demo, make, ties):
    cond = make(demo.get("anon-leaky"))
    alone = evaluate_lid_condition(cond, ties=ties, cross_calibrate=3)
    assert_same(alone, LIDReport.of(evaluate_condition(cond, ties=ties, cross_calibrate=3)))
    if not cond.eval.is_complete and cond.eval.complete_rows() is None:
        assert alone.ranks is None and alone.lid is None and alone.baseline.linkability is None


def test_callouts_read_lid_reports_as_full_reports(demo):
    full = [evaluate_condition(c) for c in demo.conditions]
    alone = [evaluate_lid_condition(c) for c in demo.conditions]
    a, b = (
        threat_callouts(demo, alone, lid_max_min=0.0),
        threat_callouts(demo, full, lid_max_min=0.0),
    )
    assert [c.to_dict() for c in a] == [c.to_dict() for c in b]
    assert a, "the thresholds above call out at least one condition"
    assert checked_conditions(alone, a).equals(checked_conditions(full, b))


def test_options_keep_what_the_numbers_depend_on():
    every = Study().settings.evaluate_options()
    kept = options_among(every, LID_REPORT_OPTIONS)
    assert "bootstrap" in every and "bootstrap" not in kept
    assert set(kept) == {"cross_calibrate", "lid_variant", "seed", "ties", "linkability_rule"}


def test_bad_options_are_refused_before_any_work(demo):
    from voxmetrics.errors import VoxMetricsInputError

    cond = demo.get("plain")
    with pytest.raises(VoxMetricsInputError, match="ties"):
        evaluate_lid_report(cond.eval, ties="sometimes")
    with pytest.raises(VoxMetricsInputError):
        evaluate_lid_report(cond.eval, linkability_rule="loose")
    with pytest.raises(VoxMetricsInputError):  # dev speakers must not be eval speakers
        evaluate_lid_report(cond.eval, dev=cond.eval)


def test_progress_is_told_start_and_end(demo):
    seen: list[float] = []
    evaluate_lid_condition(
        Condition("x", eval=demo.get("plain").eval), progress=lambda f, m: seen.append(f)
    )
    assert seen == [0.0, 1.0]
