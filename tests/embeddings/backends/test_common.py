"""What every back-end shares (voxmetrics.embeddings.backends._common): training data, scores."""

from __future__ import annotations

import numpy as np
import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends import (
    TrainingData,
    fit_backend,
    max_scores,
)
from voxmetrics.errors import VoxMetricsInputError


def test_max_scores_take_the_best_enrolment_utterance():
    rng = np.random.default_rng(6)
    enrol = unit_rows(rng.normal(size=(7, 4)))
    spk = np.array(["b", "a", "b", "c", "a", "a", "c"])
    trials = unit_rows(rng.normal(size=(5, 4)))
    names, got = max_scores(enrol, spk, trials)
    assert names.tolist() == ["a", "b", "c"]
    want = np.array([[max(t @ enrol[spk == s].T) for s in "abc"] for t in trials])
    np.testing.assert_allclose(got, want, atol=1e-15)


def test_cosine_backend_is_todays_scoring():
    anon, _ = attack_embeddings(1, n_train=5, n_dev=5, n_eval=8)
    got = anon.score_matrix_with("eval", fit_backend("cosine"))
    want = anon.score_matrix("eval")
    np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-15)
    assert got.trial_ids.tolist() == want.trial_ids.tolist()
    assert got.enrol_speakers.tolist() == want.enrol_speakers.tolist()


def test_training_data_is_never_eval_and_needs_two_speakers():
    anon, _ = attack_embeddings(0, n_train=1, n_dev=3, n_eval=3)
    with pytest.raises(VoxMetricsInputError, match="never trained on the eval split"):
        TrainingData.of(anon, "eval")
    with pytest.raises(VoxMetricsInputError, match="needs at least two"):
        TrainingData.of(anon)
    no_train, _ = attack_embeddings(0, n_dev=3, n_eval=3, with_train=False)
    assert TrainingData.of(no_train).split == "dev"
