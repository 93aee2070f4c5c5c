"""The ZEBRA page evaluates ZEBRA alone (voxmetrics.ui.zebra_page.zebra_reports), with its numbers.

AppTest with every dashboard cache empty before and after each test (style.md 17).
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from app_cases import open_page, page_after_a_full_report

from voxmetrics.ui import condition_report
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.widgets import stored_report
from voxmetrics.ui.zebra_page import ZEBRA_PARTS

pytestmark = pytest.mark.usefixtures("fresh_app_caches")

ZEBRA = "pages/5_ZEBRA.py"


def _zebra_expected(study, options):
    from voxmetrics.analysis.zebra import zebra_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = {c.name: condition_report(c, **options) for c in study.conditions}
    return zebra_table(
        {n: r.zebra for n, r in full.items()},
        {n: r.zebra_intervals for n, r in full.items()},
        eer={n: r.baseline.eer for n, r in full.items()},
    )


def test_zebra_page_evaluates_zebra_alone_with_the_full_reports_numbers():
    at = open_page(ZEBRA, timeout=240)
    assert not at.error, at.error
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    assert at.number_input(key="vm_zebra_boot").value == options["bootstrap"] > 0
    assert all(stored_report(c, **options) is None for c in study.conditions)
    pd.testing.assert_frame_equal(at.dataframe[0].value, _zebra_expected(study, options))


def test_zebra_page_takes_the_reports_another_page_computed():
    at, study, options = page_after_a_full_report(ZEBRA, ZEBRA_PARTS)
    pd.testing.assert_frame_equal(at.dataframe[0].value, _zebra_expected(study, options))
