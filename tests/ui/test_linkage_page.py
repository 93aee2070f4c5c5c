"""The Linkage page's text and its reports (voxmetrics.ui.linkage_page): linkage evaluated alone."""

from __future__ import annotations

import pandas as pd
import pytest
from app_cases import APP, open_page
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis import linkage
from voxmetrics.data.study import Study
from voxmetrics.ui import condition_report
from voxmetrics.ui.state import STUDY_KEY

LINKAGE = "pages/6_Linkage.py"

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _page(study: Study | None = None) -> AppTest:
    return open_page(LINKAGE, study, timeout=90)


def _summary(at: AppTest) -> pd.DataFrame:
    return at.dataframe[-1].value


def _linkage_columns(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["DeID", "G_VD (dB)", "DeID 95% CI", "G_VD 95% CI (dB)"])


def test_linkage_page_evaluates_linkage_alone_with_the_full_reports_numbers():
    from voxmetrics.ui.widgets import stored_report

    at = _page()
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    # the page evaluated no condition in full (no LID, SRD or ZEBRA)...
    assert all(stored_report(c, **options) is None for c in study.conditions)
    # ...and its table holds the full reports' numbers, intervals included
    full = {c.name: condition_report(c, **options) for c in study.conditions}
    pd.testing.assert_frame_equal(
        _linkage_columns(_summary(at)), _linkage_columns(linkage.linkage_table(full))
    )


def test_linkage_page_takes_the_reports_another_page_computed():
    from voxmetrics.ui.linkage_page import LINKAGE_PARTS
    from voxmetrics.ui.widgets import stored_parts

    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    plain = study.get("plain")
    condition_report(plain, **options)  # as the Overview does
    at.switch_page(LINKAGE).run()
    assert not at.exception and not at.error
    assert stored_parts(plain, options, LINKAGE_PARTS) is None  # taken from the report
    others = [c for c in study.conditions if c.name != "plain"]
    assert all(stored_parts(c, options, LINKAGE_PARTS) is not None for c in others)
    assert list(_summary(at)["Condition"]) == DEMO_NAMES
