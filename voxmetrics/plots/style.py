"""Shared look of the figures: colours (Okabe-Ito, colour-blind safe) and the base layout."""

from __future__ import annotations

from collections.abc import Sequence
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
