"""PLDA (voxmetrics.embeddings.backends.plda), held to SpeechBrain's PLDA_LDA on the same data."""

from __future__ import annotations

import numpy as np
import pytest

from tests.embeddings.backends.backend_cases import clusters
from voxmetrics.embeddings.backends import (
    fit_plda,
    plda_scores,
)


@pytest.mark.parametrize(("seed", "rank_f"), [(1, None), (2, 4), (3, None)])
def test_plda_equals_speechbrain_on_the_same_data(seed, rank_f):
    plda_lda = pytest.importorskip("speechbrain.processing.PLDA_LDA")
    x, speakers = clusters(seed)
    n, d = x.shape
    ids = speakers.astype(object)
    none = np.array([None] * n)
    stat = plda_lda.StatObject_SB(
        modelset=ids,
        segset=np.array([f"u{i}" for i in range(n)], dtype=object),
        start=none,
        stop=none,
        stat0=np.ones((n, 1)),
        stat1=x.copy(),
    )
    ref = plda_lda.PLDA(rank_f=rank_f or d, nb_iter=10)
    ref.plda(stat)
    ours = fit_plda(x, speakers, rank_f=rank_f, n_iter=10)
    np.testing.assert_allclose(ours.mean, ref.mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.F @ ours.F.T, ref.F @ ref.F.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.Sigma, ref.Sigma, rtol=1e-9, atol=1e-12)
    # scoring: enrolment means (SpeechBrain's mean_stat_per_model) against trials
    rng = np.random.default_rng(seed + 10)
    enrol, trials = rng.normal(size=(6, d)), rng.normal(size=(9, d))
    models = np.array([f"m{j}" for j in range(6)], dtype=object)
    segs = np.array([f"t{i}" for i in range(9)], dtype=object)
    en = plda_lda.StatObject_SB(
        modelset=models, segset=models, start=np.array([None] * 6), stop=np.array([None] * 6),
        stat0=np.ones((6, 1)), stat1=enrol.copy(),
    )  # fmt: skip
    te = plda_lda.StatObject_SB(
        modelset=segs, segset=segs, start=np.array([None] * 9), stop=np.array([None] * 9),
        stat0=np.ones((9, 1)), stat1=trials.copy(),
    )  # fmt: skip
    ndx = plda_lda.Ndx(models=models, testsegs=segs)
    want = plda_lda.fast_PLDA_scoring(en, te, ndx, ref.mean, ref.F, ref.Sigma).scoremat
    got = plda_scores(ours, enrol, trials)
    np.testing.assert_allclose(got, want.T, rtol=1e-9, atol=1e-9)
