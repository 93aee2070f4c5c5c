"""Shared look of the figures: colours (Okabe-Ito, colour-blind safe) and the base layout."""

from __future__ import annotations

from typing import Any

__all__ = ["CHANCE_COLOR", "CONDITION_COLOR", "MATED_COLOR", "NON_MATED_COLOR", "base_layout"]

MATED_COLOR = "#D55E00"
"""Mated (same-speaker) scores: vermillion."""
NON_MATED_COLOR = "#0072B2"
"""Non-mated (different-speaker) scores: blue."""
CONDITION_COLOR = "#0072B2"
"""Markers of conditions."""
CHANCE_COLOR = "#7f7f7f"
"""Chance levels: grey, dashed."""


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
