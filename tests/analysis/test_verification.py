"""voxmetrics.analysis.verification: the ASV outputs of a matrix from its pools, the priors."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from voxmetrics.analysis.verification import parse_priors, verification_of
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.dcf import verification
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
