"""What the tests of the linkage numbers' replicates share: hand-made results to resample.

Used by ``test_embedding_intervals.py`` and ``tests/test_compare_linkage.py``.
"""

from __future__ import annotations

import numpy as np

from voxmetrics.metrics.legal import SinglingOutResult
from voxmetrics.metrics.similarity import SimilarityMatrix, SimilarityResult, voice_distinctiveness


def singled(predicates, rates) -> SinglingOutResult:
    """A singling out whose predicates isolate at the given rates (one fold)."""
    rates = np.asarray(rates, dtype=float)
    return SinglingOutResult(
        value=float(rates.mean()),
        n_speakers=len(predicates),
        n_predicates=len(predicates),
        folds=1,
        per_fold=np.array([rates.mean()]),
        predicates=np.asarray(predicates),
        per_predicate=rates,
    )


def similarity_result(speakers, oo, oa, aa) -> SimilarityResult:
    """Similarity matrices oo, oa, aa of the given speakers and their G_VD, DeID."""

    def m(x):
        x = np.asarray(x, dtype=float)
        return SimilarityMatrix(np.asarray(speakers), x, x, np.ones(x.shape, np.int64), "raw")

    return SimilarityResult(m(oo), m(oa), m(aa), voice_distinctiveness(oo, oa, aa))
