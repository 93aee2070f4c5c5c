"""Plotly figure builders (design.md layer 5): result objects in, ``go.Figure`` out.

Builders never read files, never import streamlit and never recompute a metric; the only
arithmetic they do is for display (e.g. turning counts into densities).
"""

from voxmetrics.plots.overview import eer_linkability_figure
from voxmetrics.plots.scores import score_histogram_figure
from voxmetrics.plots.style import MATED_COLOR, NON_MATED_COLOR, base_layout

__all__ = [
    "MATED_COLOR",
    "NON_MATED_COLOR",
    "base_layout",
    "eer_linkability_figure",
    "score_histogram_figure",
]
