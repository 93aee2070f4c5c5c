"""Privacy against utility (voxmetrics.analysis.tradeoff): the Pareto front.

Hand-computed fronts and hypothesis invariants of the front (no front point dominated, every
other point dominated), the references, and the report-level front, ranking and call-outs of the
demo. VoicePrivacy's ranking and the call-out (voxmetrics.analysis.ranking) are in
test_ranking.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.ranking import (
    report_callouts,
    report_ranking,
    voiceprivacy_ranking,
)
from voxmetrics.analysis.tradeoff import (
    PRIVACY_METRICS,
    ConditionNumbers,
    pareto_front,
    privacy_utility_tradeoff,
    reference_condition,
    report_tradeoff,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_study
from voxmetrics.synth import demo_study


def _c(name, attacker="semi-informed", chance=None, **values):
    return ConditionNumbers(name, attacker, values, chance_linkability=chance)


# ------------------------------------------------------------------ the Pareto front


def test_front_by_hand_eer_against_wer():
    # EER higher is better, WER lower is better.
    # a (0.30, 0.05) dominates b (0.20, 0.08); c (0.40, 0.30) is the most private;
    # d (0.30, 0.05) equals a: neither dominates the other, both on the front.
    cs = [
        _c("orig", "original", eer=0.02, wer=0.018),
        _c("a", eer=0.30, wer=0.05),
        _c("b", eer=0.20, wer=0.08),
        _c("c", eer=0.40, wer=0.30),
        _c("d", eer=0.30, wer=0.05),
        _c("e", eer=0.45),  # no WER: not in the plane
    ]
    t = privacy_utility_tradeoff(cs, privacy="eer", utility="wer")
    on = {p.condition: p.on_front for p in t.points}
    assert on == {"orig": False, "a": True, "b": False, "c": True, "d": True, "e": False}
    assert [p.condition for p in t.front] == ["c", "a", "d"]
    assert t.reference is not None and t.reference.condition == "orig"
    assert [p.condition for p in t.missing] == ["e"]


def test_front_directions_lower_privacy_and_higher_utility():
    # LIDmax lower is better, UAR higher is better
    cs = [
        _c("a", lid_max=0.5, uar=0.60),
        _c("b", lid_max=2.0, uar=0.70),
        _c("c", lid_max=1.0, uar=0.55),  # dominated by a (less LIDmax, more UAR)
        _c("d", lid_max=0.2, uar=0.30),
    ]
    t = privacy_utility_tradeoff(cs, privacy="lid_max", utility="uar")
    assert [p.condition for p in t.points if p.on_front] == ["a", "b", "d"]
    # from the most private (lowest LIDmax) to the most useful
    assert [p.condition for p in t.front] == ["d", "a", "b"]


def test_sbls_is_a_protection_score():
    # SBLS: higher is more private (a protection score), unlike LID and D_ECE
    assert PRIVACY_METRICS["sbls"].higher_is_better
    assert not PRIVACY_METRICS["d_ece"].higher_is_better
    cs = [_c("a", sbls=0.9, wer=0.05), _c("b", sbls=0.8, wer=0.05)]
    t = privacy_utility_tradeoff(cs, privacy="sbls", utility="wer")
    assert [p.on_front for p in t.points] == [True, False]


def test_reference_never_on_the_front_even_when_best():
    cs = [_c("orig", "original", eer=0.9, wer=0.0), _c("a", eer=0.3, wer=0.1)]
    t = privacy_utility_tradeoff(cs)
    assert [p.on_front for p in t.points] == [False, True]
    # an explicit reference name works without attacker "original"
    t = privacy_utility_tradeoff(
        [_c("plain", eer=0.9, wer=0.0), _c("a", eer=0.3, wer=0.1)], reference="plain"
    )
    assert t.reference.condition == "plain" and not t.reference.on_front


def test_unknown_metric_is_refused():
    with pytest.raises(VoxMetricsInputError, match="privacy metric 'foo'"):
        privacy_utility_tradeoff([], privacy="foo")
    with pytest.raises(VoxMetricsInputError, match="utility metric 'bar'"):
        privacy_utility_tradeoff([], utility="bar")
    with pytest.raises(VoxMetricsInputError, match="one value per point"):
        pareto_front([1.0, 2.0], [1.0])


def _dominates(p, u, j, i):
    return p[j] >= p[i] and u[j] >= u[i] and (p[j] > p[i] or u[j] > u[i])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=25
    ),  # small integer grids: many ties and duplicates
    st.booleans(),
    st.booleans(),
)
def test_front_invariants(pairs, p_up, u_up):
    p = np.array([a for a, _ in pairs], dtype=float)
    u = np.array([b for _, b in pairs], dtype=float)
    mask = pareto_front(p, u, privacy_higher_is_better=p_up, utility_higher_is_better=u_up)
    pp, uu = (p if p_up else -p), (u if u_up else -u)
    n = len(p)
    for i in range(n):
        dominated = any(_dominates(pp, uu, j, i) for j in range(n))
        # no front point is dominated; every point off the front is dominated
        assert mask[i] == (not dominated)
    assert mask.any()  # a finite set always has a non-dominated point


# ------------------------------------------------------------------ on the condition reports
# (the demo's front, ranking and call-outs; more invariants below)


@pytest.fixture(scope="module")
def demo_reports():
    return evaluate_study(demo_study(n_speakers=12), bootstrap=0)


def test_report_level_tradeoff_ranking_callouts(demo_reports):
    assert reference_condition(demo_reports, "plain") == "plain"
    t = report_tradeoff(demo_reports, privacy="eer", utility="wer", reference="plain")
    on = {p.condition for p in t.points if p.on_front}
    assert "plain" not in on
    assert "random" in on  # the most private system is always on an EER front
    ranking = report_ranking(demo_reports, reference="plain")
    assert "plain" not in {x.condition for x in ranking.rows}
    assert {x.condition for x in ranking.band(0.40)} >= {"random", "anon-leaky"}
    # random: every band, but last on WER in each
    for band in ranking.bands:
        rows = ranking.band(band)
        if rows:
            assert rows[-1].condition == "random"
    called = {c.condition for c in report_callouts(demo_reports, reference="plain")}
    assert "anon-leaky" in called and "random" not in called


def test_every_original_condition_is_a_reference():
    from voxmetrics.plots.utility import tradeoff_figure

    cs = [
        _c("orig-b1", "original", eer=0.02, wer=0.018),
        _c("orig-b2", "original", eer=0.03, wer=0.018),
        _c("b1", eer=0.3, wer=0.05),
    ]
    t = privacy_utility_tradeoff(cs)
    assert [p.condition for p in t.references] == ["orig-b1", "orig-b2"]
    assert [p.condition for p in t.front] == ["b1"]
    assert voiceprivacy_ranking(cs, attacker="original").rows == ()
    stars = tradeoff_figure(t).data[2]
    assert list(stars.x) == [0.02, 0.03]
    # near each other: one label for both, no overprint
    assert sum(1 for x in stars.text if x) == 1
