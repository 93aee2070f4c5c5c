"""The threat-model library (voxmetrics/evaluation/threat.py) and the offset generator
(synth.offset_scores).

Paper 000, section 4.1; metrics.md sections 1, 2 and 5.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.threat import (
    CALLOUT_EER,
    CALLOUT_LID_MAX,
    CALLOUT_LINKABILITY_FACTOR,
    EXAMPLE_OWN_COLUMN,
    PAPER_EXAMPLE_SCORES,
    PAPER_EXAMPLE_TARGETS,
    PAPER_EXAMPLE_W,
    Callout,
    checked_conditions,
    example_frame,
    example_view,
    paper_matrix,
    threat_callouts,
    threat_scenario,
    threat_view,
)
from voxmetrics.metrics.lid import calibrate_lid
from voxmetrics.synth import demo_study, offset_scores

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


@pytest.fixture(scope="module")
def demo():
    study = demo_study()
    return study, evaluate_study(study, bootstrap=0)


# ---------------------------------------------------------------- the 4x4 example


def test_paper_matrix_is_eq_1_of_paper_000():
    sm = paper_matrix()
    assert sm.shape == (4, 4)
    np.testing.assert_array_equal(sm.scores, np.array(PAPER_EXAMPLE_SCORES))
    assert sm.targets.tolist() == list(PAPER_EXAMPLE_TARGETS) == [0, 0, 1, 2]
    assert sm.enrol_speakers.tolist() == ["speaker 1", "speaker 2", "speaker 3", "speaker 4"]
    assert sm.trial_ids.tolist() == ["trial 1", "trial 2", "trial 3", "trial 4"]


def test_paper_example_pooled_vs_row_by_row():
    """metrics.md section 1: EER 0.50 exactly, ROCCH-EER 0.375, every trial linked."""
    v = threat_view(paper_matrix(), w=PAPER_EXAMPLE_W)
    assert v.baseline.eer == 0.5
    assert v.baseline.eer_rocch == pytest.approx(0.375, abs=1e-12)
    assert v.baseline.linkability == 1.0
    assert v.baseline.chance_linkability == 0.25
    assert v.ranks.tolist() == [1, 1, 1, 1]
    assert v.linked.tolist() == [True, True, True, True]


def test_paper_example_lid_by_hand():
    """LID with w = 1.5, computed by hand.

    Every row of eq. 1 has one score 0.1 above three equal others (row 1: [.9, .8, .8, .8];
    row 3: [.4, .5, .4, .4] with the target in column 2, ...). Row z-norm with the population
    sd: mean = m + 0.025, deviations (0.075, -0.025, -0.025, -0.025), variance
    (0.075² + 3 · 0.025²) / 4 = 0.001875, sd = 0.025 · √3, so the target's z = 3/√3 = √3 and
    the others' z = -1/√3, in every row. Softmax of w z (b and the prior cancel):
        p_own = e^{1.5 √3} / (e^{1.5 √3} + 3 e^{-1.5/√3}) = 0.914158...
        LID   = log2(4 p_own) = 1.870515... bits (ceiling log2 4 = 2).
    """
    w = PAPER_EXAMPLE_W
    p_own = math.exp(w * math.sqrt(3)) / (
        math.exp(w * math.sqrt(3)) + 3 * math.exp(-w / math.sqrt(3))
    )
    expected = math.log2(4 * p_own)
    assert p_own == pytest.approx(0.914158, abs=1e-6)
    assert expected == pytest.approx(1.870515, abs=1e-6)
    v = threat_view(paper_matrix(), w=w)
    np.testing.assert_allclose(v.lid.p_target, p_own, rtol=1e-12)
    np.testing.assert_allclose(v.lid.lid, expected, rtol=1e-12)
    s = v.summary()
    assert s["alid"] == pytest.approx(expected) and s["lid_max"] == pytest.approx(expected)
    assert s["lid_ceiling"] == 2.0


def test_trial_frame_and_to_dict():
    v = threat_view(paper_matrix(), w=PAPER_EXAMPLE_W)
    frame = v.trial_frame()
    assert list(frame.columns) == [
        "trial", "speaker", "own score", "best other score", "rank", "linked",
        "p(own speaker)", "LID (bits)",
    ]  # fmt: skip
    assert frame["own score"].tolist() == [0.9, 0.7, 0.5, 0.3]
    assert frame["best other score"].tolist() == [0.8, 0.6, 0.4, 0.2]
    assert frame["speaker"].tolist() == ["speaker 1", "speaker 1", "speaker 2", "speaker 3"]
    d = json.loads(json.dumps(v.to_dict()))
    assert d["eer"] == 0.5 and d["linkability"] == 1.0 and len(d["trials"]) == 4
    assert d["calibration"]["w"] == PAPER_EXAMPLE_W


def test_w_zero_discloses_nothing_but_still_links():
    v = threat_view(paper_matrix(), w=0.0)
    np.testing.assert_allclose(v.lid.lid, 0.0, atol=1e-12)
    assert v.baseline.linkability == 1.0


def test_a_tie_counts_against_the_attacker():
    scores = [list(r) for r in PAPER_EXAMPLE_SCORES]
    scores[0][1] = 0.9  # trial 1: speaker 2 now ties its own speaker
    v = threat_view(paper_matrix(scores, PAPER_EXAMPLE_TARGETS), w=PAPER_EXAMPLE_W)
    assert v.ranks.tolist() == [2, 1, 1, 1]
    # linkability follows the authors' code: the tie goes to the true speaker
    assert v.baseline.linkability == 1.0


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("scores", "targets", "message"),
    [
        (PAPER_EXAMPLE_SCORES, [0, 0, 1, 4], "between 1 and 4"),
        (PAPER_EXAMPLE_SCORES, [-1, 0, 1, 2], "between 1 and 4"),
        (PAPER_EXAMPLE_SCORES, [0, 0, 1], "one own-speaker column"),
        (PAPER_EXAMPLE_SCORES, [0.0, 0.0, 1.0, 2.0], "whole numbers"),
        ([0.9, 0.8, 0.8], [0], "table (trials x speakers)"),
        ([[[0.9]]], [0], "table (trials x speakers)"),
        ([[0.9, np.nan], [0.1, 0.2]], [0, 1], "finite"),
    ],
    ids=["too-large", "negative", "wrong-length", "float", "1d", "3d", "nan"],
)
def test_paper_matrix_rejects_bad_input(scores, targets, message):
    with pytest.raises(VoxMetricsInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        paper_matrix(scores, targets)


@pytest.mark.parametrize("kwargs", [{}, {"w": 1.0, "dev": "both"}], ids=["neither", "both"])
def test_threat_view_needs_exactly_one_of_dev_and_w(kwargs):
    if kwargs.get("dev") == "both":
        kwargs = {"w": 1.0, "dev": paper_matrix()}
    with pytest.raises(VoxMetricsInputError, match="either a dev matrix"):
        threat_view(paper_matrix(), **kwargs)


@pytest.mark.parametrize("w", [-1.0, math.inf, math.nan])
def test_threat_view_rejects_a_bad_w(w):
    with pytest.raises(VoxMetricsInputError, match="w must be"):
        threat_view(paper_matrix(), w=w)


def test_threat_view_with_a_dev_matrix_uses_its_calibration():
    dev = offset_scores(n_enrolled=6, n_trials=60, seed=3, prefix="dev")
    ev = offset_scores(n_enrolled=6, n_trials=60, seed=4)
    v = threat_view(ev, dev=dev)
    assert v.calibration.w == pytest.approx(calibrate_lid(dev.scores, dev.targets).w)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_enrolled": 1}, "n_enrolled must be at least 2"),
        ({"n_trials": 1}, "n_trials must be at least 2"),
        ({"margin": -0.1}, "margin must be"),
        ({"offset_spread": math.nan}, "offset_spread must be"),
        ({"noise": math.inf}, "noise must be"),
        ({"noise": 0.0, "margin": 0.0}, "no noise and no margin"),
    ],
)
def test_threat_scenario_rejects_bad_parameters(kwargs, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        threat_scenario(**kwargs)


# ---------------------------------------------------------------- the generator


scenario_params = st.fixed_dictionaries(
    {
        "n_enrolled": st.integers(2, 25),
        "n_trials": st.integers(2, 60),
        "margin": st.floats(0.0, 2.0),
        "noise": st.floats(0.05, 1.0),
        "seed": st.integers(0, 2**16),
    }
)


@settings(max_examples=25, deadline=None)
@given(params=scenario_params, spread=st.floats(0.5, 20.0), w=st.floats(0.0, 5.0))
def test_offsets_do_not_change_the_row_by_row_view(params, spread, w):
    """Row offsets cancel in the row z-norm and in each row's order (metrics.md 2 and 5)."""
    flat_sm = offset_scores(**params, offset_spread=0.0)
    shifted_sm = offset_scores(**params, offset_spread=spread)
    # the same seed draws the same noise: only each row's level differs
    flat, shifted = threat_view(flat_sm, w=w), threat_view(shifted_sm, w=w)
    assert shifted.baseline.linkability == flat.baseline.linkability
    np.testing.assert_array_equal(shifted.ranks, flat.ranks)
    np.testing.assert_allclose(shifted.lid.lid, flat.lid.lid, atol=1e-6)


@settings(max_examples=15, deadline=None)
@given(params=scenario_params, spread=st.floats(0.5, 20.0))
def test_offsets_do_not_change_the_calibrated_scenario(params, spread):
    """The dev calibration sees the same z-scores too, so w and LID do not move (when the fit
    converges; a separable dev set gives a capped, path-dependent w and a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        flat = threat_scenario(**params, offset_spread=0.0)
        shifted = threat_scenario(**params, offset_spread=spread)
    assert shifted.baseline.linkability == flat.baseline.linkability
    if flat.calibration.converged and shifted.calibration.converged:
        assert shifted.calibration.w == pytest.approx(flat.calibration.w, rel=1e-5, abs=1e-8)
        np.testing.assert_allclose(shifted.lid.lid, flat.lid.lid, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(params=scenario_params, spread=st.floats(0.0, 20.0))
def test_scenario_bounds(params, spread):
    v = threat_scenario(**params, offset_spread=spread)
    s = v.summary()
    assert 0.0 <= s["linkability"] <= 1.0
    assert 0.0 <= s["eer"] <= 1.0 and 0.0 <= s["eer_rocch"] <= 1.0
    assert s["lid_ceiling"] == pytest.approx(math.log2(params["n_enrolled"]))
    assert np.all(v.lid.lid <= s["lid_ceiling"] + 1e-9)
    assert s["lid_max"] <= s["lid_ceiling"] + 1e-9
    assert s["alid"] <= s["lid_max"] + 1e-12


def test_offset_spread_pushes_the_eer_towards_chance():
    """Same identity in each row, blurrier pools: the EER rises towards 0.5, the rest stays."""
    eers = [
        threat_scenario(
            n_enrolled=20, n_trials=400, margin=0.5, noise=0.2, offset_spread=sp
        ).baseline.eer
        for sp in (0.0, 0.5, 2.0, 8.0)
    ]
    assert eers[0] < 0.2 < eers[-1]
    assert eers[-1] > 0.45
    assert all(a <= b + 0.02 for a, b in itertools.pairwise(eers))  # loosely monotone


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_large_spread_beats_small_spread(seed):
    small = threat_scenario(n_trials=100, offset_spread=0.0, seed=seed)
    large = threat_scenario(n_trials=100, offset_spread=10.0, seed=seed)
    assert large.baseline.eer > small.baseline.eer
    assert large.baseline.linkability == small.baseline.linkability


def test_scenario_with_a_clear_margin_is_linked_despite_a_chance_eer():
    v = threat_scenario(n_enrolled=10, n_trials=200, margin=1.5, offset_spread=6.0, noise=0.2)
    assert v.baseline.eer > 0.4
    assert v.baseline.linkability > 0.95
    assert v.lid.lid_max > 0.9 * v.lid.ceiling


# ---------------------------------------------------------------- call-outs on a study


def test_callouts_on_the_demo_name_anon_leaky(demo):
    study, reports = demo
    callouts = threat_callouts(study, reports)
    assert [c.condition for c in callouts] == ["anon-leaky"]
    c = callouts[0]
    leaky = next(r for r in reports if r.name == "anon-leaky")
    assert c.eer == leaky.baseline.eer >= CALLOUT_EER
    assert c.lid_max == leaky.lid.lid_max >= CALLOUT_LID_MAX
    assert c.linkability > CALLOUT_LINKABILITY_FACTOR * c.chance_linkability
    assert len(c.reasons) == 2
    assert "LIDmax" in c.reasons[0] and "chance" in c.reasons[1]


def test_worst_trials_are_sorted_by_lid(demo):
    study, reports = demo
    (c,) = threat_callouts(study, reports, n_worst=8)
    worst = c.worst_trials
    assert len(worst) == 8
    assert list(worst.columns) == [
        "trial", "speaker", "rank", "margin", "LID (bits)", "p(own speaker)",
    ]  # fmt: skip
    lids = worst["LID (bits)"].to_numpy()
    assert np.all(np.diff(lids) <= 0)
    leaky = next(r for r in reports if r.name == "anon-leaky")
    assert lids[0] == leaky.lid.lid_max
    ev = study.get("anon-leaky").eval
    assert set(worst["trial"]) <= set(ev.trial_ids)


def test_callout_to_dict_is_json_safe(demo):
    study, reports = demo
    (c,) = threat_callouts(study, reports)
    d = json.loads(json.dumps(c.to_dict()))
    assert d["condition"] == "anon-leaky"
    assert d["reasons"] == list(c.reasons)
    assert len(d["worst_trials"]) == 5
    assert isinstance(c, Callout)


def test_callout_parameters(demo):
    study, reports = demo
    names = [c.condition for c in threat_callouts(study, reports, eer_min=0.0)]
    # every condition that links or singles out, whatever its EER; random does neither
    assert names == ["plain", "anon-mild", "anon-strong", "anon-leaky"]
    assert threat_callouts(study, reports, eer_min=0.49) == []
    strict = threat_callouts(study, reports, lid_max_min=100.0, linkability_factor=100.0)
    assert strict == []
    lid_only = threat_callouts(study, reports, linkability_factor=100.0)
    assert [c.condition for c in lid_only] == ["anon-leaky"]
    assert len(lid_only[0].reasons) == 1 and "LIDmax" in lid_only[0].reasons[0]


def test_callouts_skip_reports_of_removed_conditions(demo):
    study, reports = demo
    assert threat_callouts(study.without("anon-leaky"), reports) == []


def test_callouts_without_lid_use_linkability_only(demo):
    study, _ = demo
    from voxmetrics.data.study import Condition, Study

    nodev = Study(conditions=(Condition("leaky", eval=study.get("anon-leaky").eval),))
    (c,) = threat_callouts(nodev, evaluate_study(nodev, bootstrap=0))
    assert c.lid_max is None
    assert len(c.reasons) == 1 and "linked" in c.reasons[0]
    assert "LID (bits)" not in c.worst_trials.columns
    assert np.all(np.diff(c.worst_trials["margin"].to_numpy()) <= 0)


def test_linked_trials_are_the_linkability():
    # a tie with the own speaker is a link, as linkability counts it; the rank still says 2
    scores = [list(r) for r in PAPER_EXAMPLE_SCORES]
    scores[0][1] = 0.9
    v = threat_view(paper_matrix(scores, PAPER_EXAMPLE_TARGETS), w=PAPER_EXAMPLE_W)
    assert v.linked.tolist() == [True, True, True, True]
    assert v.linked.mean() == v.baseline.linkability
    assert v.ranks.tolist() == [2, 1, 1, 1]


# ---------------------------------------------------------------- the editable example, the table


def test_example_frame_reads_back_to_the_paper_example():
    frame = example_frame()
    assert frame.shape == (4, 5) and frame.index.tolist()[0] == "trial 1"
    assert frame[EXAMPLE_OWN_COLUMN].tolist() == [t + 1 for t in PAPER_EXAMPLE_TARGETS]
    view = example_view(frame, w=PAPER_EXAMPLE_W)
    ref = threat_view(paper_matrix(), w=PAPER_EXAMPLE_W)
    assert view.summary() == ref.summary()
    assert example_view(frame.astype(float)).summary() == ref.summary()  # the editor's floats


@pytest.mark.parametrize(
    ("cell", "value", "message"),
    [
        (("trial 2", "speaker 3"), np.nan, "Some cells are empty: trial 2 (speaker 3)"),
        (("trial 1", EXAMPLE_OWN_COLUMN), np.nan, "trial 1 (own speaker)"),
        (("trial 4", EXAMPLE_OWN_COLUMN), 2.5, "whole number from 1 to 4"),
        (("trial 3", EXAMPLE_OWN_COLUMN), 7.0, "between 1 and 4"),
        (("trial 3", EXAMPLE_OWN_COLUMN), 0.0, "between 1 and 4"),
    ],
)
def test_example_view_explains_a_bad_edit(cell, value, message):
    frame = example_frame().astype(float)
    frame.loc[cell] = value
    with pytest.raises(VoxMetricsInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        example_view(frame)


def test_example_view_by_hand_after_an_edit():
    frame = example_frame()
    frame.loc["trial 1", "speaker 2"] = 0.95  # trial 1's own speaker is no longer on top
    view = example_view(frame, w=0.0)
    assert view.linked.tolist() == [False, True, True, True]
    assert view.baseline.linkability == 0.75 and view.lid.alid == 0.0


def test_checked_conditions_lists_every_report(demo):
    study, reports = demo
    callouts = threat_callouts(study, reports)
    df = checked_conditions(reports, callouts)
    assert df["Condition"].tolist() == DEMO_NAMES
    assert df.set_index("Condition")["Called out"].to_dict() == {
        n: n == "anon-leaky" for n in DEMO_NAMES
    }
    for r, row in zip(reports, df.itertuples(index=False), strict=True):
        assert row.EER == r.baseline.eer and row.Linkability == r.baseline.linkability
    assert checked_conditions(reports, [])["Called out"].sum() == 0
