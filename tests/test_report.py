from __future__ import annotations

import json

import numpy as np

from voxmetrics.report import OVERVIEW_COLUMNS, evaluate_study, overview_frame, report_html
from voxmetrics.synth import demo_study


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
    assert report_html(reports).count("<tr>") == len(study) + 1
