"""Score normalisation (voxmetrics.embeddings.backends.norm): S-norm and AS-norm."""

from __future__ import annotations

import numpy as np
import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends import (
    TrainingData,
    fit_backend,
)
from voxmetrics.embeddings.backends.norm import cohort_statistics, normalise_scores


@pytest.mark.parametrize("top_n", [None, 3])
def test_score_normalisation_is_its_definition(top_n):
    rng = np.random.default_rng(7)
    cohort = unit_rows(rng.normal(size=(8, 5)))
    rows = unit_rows(rng.normal(size=(4, 5)))
    mu, sd = cohort_statistics(rows, cohort, top_n)
    for i, r in enumerate(rows):
        s = np.sort(cohort @ r)[::-1][: top_n or 8]
        assert mu[i] == pytest.approx(s.mean(), abs=1e-14)
        assert sd[i] == pytest.approx(s.std(), abs=1e-14)
    scores = rng.normal(size=(4, 3))
    e_stats = (np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 0.5]))
    t_stats = (np.array([0.0, 1.0, -1.0, 0.5]), np.array([1.0, 0.5, 2.0, 1.5]))
    got = normalise_scores(scores, e_stats, t_stats)
    for i in range(4):
        for j in range(3):
            z_e = (scores[i, j] - e_stats[0][j]) / e_stats[1][j]
            z_t = (scores[i, j] - t_stats[0][i]) / t_stats[1][i]
            assert got[i, j] == pytest.approx(0.5 * (z_e + z_t), abs=1e-14)


def test_asnorm_with_the_whole_cohort_is_snorm():
    anon, _ = attack_embeddings(0, n_train=10, n_dev=4, n_eval=5)
    train = TrainingData.of(anon)
    a = anon.score_matrix_with("eval", fit_backend("asnorm", train, top_n=10_000))
    s = anon.score_matrix_with("eval", fit_backend("snorm", train))
    np.testing.assert_allclose(a.scores, s.scores, atol=1e-12)
