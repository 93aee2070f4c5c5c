"""LID analysis: a condition's LID under the page's options and every LID table, by hand."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from separable_cases import BITS, DEV, EVAL, in_range, quiet_evaluate

from voxmetrics._types import LID_DISPLAY_FLOOR
from voxmetrics.analysis.lid import (
    CALIBRATION_HELP,
    CHANCE_HELP,
    CHANCE_METRICS,
    INTERVAL_HELP,
    INTERVAL_METRICS,
    LID_COLUMNS,
    LID_FAILED,
    NEEDS_CALIBRATION,
    SUMMARY_HELP,
    TRIAL_COLUMNS,
    LIDOptions,
    LIDRow,
    calibration_frame,
    chance_frame,
    condition_intervals,
    interval_frame,
    interval_table,
    lid_status,
    lid_summary_frame,
    lid_table,
    lid_trials,
    localised_vulnerabilities,
    trial_frame,
    trial_posterior,
)
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels, chance_levels
from voxmetrics.metrics.lid import (
    LIDCalibration,
    calibrate_lid,
    lid,
    lid_cross_calibrated,
)
from voxmetrics.metrics.uncertainty import lid_intervals
from voxmetrics.report.frames import intervals_frame, overview_frame
from voxmetrics.synth import demo_study

# w = 1, b = 0: the posterior of a row is the softmax of its population-sd z-scores
UNIT = LIDCalibration(w=1.0, b=0.0, prior_log_odds=0.0, n_pairs=4)
P = 1 / (1 + math.exp(-2))  # z = [1, -1]: e / (e + 1/e)


def _tiny() -> Condition:
    """Three trials against two enrolled speakers; z-scores [1, -1] or [-1, 1] per row."""
    ev = ScoreMatrix.from_arrays(
        [[1.0, -1.0], [-1.0, 1.0], [-2.0, 2.0]],
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["A", "B", "A"],
        enrol_speakers=["A", "B"],
        attributes={"sex": np.array(["f", "m", "f"])},
    )
    return Condition("tiny", eval=ev)


@pytest.fixture(scope="module")
def tiny():
    cond = _tiny()
    return cond, lid(cond.eval.scores, cond.eval.targets, UNIT)


def _iv(estimate, low, high, n_valid=10):
    return BootstrapInterval(estimate, low, high, confidence=0.95, n_boot=10, n_valid=n_valid)


def _report(eer, min_cllr=0.9):
    return SimpleNamespace(baseline=SimpleNamespace(eer=eer, min_cllr=min_cllr))


# ---------------------------------------------------------------- trials


def test_the_tiny_lid_by_hand(tiny):
    _, result = tiny
    # t1, t2: p(target) = P; t3 (speaker A, z = [-1, 1]): p(target) = 1 - P
    np.testing.assert_allclose(result.p_target, [P, P, 1 - P])
    np.testing.assert_allclose(result.lid, np.log2(2 * np.array([P, P, 1 - P])))


def test_trial_posterior_by_hand(tiny):
    cond, result = tiny
    np.testing.assert_allclose(trial_posterior(cond, result, 0), [P, 1 - P])
    np.testing.assert_allclose(trial_posterior(cond, result, 2), [1 - P, P])


def test_trial_frame_is_sorted_by_lid_and_indexed_by_matrix_row(tiny):
    cond, result = tiny
    df = trial_frame(cond, result)
    assert list(df.columns) == ["Trial", "Speaker", "Rank", "p(target)", "LID (bits)", "sex"]
    assert list(df.index) == [0, 1, 2]  # t1, t2 tie at the top: the stable sort keeps order
    assert list(df["Trial"]) == ["t1", "t2", "t3"]
    assert list(df["Rank"]) == [1, 1, 2]
    assert df["LID (bits)"].iloc[0] == pytest.approx(math.log2(2 * P))
    assert df["LID (bits)"].iloc[2] == pytest.approx(math.log2(2 * (1 - P)))
    assert list(df["sex"]) == ["f", "m", "f"]


def test_trial_frame_puts_the_largest_lid_first():
    ev = ScoreMatrix.from_arrays(
        [[-1.0, 1.0], [3.0, -3.0]],
        trial_ids=["low", "high"],
        trial_speakers=["A", "A"],
        enrol_speakers=["A", "B"],
    )
    cond = Condition("c", eval=ev)
    df = trial_frame(cond, lid(ev.scores, ev.targets, UNIT))
    assert list(df["Trial"]) == ["high", "low"] and list(df.index) == [1, 0]


def test_lid_trials_by_hand(tiny):
    cond, result = tiny
    df = lid_trials(cond.eval, result)
    assert list(df.columns) == list(TRIAL_COLUMNS)
    assert list(df["trial_id"]) == ["t1", "t2", "t3"]  # matrix order
    assert list(df["speaker"]) == ["A", "B", "A"]
    assert list(df["rank"]) == [1, 1, 2]
    np.testing.assert_allclose(df["p_target"], [P, P, 1 - P])
    np.testing.assert_allclose(df["lid_bits"], np.log2(2 * np.array([P, P, 1 - P])))
    assert list(lid_trials(cond.eval, result, ranks=[2, 2, 1])["rank"]) == [2, 2, 1]


# ---------------------------------------------------------------- summary and calibration


def test_lid_table_by_hand(tiny):
    _, result = tiny
    df = lid_table({"tiny": result, "none": None})
    assert list(df.columns) == [
        "Condition", "Calibration", "w", "b", *LID_COLUMNS.values(), "Ceiling log2 N (bits)",
        "Rows without evidence",
    ]  # fmt: skip
    row = df.iloc[0]
    assert (row["Condition"], row["Calibration"], row["w"], row["b"]) == ("tiny", "dev", 1.0, 0.0)
    plus, minus = math.log2(2 * P), math.log2(2 * (1 - P))
    assert row["ALID (bits)"] == pytest.approx((2 * plus + minus) / 3)
    assert (row["PDR"], row["NDR"]) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert (row["LID+ (bits)"], row["LID− (bits)"]) == (pytest.approx(plus), pytest.approx(minus))
    assert row["LIDmax (bits)"] == pytest.approx(plus)
    assert row["Ceiling log2 N (bits)"] == 1.0 and row["Rows without evidence"] == 0
    empty = df.iloc[1]
    assert pd.isna(empty["Calibration"]) and math.isnan(empty["ALID (bits)"])
    # (name, result) pairs keep their order, even with a repeated name
    pairs = lid_table([("x", None), ("x", result)])
    assert math.isnan(pairs["w"].iloc[0]) and pairs["w"].iloc[1] == 1.0


def test_summary_frame_keeps_rows_with_the_same_name(tiny):
    cond, result = tiny
    df = lid_summary_frame([LIDRow(cond, None, result), LIDRow(cond, None, None)])
    assert df["w"].iloc[0] == 1.0 and math.isnan(df["w"].iloc[1])


def test_summary_frame_by_hand(tiny):
    cond, result = tiny
    rows = [
        LIDRow(cond, _report(0.25, 0.5), result, status="dev"),
        LIDRow(Condition("none", eval=cond.eval), None, None, status=NEEDS_CALIBRATION),
    ]
    df = lid_summary_frame(rows).set_index("Condition")
    assert list(df.columns) == [c for c in SUMMARY_HELP if c != "Condition"]
    row = df.loc["tiny"]
    assert (row["Calibration"], row["N"], row["T"]) == ("dev", 2, 3)
    assert (row["EER"], row["min Cllr"]) == (0.25, 0.5)
    assert row["ALID (bits)"] == pytest.approx((2 * math.log2(2 * P) + math.log2(2 - 2 * P)) / 3)
    assert row["PDR (%)"] == pytest.approx(200 / 3) and row["NDR (%)"] == pytest.approx(100 / 3)
    assert row["LID+ (bits)"] == pytest.approx(math.log2(2 * P))
    assert row["LID- (bits)"] == pytest.approx(math.log2(2 * (1 - P)))
    assert row["LIDmax (bits)"] == pytest.approx(math.log2(2 * P))
    assert (row["w"], row["b"]) == (1.0, 0.0)
    empty = df.loc["none"]
    assert empty["Calibration"] == NEEDS_CALIBRATION
    assert all(math.isnan(empty[c]) for c in df.columns[3:])
    assert df["ALID (bits)"].dtype == np.float64


def test_calibration_frame_by_hand(tiny, demo):
    cond, result = tiny
    ev = demo.get("anon-mild").eval
    folded = lid_cross_calibrated(ev.scores, ev.targets, ev.trial_speakers, k=2)
    rows = [
        LIDRow(cond, None, result, status="dev"),
        LIDRow(cond, None, None, status=NEEDS_CALIBRATION),
        LIDRow(cond, None, folded, status=folded.label),
    ]
    df = calibration_frame(rows)
    assert list(df.columns) == [
        "Condition", "Calibration", "Variant", "w", "b", "Prior log-odds", "Pairs",
        "Converged", "Fold w",
    ]  # fmt: skip
    assert set(CALIBRATION_HELP) <= set(df.columns)
    assert len(df) == 2  # the row without LID has no calibration
    first = df.iloc[0]
    assert (first["w"], first["b"], first["Prior log-odds"], first["Pairs"]) == (1.0, 0.0, 0.0, 4)
    assert first["Variant"] == "maximum-likelihood" and first["Fold w"] == ""
    assert df.iloc[1]["Fold w"] == ", ".join(f"{w:.3f}" for w in folded.fold_w)
    assert len(folded.fold_w) == 2


# ---------------------------------------------------------------- intervals


def test_interval_table_by_hand(tiny):
    cond, result = tiny
    intervals = {
        "alid": _iv(0.5, -0.001, 0.004),  # rounds to [-0.00, 0.00]: shown without the sign
        "pdr": _iv(0.5, 0.25, 0.75),
        "lid_q95": _iv(0.75, None, None, n_valid=2),  # undefined in most replicates
    }
    rows = [
        LIDRow(cond, None, result, intervals, status="dev"),
        LIDRow(cond, None, result, None, status="no bootstrap"),
    ]
    df = interval_table(rows)
    assert len(df) == 1  # rows without intervals are left out
    row = df.iloc[0]
    assert row["ALID (bits)"] == 0.5 and row["ALID 95% CI (bits)"] == "[0.00, 0.00]"
    assert row["PDR (%)"] == 50.0 and row["PDR 95% CI (%)"] == "[25.0, 75.0]"
    assert row["LID q95 (bits)"] == 0.75 and row["LID q95 95% CI (bits)"] == "undefined"
    assert math.isnan(row["NDR (%)"]) and row["NDR 95% CI (%)"] is None
    assert list(df.columns[:2]) == ["Condition", "Calibration"]
    assert set(INTERVAL_HELP) <= set(df.columns)


def test_interval_frame_by_hand(tiny):
    cond, result = tiny
    rows = [
        LIDRow(cond, None, result, {"pdr": _iv(0.5, 0.25, 0.75), "alid": _iv(None, None, None)}),
        LIDRow(cond, None, None, None),
    ]
    df = interval_frame(rows)
    assert list(df["metric"]) == ["ALID", "PDR"]  # in INTERVAL_METRICS order
    pdr = df.iloc[1]
    assert (pdr["unit"], pdr["estimate"], pdr["low"], pdr["high"]) == ("%", 50.0, 25.0, 75.0)
    assert (pdr["confidence"], pdr["n_boot"], pdr["n_valid"]) == (0.95, 10, 10)
    assert math.isnan(df.iloc[0]["estimate"])  # an undefined estimate is empty
    assert interval_frame([]).columns.tolist()[:3] == ["condition", "calibration", "metric"]
    assert [label for label, _ in INTERVAL_METRICS.values()][:2] == ["ALID", "PDR"]


# ---------------------------------------------------------------- chance


def test_chance_frame_by_hand(tiny):
    cond, result = tiny
    chance = ChanceLevels(
        values={"alid": 0.1, "pdr": 0.5, "lid_plus": None, "lid_max": 0.25},
        curve_n=np.array([], dtype=np.int64),
        curve=np.array([]),
    )
    rows = [
        LIDRow(cond, None, result, status="dev"),
        LIDRow(Condition("other", eval=cond.eval), None, result, status="dev"),  # no chance
        LIDRow(Condition("none", eval=cond.eval), None, None),
    ]
    df = chance_frame(rows, {"tiny": chance, "none": chance})
    assert list(df["Condition"]) == ["tiny"] * 4
    assert list(df["Number"]) == [f"{label} ({unit})" for label, unit in CHANCE_METRICS.values()]
    by = df.set_index("Number")
    assert by.loc["ALID (bits)", "Excess over chance"] == pytest.approx(result.alid - 0.1)
    assert by.loc["PDR (%)", "Value"] == pytest.approx(200 / 3)
    assert by.loc["PDR (%)", "Chance"] == 50.0
    assert by.loc["PDR (%)", "Excess over chance"] == pytest.approx(200 / 3 - 50)
    assert math.isnan(by.loc["LID+ (bits)", "Chance"])
    assert math.isnan(by.loc["LID+ (bits)", "Excess over chance"])
    assert by.loc["LIDmax (bits)", "Excess over chance"] == pytest.approx(result.lid_max - 0.25)
    assert set(CHANCE_HELP) <= set(df.columns)
    assert chance_frame([], {}).columns[0] == "Condition"


# ---------------------------------------------------------------- status and flags


def test_lid_status(tiny):
    _, result = tiny
    assert lid_status(result, failed=False) == result.label == "dev"
    assert lid_status(None, failed=False) == NEEDS_CALIBRATION
    assert lid_status(None, failed=True) == LID_FAILED


def test_localised_vulnerabilities(tiny):
    cond, result = tiny  # LIDmax = log2(2P) = 0.817 bits
    rows = [
        LIDRow(cond, _report(0.45), result),  # near-chance EER and LIDmax above 0.5
        LIDRow(cond, _report(0.2), result),  # EER low: not hidden
        LIDRow(cond, None, result),  # no report
        LIDRow(cond, _report(0.45), None),  # no LID
    ]
    flagged = localised_vulnerabilities(rows, eer=0.4, lid_max=0.5)
    assert flagged == [rows[0]]
    assert localised_vulnerabilities(rows, eer=0.4, lid_max=0.9) == []
    assert localised_vulnerabilities(rows, eer=0.45, lid_max=math.log2(2 * P)) == [rows[0]]


# ---------------------------------------------------------------- a condition's LID


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=8)


def test_options_key_follows_only_what_changes_the_lid(demo):
    with_dev, no_dev = demo.get("anon-mild"), _tiny()
    a, b = LIDOptions(cross_calibrate=3, seed=1), LIDOptions(cross_calibrate=5, seed=2)
    assert a.key(with_dev) == b.key(with_dev)  # folds and seed play no part with a dev set
    assert a.key(no_dev) != b.key(no_dev)
    ml = LIDOptions(variant="maximum-likelihood")
    assert ml.key(with_dev) != LIDOptions().key(with_dev)
    assert LIDOptions().reference_code  # the default: the authors' recipe
    assert not ml.reference_code


def _lid_part(cond, **options):
    """The ``lid`` part of the condition's report (the engine's LID) and its chance levels."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        report = evaluate_condition(cond, parts=("lid",), **options)
    return report.lid, report.chance


def test_the_engines_lid_is_the_metrics_lid(demo):
    cond = demo.get("anon-mild")
    got, _ = _lid_part(cond, lid_variant="reference-code")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        cal = calibrate_lid(cond.dev.scores, cond.dev.targets, variant="reference-code")
    want = lid(cond.eval.scores, cond.eval.targets, cal)
    np.testing.assert_array_equal(got.lid, want.lid)
    assert got.w == want.w and got.label == "dev"
    same = evaluate(cond.eval, dev=cond.dev, lid_variant="reference-code").lid
    np.testing.assert_array_equal(same.lid, want.lid)


def test_the_engines_lid_without_dev(demo):
    ev = demo.get("anon-mild").eval
    cond = Condition("no-dev", eval=ev)
    assert _lid_part(cond)[0] is None
    got, _ = _lid_part(cond, cross_calibrate=3, seed=4)
    want = lid_cross_calibrated(ev.scores, ev.targets, ev.trial_speakers, k=3, seed=4)
    np.testing.assert_array_equal(got.lid, want.lid)
    assert got.fold_w == want.fold_w


def test_condition_intervals_and_chance_are_the_metrics(demo):
    cond = demo.get("anon-mild")
    result, chance = _lid_part(cond, seed=2)
    got = condition_intervals(cond, result, n_boot=30, seed=2)
    want = lid_intervals(result.lid, cond.eval.trial_speakers, n_boot=30, seed=2)
    assert {k: v.to_dict() for k, v in got.items()} == {k: v.to_dict() for k, v in want.items()}
    assert chance.values == chance_levels(cond.eval.scores, calibration=result.calibration,
                                          seed=2).values  # fmt: skip


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n),
                min_size=1,
                max_size=12,
            ),
        )
    ),
    st.floats(0.1, 3.0),
)
def test_tables_and_trials_agree_with_the_result(case, w):
    n, scores = case
    t = len(scores)
    ev = ScoreMatrix.from_arrays(
        np.asarray(scores) + np.arange(n) * 1e-3,  # distinct within a row: z-scores defined
        trial_ids=[f"t{i}" for i in range(t)],
        trial_speakers=[f"s{i % n}" for i in range(t)],
        enrol_speakers=[f"s{j}" for j in range(n)],
    )
    cal = LIDCalibration(w=w, b=0.0, prior_log_odds=0.0, n_pairs=t * n)
    result = lid(ev.scores, ev.targets, cal)
    cond = Condition("c", eval=ev)
    table = lid_table({"c": result}).iloc[0]
    for key, column in LID_COLUMNS.items():
        value = getattr(result, key)
        assert math.isnan(table[column]) if value is None else table[column] == value
    summary = lid_summary_frame([LIDRow(cond, None, result)]).iloc[0]
    assert summary["PDR (%)"] == 100 * result.pdr and summary["LIDmax (bits)"] == result.lid_max
    # the trial view is the per-trial table sorted by LID, largest first, indexed by matrix row
    trials = lid_trials(ev, result)
    frame = trial_frame(cond, result)
    assert sorted(frame.index) == list(range(t))
    assert frame["LID (bits)"].is_monotonic_decreasing
    back = frame.sort_index().rename(columns={v: k for k, v in TRIAL_COLUMNS.items()})
    pd.testing.assert_frame_equal(back[list(TRIAL_COLUMNS)], trials)


def test_dev_pools_really_separate():
    tar = DEV.scores[np.arange(DEV.scores.shape[0]), DEV.targets]
    non = DEV.scores.copy()
    non[np.arange(DEV.scores.shape[0]), DEV.targets] = np.nan
    assert tar.min() > np.nanmax(non)


def test_displays_and_exports_clamp_whatever_the_variant():
    r = quiet_evaluate(lid_variant="maximum-likelihood")
    n = r.lid.n_enrolled
    ov = overview_frame([r])
    assert in_range(ov.loc[0, "alid"], n) and in_range(ov.loc[0, "lid_max"], n)
    iv = intervals_frame([r])
    lid_rows = iv[iv["key"].isin(BITS)]
    assert not lid_rows.empty
    for column in ("value", "low", "high", "chance"):
        values = lid_rows[column].dropna()
        assert ((values >= LID_DISPLAY_FLOOR) & (values <= math.log2(n) + 1e-9)).all(), column
    table = lid_table({"original": r.lid})
    for column in ("ALID (bits)", "LID+ (bits)", "LID− (bits)", "LIDmax (bits)"):
        value = table.loc[0, column]
        assert math.isnan(value) or in_range(value, n), column
    condition = Condition("original", eval=EVAL, dev=DEV)
    row = LIDRow(condition=condition, report=None, lid=r.lid)
    chance = chance_frame([row], {"original": r.chance})
    bits = chance[chance["Number"].str.endswith("(bits)")]
    assert (bits["Chance"] >= LID_DISPLAY_FLOOR).all()


BASELINE_PARTS = ("pairwise", "linkability")


def evaluate_baseline(sm, **options):
    """The baseline of the report's pairwise and linkability parts alone."""
    return evaluate(sm, parts=BASELINE_PARTS, **options).baseline


def test_lid_rows_read_the_baseline_or_the_report():
    cond = demo_study(n_speakers=6).get("anon-mild")
    report = evaluate(cond.eval, dev=cond.dev)
    base = evaluate_baseline(cond.eval)
    from_report = LIDRow(cond, report, report.lid, status="dev")
    alone = LIDRow(cond, None, report.lid, status="dev", baseline=base)
    assert alone.one_to_one == from_report.one_to_one == report.baseline
    assert LIDRow(cond, None, None).one_to_one is None
    a, b = lid_summary_frame([from_report]), lid_summary_frame([alone])
    assert a.equals(b)
    flagged = localised_vulnerabilities([alone, from_report], eer=0.0, lid_max=-1e9)
    assert flagged == [alone, from_report]
