"""``evaluate(parts=...)``: each part's numbers equal the full report's, bit for bit.

A page that shows fewer numbers asks the engine for fewer parts (the LID, Threat model and
Soft biometrics pages the identity parts, the SRD, Linkage and ZEBRA pages theirs). The
reference is the full report itself, on complete, sparse, tied and incomplete trial lists,
under both tie rules, both linkability rules, both LID variants and cross-calibration, with
and without the bootstrap. The fields of the parts not asked for are None.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from condition_cases import incomplete, sparse, tied

from voxmetrics.analysis.srd import CHANCE_KEYS, condition_fits
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import (
    ALL_PARTS,
    PARTS,
    EvaluationOptions,
    check_parts,
    evaluate,
    evaluate_condition,
)
from voxmetrics.evaluation.threat import IDENTITY_PARTS, checked_conditions, threat_callouts
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.uncertainty import (
    REPLICATE_FAMILIES,
    SpeakerDraws,
    condition_replicates,
)
from voxmetrics.report import intervals_frame
from voxmetrics.synth import demo_study

PAGE_PARTS = {
    "identity": IDENTITY_PARTS,  # LID, Threat model, Soft biometrics pages
    "srd": ("linkability", "srd"),  # SRD page
    "linkage": ("linkability", "singling_out"),  # Linkage page
    "zebra": ("zebra",),  # ZEBRA page
}
ONE_PART = {name: (name,) for name in PARTS}


def _same_floats(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_part_of(ours, full):
    """Every number of ``ours`` equals ``full``'s; those outside its parts are None."""
    parts = ours.parts
    assert full.parts == ALL_PARTS
    b, fb = ours.baseline, full.baseline
    assert (b.n_trials, b.n_enrolled, b.eer, b.eer_threshold) == (
        fb.n_trials,
        fb.n_enrolled,
        fb.eer,
        fb.eer_threshold,
    )
    pairwise = (b.eer_rocch, b.cllr, b.min_cllr)
    if "pairwise" in parts:
        assert pairwise == (fb.eer_rocch, fb.cllr, fb.min_cllr)
    else:
        assert pairwise == (None, None, None)
    assert ours.trials_used == full.trials_used
    assert b.linkability == (fb.linkability if "linkability" in parts else None)
    if "linkability" in parts and full.linkability_curve is not None:
        for f in ("n", "expected", "chance"):
            _same_floats(getattr(ours.linkability_curve, f), getattr(full.linkability_curve, f))
    else:
        assert ours.linkability_curve is None
    for part, field in (("zebra", "zebra"), ("verification", "verification")):
        if part in parts:
            assert getattr(ours, field).to_dict() == getattr(full, field).to_dict()
        else:
            assert getattr(ours, field) is None
    if "srd" in parts and full.srd is not None:
        assert ours.srd.to_dict() == full.srd.to_dict()
        _same_floats(ours.srd.histogram, full.srd.histogram)
        np.testing.assert_array_equal(ours.srd.ranks, full.srd.ranks)
        assert ours.srd_model.to_dict() == full.srd_model.to_dict()
    else:
        assert ours.srd is None and ours.srd_model is None
    if "lid" in parts and full.lid is not None:
        for f in ("lid", "p_target", "rank"):
            np.testing.assert_array_equal(getattr(ours.lid, f), getattr(full.lid, f))
        assert ours.lid.calibration == full.lid.calibration
        assert ours.lid.fold_w == full.lid.fold_w
    else:
        assert ours.lid is None
    if "singling_out" in parts and full.singling_out is not None:
        assert ours.singling_out.to_dict() == full.singling_out.to_dict()
        _same_floats(ours.singling_out.per_predicate, full.singling_out.per_predicate)
        assert ours.singling_out_interval == full.singling_out_interval
    else:
        assert ours.singling_out is None and ours.singling_out_interval is None
    if {"srd", "lid"} & parts and full.chance is not None:
        for key, value in ours.chance.values.items():
            if "lid" in parts or key not in (full.lid_block() or {}).get("chance", {}):
                assert value == full.chance.values[key], key
        _same_floats(ours.chance.curve, full.chance.curve)
    else:
        assert ours.chance is None
    if full.replicates is None:
        assert ours.replicates is None
    else:
        keys = {k for f, ks in REPLICATE_FAMILIES.items() if f in parts for k in ks}
        keys &= set(full.replicates.estimates)
        assert set(ours.replicates.estimates) == keys
        for key in keys:
            assert ours.replicates.estimates[key] == full.replicates.estimates[key], key
            _same_floats(ours.replicates.reps[key], full.replicates.reps[key])
            assert ours.intervals[key] == full.intervals[key], key
        if "linkability" in parts:
            _same_floats(ours.replicates.curve_reps, full.replicates.curve_reps)
    # the JSON: each number not null is the full report's, and the report names its parts
    d, fd = ours.to_dict(), full.to_dict()
    assert d.get("parts", list(PARTS)) == [p for p in PARTS if p in parts]
    for key, value in d.items():
        if value is not None and key not in ("parts", "intervals", "chance"):
            assert value == fd[key], key
    for key, value in (d["intervals"] or {}).items():
        if value is not None:
            assert value == fd["intervals"][key], key


@pytest.fixture(scope="module")
def study() -> Study:
    return demo_study(n_speakers=16, seed=3)


@pytest.mark.parametrize("bootstrap", [0, 30])
@pytest.mark.parametrize("parts", [*PAGE_PARTS.values(), *ONE_PART.values()])
def test_each_part_equals_the_full_report_on_the_demo(study, parts, bootstrap):
    for cond in study.conditions:
        options = EvaluationOptions(bootstrap=bootstrap, seed=5)
        full = _quiet(evaluate_condition, cond, options)
        ours = _quiet(evaluate_condition, cond, options, parts=parts)
        assert ours.parts == check_parts(parts)
        assert (ours.name, ours.attacker) == (cond.name, cond.attacker)
        assert_part_of(ours, full)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
@pytest.mark.parametrize("parts", PAGE_PARTS.values(), ids=PAGE_PARTS)
def test_each_page_part_equals_the_full_report_with_many_ties(study, parts, ties, rule):
    # scores rounded to one decimal: mated scores tie with non-mated ones, many ranks tie
    cond = tied(study.get("anon-mild"), 1, keep_dev=True)
    options = {"bootstrap": 20, "seed": 2, "ties": ties, "linkability_rule": rule}
    full = _quiet(evaluate_condition, cond, **options)
    assert full.baseline.linkability not in (0.0, 1.0)
    assert_part_of(_quiet(evaluate_condition, cond, parts=parts, **options), full)


@pytest.mark.parametrize(
    "make",
    [lambda c: tied(c, 2), sparse, incomplete],
    ids=["tied-no-dev", "sparse", "incomplete"],
)
@pytest.mark.parametrize("parts", PAGE_PARTS.values(), ids=PAGE_PARTS)
def test_each_page_part_equals_the_full_report_on_sparse_and_incomplete_lists(study, make, parts):
    cond = make(study.get("anon-leaky"))
    options = {"bootstrap": 15, "seed": 1, "cross_calibrate": 3}
    full = _quiet(evaluate_condition, cond, **options)
    ours = _quiet(evaluate_condition, cond, parts=parts, **options)
    assert_part_of(ours, full)
    if not cond.eval.is_complete and cond.eval.complete_rows() is None:
        assert ours.srd is None and ours.lid is None and ours.baseline.linkability is None


@pytest.mark.parametrize("variant", ["reference-code", "maximum-likelihood"])
@pytest.mark.parametrize("cross_calibrate", [None, 3])
def test_lid_part_under_each_variant_and_cross_calibration(study, variant, cross_calibrate):
    for cond in (study.get("anon-leaky"), dataclasses.replace(study.get("anon-mild"), dev=None)):
        options = {"lid_variant": variant, "cross_calibrate": cross_calibrate, "seed": 7}
        full = _quiet(evaluate_condition, cond, **options)
        ours = _quiet(evaluate_condition, cond, parts=("lid",), **options)
        assert_part_of(ours, full)
        assert (ours.lid is None) == (cond.dev is None and cross_calibrate is None)


def test_the_pages_tables_read_parts_as_full_reports(study):
    full = [_quiet(evaluate_condition, c, bootstrap=20) for c in study.conditions]
    srd = [
        _quiet(evaluate_condition, c, bootstrap=20, parts=PAGE_PARTS["srd"])
        for c in study.conditions
    ]
    pd.testing.assert_frame_equal(
        intervals_frame(srd, keys=CHANCE_KEYS), intervals_frame(full, keys=CHANCE_KEYS)
    )
    losses = ("LL", "CLL", "MS")
    for ours, theirs in zip(srd, full, strict=True):
        assert [f.to_dict() for f in _quiet(condition_fits, ours, losses)] == [
            f.to_dict() for f in _quiet(condition_fits, theirs, losses)
        ]
    # the call-outs read the card's rule, which reads the intervals: both without a bootstrap
    full = [_quiet(evaluate_condition, c) for c in study.conditions]
    identity = [_quiet(evaluate_condition, c, parts=IDENTITY_PARTS) for c in study.conditions]
    a = threat_callouts(study, identity, lid_max_min=0.0)
    b = threat_callouts(study, full, lid_max_min=0.0)
    assert [c.to_dict() for c in a] == [c.to_dict() for c in b]
    assert a, "the thresholds above call out at least one condition"
    assert checked_conditions(identity, a).equals(checked_conditions(full, b))


@pytest.mark.parametrize(
    "families",
    [("pairwise",), ("zebra",), ("linkability",), ("linkability", "srd"), ("lid",)],
)
def test_replicate_families_equal_those_of_every_number(families):
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=(40, 12)), 1)
    targets = rng.integers(0, 12, size=40)
    speakers = np.array([f"s{v}" for v in rng.integers(0, 9, size=40)])
    lid = rng.normal(size=40)
    draws = SpeakerDraws.draw(speakers, n_boot=30, seed=4)
    every = condition_replicates(scores, targets, speakers, draws, lid=lid)
    ranks = (
        target_ranks(scores, targets, ties="attacker"),
        target_ranks(scores, targets, ties="reference"),
    )
    alone = condition_replicates(
        scores, targets, speakers, draws, lid=lid, ranks=ranks, families=families
    )
    keys = {k for f in families for k in REPLICATE_FAMILIES[f]}
    assert set(alone.estimates) == keys
    for key in keys:
        assert alone.estimates[key] == every.estimates[key]
        _same_floats(alone.reps[key], every.reps[key])
        assert alone.intervals()[key] == every.intervals()[key]
    if "linkability" in families:
        _same_floats(alone.curve_reps, every.curve_reps)
    with pytest.raises(VoxMetricsInputError, match="unknown replicate families"):
        condition_replicates(scores, targets, speakers, draws, families=("nothing",))


def test_options_for_parts_keep_what_their_numbers_depend_on():
    every = EvaluationOptions(
        cross_calibrate=3, lid_variant="maximum-likelihood", bootstrap=50, seed=4,
        ties="attacker", linkability_rule="strict",
    )  # fmt: skip
    zebra = every.for_parts(["zebra"])
    assert (zebra.ties, zebra.bootstrap, zebra.seed) == ("attacker", 50, 0)
    assert zebra.cross_calibrate is None and zebra.linkability_rule == "code"
    linkage = every.for_parts(["linkability", "singling_out"])
    assert (linkage.linkability_rule, linkage.ties, linkage.seed) == ("strict", "reference", 0)
    assert every.for_parts(IDENTITY_PARTS).cross_calibrate == 3
    assert every.for_parts(ALL_PARTS) == every
    # a page option outside the parts' keys the same result as the study's settings
    assert dataclasses.replace(every, cross_calibrate=9).for_parts(["zebra"]) == zebra


def test_options_are_validated_once_when_made():
    assert EvaluationOptions(lid_variant="metrics").lid_variant == "maximum-likelihood"
    assert EvaluationOptions.of({"seed": 3}, bootstrap=10) == EvaluationOptions(
        seed=3, bootstrap=10
    )
    for bad in (
        {"ties": "sometimes"},
        {"linkability_rule": "loose"},
        {"score_kind": "probability"},
        {"lid_variant": "magic"},
        {"bootstrap": -1},
    ):
        with pytest.raises(VoxMetricsInputError):
            EvaluationOptions(**bad)
    with pytest.raises(VoxMetricsInputError, match="unknown report part"):
        check_parts(["lid", "eer"])


def test_bad_input_is_refused_before_any_work(study):
    cond = study.get("plain")
    with pytest.raises(VoxMetricsInputError, match="ties"):
        evaluate(cond.eval, parts=("lid",), ties="sometimes")
    with pytest.raises(VoxMetricsInputError, match="unknown report part"):
        evaluate(cond.eval, parts=("baseline",))
    with pytest.raises(VoxMetricsInputError):  # dev speakers must not be eval speakers
        evaluate(cond.eval, dev=cond.eval, parts=("lid",))


def test_progress_is_told_start_and_end(study):
    seen: list[float] = []
    evaluate_condition(
        Condition("x", eval=study.get("plain").eval),
        bootstrap=10,
        parts=("zebra",),
        progress=lambda f, m: seen.append(f),
    )
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert len(seen) > 3  # the bootstrap's replicates report too
