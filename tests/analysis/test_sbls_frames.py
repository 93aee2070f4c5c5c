"""SBLS's tables (voxmetrics.analysis.sbls.frames): components, intervals, attributes,
subgroups, intersections, identity, and the weights SBLS accepts.

One small attack worked out by hand: 40 utterances, sex predicted without error, age wrong on
every fourth utterance (i % 4 == 0, all female), so the female intersections are half
recovered and the male ones fully.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from voxmetrics.analysis.sbls.attacks import Attack
from voxmetrics.analysis.sbls.frames import (
    SBLSRow,
    attribute_frame,
    component_frame,
    identity_frame,
    intersection_frame,
    interval_frame,
    subgroup_frame,
    weights_ok,
)
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.predictions import AttributePrediction
from voxmetrics.data.study import Condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.sbls import sbls

IDX = np.arange(40)
SEX = np.array(["F", "M"] * 20)
AGE = np.array(["young"] * 20 + ["old"] * 20)
AGE_SEEN = np.where(IDX % 4 == 0, np.where(AGE == "old", "young", "old"), AGE)


@pytest.fixture(scope="module")
def attack() -> Attack:
    return Attack(
        labels={"sex": SEX, "age": AGE},
        predictions={
            "sex": AttributePrediction(("F", "M"), predicted=SEX.copy()),
            "age": AttributePrediction(("old", "young"), predicted=AGE_SEEN),
        },
        speakers=np.array([f"s{i % 4}" for i in IDX]),  # F: s0, s2; M: s1, s3
        utt_ids=np.array([f"u{i}" for i in IDX]),
        attacker="hand-made",
        key="k",
    )


@pytest.fixture(scope="module")
def result(attack):
    return sbls(attack.labels, attack.predictions, min_group_size=5)


def _condition(name: str) -> Condition:
    sm = ScoreMatrix.from_arrays(
        [[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"], trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )  # fmt: skip
    return Condition(name, eval=sm)


def test_component_frame_by_hand(result):
    iv = BootstrapInterval(result.sbls, 0.2, 0.3, 0.95, 100, 100)
    undefined = BootstrapInterval(None, None, None, 0.95, 100, 3)
    rows = [
        SBLSRow(_condition("a"), result=result, intervals={"sbls": iv, "p_attr": undefined},
                status="hand-made"),
        SBLSRow(_condition("b"), status="no predictions"),
    ]  # fmt: skip
    df = component_frame(rows)
    assert list(df.columns) == [
        "Condition", "Attacker", "P_attr", "P_assoc", "P_subgroup", "SBLS",
        "P_attr CI", "P_assoc CI", "P_subgroup CI", "SBLS CI", "Groups used",
    ]  # fmt: skip
    a, b = df.to_dict("records")
    assert (a["Condition"], a["Attacker"], a["P_attr"]) == ("a", "hand-made", 0.25)
    assert a["SBLS"] == result.sbls and a["P_subgroup"] == 0.0
    assert a["SBLS CI"] == "[0.200, 0.300]" and a["P_attr CI"] == "undefined"
    assert a["P_assoc CI"] is None and a["Groups used"] == "4 of 4"
    assert b["Attacker"] == "no predictions" and np.isnan(b["SBLS"]) and pd.isna(b["Groups used"])
    assert df["P_attr"].dtype == np.float64
    assert "P_attr CI" not in component_frame(rows, intervals=False).columns


def test_interval_frame_has_one_row_per_interval(result):
    iv = BootstrapInterval(0.26, 0.2, 0.3, 0.95, 100, 98)
    rows = [
        SBLSRow(_condition("a"), result=result, intervals={"sbls": iv}, status="hand-made"),
        SBLSRow(_condition("b")),
    ]
    df = interval_frame(rows)
    assert df.to_dict("records") == [
        {"condition": "a", "component": "SBLS", "estimate": 0.26, "low": 0.2, "high": 0.3,
         "confidence": 0.95, "n_boot": 100, "n_valid": 98, "attacker": "hand-made"},
    ]  # fmt: skip
    assert interval_frame([]).empty and list(interval_frame([]).columns) == list(df.columns)


def test_attribute_and_subgroup_frames_by_hand(result):
    attrs = attribute_frame(result).set_index("Attribute")
    assert attrs.loc["sex", "Classes"] == "F, M" and attrs.loc["age", "Classes"] == "old, young"
    assert attrs.loc["sex", "Balanced accuracy"] == 1.0 and attrs.loc["age", "Leakage L_a"] == 0.5
    assert attrs.loc["age", "Balanced accuracy"] == 0.75  # 5 of the 20 of each class wrong
    assert attrs["AUC (aligned)"].isna().all()  # hard predictions: no AUC
    sub = subgroup_frame(result)
    assert list(sub.columns) == ["Attribute", "Within subgroup", "n", "AUC", "Leakage",
                                 "Accuracy", "Used"]  # fmt: skip
    assert "all" not in set(sub["Attribute"])  # the intersections are intersection_frame's
    age = sub[sub["Attribute"] == "age"].set_index("Within subgroup")
    assert age.loc["sex=F", "Accuracy"] == 0.5 and age.loc["sex=M", "Accuracy"] == 1.0
    assert sub["n"].tolist() == [20, 20, 20, 20]


def test_intersection_frame_by_hand(result, attack):
    df = intersection_frame(result)
    assert df["Subgroup"].tolist() == [
        "sex=F & age=old", "sex=F & age=young", "sex=M & age=old", "sex=M & age=young",
    ]  # fmt: skip
    assert df["Utterances"].tolist() == [10, 10, 10, 10]
    assert df["Joint recovery L_g"].tolist() == [0.5, 0.5, 1.0, 1.0]
    assert df["Protection 1 - L_g"].tolist() == [0.5, 0.5, 0.0, 0.0]
    with_speakers = intersection_frame(result, attack)
    assert list(with_speakers.columns)[:3] == ["Subgroup", "Utterances", "Speakers"]
    assert with_speakers["Speakers"].tolist() == [2, 2, 2, 2]


def test_identity_frame_puts_sbls_beside_the_identity_metrics(result):
    rows = [
        SBLSRow(_condition("a"), result=result),
        SBLSRow(_condition("b")),  # no result: no row
        SBLSRow(_condition("c"), result=result),  # no report: identity cells empty
    ]
    report = SimpleNamespace(
        baseline=SimpleNamespace(eer=0.31, linkability=0.2), lid=SimpleNamespace(lid_max=1.5)
    )
    df = identity_frame(rows, {"a": report, "c": None})
    assert list(df.columns) == ["Condition", "SBLS", "P_attr", "EER", "LIDmax (bits)",
                                "Linkability"]  # fmt: skip
    assert df["Condition"].tolist() == ["a", "c"]
    assert df.iloc[0, 1:].tolist() == [result.sbls, 0.25, 0.31, 1.5, 0.2]
    assert df.iloc[1, 3:].isna().all() and (df.dtypes.iloc[1:] == np.float64).all()
    assert isinstance(identity_frame([], {}), pd.DataFrame) and identity_frame([], {}).empty


@pytest.mark.parametrize(
    ("weights", "ok"),
    [
        ((0.4, 0.4, 0.2), True),
        ((0.1 + 0.2, 0.3, 0.4), True),  # sums to 1 up to binary noise
        ((1.0, 0.0, 0.0), True),
        ((0.5, 0.5), False),
        ((1.2, -0.2, 0.0), False),
        ((0.3, 0.3, 0.3), False),
    ],
)
def test_weights_ok(weights, ok):
    assert weights_ok(weights) is ok
