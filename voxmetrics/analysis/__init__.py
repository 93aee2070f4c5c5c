"""Derived tables and analyses of each metric family, shared by the CLI, report and dashboard.

The metrics' math lives in :mod:`voxmetrics.metrics`; the figures in :mod:`voxmetrics.plots`.
Here is what sits between them: the options a user picks, the attacks and per-trial views built
from a condition, and the tables (pandas DataFrames) that the dashboard shows, the report prints
and the CLI writes, one module per family. Each module computes; none imports Streamlit.
"""
