"""A condition's numbers (voxmetrics.analysis._numbers): values, intervals, utility, reference."""

from __future__ import annotations

from voxmetrics.analysis.tradeoff import condition_numbers, has_utility
from voxmetrics.data.study import Condition
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.report.frames import overview_frame
from voxmetrics.synth import demo_study


def test_no_utility_is_null_everywhere():
    cond = demo_study(n_speakers=6).get("anon-mild")
    bare = Condition("bare", eval=cond.eval, dev=cond.dev)
    r = evaluate_condition(bare)
    assert r.utility is None and r.to_dict()["utility"] is None
    assert not has_utility([r])
    assert overview_frame([r])[["wer", "uar", "rho_f0"]].isna().all(axis=None)
    n = condition_numbers(r)
    assert n.value("wer") is None and n.value("eer") == r.baseline.eer
