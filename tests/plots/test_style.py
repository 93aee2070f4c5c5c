"""The shared look of the figures (voxmetrics/plots/style.py): colours, layout, labels, ticks."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from voxmetrics.evaluation.card import LEVELS
from voxmetrics.plots.style import (
    CHANCE_COLOR,
    CONDITION_PALETTE,
    LEVEL_COLOURS,
    LEVEL_TEXT_COLOURS,
    MATED_COLOR,
    NON_MATED_COLOR,
    base_layout,
    condition_colors,
    log_ticks,
    merged_labels,
)


def _relative_luminance(hex_colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


# ---------------------------------------------------------------- colours


def test_levels_get_darker_from_ok_to_risk():
    """Lightness, not only hue, tells the levels apart (red-green colour blindness)."""
    ok, caution, risk = (_relative_luminance(LEVEL_COLOURS[k]) for k in ("ok", "caution", "risk"))
    assert ok > caution > risk
    assert caution - risk > 0.2


def test_every_card_level_has_a_background_and_a_text_colour():
    assert set(LEVEL_COLOURS) == set(LEVEL_TEXT_COLOURS) == set(LEVELS)
    for level in LEVELS:  # the text is the darker of the two
        assert _relative_luminance(LEVEL_TEXT_COLOURS[level]) < _relative_luminance(
            LEVEL_COLOURS[level]
        )


def test_palette_is_distinct_okabe_ito_without_yellow_or_black():
    assert len(set(CONDITION_PALETTE)) == len(CONDITION_PALETTE) == 7
    assert "#F0E442" not in CONDITION_PALETTE and "#000000" not in CONDITION_PALETTE
    assert MATED_COLOR != NON_MATED_COLOR and CHANCE_COLOR not in (MATED_COLOR, NON_MATED_COLOR)


def test_condition_colors_follow_the_position_and_cycle():
    names = [f"c{k}" for k in range(9)]
    colors = condition_colors(names)
    assert list(colors) == names
    assert [colors[n] for n in names[:7]] == list(CONDITION_PALETTE)
    assert colors["c7"] == CONDITION_PALETTE[0] and colors["c8"] == CONDITION_PALETTE[1]
    # a condition keeps its colour when the others are passed too
    assert condition_colors(["x", "c1"])["c1"] == CONDITION_PALETTE[1]
    assert condition_colors([]) == {}


# ---------------------------------------------------------------- layout


def test_base_layout_defaults_and_overrides():
    layout = base_layout()
    assert layout["template"] == "plotly_white" and layout["height"] == 500
    assert layout["legend"]["orientation"] == "h"
    custom = base_layout(height=300, title="t", legend={"x": 1})
    assert custom["height"] == 300 and custom["title"] == "t"
    assert custom["legend"] == {"x": 1}  # replaced, not merged
    assert base_layout()["height"] == 500  # a fresh dict each call
    base_layout()["font"]["size"] = 99
    assert base_layout()["font"]["size"] == 13


# ---------------------------------------------------------------- merged_labels


def test_merged_labels_join_nearby_points_through_any_member():
    # c is 0.012 from a (beyond the tolerance) but 0.007 from b, which joined a
    got = merged_labels(
        [0.0, 0.005, 0.012], [0.0, 0.0, 0.0], ["a", "b", "c"], x_tol=0.01, y_tol=0.01
    )
    assert got == ["a, b, c", "", ""]


def test_merged_labels_tolerance_is_inclusive_and_per_axis():
    assert merged_labels([0.0, 0.5], [0.0, 0.0], ["a", "b"], x_tol=0.5, y_tol=0.0) == ["a, b", ""]
    assert merged_labels([0.0, 0.0], [0.0, 0.2], ["a", "b"], x_tol=1.0, y_tol=0.1) == ["a", "b"]


def test_merged_labels_keep_points_without_a_coordinate_apart():
    got = merged_labels(
        [0.0, None, math.nan, 0.0], [0.0, 0.0, 0.0, 0.0], ["a", "b", "c", "d"],
        x_tol=0.01, y_tol=0.01,
    )  # fmt: skip
    assert got == ["a, d", "b", "c", ""]
    assert merged_labels([], [], [], x_tol=1, y_tol=1) == []


# ---------------------------------------------------------------- log_ticks


@pytest.mark.parametrize(
    ("top", "low", "expected"),
    [
        (1, 1, [1, 2]),  # the top is at least low + 1
        (10, 1, [1, 2, 5, 10]),
        (1000, 1, [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]),
        (5, 5, [5, 6]),
    ],
)
def test_log_ticks_by_hand(top, low, expected):
    assert log_ticks(top, low=low) == expected


def test_log_ticks_drop_a_candidate_too_close_to_the_top():
    assert log_ticks(131) == [1, 2, 5, 10, 20, 50, 131]  # 100 would print as "100131"
    assert log_ticks(101, candidates=[1, 10, 100]) == [1, 10, 101]
    wide = log_ticks(1000, min_fraction=0.3)
    assert wide[0] == 1 and wide[-1] == 1000 and len(wide) < 10


# ---------------------------------------------------------------- properties


@given(st_.lists(st_.tuples(st_.integers(0, 5), st_.integers(0, 5)), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_merged_labels_name_every_point_once(points):
    xs = [x / 10 for x, _ in points]
    ys = [y / 10 for _, y in points]
    names = [f"c{k}" for k in range(len(points))]
    shown = merged_labels(xs, ys, names, x_tol=0.01, y_tol=0.01)
    named = [n for text in shown if text for n in text.split(", ")]
    assert sorted(named) == sorted(names)  # each name once
    # no two labelled points coincide
    labelled = {(x, y) for x, y, text in zip(xs, ys, shown, strict=True) if text}
    assert len(labelled) == sum(1 for t in shown if t)


@given(
    st_.integers(2, 100_000),
    st_.integers(1, 2),
    st_.sampled_from([0.05, 0.1, 0.15]),
)
@settings(max_examples=80, deadline=None)
def test_log_ticks_leave_room_for_every_label(top, low, fraction):
    ticks = log_ticks(top, low=low, min_fraction=fraction)
    assert ticks[-1] == max(top, low + 1) and ticks == sorted(set(ticks))
    span = math.log10(ticks[-1]) - math.log10(low)
    for a, b in itertools.pairwise(ticks):
        room = fraction * span * (len(str(a)) + len(str(b))) / 4
        assert math.log10(b / a) >= room - 1e-12, (a, b)


def test_the_three_digit_ceiling_does_not_overprint_its_neighbour():
    assert log_ticks(131)[-2:] == [50, 131]  # not 100 beside 131 ("100131")
