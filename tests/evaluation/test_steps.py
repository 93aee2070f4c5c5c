"""The step from an evaluation's products to its report (voxmetrics.evaluation.steps)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from separable_cases import DEV, EVAL

from voxmetrics.data.utility import Utility
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.evaluation.steps import assemble
from voxmetrics.synth import demo_study


def test_utility_passes_through_evaluate_condition_and_assemble():
    cond = demo_study(n_speakers=6).get("anon-mild")
    u = Utility(wer=0.1, uar=0.5, intervals={"wer": (0.08, 0.12)})
    r = evaluate_condition(dataclasses.replace(cond, utility=u), by="sex")
    assert r.utility is u
    assert all(sub.utility is None for sub in r.by["sex"].values())  # subsets: none
    assert r.to_dict()["utility"]["intervals"] == {"wer": [0.08, 0.12]}
    assert evaluate(cond.eval).utility is None
    assert "utility" in inspect.signature(assemble).parameters


def test_maximum_likelihood_warns_names_the_condition_and_keeps_raw_json():
    with pytest.warns(DegenerateDataWarning, match="LID numbers beyond the display range"):
        r = evaluate(EVAL, dev=DEV, name="original", bootstrap=30, lid_variant="maximum-likelihood")
    block = r.to_dict()["lid"]
    # the JSON keeps the raw numbers and flags the ones displays clamp
    assert block["chance"]["alid"] < -1000
    assert "chance.alid" in block["beyond_display_range"]
