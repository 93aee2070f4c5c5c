"""The SRD-only report: every number equal to the full report's (ties included)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from condition_cases import incomplete, sparse, tied

from voxmetrics.analysis.srd import CHANCE_KEYS, condition_fits
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.srd import (
    SRD_OPTIONS,
    SRD_REPLICATE_KEYS,
    SRDReport,
    evaluate_srd,
    evaluate_srd_condition,
)
from voxmetrics.evaluation.steps import options_among
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.uncertainty import SpeakerDraws, condition_replicates, one_to_n_replicates
from voxmetrics.report import intervals_frame
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=24, seed=3)


def _same_floats(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_same_srd(ours: SRDReport, full):
    """Every number of ``ours`` equals the full report's, bit for bit."""
    b, fb = ours.baseline, full.baseline
    assert (b.n_trials, b.n_enrolled, b.eer, b.linkability) == (
        fb.n_trials,
        fb.n_enrolled,
        fb.eer,
        fb.linkability,
    )
    if full.srd is None:
        assert ours.srd is None and ours.srd_model is None and ours.chance is None
    else:
        assert ours.srd.to_dict() == full.srd.to_dict()
        _same_floats(ours.srd.histogram, full.srd.histogram)
        _same_floats(ours.srd.distribution, full.srd.distribution)
        assert ours.srd_model.to_dict() == full.srd_model.to_dict()
        assert (ours.srd_model.alpha, ours.srd_model.beta) == (
            full.srd_model.alpha,
            full.srd_model.beta,
        )
        for key in ("linkability", *CHANCE_KEYS):
            if key in full.chance.values:
                assert ours.chance.values[key] == full.chance.values[key], key
        _same_floats(ours.chance.curve, full.chance.curve)
    if full.replicates is None:
        assert ours.replicates is None and ours.intervals == {}
    else:
        for key in SRD_REPLICATE_KEYS:
            assert ours.intervals.get(key) == full.intervals.get(key), key
            if key in full.replicates.reps:
                _same_floats(ours.replicates.reps[key], full.replicates.reps[key])
                assert ours.replicates.estimates[key] == full.replicates.estimates[key]
        _same_floats(ours.replicates.curve_reps, full.replicates.curve_reps)
    # the page's tables: the same rows from either
    pd.testing.assert_frame_equal(
        intervals_frame([ours], keys=CHANCE_KEYS), intervals_frame([full], keys=CHANCE_KEYS)
    )
    if full.srd is not None:
        losses = ("LL", "CLL", "MS")
        assert [f.to_dict() for f in _quiet(condition_fits, ours, losses)] == [
            f.to_dict() for f in _quiet(condition_fits, full, losses)
        ]


@pytest.mark.parametrize("bootstrap", [0, 40])
def test_srd_report_equals_the_full_report_on_the_demo(study, bootstrap):
    for cond in study.conditions:
        options = {"bootstrap": bootstrap, "seed": 5}
        ours = _quiet(evaluate_srd_condition, cond, **options)
        full = _quiet(evaluate_condition, cond, **options)
        assert ours.name == cond.name and ours.attacker == cond.attacker
        assert ours.lid is None and ours.zebra is None and ours.singling_out is None
        assert_same_srd(ours, full)
        assert_same_srd(SRDReport.of(full), full)
        assert ours.to_dict() == SRDReport.of(full).to_dict()


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
def test_srd_report_equals_the_full_report_with_many_ties(study, ties, rule):
    # scores rounded to one decimal: mated scores tie with non-mated ones, many ranks tie
    cond = tied(study.get("anon-mild"), 1)
    options = {"bootstrap": 30, "seed": 2, "ties": ties, "linkability_rule": rule}
    full = _quiet(evaluate_condition, cond, **options)
    assert full.baseline.linkability not in (0.0, 1.0)
    ours = _quiet(evaluate_srd_condition, cond, **options)
    assert_same_srd(ours, full)
    assert ours.to_dict() == SRDReport.of(full).to_dict()


def test_srd_report_equals_the_full_report_on_a_sparse_trial_list(study):
    sm = study.get("plain").eval
    cond = sparse(study.get("plain"))  # 40 % of the trials miss a non-mated pair
    assert cond.eval.mask is not None
    options = {"bootstrap": 25, "seed": 1}
    ours = _quiet(evaluate_srd_condition, cond, **options)
    full = _quiet(evaluate_condition, cond, **options)
    assert ours.srd is not None and ours.srd.n_trials < sm.n_trials
    assert_same_srd(ours, full)


def test_srd_report_without_complete_trials_has_no_srd(study):
    cond = incomplete(study.get("plain"))
    options = {"bootstrap": 10, "seed": 0}
    ours = _quiet(evaluate_srd_condition, cond, **options)
    full = _quiet(evaluate_condition, cond, **options)
    assert ours.srd is None and ours.baseline.linkability is None
    assert ours.intervals.get("mean_d") is None
    assert_same_srd(ours, full)


def test_one_to_n_replicates_equal_those_of_every_number():
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=(40, 12)), 1)
    targets = rng.integers(0, 12, size=40)
    speakers = np.array([f"s{v}" for v in rng.integers(0, 9, size=40)])
    draws = SpeakerDraws.draw(speakers, n_boot=30, seed=4)
    every = condition_replicates(scores, targets, speakers, draws)
    ranks = (
        target_ranks(scores, targets, ties="attacker"),
        target_ranks(scores, targets, ties="reference"),
    )
    alone = one_to_n_replicates(12, speakers, draws, ranks=ranks)
    assert set(alone.estimates) == set(SRD_REPLICATE_KEYS)
    for key in SRD_REPLICATE_KEYS:
        assert alone.estimates[key] == every.estimates[key]
        _same_floats(alone.reps[key], every.reps[key])
        assert alone.intervals()[key] == every.intervals()[key]
    _same_floats(alone.curve_reps, every.curve_reps)


def test_one_to_n_replicates_refuse_bad_input():
    draws = SpeakerDraws.draw(["a", "b"], n_boot=3)
    with pytest.raises(VoxMetricsInputError, match="one speaker per ranked trial"):
        one_to_n_replicates(3, ["a", "b"], draws, ranks=(np.array([1, 1, 2]),) * 2)


def test_srd_options_keep_what_the_numbers_depend_on(study):
    options = study.settings.evaluate_options()
    kept = options_among(options, SRD_OPTIONS)
    assert set(kept) == set(SRD_OPTIONS) & set(options)
    assert "lid_variant" not in kept and "cross_calibrate" not in kept


def test_evaluate_srd_reports_progress_and_refuses_bad_options(study):
    seen = []
    _quiet(evaluate_srd, study.get("plain").eval, progress=lambda f, m: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    with pytest.raises(VoxMetricsInputError):
        evaluate_srd(study.get("plain").eval, ties="nobody")
    with pytest.raises(VoxMetricsInputError):
        evaluate_srd(study.get("plain").eval, linkability_rule="loose")
