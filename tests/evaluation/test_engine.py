"""The in-memory engine (voxmetrics.evaluation.engine): ``evaluate(parts=...)``, each part's
numbers equal to the full report's, bit for bit.

A page that shows fewer numbers asks the engine for fewer parts (the LID, Threat model and
Soft biometrics pages the identity parts, the SRD, Linkage and ZEBRA pages theirs; the LID page
the ``pairwise`` and ``linkability`` parts alone where LID fails). The reference is the full
report itself, on complete, sparse, tied and incomplete trial lists, under both tie rules, both
linkability rules, both LID variants and cross-calibration, with and without the bootstrap.
The fields of the parts not asked for are None. LID and its chance levels come in one pass, and
every warning of a study's evaluation names its condition.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
import reference_pooled
from condition_cases import incomplete, sparse, tied
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.srd import CHANCE_KEYS, condition_fits
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError, VoxMetricsWarning
from voxmetrics.evaluation import (
    ALL_PARTS,
    PARTS,
    EvaluationOptions,
    check_parts,
    evaluate,
    evaluate_condition,
    evaluate_study,
)
from voxmetrics.evaluation.card import report_card
from voxmetrics.evaluation.threat import IDENTITY_PARTS, checked_conditions, threat_callouts
from voxmetrics.metrics import eer_result, min_cllr, zebra
from voxmetrics.metrics.uncertainty import REPLICATE_FAMILIES
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


BASELINE_PARTS = ("pairwise", "linkability")


def evaluate_baseline(sm, **options):
    """The baseline of the report's pairwise and linkability parts alone."""
    return evaluate(sm, parts=BASELINE_PARTS, **options).baseline


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
def test_baseline_alone_equals_the_reports_baseline(ties, rule):
    for cond in demo_study(n_speakers=8).conditions:
        report = evaluate(cond.eval, dev=cond.dev, ties=ties, linkability_rule=rule)
        assert evaluate_baseline(cond.eval, ties=ties, linkability_rule=rule) == report.baseline


@settings(max_examples=15, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(2, 5),
    st.integers(0, 2**32 - 1),
    st.floats(0.3, 1.0),
    st.sampled_from([None, 1.0]),
)
def test_baseline_alone_equals_the_report_on_sparse_lists_and_ties(t, n, seed, density, step):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, size=t)
    mask = rng.random((t, n)) < density
    mask[np.arange(t), targets] = True
    mask[0, (targets[0] + 1) % n] = True
    scores = rng.normal(size=(t, n))
    if step is not None:  # few distinct scores: many ties
        scores = np.round(scores / step) * step
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(t)],
        trial_speakers=[f"s{j}" for j in targets],
        enrol_speakers=[f"s{j}" for j in range(n)],
        mask=mask,
    )
    for ties in ("reference", "attacker"):
        assert evaluate_baseline(sm, ties=ties) == evaluate(sm, ties=ties).baseline


@pytest.mark.parametrize("cross_calibrate", [None, 3])
@pytest.mark.parametrize("variant", ["reference-code", "maximum-likelihood"])
def test_lid_and_chance_in_one_pass_equal_the_two_calls(cross_calibrate, variant):
    from voxmetrics.data.study import Condition
    from voxmetrics.evaluation import evaluate_condition
    from voxmetrics.metrics.chance import chance_levels
    from voxmetrics.metrics.lid import calibrate_lid, lid, lid_cross_calibrated

    study = demo_study(n_speakers=7)
    for cond in (study.get("anon-mild"), Condition("no dev", eval=study.get("plain").eval)):
        options = {"cross_calibrate": cross_calibrate, "lid_variant": variant, "seed": 4}
        report = evaluate_condition(cond, parts=("lid",), **options)
        ev = cond.eval
        if cond.dev is not None:
            cal = calibrate_lid(cond.dev.scores, cond.dev.targets, variant=variant)
            expected = lid(ev.scores, ev.targets, cal)
        elif cross_calibrate:
            expected = lid_cross_calibrated(
                ev.scores, ev.targets, ev.trial_speakers, k=3, variant=variant, seed=4
            )
        else:
            assert report.lid is None
            continue
        lid_result, chance = report.lid, report.chance
        assert lid_result.calibration == expected.calibration
        for field in ("lid", "p_target", "rank"):
            assert getattr(lid_result, field).tolist() == getattr(expected, field).tolist()
        assert lid_result.to_dict() == expected.to_dict()
        alone = chance_levels(ev.scores, calibration=expected.calibration, seed=4)
        assert chance.values == alone.values and chance.n_draws == alone.n_draws
        assert chance.curve_n.tolist() == alone.curve_n.tolist()
        assert chance.curve.tolist() == alone.curve.tolist()


LID_NOTE = "the LID calibration did not converge"


SRD_NOTE = "the beta-binomial CLL fit did not converge"


@pytest.fixture(scope="module")
def small_study():
    study = demo_study(n_speakers=5)
    settings = StudySettings(bootstrap=10, lid_variant="maximum-likelihood")
    return dataclasses.replace(study, settings=settings)


def test_the_library_names_the_condition_of_each_warning(small_study):
    from voxmetrics.evaluation import evaluate_study

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_study(small_study, bootstrap=0)
    messages = [str(w.message) for w in caught if issubclass(w.category, VoxMetricsWarning)]
    assert any(m.startswith(f"plain: {LID_NOTE}") for m in messages)
    assert any(m.startswith(f"plain: {SRD_NOTE}") for m in messages)
    assert all(m.split(": ", 1)[0] in small_study.names for m in messages)


# ----------------------------------------------------------------------------------------------
# evaluate passes its tie rule to every metric (EER, min Cllr, ZEBRA), and refuses an
# unknown one
# ----------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")  # tiny SRD fit
def test_evaluate_passes_the_tie_rule():
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    # integer scores: targets tied with non-targets in every row
    s = np.array([[2, 2, 1], [1, 1, 0], [3, 2, 3], [0, 1, 1]], dtype=float)
    sm = ScoreMatrix.from_arrays(
        s, trial_ids=list("wxyz"), trial_speakers=list("abca"), enrol_speakers=list("abc")
    )
    ref_r, att_r = evaluate(sm).to_dict(), evaluate(sm, ties="attacker").to_dict()
    assert (ref_r["ties"], att_r["ties"]) == ("reference", "attacker")
    tar, non = reference_pooled.mated_pools(s, sm.targets)
    assert ref_r["eer"] == eer_result(tar, non).eer
    assert att_r["eer"] == eer_result(tar, non, ties="attacker").eer
    assert att_r["min_cllr"] == min_cllr(tar, non, ties="attacker") < ref_r["min_cllr"]
    # the worst case puts non-targets first under both rules (ZEBRA's optimal_llr); D_ECE puts
    # targets first under the reference rule (ZEBRA's rocch_pava), so the ties disclose less
    assert ref_r["zebra"]["log10_l"] == att_r["zebra"]["log10_l"]
    assert ref_r["zebra"]["d_ece"] == zebra(tar, non).d_ece
    att_d_ece = zebra(tar, non, ties="attacker").d_ece
    assert att_r["zebra"]["d_ece"] == att_d_ece > ref_r["zebra"]["d_ece"]
    with pytest.raises(VoxMetricsInputError, match="ties"):
        evaluate(sm, ties="worst")


# ----------------------------------------------------------------------------------------------
# The tie rule reaches the SRD ranks and the linkability curve; threads change no number
# ----------------------------------------------------------------------------------------------


def test_the_tie_rule_reaches_the_srd_ranks_and_the_linkability_curve():
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    # trial t0 ties its own speaker with another one
    sm = ScoreMatrix.from_arrays(
        [[0.5, 0.5, 0.1], [0.9, 0.2, 0.1], [0.1, 0.8, 0.3]],
        trial_ids=["t0", "t1", "t2"],
        trial_speakers=["a", "a", "b"],
        enrol_speakers=["a", "b", "c"],
    )
    ref, att = evaluate(sm), evaluate(sm, ties="attacker")
    assert ref.baseline.linkability == att.baseline.linkability == 1.0
    assert ref.srd.ranks.tolist() == [2, 1, 1] and att.srd.ranks.tolist() == [1, 1, 1]
    assert att.srd.stats.idr == att.baseline.linkability
    assert ref.linkability_curve.to_list() == att.linkability_curve.to_list()


def test_evaluate_on_threads_gives_the_serial_json(monkeypatch):
    """Row blocks on parallel threads, and the sort on its own, change no number: the JSON of
    several blocks run on 1 or 3 threads is the same, byte for byte (LID, chance levels, d')."""
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate
    from voxmetrics.metrics import ranks

    def matrix(t: int, n: int, seed: int, prefix: str) -> ScoreMatrix:
        rng = np.random.default_rng(seed)
        s = np.round(rng.normal(size=(t, n)), 2).astype(np.float32)  # ties
        own = np.arange(t) % n
        s[np.arange(t), own] += 1.0
        spk = [f"{prefix}{j}" for j in range(n)]
        return ScoreMatrix.from_arrays(
            s,
            trial_ids=[f"{prefix}u{i}" for i in range(t)],
            trial_speakers=[spk[j] for j in own],
            enrol_speakers=spk,
        )

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 300)  # 25 row blocks
    out = {}
    for n in ("1", "3"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        # fresh matrices: the pools (and d') of a matrix are cached with it
        eval_, dev = matrix(300, 24, 0, "e"), matrix(120, 12, 1, "d")
        out[n] = evaluate(eval_, dev=dev, seed=5).to_json()
    assert out["1"] == out["3"]
    assert json.loads(out["1"])["lid"]["alid"] is not None


# ----------------------------------------------------------------------------------------------
# Chance levels and intervals of independent random conditions (the card stays green); no
# bootstrap, no intervals
# ----------------------------------------------------------------------------------------------


def _random_condition(rng, name, n_spk=30, per=2, n=90) -> Condition:
    spk = [f"s{i}" for i in range(n_spk) for _ in range(per)]
    enrol = [f"s{i}" for i in range(n)]
    sm = ScoreMatrix.from_arrays(
        rng.normal(size=(len(spk), n)),
        trial_ids=[f"{name}-t{i}" for i in range(len(spk))],
        trial_speakers=spk,
        enrol_speakers=enrol,
    )
    return Condition(name=name, eval=sm)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_independent_random_conditions_are_at_chance_and_the_card_is_green():
    """Random scores: MeanD is biased upward (few trials against N), chance says by how much."""
    rng = np.random.default_rng(7)
    conds = [_random_condition(rng, f"r{k}") for k in range(3)]
    reports = evaluate_study(Study(name="null", conditions=tuple(conds)), bootstrap=200)
    for r in reports:
        assert r.srd.stats.mean_d > 0.5  # 60 trials against 90 identities: biased upward
        excess = r.srd.stats.mean_d - r.chance.values["mean_d"]
        assert abs(excess) < 0.15
        iv = r.intervals["linkability"]
        assert iv.low <= r.chance.values["linkability"] <= iv.high
    levels = report_card(reports).frame("level")
    assert set(levels["Linkability vs chance"]) == {"ok"}
    assert set(levels["EER"]) == {"ok"}


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_condition_without_bootstrap_has_chance_but_no_intervals():
    rng = np.random.default_rng(1)
    r = evaluate(_random_condition(rng, "x").eval).to_dict()
    assert r["intervals"] is None and r["srd"].get("intervals") is None
    assert r["chance"]["linkability"] == pytest.approx(1 / 90)
