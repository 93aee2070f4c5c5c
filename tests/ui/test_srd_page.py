"""The SRD and ZEBRA pages evaluate their metric alone (no full report), with its numbers.

AppTest with every dashboard cache empty before and after each test (style.md 17).
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis import srd as analysis
from voxmetrics.report import intervals_frame
from voxmetrics.ui import condition_report
from voxmetrics.ui.srd_page import SRD_PARTS
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.widgets import stored_parts, stored_report

APP = "../../app.py"  # resolved relative to this file
SRD = "pages/4_SRD.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _expected_tables(study, options):
    """The statistics and against-chance tables of the full reports, as the page built them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = {c.name: condition_report(c, **options) for c in study.conditions}
        fits = {n: analysis.condition_fits(r, ["LL", "CLL"]) for n, r in full.items()}
    stats = analysis.srd_table(
        {n: r.srd for n, r in full.items()}, fits, eer={n: r.baseline.eer for n, r in full.items()}
    )
    chance = analysis.against_chance_table(
        intervals_frame(full.values(), keys=analysis.CHANCE_KEYS)
    )
    return stats, chance


def test_srd_page_evaluates_srd_alone_with_the_full_reports_numbers():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page(SRD).run()
    assert not at.exception and not at.error, at.exception
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    assert options.get("bootstrap", 0) > 0  # the intervals are compared too
    # the page evaluated no condition in full (no LID, ZEBRA or singling out)...
    assert all(stored_report(c, **options) is None for c in study.conditions)
    assert all(stored_parts(c, options, SRD_PARTS) is not None for c in study.conditions)
    # ...and its tables hold the full reports' numbers, intervals and chance levels included
    stats, chance = _expected_tables(study, options)
    pd.testing.assert_frame_equal(at.dataframe[0].value, stats)
    pd.testing.assert_frame_equal(at.dataframe[1].value, chance)


def test_srd_page_takes_the_reports_another_page_computed():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    study = at.session_state[STUDY_KEY]
    options = study.settings.evaluate_options()
    plain = study.get("plain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        condition_report(plain, **options)  # as the Overview does
    at.switch_page(SRD).run()
    assert not at.exception and not at.error, at.exception
    assert stored_parts(plain, options, SRD_PARTS) is None  # taken from the report
    others = [c for c in study.conditions if c.name != "plain"]
    assert all(stored_parts(c, options, SRD_PARTS) is not None for c in others)
    stats, chance = _expected_tables(study, options)
    assert list(at.dataframe[0].value["Condition"].unique()) == DEMO_NAMES
    pd.testing.assert_frame_equal(at.dataframe[0].value, stats)
    pd.testing.assert_frame_equal(at.dataframe[1].value, chance)


# ---------------------------------------------------------------- the ZEBRA page
