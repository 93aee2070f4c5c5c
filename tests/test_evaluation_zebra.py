"""The ZEBRA-only report: every number equal to the full report's (ties included)."""

from __future__ import annotations

import warnings

import pytest
from condition_cases import sparse, tied

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.result import ZEBRA_KEYS
from voxmetrics.evaluation.zebra import ZebraReport, evaluate_zebra, evaluate_zebra_condition
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=24, seed=3)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_same_zebra(ours: ZebraReport, full):
    assert ours.eer == full.baseline.eer
    assert ours.zebra.to_dict() == full.zebra.to_dict()
    z, fz = ours.zebra, full.zebra
    assert (z.d_ece, z.log10_l, z.tag, z.worst_index, z.worst_is_mated) == (
        fz.d_ece,
        fz.log10_l,
        fz.tag,
        fz.worst_index,
        fz.worst_is_mated,
    )
    if full.replicates is None:
        assert ours.intervals is None
    else:
        assert set(ours.intervals) == set(ZEBRA_KEYS)
        for key in ZEBRA_KEYS:
            assert ours.intervals[key] == full.intervals[key], key
            assert ours.intervals[key] == full.zebra_intervals[key], key
    assert ours.to_dict() == ZebraReport.of(full).to_dict()


@pytest.mark.parametrize("bootstrap", [0, 40])
def test_zebra_report_equals_the_full_report_on_the_demo(study, bootstrap):
    for cond in study.conditions:
        options = {"bootstrap": bootstrap, "seed": 5}
        ours = _quiet(evaluate_zebra_condition, cond, **options)
        full = _quiet(evaluate_condition, cond, **options)
        assert ours.name == cond.name
        assert_same_zebra(ours, full)
        assert_same_zebra(ZebraReport.of(full), full)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_zebra_report_equals_the_full_report_with_many_ties(study, ties):
    # scores rounded to one decimal: mated scores tie with non-mated ones
    cond = tied(study.get("anon-mild"), 1)
    options = {"bootstrap": 30, "seed": 2, "ties": ties}
    assert_same_zebra(
        _quiet(evaluate_zebra_condition, cond, **options),
        _quiet(evaluate_condition, cond, **options),
    )


def test_zebra_report_equals_the_full_report_on_a_sparse_trial_list(study):
    cond = sparse(study.get("plain"))  # 40 % of the trials miss a non-mated pair
    options = {"bootstrap": 25, "seed": 1}
    assert_same_zebra(
        _quiet(evaluate_zebra_condition, cond, **options),
        _quiet(evaluate_condition, cond, **options),
    )


def test_evaluate_zebra_reports_progress_and_refuses_bad_options(study):
    seen = []
    evaluate_zebra(study.get("plain").eval, bootstrap=5, progress=lambda f, m: seen.append(f))
    assert seen and seen[-1] == 1.0
    with pytest.raises(VoxMetricsInputError):
        evaluate_zebra(study.get("plain").eval, ties="nobody")
