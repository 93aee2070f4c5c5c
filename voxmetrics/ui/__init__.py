"""The dashboard's shared layer: the only package that imports streamlit.

A page (``app.py`` and ``pages/`` at the repository root) calls :func:`page_setup` first,
then :func:`require_conditions`, then runs each library function through :func:`compute`,
named at the call site (``ui.compute(analysis.condition_intervals, condition, lid)``: cached on
content hashes, bad input shown as a message, warnings collected), and shows the result with
the figure builders of :mod:`voxmetrics.plots` and the tables and downloads of
:mod:`voxmetrics.ui.widgets`. Conditions are evaluated through :func:`study_reports`, the
per-condition reports every page shares, or :func:`part_reports`, the parts of them a page
shows (the same numbers).
"""

from voxmetrics.ui.access import require_login, server_settings, speaker_encoders
from voxmetrics.ui.computing import Outcome, cached, compute, content_key
from voxmetrics.ui.settings import settings_form
from voxmetrics.ui.setup import (
    MENU,
    MenuItem,
    md_escape,
    one_to_n_study,
    page_setup,
    require_conditions,
)
from voxmetrics.ui.state import get_study, load_demo, new_study, notify, set_study
from voxmetrics.ui.uploads import (
    condition_from_embedding_files,
    condition_from_score_files,
    study_with_vpc_tree,
)
from voxmetrics.ui.widgets import (
    condition_report,
    download_button,
    download_figure,
    download_table,
    identity_reports,
    identity_reports_ready,
    kept_switch,
    part_reports,
    show_figure,
    show_report_card,
    show_table,
    show_warnings,
    study_reports,
)

__all__ = [
    "MENU",
    "MenuItem",
    "Outcome",
    "cached",
    "compute",
    "condition_from_embedding_files",
    "condition_from_score_files",
    "condition_report",
    "content_key",
    "download_button",
    "download_figure",
    "download_table",
    "get_study",
    "identity_reports",
    "identity_reports_ready",
    "kept_switch",
    "load_demo",
    "md_escape",
    "new_study",
    "notify",
    "one_to_n_study",
    "page_setup",
    "part_reports",
    "require_conditions",
    "require_login",
    "server_settings",
    "set_study",
    "settings_form",
    "show_figure",
    "show_report_card",
    "show_table",
    "show_warnings",
    "speaker_encoders",
    "study_reports",
    "study_with_vpc_tree",
]
