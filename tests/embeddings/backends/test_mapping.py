"""Mapping back-ends (voxmetrics.embeddings.backends.mapping): Procrustes and ridge."""

from __future__ import annotations

import numpy as np
import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends import (
    TrainingData,
    fit_backend,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics import eer


def test_procrustes_undoes_a_rotation_and_ridge_a_nuisance():
    anon, orig = attack_embeddings(2, n_train=40, n_dev=5, n_eval=20, nuisance=4.0)
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(anon.dim, anon.dim)))
    rotated = type(anon).from_arrays(unit_rows(orig.embeddings) @ q, anon.meta)
    train = TrainingData.of(rotated, originals=orig)
    proc = fit_backend("procrustes", train)
    np.testing.assert_allclose(proc.weights @ q, np.eye(anon.dim), atol=1e-8)
    ridge = fit_backend("procrustes", TrainingData.of(anon, originals=orig), method="ridge")
    cosine_eer = eer(anon.score_matrix("eval").tar, anon.score_matrix("eval").non)
    mapped = anon.score_matrix_with("eval", ridge)
    assert eer(mapped.tar, mapped.non) < cosine_eer / 3
    with pytest.raises(VoxMetricsInputError, match="original embeddings"):
        fit_backend("procrustes", TrainingData.of(anon))
