"""The report's data frames (voxmetrics/report/frames.py): overview, intervals, labelled columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from voxmetrics.evaluation import evaluate_study
from voxmetrics.report import report_html
from voxmetrics.report.frames import OVERVIEW_COLUMNS, intervals_frame, overview_frame
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_overview_has_one_row_per_condition_and_matches_reports():
    study = demo_study(n_speakers=10)
    seen = []
    reports = evaluate_study(study, progress=lambda f, m: seen.append(f))
    df = overview_frame(reports)
    assert list(df.columns) == list(OVERVIEW_COLUMNS)
    assert list(df["condition"]) == study.names
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    for r, row in zip(reports, df.itertuples(index=False), strict=True):
        assert row.eer == r.baseline.eer and row.linkability == r.baseline.linkability
        assert np.isclose(row.chance_linkability, 1 / 10)
        json.loads(r.to_json())
    page = report_html(reports)  # the styled page: one overview row per condition
    overview = page.split('id="overview"')[1].split("</table>")[0]
    assert overview.count("<tr") == len(study) + 1


def test_intervals_frame_lists_values_intervals_and_excess(demo_report):
    df = intervals_frame(demo_report.reports)
    row = df[(df["condition"] == "random") & (df["key"] == "mean_d")].iloc[0]
    r = next(r for r in demo_report.reports if r.name == "random")
    assert row["value"] == r.srd.stats.mean_d
    assert row["excess"] == pytest.approx(r.srd.stats.mean_d - r.chance.values["mean_d"])
    assert df[df["key"] == "lid_max"]["low"].isna().all()


def test_labelled_tables_keep_every_value_under_its_label(demo_report):
    from voxmetrics.report.frames import (
        COMPARISON_COLUMNS,
        INTERVALS_COLUMNS,
        comparison_frame,
        labelled,
    )

    raw = intervals_frame(demo_report.reports)
    shown = labelled(raw, INTERVALS_COLUMNS)
    assert list(shown.columns) == [
        "Condition", "Number", "Value", "95% low", "95% high", "Chance", "Excess over chance"
    ]  # fmt: skip
    pd.testing.assert_frame_equal(
        shown, raw.drop(columns="key").set_axis(list(shown.columns), axis=1)
    )
    comparison = next(iter(demo_report.comparisons.values()))
    raw = comparison_frame(comparison)
    shown = labelled(raw, COMPARISON_COLUMNS)
    assert list(shown.columns) == [
        "Number",
        "A",
        "B",
        "B − A",
        "95% low",
        "95% high",
        "p",
        "p (Holm)",
        "p (resampled, ≥ 1/(B+1))",
        "Not compared because",
    ]
    pd.testing.assert_frame_equal(
        shown, raw.drop(columns=["key", "p_floor"]).set_axis(list(shown.columns), axis=1)
    )
