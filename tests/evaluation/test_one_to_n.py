"""``voxmetrics.evaluation.one_to_n``: the complete lists the 1-to-N metrics rank, and pooling.

Small hand-built lists: which attribute splits a sparse list into complete groups, the ranks of
one complete list under the linkability rule and the tie rule, and the pooled ranks, sizes,
chance of linkability and linkability curve of groups (values worked out by hand). The
end-to-end reports of such lists are in tests/test_sparse.py and tests/test_vpc_groups.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.vpc_tree import write_tree
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.one_to_n import (
    OneToN,
    calibration_lists,
    check_group_calibration,
    complete_groups,
    condition_calibration_curve,
    dev_groups,
    group_sizes,
    one_to_n_lists,
    one_to_n_of,
    one_to_n_views,
    pooled,
    pooled_chance_linkability,
    pooled_curve,
    pooled_srd,
)
from voxmetrics.evaluation.options import EvaluationOptions
from voxmetrics.metrics.lid import calibration_curve, pooled_calibration_curve
from voxmetrics.metrics.srd import srd_from_ranks
from voxmetrics.synth import demo_study

nan = np.nan


def _per_sex(crossing: bool = False) -> ScoreMatrix:
    """Trials of a, b (f) listed against a, b; of c, d (m) against c, d; ``crossing``: t1 also
    against c (a trial listed outside its group)."""
    scores = [
        [0.9, 0.1, 0.4 if crossing else nan, nan],
        [0.2, 0.8, nan, nan],
        [nan, nan, 0.7, 0.3],
        [nan, nan, 0.1, 0.6],
        [nan, nan, 0.5, 0.2],
    ]
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=["t1", "t2", "t3", "t4", "t5"],
        trial_speakers=["a", "b", "c", "d", "c"],
        enrol_speakers=["a", "b", "c", "d"],
        attributes={"sex": ["f", "f", "m", "m", "m"], "lang": ["x", "y", "x", "y", "x"]},
        nan_missing=True,
    )


def _complete() -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        [[0.5, 0.5, 0.1], [0.9, 0.2, 0.3], [0.1, 0.2, 0.8]],
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["a", "b", "c"],
        enrol_speakers=["a", "b", "c"],
    )


def _group(label: str, n: int, ranks: list[int], srd: bool = True) -> OneToN:
    r = np.array(ranks, dtype=np.int64)
    return OneToN(
        label=label,
        n_enrolled=n,
        trial_speakers=np.array([f"{label}{i}" for i in range(r.size)]),
        link_ranks=r,
        srd_ranks=r.copy() if srd else None,
    )


# ------------------------------------------------------------------ complete groups


def test_a_per_sex_list_splits_into_its_complete_groups():
    attr, groups = complete_groups(_per_sex())
    assert attr == "sex"  # tried first, and every trial is in a complete group
    assert list(groups) == ["f", "m"]
    assert groups["f"].trial_ids.tolist() == ["t1", "t2"]
    assert groups["m"].trial_ids.tolist() == ["t3", "t4", "t5"]
    assert [g.n_enrolled for g in groups.values()] == [2, 2]
    assert all(g.is_complete for g in groups.values())
    assert [g.n_trials for g in one_to_n_lists(_per_sex())] == [2, 3]


def test_a_trial_listed_outside_its_group_leaves_no_groups():
    sm = _per_sex(crossing=True)
    assert complete_groups(sm) is None
    assert sm.complete_rows() is None and one_to_n_lists(sm) == []


def test_a_complete_list_is_its_own_one_list():
    sm = _complete()
    assert complete_groups(sm) is None
    (only,) = one_to_n_lists(sm)
    assert only.trial_ids.tolist() == ["t1", "t2", "t3"] and only.n_enrolled == 3


def test_the_views_show_each_list_as_its_numbers_rank_it():
    cut = ScoreMatrix.from_arrays(  # t1 listed against a and b; t2 against a only
        [[0.9, 0.1], [0.3, nan]],
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
        nan_missing=True,
    )
    conditions = {
        "whole": _complete(),
        "vpc": _per_sex(),
        "cut": cut,
        "nothing": _per_sex(crossing=True),
    }
    study = Study(conditions=tuple(Condition(name=n, eval=sm) for n, sm in conditions.items()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unenrolled / excluded trials of the sparse lists
        views = one_to_n_views(study)
    assert views.study.names == ["whole", "vpc", "cut"]  # the study's order
    assert views.left_out == ("nothing",) and views.partial == ("cut",)
    assert views.grouped == {"vpc": "sex"}
    shown = {c.name: c.eval for c in views.study.conditions}
    assert shown["whole"] is conditions["whole"] and shown["vpc"] is conditions["vpc"]
    assert shown["cut"].trial_ids.tolist() == ["t1"]


def test_dev_groups_without_a_dev_set_or_the_attribute_are_none():
    assert dev_groups(None, "sex", ["f", "m"]) == {"f": None, "m": None}
    assert dev_groups(_complete(), "sex", ["f"]) == {"f": None}
    got = dev_groups(_per_sex(), "sex", ["m", "z"])
    assert got["z"] is None and got["m"].trial_ids.tolist() == ["t3", "t4", "t5"]


# ------------------------------------------------------------------ one complete list


def test_link_ranks_follow_the_linkability_rule_and_srd_ranks_the_tie_rule():
    # t1 ties its target with b: the "code" rule gives it to the true speaker (rank 1), the
    # "reference" ties against it (rank 2); t2's target is last, t3's first
    sm = _complete()
    got = one_to_n_of(sm, None, EvaluationOptions(), {"linkability", "srd"}, label="all")
    assert got.label == "all" and got.n_enrolled == 3 and got.n_trials == 3
    assert got.link_ranks.tolist() == [1, 3, 1]
    assert got.srd_ranks.tolist() == [2, 3, 1]
    assert got.lid is None and got.chance is not None  # no LID asked for; SRD's chance levels
    strict = one_to_n_of(
        sm, None, EvaluationOptions(linkability_rule="strict"), {"linkability", "srd"}
    )
    assert strict.link_ranks.tolist() == strict.srd_ranks.tolist() == [2, 3, 1]
    assert strict.srd_ranks is not strict.link_ranks
    only = one_to_n_of(sm, None, EvaluationOptions(), {"linkability"})
    assert only.srd_ranks is None and only.lid is None and only.chance is None


# ------------------------------------------------------------------ pooling


def test_pooled_concatenates_the_groups_and_keeps_the_largest_n():
    a, b = _group("f", 3, [1, 2, 3]), _group("m", 4, [1, 1, 4])
    p = pooled([a, b], "sex")
    assert p.label == "pooled over sex" and p.n_enrolled == 4 and p.n_trials == 6
    assert p.trial_speakers.tolist() == ["f0", "f1", "f2", "m0", "m1", "m2"]
    assert p.link_ranks.tolist() == p.srd_ranks.tolist() == [1, 2, 3, 1, 1, 4]
    assert p.lid is None and p.chance is None  # the groups have none
    assert pooled([a, _group("m", 4, [1], srd=False)], "sex").srd_ranks is None
    n, idx = group_sizes([a, b])
    assert n.tolist() == [3, 3, 3, 4, 4, 4] and idx.tolist() == [0, 0, 0, 1, 1, 1]


def test_pooled_chance_of_linkability_is_the_mean_of_one_over_each_trials_n():
    groups = [_group("f", 2, [1, 2]), _group("m", 4, [1, 1, 1])]
    assert pooled_chance_linkability(groups) == pytest.approx((2 / 2 + 3 / 4) / 5)  # 0.35


def test_pooled_curve_is_the_mean_of_each_trials_own_expectation():
    # N' = 2: a trial with b beaters among N - 1 others keeps rank 1 with P = 1 - b / (N - 1):
    # f (N=3, beaters 0, 1, 2): 1, 1/2, 0; m (N=4, beaters 0, 0, 3): 1, 1, 0 -> 3.5 / 6.
    # N' = 3 (the smallest N): f: 1, 0, 0; m: C(3 - b, 2) / C(3, 2) = 1, 1, 0 -> 3 / 6.
    curve = pooled_curve([_group("f", 3, [1, 2, 3]), _group("m", 4, [1, 1, 4])])
    assert curve.n.tolist() == [2, 3]
    np.testing.assert_allclose(curve.expected, [3.5 / 6, 3 / 6], rtol=1e-12)
    np.testing.assert_allclose(curve.chance, [1 / 2, 1 / 3])


def test_pooled_srd_weighs_the_groups_by_their_trials_and_adds_the_histograms():
    a, b = _group("f", 2, [1, 2]), _group("m", 3, [1, 1, 3])
    got = pooled_srd([a, b])
    ra, rb = srd_from_ranks(a.srd_ranks, 2), srd_from_ranks(b.srd_ranks, 3)
    for key in ("mean_d", "idr", "std_d", "max_d", "spread"):
        want = 2 / 5 * getattr(ra.stats, key) + 3 / 5 * getattr(rb.stats, key)
        assert getattr(got.stats, key) == pytest.approx(want, rel=1e-12), key
    assert got.histogram.tolist() == [3, 1, 1]  # ranks 1: 1 + 2, 2: 1 + 0, 3: 0 + 1
    assert got.ranks.tolist() == [1, 2, 1, 1, 3] and not got.ranks.flags.writeable


def test_a_group_without_a_dev_list_is_warned_of_only_when_others_have_one():
    groups = {"f": _complete(), "m": _complete()}
    with pytest.warns(DegenerateDataWarning, match="no complete trial list for m, so LID"):
        check_group_calibration(groups, {"f": _complete(), "m": None}, with_lid=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_group_calibration(groups, {"f": None, "m": None}, with_lid=True)  # none has one
        check_group_calibration(groups, {"f": _complete(), "m": None}, with_lid=False)


# ---------------------------------------------------------------- the LID calibration's lists


def _lid_of(cond: Condition):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate_condition(cond, parts=("lid",)).lid


def test_the_calibration_curve_of_a_complete_condition_is_its_dev_matrix_curve():
    cond = demo_study(n_speakers=8).get("anon-mild")
    result = _lid_of(cond)
    view = condition_calibration_curve(cond, result, bins=10)
    ref = calibration_curve(cond.dev.scores, cond.dev.targets, result.calibration, bins=10)
    assert view.matrix == "dev" and view.group is None
    np.testing.assert_array_equal(view.curve.mated_rate, ref.mated_rate)
    np.testing.assert_array_equal(view.curve.counts, ref.counts)
    no_dev = Condition("no-dev", eval=cond.eval)
    assert condition_calibration_curve(no_dev, result, bins=10).matrix == "eval"


def test_a_voiceprivacy_condition_is_calibrated_and_binned_per_gender(tmp_path):
    """Eval and dev lists complete within each gender only (as the challenge's): the curve
    pools each gender's complete dev list, as the engine calibrated LID on them."""
    study = read_vpc_tree(write_tree(tmp_path / "vpc", n_speakers=4, n_utts=4, seed=1)).study
    cond = study.get("mcadams (semi-informed)")
    assert cond.eval.complete_rows() is None and cond.dev.complete_rows() is None
    lists, matrix, group = calibration_lists(cond)
    assert (matrix, group) == ("dev", "sex") and len(lists) == 2
    assert all(m.is_complete for m in lists)
    assert sorted(m.attributes["sex"][0] for m in lists) == ["F", "M"]
    assert sum(m.n_trials for m in lists) == cond.dev.n_trials
    result = _lid_of(cond)
    view = condition_calibration_curve(cond, result, bins=12)
    assert (view.matrix, view.group) == ("dev", "sex")
    ref = pooled_calibration_curve([(m.scores, m.targets) for m in lists], result.calibration,
                                   bins=12)  # fmt: skip
    np.testing.assert_array_equal(view.curve.counts, ref.counts)
    assert view.curve.counts.sum() == cond.dev.n_pairs  # every listed dev pair, once
    # cross-calibrated (no dev): the eval set's groups
    lists, matrix, group = calibration_lists(Condition("no-dev", eval=cond.eval))
    assert (matrix, group) == ("eval", "sex") and sum(m.n_pairs for m in lists) == cond.eval.n_pairs


def test_no_complete_dev_list_has_no_calibration_curve():
    dev = ScoreMatrix.from_arrays(  # each trial misses a pair: no complete trial, no groups
        [[0.9, nan, 0.2], [nan, 0.8, 0.1], [0.3, 0.2, nan]],
        trial_ids=["d1", "d2", "d3"],
        trial_speakers=["x", "y", "z"],
        enrol_speakers=["x", "y", "z"],
        nan_missing=True,
    )
    cond = Condition("c", eval=_complete(), dev=dev)
    assert calibration_lists(cond)[0] == []
    with pytest.raises(VoxMetricsInputError, match="no calibration curve to draw"):
        condition_calibration_curve(cond, _lid_of(Condition("d", eval=_complete())))
