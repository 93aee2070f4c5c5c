"""Paired comparisons outside voxmetrics.evaluation: the p-values, the report's reference."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.paired import paired_p_values
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@functools.cache
def demo():
    return demo_study()


def test_paired_p_values_are_the_normal_approximation_of_the_bootstrap():
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 0.1, 200)  # z about 5
    p, p_res, floor = paired_p_values(d, 0.5)
    assert p == pytest.approx(math.erfc(0.5 / np.std(d, ddof=1) / math.sqrt(2)))
    assert p < 1e-4 and p_res == floor == 1 / 201  # below the floor of the resampling p
    # no difference: nothing to reject, at any resolution
    p0, p0_res, _ = paired_p_values(rng.normal(0.0, 0.1, 200), 0.0)
    assert p0 == 1.0 and p0_res == 1.0
    # a difference small against its spread: a large p
    assert paired_p_values(rng.normal(0.02, 0.1, 200), 0.02)[0] > 0.5


def test_the_report_compares_against_a_chosen_reference():
    study = demo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, bootstrap=20, reference="random")
    assert sr.reference == "random"
    assert set(sr.comparisons) == {f"{n} vs random" for n in study.names if n != "random"}
    assert sr.to_dict()["comparison_reference"] == "random"
    with pytest.raises(VoxMetricsInputError, match="reference 'nope'"):
        build_study_report(study, bootstrap=0, reference="nope")
