"""Attacker back-ends by name (voxmetrics.embeddings.backends): the names and their parameters.

Each back-end is held to its reference in tests/embeddings/backends/test_<module>.py: PLDA to
SpeechBrain's ``PLDA_LDA``, LDA to scikit-learn's ``transform``, the others to their
definitions written as loops.
"""

from __future__ import annotations

import pytest

from tests.embeddings.backends.backend_cases import clusters
from voxmetrics.embeddings.backends import (
    BACKENDS,
    EMBEDDING_BACKENDS,
    TrainingData,
    fit_backend,
)
from voxmetrics.errors import VoxMetricsInputError


def test_backend_names_and_parameters_are_checked():
    assert BACKENDS[0] == "cosine" and "fusion" not in EMBEDDING_BACKENDS
    x, speakers = clusters(8)
    with pytest.raises(VoxMetricsInputError, match="no parameter 'top_n'"):
        fit_backend("lda", TrainingData(x, speakers), top_n=3)
    with pytest.raises(VoxMetricsInputError, match="fusion combines"):
        fit_backend("fusion")
    with pytest.raises(VoxMetricsInputError, match="trained on the attacker's own data"):
        fit_backend("plda")
