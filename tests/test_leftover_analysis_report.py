"""Leftover tests of modules outside voxmetrics.metrics, from the metrics test files.

The test reorganisation of the metrics moved these here for the owners of their modules
(analysis.verification, analysis.linkage / srd / zebra, report.frames / study / tables,
evaluation): the EER stands beside every metric table (SRD, ZEBRA, Linkage, Verification);
the per-speaker SRD of the analysis; ``evaluate`` passes its tie rule to every metric.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference_pooled as ref

from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.analysis.verification import eer_of, verification_of
from voxmetrics.analysis.zebra import zebra_of, zebra_table
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics import eer_result, min_cllr, zebra
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


def test_speaker_srd_in_one_batch_reports_progress_and_equals_the_groups():
    from voxmetrics.analysis.srd import speaker_srd
    from voxmetrics.metrics.srd import srd_from_ranks

    rng = np.random.default_rng(2)
    who = np.array([f"s{k}" for k in rng.integers(0, 9, 70)])
    ranks = np.minimum(rng.geometric(0.2, 70), 12)
    result = srd_from_ranks(ranks, 12)
    steps = []
    one = speaker_srd(result, who, progress=lambda f, m: steps.append((f, m)))
    grouped = speaker_srd(result, who, n_groups=4)
    assert [(f.alpha, f.beta, f.loss_value) for f in one.fits] == [
        (f.alpha, f.beta, f.loss_value) for f in grouped.fits
    ]
    np.testing.assert_array_equal(one.model_mean_d, grouped.model_mean_d)
    assert steps[-1] == (1.0, "Fitted 9 of 9 speakers…")
    assert [f for f, _ in steps] == sorted(f for f, _ in steps)


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")  # tiny SRD fit
def test_evaluate_passes_the_tie_rule():
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    # integer scores: targets tied with non-targets in every row
    s = np.array([[2, 2, 1], [1, 1, 0], [3, 2, 3], [0, 1, 1]], dtype=float)
    sm = ScoreMatrix.from_arrays(
        s, trial_ids=list("wxyz"), trial_speakers=list("abca"), enrol_speakers=list("abc")
    )
    ref_r, att_r = evaluate(sm).to_dict(), evaluate(sm, ties="attacker").to_dict()
    assert (ref_r["ties"], att_r["ties"]) == ("reference", "attacker")
    tar, non = ref.mated_pools(s, sm.targets)
    assert ref_r["eer"] == eer_result(tar, non).eer
    assert att_r["eer"] == eer_result(tar, non, ties="attacker").eer
    assert att_r["min_cllr"] == min_cllr(tar, non, ties="attacker") < ref_r["min_cllr"]
    # the worst case puts non-targets first under both rules (ZEBRA's optimal_llr); D_ECE puts
    # targets first under the reference rule (ZEBRA's rocch_pava), so the ties disclose less
    assert ref_r["zebra"]["log10_l"] == att_r["zebra"]["log10_l"]
    assert ref_r["zebra"]["d_ece"] == zebra(tar, non).d_ece
    att_d_ece = zebra(tar, non, ties="attacker").d_ece
    assert att_r["zebra"]["d_ece"] == att_d_ece > ref_r["zebra"]["d_ece"]
    with pytest.raises(VoxMetricsInputError, match="ties"):
        evaluate(sm, ties="worst")
