"""The EER stands beside every metric table (SRD, ZEBRA, Linkage, Verification)."""

from __future__ import annotations

import pytest

from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.analysis.verification import eer_of, verification_of
from voxmetrics.analysis.zebra import zebra_of, zebra_table
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics.eer import eer
from voxmetrics.report.frames import verification_frame
from voxmetrics.report.study import build_study_report
from voxmetrics.report.tables import results_tables
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=6)


def test_eer_of_is_the_eer_of_the_pools(study):
    sm = study.get("anon-mild").eval
    assert eer_of(sm) == eer(sm.tar, sm.non)


def test_analysis_tables_carry_the_eer(study):
    names = study.names[:2]
    reports = {n: evaluate_condition(study.get(n)) for n in names}
    eers = {n: r.baseline.eer for n, r in reports.items()}
    link = linkage_table(reports)
    assert link.columns[:2].tolist() == ["Condition", "EER"]
    assert link["EER"].tolist() == [eers[n] for n in names]
    z = zebra_table({n: zebra_of(study.get(n).eval) for n in names}, eer=eers, order=names)
    assert z.columns[:3].tolist() == ["Condition", "EER", "D_ECE (bits)"]
    assert z["EER"].tolist() == [eers[n] for n in names]
    assert "EER" not in zebra_table({n: zebra_of(study.get(n).eval) for n in names}).columns
    s = srd_table({n: r.srd for n, r in reports.items()}, {}, eer=eers)
    assert s.columns[:3].tolist() == ["Condition", "Source", "EER"]
    assert s["EER"].tolist() == [eers[n] for n in names]
    v = verification_frame(
        {n: verification_of(study.get(n).eval, p_targets=[0.05]) for n in names}, eer=eers
    )
    assert v.columns[:2].tolist() == ["Condition", "EER"]
    assert v["EER"].tolist() == [eers[n] for n in names]


def test_report_tables_carry_the_eer(study):
    sr = build_study_report(study, bootstrap=0)
    tabs = results_tables(sr)
    for name in ("srd", "zebra", "linkage"):
        assert "EER" in tabs[name].columns, name
    assert sr.tables()["verification.csv"].columns[1] == "EER"
