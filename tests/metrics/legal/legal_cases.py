"""What the legal-metric tests share: legal-eval v2's linkability re-typed, a small EmbeddingSet.

``count_beaters`` and ``linkability_exact`` re-type ``count_beaters`` and
``linkability(..., estimator="exact")`` / ``_success_probability`` of the file
``legal_eval/metrics/linkability.py`` of legal-eval v2 (the public code of Vauquier et al.
2025). Their score matrix is enrolment x test (the transpose of VoxMetrics'), one test column
per trial; the code counts as beaters the enrolled speakers scoring *strictly* above the true
one, so a tie is a link. The strict rule (the paper's eq. 3) counts ``>=`` instead (the true
speaker's own entry left out). Used by ``test_linking.py`` and ``tests/test_linkability_rule.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import gammaln

from voxmetrics.data.model import EmbeddingSet


def small_embedding_set(n_speakers=6, n_enrol=2, n_trial=6, seed=0) -> EmbeddingSet:
    """Speakers around random centres in 8 dimensions, enrolment and trial rows of split eval."""
    rng = np.random.default_rng(seed)
    rows, xs = [], []
    for k in range(n_speakers):
        centre = rng.normal(size=8)
        for role, count in (("enrol", n_enrol), ("trial", n_trial)):
            for u in range(count):
                rows.append((f"s{k}-{role}{u}", f"s{k}", role, "eval"))
                xs.append(centre + 1.2 * rng.normal(size=8))
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"])
    return EmbeddingSet.from_arrays(np.asarray(xs), meta)


def count_beaters(enrol_by_test, true_rows, *, strict=False):
    """legal-eval v2 ``count_beaters``: per test column, enrolled speakers above the true one."""
    n_columns = enrol_by_test.shape[1]
    true_scores = enrol_by_test[true_rows, np.arange(n_columns)]
    if not strict:  # the code: only strictly higher scores beat the true speaker
        return np.count_nonzero(enrol_by_test > true_scores[np.newaxis, :], axis=0)
    # the paper's eq. 3: a tie beats it too (the true speaker's own entry left out)
    return np.count_nonzero(enrol_by_test >= true_scores[np.newaxis, :], axis=0) - 1


def linkability_exact(beaters, n_enroll_total, n_enroll_speakers):
    """legal-eval v2 ``linkability(..., estimator="exact")`` via ``_success_probability``."""
    n_others = n_enroll_total - 1
    n_sampled = n_enroll_speakers - 1
    if n_sampled == 0:
        return 1.0
    good = n_others - beaters.astype(np.float64)
    with np.errstate(invalid="ignore"):
        log_p = (
            gammaln(good + 1.0)
            - gammaln(good - n_sampled + 1.0)
            - gammaln(n_others + 1.0)
            + gammaln(n_others - n_sampled + 1.0)
        )
    return float(np.mean(np.where(good >= n_sampled, np.exp(log_p), 0.0)))
