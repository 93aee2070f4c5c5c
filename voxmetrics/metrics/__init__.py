"""Metrics: pure functions of arrays returning numbers or frozen result objects.

Each function follows ``shared/docs/metrics.md``; the section is named in its docstring.
"""

from voxmetrics.metrics.baseline import BaselineResult, baseline_metrics, mated_pools
from voxmetrics.metrics.bootstrap import BootstrapInterval, lid_bootstrap, speaker_resample_counts
from voxmetrics.metrics.cllr import cllr, min_cllr
from voxmetrics.metrics.eer import EERResult, eer, eer_result, eer_rocch
from voxmetrics.metrics.legal import linkability
from voxmetrics.metrics.lid import (
    CalibrationCurve,
    LIDCalibration,
    LIDResult,
    calibrate_lid,
    calibration_curve,
    lid,
    lid_ccdf,
    lid_cross_calibrated,
    posterior,
    row_znorm,
)
from voxmetrics.metrics.pav import pav_llrs, rocch
from voxmetrics.metrics.ranks import target_ranks

__all__ = [
    "BaselineResult",
    "BootstrapInterval",
    "CalibrationCurve",
    "EERResult",
    "LIDCalibration",
    "LIDResult",
    "baseline_metrics",
    "calibrate_lid",
    "calibration_curve",
    "cllr",
    "eer",
    "eer_result",
    "eer_rocch",
    "lid",
    "lid_bootstrap",
    "lid_ccdf",
    "lid_cross_calibrated",
    "linkability",
    "mated_pools",
    "min_cllr",
    "pav_llrs",
    "posterior",
    "rocch",
    "row_znorm",
    "speaker_resample_counts",
    "target_ranks",
]
