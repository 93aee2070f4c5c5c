"""Pages that compute only what they show: the same numbers as the full condition report.

The LID page shows the report's EER and min Cllr beside LID; it now computes the report's
``baseline`` alone (``evaluate_baseline``) instead of the whole report (LID, SRD fits, ZEBRA,
singling out). The reference is the full report itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.lid import LIDRow, lid_summary_frame, localised_vulnerabilities
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.evaluation import evaluate, evaluate_baseline
from voxmetrics.synth import demo_study


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


@pytest.mark.parametrize("cross_calibrate", [None, 3])
@pytest.mark.parametrize("variant", ["reference-code", "maximum-likelihood"])
def test_lid_and_chance_in_one_pass_equal_the_two_calls(cross_calibrate, variant):
    from voxmetrics.analysis.lid import (
        LIDOptions,
        condition_chance,
        condition_lid,
        condition_lid_and_chance,
    )
    from voxmetrics.data.study import Condition

    study = demo_study(n_speakers=7)
    for cond in (study.get("anon-mild"), Condition("no dev", eval=study.get("plain").eval)):
        options = LIDOptions(cross_calibrate=cross_calibrate, variant=variant, seed=4)
        lid, chance = condition_lid_and_chance(cond, options)
        expected = condition_lid(cond, options)
        if expected is None:
            assert (lid, chance) == (None, None)
            continue
        assert lid.calibration == expected.calibration
        for field in ("lid", "p_target", "rank"):
            assert getattr(lid, field).tolist() == getattr(expected, field).tolist()
        assert lid.to_dict() == expected.to_dict()
        alone = condition_chance(cond, expected, seed=4)
        assert chance.values == alone.values and chance.n_draws == alone.n_draws
        assert chance.curve_n.tolist() == alone.curve_n.tolist()
        assert chance.curve.tolist() == alone.curve.tolist()
