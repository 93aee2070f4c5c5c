"""The linkage-only report: every number equal to the full report's (ties included)."""

from __future__ import annotations

import numpy as np
import pytest
from condition_cases import incomplete, sparse, tied

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.linkage import (
    LINKAGE_OPTIONS,
    LinkageReport,
    evaluate_linkage,
    evaluate_linkage_condition,
)
from voxmetrics.evaluation.steps import options_among
from voxmetrics.metrics.uncertainty import (
    SpeakerDraws,
    condition_replicates,
    linkability_replicates,
)
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=24, seed=3)


def _same_floats(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


def assert_same_linkage(ours: LinkageReport, full):
    """Every number of ``ours`` equals the full report's, bit for bit."""
    b, fb = ours.baseline, full.baseline
    assert (b.n_trials, b.n_enrolled, b.eer, b.linkability) == (
        fb.n_trials,
        fb.n_enrolled,
        fb.eer,
        fb.linkability,
    )
    assert b.chance_linkability == fb.chance_linkability
    if full.linkability_curve is None:
        assert ours.linkability_curve is None
    else:
        for f in ("n", "expected", "chance"):
            _same_floats(getattr(ours.linkability_curve, f), getattr(full.linkability_curve, f))
    if full.singling_out is None:
        assert ours.singling_out is None
    else:
        assert ours.singling_out.to_dict() == full.singling_out.to_dict()
        _same_floats(ours.singling_out.per_predicate, full.singling_out.per_predicate)
    assert ours.singling_out_interval == full.singling_out_interval
    if full.replicates is None:
        assert ours.replicates is None and ours.intervals == {}
    else:
        assert ours.intervals.get("linkability") == full.intervals.get("linkability")
        _same_floats(ours.replicates.curve_band(), full.replicates.curve_band())
        _same_floats(ours.replicates.curve_reps, full.replicates.curve_reps)
        if "linkability" in full.replicates.reps:
            _same_floats(ours.replicates.reps["linkability"], full.replicates.reps["linkability"])
    # the JSON: the same values under the same keys
    mine, theirs = ours.to_dict(), full.to_dict()
    for key in ("n_trials", "n_enrolled", "eer", "linkability", "linkability_vs_n"):
        assert mine[key] == theirs[key], key
    assert mine["singling_out"] == theirs["singling_out"]
    if theirs["intervals"] is None:
        assert mine["intervals"] is None
    else:
        for key in ("linkability", "linkability_vs_n", "singling_out"):
            assert mine["intervals"].get(key) == theirs["intervals"].get(key), key


@pytest.mark.parametrize("bootstrap", [0, 40])
def test_linkage_report_equals_the_full_report_on_the_demo(study, bootstrap):
    for cond in study.conditions:
        options = {"bootstrap": bootstrap, "seed": 5}
        ours = evaluate_linkage_condition(cond, **options)
        full = evaluate_condition(cond, **options)
        assert ours.name == cond.name and ours.attacker == cond.attacker
        assert ours.singling_out is not None  # the demo has embeddings
        assert_same_linkage(ours, full)
        assert_same_linkage(LinkageReport.of(full), full)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
def test_linkage_report_equals_the_full_report_with_many_ties(study, ties, rule):
    # scores rounded to one decimal: mated scores tie with non-mated ones, many ranks tie
    cond = tied(study.get("anon-mild"), 1)
    options = {"bootstrap": 30, "seed": 2, "ties": ties, "linkability_rule": rule}
    full = evaluate_condition(cond, **options)
    assert full.baseline.linkability not in (0.0, 1.0)
    assert_same_linkage(evaluate_linkage_condition(cond, **options), full)


def test_linkage_report_equals_the_full_report_on_a_sparse_trial_list(study):
    cond = sparse(study.get("plain"))  # 40 % of the trials miss a non-mated pair
    assert cond.eval.mask is not None
    options = {"bootstrap": 25, "seed": 1}
    assert_same_linkage(
        evaluate_linkage_condition(cond, **options), evaluate_condition(cond, **options)
    )


def test_linkage_report_without_complete_trials_has_no_linkability(study):
    cond = incomplete(study.get("plain"))
    options = {"bootstrap": 10, "seed": 0}
    ours = evaluate_linkage_condition(cond, **options)
    full = evaluate_condition(cond, **options)
    assert ours.baseline.linkability is None and ours.linkability_curve is None
    assert ours.intervals.get("linkability") is None
    assert_same_linkage(ours, full)


def test_linkability_replicates_equal_those_of_every_number():
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=(40, 12)), 1)
    targets = rng.integers(0, 12, size=40)
    speakers = np.array([f"s{v}" for v in rng.integers(0, 9, size=40)])
    draws = SpeakerDraws.draw(speakers, n_boot=30, seed=4)
    every = condition_replicates(scores, targets, speakers, draws)
    from voxmetrics.metrics.ranks import target_ranks

    ranks = target_ranks(scores, targets, ties="attacker")
    alone = linkability_replicates(ranks, 12, speakers, draws)
    assert alone.estimates == {"linkability": every.estimates["linkability"]}
    _same_floats(alone.reps["linkability"], every.reps["linkability"])
    _same_floats(alone.curve_reps, every.curve_reps)
    _same_floats(alone.curve_band(), every.curve_band())
    assert alone.intervals()["linkability"] == every.intervals()["linkability"]


def test_linkability_replicates_refuse_bad_input():
    draws = SpeakerDraws.draw(["a", "b"], n_boot=3)
    with pytest.raises(VoxMetricsInputError, match="one speaker per trial"):
        linkability_replicates([1, 1, 2], 3, ["a", "b"], draws)
    with pytest.raises(VoxMetricsInputError, match="target ranks"):
        linkability_replicates([1, 4], 3, ["a", "b"], draws)


def test_linkage_options_keep_what_the_numbers_depend_on(study):
    options = study.settings.evaluate_options()
    kept = options_among(options, LINKAGE_OPTIONS)
    assert set(kept) == set(LINKAGE_OPTIONS) & set(options)
    assert "lid_variant" not in kept and "cross_calibrate" not in kept


def test_evaluate_linkage_reports_progress_and_refuses_bad_options(study):
    seen = []
    evaluate_linkage(study.get("plain").eval, progress=lambda f, m: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(VoxMetricsInputError):
        evaluate_linkage(study.get("plain").eval, ties="nobody")
    with pytest.raises(VoxMetricsInputError):
        evaluate_linkage(study.get("plain").eval, linkability_rule="loose")
