"""The SRD and ZEBRA pages evaluate their metric alone (no full report), with its numbers.

AppTest with every dashboard cache empty before and after each test (style.md 17).
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from app_cases import open_page, page_after_a_full_report

from voxmetrics.analysis import srd as analysis
from voxmetrics.report import intervals_frame
from voxmetrics.ui import condition_report
from voxmetrics.ui.srd_page import SRD_PARTS
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.widgets import stored_parts, stored_report

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
    at = open_page(SRD, timeout=240)
    assert not at.error, at.error
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
    at, study, options = page_after_a_full_report(SRD, SRD_PARTS)
    stats, chance = _expected_tables(study, options)
    assert list(at.dataframe[0].value["Condition"].unique()) == DEMO_NAMES
    pd.testing.assert_frame_equal(at.dataframe[0].value, stats)
    pd.testing.assert_frame_equal(at.dataframe[1].value, chance)
