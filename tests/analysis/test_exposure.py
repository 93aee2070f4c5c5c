"""Who stays exposed (voxmetrics.analysis.exposure, evaluation.threat.study_exposure)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from voxmetrics.analysis.exposure import (
    EXPOSED_RANK1,
    condition_exposure,
    exposed_speakers,
    speaker_attributes,
)
from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.threat import study_exposure
from voxmetrics.synth import demo_study


def test_condition_exposure_by_hand():
    f = condition_exposure(
        ["a", "a", "a", "b", "b", "c"],
        [1, 1, 2, 1, 3, 2],
        5,
        lid=[2.0, 0.5, -1.0, 0.1, -3.0, -1e6],
        predicates=["a", "b", "b"],
        isolation=[0.8, 0.2, 0.4],
    )
    rows = f.set_index("speaker")
    assert rows["n_trials"].tolist() == [3, 2, 1]
    assert rows["rank1_rate"].tolist() == pytest.approx([2 / 3, 0.5, 0.0])
    assert rows["chance"].tolist() == [0.2] * 3
    assert rows["lid_max"].tolist() == [2.0, 0.1, -64.0]  # the display floor
    assert rows["singled_out"].tolist() == [True, False, None]
    assert rows["exposed"].tolist() == [True, True, False]  # 0.5 is exposed
    assert EXPOSED_RANK1 == 0.5


def test_the_table_sorts_by_conditions_exposed_then_mean_rate():
    a = condition_exposure(["x", "y", "z"], [1, 1, 2], 4)
    b = condition_exposure(["x", "y", "z"], [1, 2, 1], 4)
    c = condition_exposure(["x", "y"], [2, 2], 4)
    attrs = pd.DataFrame({"sex": ["F", "M", "F"]}, index=["x", "y", "z"])
    e = exposed_speakers({"A": a, "B": b, "C": c}, attributes=attrs)
    f = e.frame()
    # x exposed twice; z and y once each, z first on its mean rank-1 rate (0.5 > 1/3)
    assert f["Speaker"].tolist() == ["x", "z", "y"]
    assert f["Exposed under"].tolist() == [2, 1, 1]
    assert f["Conditions"].tolist() == [3, 2, 3]
    assert f["Sex"].tolist() == ["F", "F", "M"]
    assert f["Mean rank-1 rate"].tolist() == pytest.approx([2 / 3, 0.5, 1 / 3])
    assert "A: rank-1 rate" in f.columns and "A: LIDmax (bits)" not in f.columns
    d = json.loads(json.dumps(e.to_dict(), allow_nan=False))
    assert [s["speaker"] for s in d["speakers"]] == ["x", "z", "y"]
    assert d["speakers"][0]["conditions"]["A"] == {
        "n_trials": 1, "rank1_rate": 1.0, "chance": 0.25, "lid_max": None,
        "singled_out": None, "exposed": True,
    }  # fmt: skip
    assert "C" not in d["speakers"][1]["conditions"]
    assert d["conditions"] == ["A", "B", "C"] and d["threshold"] == EXPOSED_RANK1


def test_speaker_attributes_first_value_per_speaker():
    t = pd.DataFrame({"speaker": ["a", "a", "b"], "age_group": ["18-35", "18-35", "56+"]})
    assert speaker_attributes([t, pd.DataFrame({"x": [1]})]).to_dict() == {
        "age_group": {"a": "18-35", "b": "56+"}
    }
    assert speaker_attributes([]).empty


def test_the_demo_leaky_speakers_are_the_most_exposed_under_anon_leaky():
    study = demo_study(n_speakers=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        reports = evaluate_study(study, bootstrap=0)
    e = study_exposure(study, reports, exclude=["plain"])
    assert e.conditions == ("random", "anon-mild", "anon-strong", "anon-leaky")
    f = e.frame()
    assert {"Sex", "Age group"} <= set(f.columns)
    leaky = f.set_index("Speaker")["anon-leaky: rank-1 rate"]
    # the exposed minority (10 % of the speakers keep 90 % of their identity) is found
    assert (leaky >= EXPOSED_RANK1).sum() >= 2
    # random exposes (almost) nobody: its rank-1 rates are near chance
    assert f["random: rank-1 rate"].mean() < 0.2
    # sorted: the count of conditions exposed never increases down the table
    assert np.all(np.diff(f["Exposed under"].to_numpy()) <= 0)
