"""The dashboard's shared layer: the only package that imports streamlit.

Pages call :func:`page_setup` first, then :func:`require_conditions`, then wire widgets to
cached library calls (:mod:`voxmetrics.ui.cache`) and figure builders (:mod:`voxmetrics.plots`),
with the downloads of :mod:`voxmetrics.ui.widgets`.
"""

from voxmetrics.ui.cache import (
    Outcome,
    condition_from_embedding_files,
    condition_from_score_files,
    condition_report,
    demo_study_cached,
    parse_embeddings,
    parse_scores,
    score_histogram_cached,
    with_trial_attributes,
)
from voxmetrics.ui.settings import settings_form
from voxmetrics.ui.setup import (
    MENU,
    MenuItem,
    md_escape,
    one_to_n_study,
    page_setup,
    require_conditions,
)
from voxmetrics.ui.state import get_study, load_demo, notify, set_study
from voxmetrics.ui.widgets import (
    call,
    download_button,
    download_figure,
    download_table,
    safe_call,
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
    "call",
    "condition_from_embedding_files",
    "condition_from_score_files",
    "condition_report",
    "demo_study_cached",
    "download_button",
    "download_figure",
    "download_table",
    "get_study",
    "load_demo",
    "md_escape",
    "notify",
    "one_to_n_study",
    "page_setup",
    "parse_embeddings",
    "parse_scores",
    "require_conditions",
    "safe_call",
    "score_histogram_cached",
    "set_study",
    "settings_form",
    "show_figure",
    "show_report_card",
    "show_table",
    "show_warnings",
    "study_reports",
    "with_trial_attributes",
]
