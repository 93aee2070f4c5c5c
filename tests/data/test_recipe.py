"""The attacker recipe (voxmetrics.data.recipe): its JSON, its checks, its place in a .vxm."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from voxmetrics.data import AttackerRecipe, ScoreMatrix
from voxmetrics.data.recipe import WEAK_ATTACKER
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.studyfile import manifest_problems, study_from_bytes, study_to_bytes
from voxmetrics.errors import VoxMetricsInputError


def _recipe(**kw) -> AttackerRecipe:
    base = dict(
        backend="plda",
        trained_on="train",
        n_train_speakers=60,
        n_train_utterances=480,
        parameters={"rank_f": 24, "n_iter": np.int64(10)},
        selected_by="eer",
        dev_value=0.04,
        candidates=(("cosine", 0.45), ("plda", 0.04), ("procrustes", None)),
    )
    return AttackerRecipe(**{**base, **kw})


def test_round_trip_and_json_safe():
    r = _recipe(cautions=("too few speakers",))
    d = r.to_dict()
    json.dumps(d)  # JSON-safe: numpy scalars became Python ones
    assert d["parameters"] == {"rank_f": 24, "n_iter": 10}
    assert d["weak"] and d["warning"] == WEAK_ATTACKER
    assert d["candidates"][2] == {"backend": "procrustes", "dev_value": None}
    assert AttackerRecipe.from_dict(d) == r
    assert "warning" not in _recipe().to_dict() and not _recipe().weak


def test_bad_recipes_are_refused():
    with pytest.raises(VoxMetricsInputError, match="trained_on 'eval' is unknown"):
        _recipe(trained_on="eval")
    with pytest.raises(VoxMetricsInputError, match="needs a back-end name"):
        _recipe(backend=" ")
    with pytest.raises(VoxMetricsInputError, match="a recipe parameter must be"):
        _recipe(parameters={"matrix": np.eye(2)})
    with pytest.raises(VoxMetricsInputError, match="malformed"):
        AttackerRecipe.from_dict({"trained_on": "train"})
    assert _recipe(dev_value=math.nan).dev_value is None


def test_the_recipe_travels_in_the_study_file():
    sm = ScoreMatrix.from_arrays(
        [[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"], trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )  # fmt: skip
    study = Study((Condition("x", eval=sm, recipe=_recipe()), Condition("y", eval=sm)))
    back = study_from_bytes(study_to_bytes(study))
    assert back.get("x").recipe == _recipe() and back.get("y").recipe is None
    assert back.get("x").content_hash != back.get("y").content_hash  # the report carries it
    manifest = {"format": "voxmetrics-study", "version": 1, "conditions": [
        {"name": "x", "eval": {}, "attacker_recipe": "plda"}]}  # fmt: skip
    assert "conditions[0].attacker_recipe must be an object, not text" in manifest_problems(
        manifest
    )
