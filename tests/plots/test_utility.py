"""The privacy-utility figure (voxmetrics/plots/utility.py): labels, markers, planes, fronts."""

from __future__ import annotations

import pytest

from voxmetrics.analysis.tradeoff import ConditionNumbers, TradeoffPoint, privacy_utility_tradeoff
from voxmetrics.plots.style import CONDITION_PALETTE
from voxmetrics.plots.utility import (
    ATTACKER_SYMBOLS,
    REFERENCE_COLOR,
    label_groups,
    tradeoff_figure,
)


@pytest.fixture
def tradeoff():
    """The original speech, one anonymiser under two attackers and another under one."""
    return privacy_utility_tradeoff(
        [
            ConditionNumbers("orig", "original", {"eer": 0.02, "wer": 0.02}),
            ConditionNumbers("alpha (ignorant)", "ignorant", {"eer": 0.2, "wer": 0.1}),
            ConditionNumbers("alpha (semi-informed)", "semi-informed", {"eer": 0.1, "wer": 0.1}),
            ConditionNumbers("beta (semi-informed)", "semi-informed", {"eer": 0.45, "wer": 0.5}),
        ]
    )


def _points(*xy: tuple[float, float]) -> list[TradeoffPoint]:
    return [TradeoffPoint(f"c{k}", "semi-informed", x, y) for k, (x, y) in enumerate(xy)]


def test_label_groups_by_hand():
    # x span 1: 0.10 apart is within 12 % of it, 0.15 is not
    assert label_groups(_points((0.0, 0.0), (0.10, 0.0), (1.0, 1.0))) == [[0, 1], [2]]
    assert label_groups(_points((0.0, 0.0), (0.15, 0.0), (1.0, 1.0))) == [[0], [1], [2]]
    # y span 1: 0.06 apart is beyond 5 % of it
    assert label_groups(_points((0.0, 0.0), (0.0, 0.06), (1.0, 1.0))) == [[0], [1], [2]]


def test_label_groups_give_long_names_more_room():
    points = _points((0.0, 0.0), (0.15, 0.0), (1.0, 1.0))
    assert label_groups(points, ["a", "b", "c"]) == [[0], [1], [2]]
    # 20 characters each: about 1.2 % of the span a character, 0.24 > 0.15
    assert label_groups(points, ["a" * 20, "b" * 20, "c"]) == [[0, 1], [2]]


def test_figure_markers_colours_and_labels(tradeoff):
    conditions, front, original = tradeoff_figure(tradeoff).data
    assert list(conditions.x) == [0.2, 0.1, 0.45] and list(conditions.y) == [0.1, 0.1, 0.5]
    assert list(conditions.marker.symbol) == [
        ATTACKER_SYMBOLS["ignorant"], ATTACKER_SYMBOLS["semi-informed"],
        ATTACKER_SYMBOLS["semi-informed"],
    ]  # fmt: skip
    # colours by position in the study: the original speech took the first
    assert list(conditions.marker.color) == list(CONDITION_PALETTE[1:4])
    # two attackers: each label names its attacker; the two alpha points share one label
    assert list(conditions.text) == [
        "alpha (ignorant) (ignorant), alpha (semi-informed) (semi-informed)",
        "",
        "beta (semi-informed) (semi-informed)",
    ]
    # labels point inwards near the ends of the x axis (0.02 to 0.45)
    assert list(conditions.textposition) == ["top center", "top center", "top left"]
    assert original.marker.symbol == "star" and original.marker.color == REFERENCE_COLOR
    assert list(original.text) == ["orig (original): original speech"]
    assert original.textposition == ("bottom right",)
    # one front per attacker, a gap between them
    assert list(front.x) == [0.2, None, 0.45, 0.1]
    assert front.line.shape == "hv" and front.line.dash == "dash"


def test_one_attackers_plane_names_the_anonymisers_alone(tradeoff):
    fig = tradeoff_figure(
        tradeoff, attacker="semi-informed", colors={"beta (semi-informed)": "#abcdef"}
    )
    conditions, front, original = fig.data
    assert list(conditions.text) == ["alpha", "beta"]
    assert list(conditions.marker.color) == ["#0072B2", "#abcdef"]  # unknown: the default
    assert list(front.x) == [0.45, 0.1]
    assert list(original.text) == ["orig: original speech"]
    assert fig.layout.title.text == "EER vs WER: semi-informed attacker"


def test_axis_titles_say_which_way_is_better():
    t = privacy_utility_tradeoff(
        [ConditionNumbers("a", "ignorant", {"eer": 0.3, "uar": 0.6})], utility="uar"
    )
    fig = tradeoff_figure(t, title="mine")
    assert fig.layout.title.text == "mine"
    assert fig.layout.xaxis.title.text.endswith("(higher is more private)")
    assert fig.layout.yaxis.title.text.endswith("(higher is more useful)")
    assert len(fig.data) == 2  # no original speech: no star
