"""The shared types and defaults (voxmetrics._types)."""

from __future__ import annotations

import warnings

from separable_cases import DEV, EVAL

from voxmetrics._types import DEFAULT_LID_VARIANT
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.lid import calibrate_lid


def test_the_default_calibration_is_the_authors_recipe():
    assert DEFAULT_LID_VARIANT == "reference-code"
    assert StudySettings().lid_variant == "reference-code"
    assert StudySettings().evaluate_options()["lid_variant"] == "reference-code"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)  # finite, no cap
        cal = calibrate_lid(DEV.scores, DEV.targets)
    assert cal.variant == "reference-code" and cal.converged and abs(cal.w) < 100


def test_a_study_uses_the_default_variant():
    study = Study([Condition("original", eval=EVAL, dev=DEV, attacker="original")])
    assert study.settings.lid_variant == "reference-code"
