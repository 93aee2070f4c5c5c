"""voxmetrics.analysis.verification: the ASV outputs of a matrix from its pools, the priors.

The EER of a matrix (``eer_of``) stands beside every metric table of the analysis.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.analysis.verification import eer_of, parse_priors, verification_of
from voxmetrics.analysis.zebra import zebra_of, zebra_table
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics.dcf import verification
from voxmetrics.metrics.eer import eer
from voxmetrics.report.frames import verification_frame
from voxmetrics.synth import demo_study


@pytest.mark.parametrize("llrs", [False, True])
@pytest.mark.parametrize("name", ["plain", "anon-leaky"])
def test_verification_of_a_matrix_is_that_of_its_pools(name, llrs, monkeypatch):
    sm = demo_study(n_speakers=8).get(name).eval
    want = verification(sm.tar, sm.non, p_targets=(0.01, 0.05), c_fa=2.0, scores_are_llrs=llrs)
    fresh = dataclasses.replace(sm)  # no cached pools, and no non-mated pool may be built
    monkeypatch.setattr(ScoreMatrix, "non", property(lambda self: pytest.fail("non built")))
    got = verification_of(fresh, p_targets=[0.01, 0.05], c_fa=2.0, scores_are_llrs=llrs)
    g, w = got.to_dict(), want.to_dict()
    # d' sums the non-targets block by block with the mated cells left out, the array path
    # sums its pool: the same numbers added in another order, equal to the last few bits
    assert g.pop("d_prime") == pytest.approx(w.pop("d_prime"), rel=1e-13)
    assert json.dumps(g, sort_keys=True) == json.dumps(w, sort_keys=True)
    np.testing.assert_array_equal(got.det.pmiss, want.det.pmiss)


def test_parse_priors():
    assert parse_priors("0.01, 0.001") == (0.01, 0.001)
    assert parse_priors(" 0.5 ;0.25,, ") == (0.5, 0.25)
    assert parse_priors("") == ()
    with pytest.raises(VoxMetricsInputError, match="give numbers separated by commas"):
        parse_priors("0.01, x")


def test_out_of_range_priors_are_refused_with_how_to_fix():
    sm = demo_study(n_speakers=6).get("plain").eval
    with pytest.raises(VoxMetricsInputError, match="strictly between 0 and 1"):
        verification_of(sm, p_targets=parse_priors("2"))


# ----------------------------------------------------------------------------------------------
# The EER of a matrix (eer_of), and beside every metric table: SRD, ZEBRA, Linkage and
# Verification (the report's verification_frame) carry each condition's EER
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def study():
    """The demo study of 6 speakers."""
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
