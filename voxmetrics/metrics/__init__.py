"""Metrics: pure functions of arrays returning numbers or frozen result objects.

Each function follows ``shared/docs/metrics.md``; the section is named in its docstring.
"""

from voxmetrics.metrics.baseline import BaselineResult, baseline_metrics, mated_pools
from voxmetrics.metrics.bootstrap import (
    BootstrapInterval,
    lid_bootstrap,
    speaker_bootstrap,
    speaker_resample_counts,
)
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
from voxmetrics.metrics.srd import (
    LOSSES,
    BetaBinomialFit,
    SpeakerSRD,
    SRDResult,
    SRDStats,
    beta_binomial_pmf,
    fit_beta_binomial,
    rank_histogram,
    srd,
    srd_per_speaker,
    srd_stats,
)
from voxmetrics.metrics.zebra import (
    TAGS,
    ECECurves,
    PAVTransform,
    ZebraResult,
    d_ece_from_llrs,
    ece_curves,
    pav_transform,
    zebra,
    zebra_bootstrap,
    zebra_tag,
)

__all__ = [
    "LOSSES",
    "TAGS",
    "BaselineResult",
    "BetaBinomialFit",
    "BootstrapInterval",
    "CalibrationCurve",
    "ECECurves",
    "EERResult",
    "LIDCalibration",
    "LIDResult",
    "PAVTransform",
    "SRDResult",
    "SRDStats",
    "SpeakerSRD",
    "ZebraResult",
    "baseline_metrics",
    "beta_binomial_pmf",
    "calibrate_lid",
    "calibration_curve",
    "cllr",
    "d_ece_from_llrs",
    "ece_curves",
    "eer",
    "eer_result",
    "eer_rocch",
    "fit_beta_binomial",
    "lid",
    "lid_bootstrap",
    "lid_ccdf",
    "lid_cross_calibrated",
    "linkability",
    "mated_pools",
    "min_cllr",
    "pav_llrs",
    "pav_transform",
    "posterior",
    "rank_histogram",
    "rocch",
    "row_znorm",
    "speaker_bootstrap",
    "speaker_resample_counts",
    "srd",
    "srd_per_speaker",
    "srd_stats",
    "target_ranks",
    "zebra",
    "zebra_bootstrap",
    "zebra_tag",
]
