"""VoxMetrics: how much does anonymised speech still give away about who is speaking?"""

from voxmetrics._version import __version__
from voxmetrics.data import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import (
    DegenerateDataWarning,
    ExcludedTrialsWarning,
    VoxMetricsInputError,
    VoxMetricsWarning,
)
from voxmetrics.metrics import (
    BaselineResult,
    EERResult,
    baseline_metrics,
    cllr,
    eer,
    eer_result,
    eer_rocch,
    linkability,
    mated_pools,
    min_cllr,
    pav_llrs,
    rocch,
)


__all__ = [
    "BaselineResult",
    "DegenerateDataWarning",
    "EERResult",
    "EmbeddingSet",
    "ExcludedTrialsWarning",
    "ScoreMatrix",
    "VoxMetricsInputError",
    "VoxMetricsWarning",
    "__version__",
    "baseline_metrics",
    "cllr",
    "eer",
    "eer_result",
    "eer_rocch",
    "linkability",
    "mated_pools",
    "min_cllr",
    "pav_llrs",
    "rocch",
]
