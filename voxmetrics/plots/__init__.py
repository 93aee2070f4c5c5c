"""Plotly figure builders: result objects in, ``go.Figure`` out.

Builders never read files, never import streamlit and never recompute a metric; the only
arithmetic they do is for display (e.g. turning counts into densities).
"""

from voxmetrics.plots.card import card_legend_html, card_styler, card_table, report_card_figure
from voxmetrics.plots.overview import eer_linkability_figure
from voxmetrics.plots.scores import score_histogram_figure
from voxmetrics.plots.style import MATED_COLOR, NON_MATED_COLOR, base_layout
from voxmetrics.plots.threat import (
    lid_per_trial_figure,
    pooled_view_figure,
    row_view_figure,
    scenario_metrics_figure,
)
from voxmetrics.plots.utility import tradeoff_figure

__all__ = [
    "MATED_COLOR",
    "NON_MATED_COLOR",
    "base_layout",
    "card_legend_html",
    "card_styler",
    "card_table",
    "eer_linkability_figure",
    "lid_per_trial_figure",
    "pooled_view_figure",
    "report_card_figure",
    "row_view_figure",
    "scenario_metrics_figure",
    "score_histogram_figure",
    "tradeoff_figure",
]
