"""Intervals, chance levels and paired comparisons in the JSON, the card and the report."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import evaluate, evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.report.frames import intervals_frame
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _random_condition(rng, name, n_spk=30, per=2, n=90) -> Condition:
    spk = [f"s{i}" for i in range(n_spk) for _ in range(per)]
    enrol = [f"s{i}" for i in range(n)]
    sm = ScoreMatrix.from_arrays(
        rng.normal(size=(len(spk), n)),
        trial_ids=[f"{name}-t{i}" for i in range(len(spk))],
        trial_speakers=spk,
        enrol_speakers=enrol,
    )
    return Condition(name=name, eval=sm)


@pytest.fixture(scope="module")
def demo_report():
    return build_study_report(demo_study(n_speakers=12), bootstrap=60)


def test_independent_random_conditions_are_at_chance_and_the_card_is_green():
    """Random scores: MeanD is biased upward (few trials against N), chance says by how much."""
    rng = np.random.default_rng(7)
    conds = [_random_condition(rng, f"r{k}") for k in range(3)]
    reports = evaluate_study(Study(name="null", conditions=tuple(conds)), bootstrap=200)
    for r in reports:
        assert r.srd.stats.mean_d > 0.5  # 60 trials against 90 identities: biased upward
        excess = r.srd.stats.mean_d - r.chance.values["mean_d"]
        assert abs(excess) < 0.15
        iv = r.intervals["linkability"]
        assert iv.low <= r.chance.values["linkability"] <= iv.high
    levels = report_card(reports).frame("level")
    assert set(levels["Linkability vs chance"]) == {"ok"}
    assert set(levels["EER"]) == {"ok"}


def test_condition_without_bootstrap_has_chance_but_no_intervals():
    rng = np.random.default_rng(1)
    r = evaluate(_random_condition(rng, "x").eval).to_dict()
    assert r["intervals"] is None and r["srd"].get("intervals") is None
    assert r["chance"]["linkability"] == pytest.approx(1 / 90)


def test_singling_out_interval_is_the_weighted_mean_of_predicate_rates(demo_report):
    from voxmetrics.metrics.embedding_intervals import singling_out_interval
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    r = next(r for r in demo_report.reports if r.name == "anon-mild")
    so = r.singling_out
    assert so.per_predicate.mean() == pytest.approx(so.value)
    iv = singling_out_interval(so, n_boot=40, seed=2)
    d = SpeakerDraws.draw(so.predicates, n_boot=40, seed=2)
    w = d.counts[:, d.index(so.predicates)]
    reps = (w * so.per_predicate).sum(1) / w.sum(1)
    np.testing.assert_allclose([iv.low, iv.high], np.quantile(reps, [0.025, 0.975]))
    c = demo_report.to_dict()["conditions"]["anon-mild"]
    assert c["intervals"]["singling_out"] == [
        r.singling_out_interval.low,
        r.singling_out_interval.high,
    ]
    row = intervals_frame([r]).set_index("key").loc["singling_out"]
    assert row["chance"] == so.chance


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
