"""The slow reference of the SBLS tests: SBLS re-run on each replicate's resampled utterances."""

from __future__ import annotations

import numpy as np

from voxmetrics.analysis.sbls import COMPONENTS, Attack, SBLSOptions
from voxmetrics.data.predictions import AttributePrediction
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.sbls import sbls


def take_rows(prediction: AttributePrediction, idx: np.ndarray) -> AttributePrediction:
    if prediction.scores is not None:
        return AttributePrediction(prediction.classes, scores=prediction.scores[idx])
    return AttributePrediction(prediction.classes, predicted=prediction.predicted[idx])


def sbls_statistic(attack: Attack, options: SBLSOptions):
    """The former bootstrap statistic: SBLS re-run on the resampled utterances."""

    def statistic(idx: np.ndarray) -> dict[str, float | None]:
        try:
            r = sbls(
                {a: y[idx] for a, y in attack.labels.items()},
                {a: take_rows(p, idx) for a, p in attack.predictions.items()},
                **options.kwargs(),
            )
        except VoxMetricsInputError:
            return dict.fromkeys(COMPONENTS)
        return {key: getattr(r, key) for key in COMPONENTS}

    return statistic
