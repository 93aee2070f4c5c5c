"""Shared look of the figures: colours (Okabe-Ito, colour-blind safe) and the base layout."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "CHANCE_COLOR",
    "CONDITION_COLOR",
    "CONDITION_PALETTE",
    "LEVEL_COLOURS",
    "LEVEL_TEXT_COLOURS",
    "MATED_COLOR",
    "NON_MATED_COLOR",
    "base_layout",
    "condition_colors",
    "log_ticks",
    "merged_labels",
]

MATED_COLOR = "#D55E00"
"""Mated (same-speaker) scores: vermillion."""
NON_MATED_COLOR = "#0072B2"
"""Non-mated (different-speaker) scores: blue."""
CONDITION_COLOR = "#0072B2"
"""Markers of conditions."""
CHANCE_COLOR = "#7f7f7f"
"""Chance levels: grey, dashed."""

CONDITION_PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#E69F00",  # orange (after sky blue: too close to vermillion to be its neighbour)
    "#999999",  # grey
)
"""Okabe-Ito colours of the conditions in study order. Black is kept for references such as
ZEBRA's zero evidence and the yellow is left out (unreadable on white)."""

LEVEL_COLOURS: dict[str, str] = {
    "ok": "#C9E9DC",  # light bluish green (Okabe-Ito #009E73 tint)
    "caution": "#F9D98B",  # amber (Okabe-Ito #E69F00 tint), darker than ok
    "risk": "#E8906F",  # vermillion (Okabe-Ito #D55E00 tint), the darkest
    "uninformative": "#D5DDE8",  # greyish blue: neither safe nor a finding
    "n/a": "#EFEFEF",  # light grey
}
"""Cell backgrounds of the report card's levels (:mod:`voxmetrics.evaluation.card`). Hue and
lightness change from ok to risk (bluish green, amber, then a darker vermillion), so the levels
stay apart under red-green colour blindness; the text colours below reach a contrast of 7:1 or
more on the three levels and 5.6:1 on n/a."""

LEVEL_TEXT_COLOURS: dict[str, str] = {
    "ok": "#0B2E22",
    "caution": "#3A2A00",
    "risk": "#2B0D00",
    "uninformative": "#1E2A3A",
    "n/a": "#5F5F5F",
}
"""Text colours of the report card's levels, one dark shade of each background."""


def condition_colors(names: Sequence[str]) -> dict[str, str]:
    """A colour per condition, by its position in the study, the same on every page.

    Pass every condition of the study, not only the selected ones, so that a condition keeps
    its colour when others are deselected.

    Examples
    --------
    >>> condition_colors(["plain", "random"])
    {'plain': '#0072B2', 'random': '#D55E00'}
    """
    return {n: CONDITION_PALETTE[k % len(CONDITION_PALETTE)] for k, n in enumerate(names)}


def base_layout(**overrides: Any) -> dict[str, Any]:
    """Layout keywords every figure starts from (white template, compact margins).

    Parameters
    ----------
    **overrides
        Layout keywords that replace the defaults.

    Returns
    -------
    dict
        Keywords for ``go.Figure.update_layout``.

    Examples
    --------
    >>> base_layout(height=300)["height"]
    300
    """
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "font": {"size": 13},
        "margin": {"l": 70, "r": 30, "t": 60, "b": 100},
        "height": 500,
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.16, "x": 0},
    }
    layout.update(overrides)
    return layout


def merged_labels(
    x: Sequence[float | None],
    y: Sequence[float | None],
    labels: Sequence[str],
    *,
    x_tol: float,
    y_tol: float,
) -> list[str]:
    """Text labels of scatter points where points that (nearly) coincide share one label.

    Points closer than ``x_tol`` and ``y_tol`` to a point of a group join it (in order);
    the group's first point carries every name, comma-separated, and the others none, so
    the names of conditions with the same numbers do not overprint. A point without a
    coordinate (None, NaN) keeps its own label.

    Examples
    --------
    >>> merged_labels([0.0, 0.0, 0.3], [1.0, 1.0, 0.2], ["a", "b", "c"], x_tol=0.01, y_tol=0.01)
    ['a, b', '', 'c']
    """
    n = len(labels)
    out = list(labels)
    group_of = [-1] * n

    def point(a: float | None, b: float | None) -> tuple[float, float] | None:
        if a is None or b is None or a != a or b != b:  # no coordinate: None or NaN
            return None
        return (a, b)

    points = [point(x[i], y[i]) for i in range(n)]
    for i in range(n):
        if group_of[i] >= 0 or points[i] is None:
            continue
        group = [i]
        group_of[i] = i
        for j in range(i + 1, n):
            pj = points[j]
            if group_of[j] >= 0 or pj is None:
                continue
            if any(
                abs(pj[0] - pk[0]) <= x_tol and abs(pj[1] - pk[1]) <= y_tol
                for pk in (points[k] for k in group)
                if pk is not None
            ):
                group.append(j)
                group_of[j] = i
        if len(group) > 1:
            out[i] = ", ".join(labels[k] for k in group)
            for k in group[1:]:
                out[k] = ""
    return out


def log_ticks(
    top: int,
    *,
    low: int = 1,
    candidates: Iterable[int] | None = None,
    min_fraction: float = 0.05,
) -> list[int]:
    """Ticks of a log axis from ``low`` to ``top`` whose labels do not overprint.

    ``candidates`` (default 1, 2, 5 per decade) between ``low`` and ``top``, then ``top``
    itself; a tick closer to the previous one (or to ``top``) than ``min_fraction`` of the
    axis span (in log units, for two-digit labels; in proportion for longer ones) is left
    out, so "100" and "131" do not print as "100131". A narrow panel (one of three side by
    side) needs a larger ``min_fraction``, about 0.15.

    Examples
    --------
    >>> log_ticks(131)
    [1, 2, 5, 10, 20, 50, 131]
    >>> log_ticks(60, low=2)
    [2, 5, 10, 20, 50, 60]
    >>> log_ticks(131, low=2, min_fraction=0.15)
    [2, 5, 10, 20, 50, 131]
    >>> log_ticks(64, candidates=(1, 2, 4, 8, 16, 30, 32, 64, 128))
    [1, 2, 4, 8, 16, 30, 64]
    """
    top = max(int(top), low + 1)
    if candidates is None:
        candidates = [m * 10**e for e in range(len(str(top))) for m in (1, 2, 5)]
    span = math.log10(top) - math.log10(low)

    def apart(a: int, b: int) -> bool:  # room for both labels (two digits: min_fraction)
        return math.log10(b / a) >= min_fraction * span * (len(str(a)) + len(str(b))) / 4

    kept: list[int] = []
    for v in sorted({int(c) for c in candidates if low <= c < top}):
        if not kept or apart(kept[-1], v):
            kept.append(v)
    while kept and not apart(kept[-1], top):
        kept.pop()
    return [*kept, top]
