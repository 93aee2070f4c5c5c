"""The LID display range outside voxmetrics.evaluation (issue #27): figures and report files.

On separable dev pools (``separable_cases``) the maximum-likelihood calibration's LIDs go to
thousands of bits below zero: the LID figures (plots.lid) and the study report's files
(report.tables, report.html) show them clamped to [-64 bits, log2 N].
"""

from __future__ import annotations

import warnings
from dataclasses import replace

from separable_cases import DEV, EVAL, quiet_evaluate

from voxmetrics._types import LID_DISPLAY_FLOOR
from voxmetrics.data.study import Condition, Study
from voxmetrics.plots.lid import lid_ccdf_figure, lid_histogram_figure
from voxmetrics.report.study import build_study_report


def test_lid_figures_do_not_stretch_to_absurd_values():
    # a trial with an absurd LID (as the capped fit gives) next to an ordinary condition
    r = quiet_evaluate(lid_variant="maximum-likelihood")
    lid = r.lid.lid.copy()
    lid[0] = -7525.0
    steep = replace(r.lid, lid=lid)
    fig = lid_ccdf_figure({"steep": steep, "plain": quiet_evaluate().lid})
    assert min(min(t.x) for t in fig.data) >= LID_DISPLAY_FLOOR
    hist = lid_histogram_figure({"steep": steep})
    assert min(hist.data[0].customdata[:, 0]) >= LID_DISPLAY_FLOOR


def test_report_files_show_lid_within_range_for_the_capped_fit():
    # the study report's tables (HTML, PDF, LaTeX, Markdown, CSV) of the capped fit
    import re

    from voxmetrics.analysis.lid import lid_trials
    from voxmetrics.report.html import study_report_html
    from voxmetrics.report.tables import results_tables

    study = Study([Condition("original", eval=EVAL, dev=DEV, attacker="original")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, bootstrap=30, lid_variant="maximum-likelihood")
    r = sr.reports[0]
    assert r.chance.values["alid"] < -1000  # raw: absurd
    numbers = [
        float(x)
        for table in results_tables(sr).values()
        for cell in table.astype(str).to_numpy().ravel()
        for x in re.findall(r"-?\d+\.\d+", cell)
    ]
    assert min(numbers) >= LID_DISPLAY_FLOOR
    assert sr.intervals()["chance"].min() >= LID_DISPLAY_FLOOR
    assert lid_trials(EVAL, r.lid)["lid_bits"].min() >= LID_DISPLAY_FLOOR
    # the page's tables too (its embedded JSON keeps the raw numbers, flagged)
    page = study_report_html(sr).split('id="voxmetrics-data"')[0]
    cells = re.findall(r"<td[^>]*>(-?\d+\.\d+)", page)
    assert cells and min(float(c) for c in cells) >= LID_DISPLAY_FLOOR
