"""Paired comparisons (voxmetrics.evaluation.compare): reusing the reports gives the same numbers.

:func:`compare_conditions` given the two conditions' reports (their LID, baseline, singling out
and, when the comparison draws the same replicates, their bootstrap replicates) and their
default SBLS attacks must give exactly (``==``) what it computes without them, the former
computation kept here as the slow reference: with ties in the scores, with a dev set and with
cross-calibration, when the replicates can be reused and when they cannot. And at the default
replicates, plain and random differ after Holm's correction.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import numpy as np
import pytest
from condition_cases import tied

from voxmetrics._types import DEFAULT_BOOTSTRAP
from voxmetrics.analysis.sbls import default_attack
from voxmetrics.data.study import Condition, StudySettings
from voxmetrics.evaluation import compare_conditions, evaluate_condition
from voxmetrics.evaluation.compare import _replicates
from voxmetrics.metrics.uncertainty import SpeakerDraws
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=14)


def _same(x, y) -> bool:
    """Equal numbers (``==``), a NaN equal only to a NaN in the same place."""
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) is type(y) and x == y


def _assert_same(fast, slow) -> None:
    assert fast.keys() == slow.keys()
    for k in slow:
        assert _same(fast[k].to_dict(), slow[k].to_dict()), k


def _reused(a, b, options, n_boot, **kw):
    """The comparison given the reports and attacks, and the slow one computing them again."""
    reports = tuple(evaluate_condition(c, **options) for c in (a, b))
    attacks = (default_attack(a), default_attack(b))
    compare = {
        "n_boot": n_boot,
        "seed": options["seed"],
        "cross_calibrate": options.get("cross_calibrate"),
        "ties": options.get("ties", "reference"),
        "linkability_rule": options.get("linkability_rule", "code"),
        **kw,
    }
    fast = compare_conditions(a, b, reports=reports, attacks=attacks, **compare)
    slow = compare_conditions(a, b, **compare)
    return fast, slow, reports


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("rule", ["code", "strict"])
def test_reused_reports_give_the_same_numbers_with_many_ties(study, ties, rule):
    a, b = (tied(study.get(n), 1, keep_dev=True) for n in ("plain", "anon-mild"))
    options = {"bootstrap": 40, "seed": 3, "ties": ties, "linkability_rule": rule}
    fast, slow, _ = _reused(a, b, options, 40, original=a)
    assert fast["eer"].a is not None and fast["deid"].difference is not None
    assert "sbls" in fast  # the demo's embeddings carry attributes: SBLS is compared
    _assert_same(fast, slow)


def test_reused_replicates_are_the_comparisons_draws(study):
    # the same speakers, replicates and seed: the report's own replicates are taken as they are
    a = study.get("anon-leaky")
    options = {"bootstrap": 30, "seed": 5}
    report = evaluate_condition(a, **options)
    draws = SpeakerDraws.draw(a.eval.trial_speakers, n_boot=30, seed=5)
    reused = _replicates(a, report, draws, None, "reference-code", "reference", "code")
    assert reused is report.replicates
    slow = _replicates(a, None, draws, None, "reference-code", "reference", "code")
    assert _same(reused.estimates, slow.estimates)
    for k in slow.reps:
        np.testing.assert_array_equal(reused.reps[k], slow.reps[k])
    np.testing.assert_array_equal(reused.curve_reps, slow.curve_reps)


def test_other_draws_recompute_the_replicates_from_the_reports(study):
    # more replicates than the reports' bootstrap, then another tie rule: not the reports' own
    a, b = study.get("plain"), study.get("anon-strong")
    options = {"bootstrap": 20, "seed": 1}
    fast, slow, reports = _reused(a, b, options, 35, original=a)
    _assert_same(fast, slow)
    draws = SpeakerDraws.draw(a.eval.trial_speakers, n_boot=20, seed=1)
    other = _replicates(a, reports[0], draws, None, "reference-code", "attacker", "code")
    assert other is not reports[0].replicates


def test_reused_reports_with_cross_calibration_and_no_dev(study):
    a, b = (dataclasses.replace(study.get(n), dev=None) for n in ("plain", "anon-leaky"))
    options = {"bootstrap": 25, "seed": 4, "cross_calibrate": 2}
    fast, slow, _ = _reused(a, b, options, 25)
    assert fast["alid"].a is not None  # LID cross-calibrated on eval's folds
    _assert_same(fast, slow)


def test_the_comparison_reports_its_progress(study):
    seen = []
    a, b = study.get("plain"), study.get("random")
    compare_conditions(a, b, n_boot=10, progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(seen) >= 4


@functools.cache
def demo():
    return demo_study()


def test_plain_and_random_differ_after_holm_at_the_default_replicates():
    # EER 0.009 vs 0.485: the floored resampling p (>= 1/201) made every row "not significant"
    study = demo()
    n_boot = StudySettings().bootstrap
    assert n_boot == DEFAULT_BOOTSTRAP == 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compare_conditions(
            study.get("plain"), study.get("random"), n_boot=n_boot, original=study.conditions[0]
        )
    eer = out["eer"]
    assert eer.a < 0.02 and eer.b > 0.45
    for key in ("eer", "linkability", "alid", "min_cllr", "d_ece"):
        assert out[key].p_adjusted < 0.05, key
    # the resampling p beside it is floored, and says so
    assert eer.p_resampled >= eer.p_floor == pytest.approx(1 / (n_boot + 1))
    assert eer.to_dict()["p_floor"] == eer.p_floor


# ----------------------------------------------------------------------------------------------
# compare_conditions_sbls draws its own speakers when needed; the comparison's LID uses the
# chosen variant
# ----------------------------------------------------------------------------------------------


def test_compare_conditions_sbls_draws_its_own_speakers_when_needed():
    """Draws over other speakers than the attacked ones: both attacks share new draws."""
    import numpy as np

    from voxmetrics.analysis.sbls import compare_sbls, default_attack
    from voxmetrics.evaluation import compare_conditions_sbls
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    st = demo_study(n_speakers=8)
    a, b = default_attack(st.get("plain")), default_attack(st.get("anon-mild"))
    other = SpeakerDraws.draw(["nobody"], n_boot=30, seed=4)
    got = compare_conditions_sbls(st.get("plain"), st.get("anon-mild"), other)
    union = sorted(set(np.r_[a.speakers, b.speakers].tolist()))
    want = compare_sbls(a, b, SpeakerDraws.draw(union, n_boot=30, seed=4))
    assert {k: c.to_dict() for k, c in got.items()} == {k: c.to_dict() for k, c in want.items()}
    bare = Condition("bare", eval=st.get("plain").eval)
    assert compare_conditions_sbls(bare, st.get("anon-mild"), other) == {}


@pytest.mark.parametrize("variant", ["maximum-likelihood", "reference-code"])
def test_compare_conditions_calibrates_lid_with_the_chosen_variant(variant):
    """The paired comparison's LID numbers are those of the conditions' own reports."""
    from voxmetrics.evaluation import compare_conditions, evaluate_condition

    study = demo_study(n_speakers=8)
    a, b = study.get("plain"), study.get("anon-mild")
    out = compare_conditions(a, b, n_boot=20, lid_variant=variant, sbls=False)
    for cond, side in ((a, "a"), (b, "b")):
        lid = evaluate_condition(cond, lid_variant=variant).lid
        assert getattr(out["alid"], side) == pytest.approx(lid.alid, abs=1e-12)
        assert getattr(out["lid_max"], side) == pytest.approx(lid.lid_max, abs=1e-12)
