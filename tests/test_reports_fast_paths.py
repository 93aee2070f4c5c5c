"""Pages that compute only what they show: the same numbers as the full condition report.

The LID page shows the report's EER and min Cllr beside LID; where LID fails it computes the
report's ``pairwise`` and ``linkability`` parts alone (``evaluate(parts=...)``) instead of the
whole report (LID, SRD fits, ZEBRA, singling out). The reference is the full report itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.lid import LIDRow, lid_summary_frame, localised_vulnerabilities
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.evaluation import evaluate
from voxmetrics.synth import demo_study

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
