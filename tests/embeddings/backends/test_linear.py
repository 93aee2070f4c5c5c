"""Linear back-ends (voxmetrics.embeddings.backends.linear): LDA, WCCN, and what they undo."""

from __future__ import annotations

import numpy as np
import pytest

from tests.attack_cases import attack_embeddings
from tests.embeddings.backends.backend_cases import clusters
from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends import (
    TrainingData,
    fit_backend,
    fit_lda,
    fit_wccn,
)
from voxmetrics.embeddings.backends.linear import within_covariance
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics import eer


def test_lda_projection_is_sklearns_transform():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    x, speakers = clusters(4, n_spk=10, d=12)
    projection, dim = fit_lda(TrainingData(x, speakers))
    assert dim == 9
    u = unit_rows(x)
    centred = u - u.mean(axis=0)
    want = LinearDiscriminantAnalysis(n_components=dim).fit(centred, speakers).transform(centred)
    np.testing.assert_allclose(projection(x), unit_rows(want), atol=1e-10)
    with pytest.raises(VoxMetricsInputError, match="LDA dimension 10 is out of range"):
        fit_lda(TrainingData(x, speakers), dim=10)


def test_wccn_whitens_the_within_speaker_covariance():
    x, speakers = clusters(5, n_spk=12, d=6)
    p = fit_wccn(TrainingData(x, speakers), shrinkage=0.0)
    u = unit_rows(x) - p.mean
    sw = within_covariance(u, speakers)
    b = p.matrix
    np.testing.assert_allclose(b @ b.T, np.linalg.inv(sw), rtol=1e-6)
    # the loop definition: mean over speakers of each one's population covariance
    loop = np.mean([np.cov(u[speakers == s].T, bias=True) for s in np.unique(speakers)], axis=0)
    np.testing.assert_allclose(sw, loop, atol=1e-14)


def test_a_linear_backend_trained_on_anonymised_data_undoes_the_anonymiser():
    anon, _ = attack_embeddings(0)
    cosine = anon.score_matrix("eval")
    train = TrainingData.of(anon)
    assert train.split == "train" and train.n_speakers == 60
    lda = anon.score_matrix_with("eval", fit_backend("lda", train))
    assert eer(cosine.tar, cosine.non) > 0.35  # near chance
    assert eer(lda.tar, lda.non) < 0.1  # far below
    for name in ("wccn", "plda"):
        sm = anon.score_matrix_with("eval", fit_backend(name, train))
        assert eer(sm.tar, sm.non) < 0.2, name
