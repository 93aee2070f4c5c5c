"""What an evaluation is asked for (voxmetrics.evaluation.options): options and report parts."""

from __future__ import annotations

import dataclasses

import pytest

from voxmetrics.data.study import Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import ALL_PARTS, EvaluationOptions, check_parts
from voxmetrics.evaluation.threat import IDENTITY_PARTS
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study() -> Study:
    return demo_study(n_speakers=16, seed=3)


def test_options_for_parts_keep_what_their_numbers_depend_on():
    every = EvaluationOptions(
        cross_calibrate=3, lid_variant="maximum-likelihood", bootstrap=50, seed=4,
        ties="attacker", linkability_rule="strict",
    )  # fmt: skip
    zebra = every.for_parts(["zebra"])
    assert (zebra.ties, zebra.bootstrap, zebra.seed) == ("attacker", 50, 0)
    assert zebra.cross_calibrate is None and zebra.linkability_rule == "code"
    linkage = every.for_parts(["linkability", "singling_out"])
    assert (linkage.linkability_rule, linkage.ties, linkage.seed) == ("strict", "reference", 0)
    assert every.for_parts(IDENTITY_PARTS).cross_calibrate == 3
    assert every.for_parts(ALL_PARTS) == every
    # a page option outside the parts' keys the same result as the study's settings
    assert dataclasses.replace(every, cross_calibrate=9).for_parts(["zebra"]) == zebra


def test_options_are_validated_once_when_made():
    assert EvaluationOptions(lid_variant="metrics").lid_variant == "maximum-likelihood"
    assert EvaluationOptions.of({"seed": 3}, bootstrap=10) == EvaluationOptions(
        seed=3, bootstrap=10
    )
    for bad in (
        {"ties": "sometimes"},
        {"linkability_rule": "loose"},
        {"score_kind": "probability"},
        {"lid_variant": "magic"},
        {"bootstrap": -1},
    ):
        with pytest.raises(VoxMetricsInputError):
            EvaluationOptions(**bad)
    with pytest.raises(VoxMetricsInputError, match="unknown report part"):
        check_parts(["lid", "eer"])
