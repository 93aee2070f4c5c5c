"""LID: Local Information Disclosure (Šterns et al. 2025).

Pipeline: row z-norm -> logistic calibration learned on dev (w, b) ->
LLR_ij = w z_ij + b - ln(N_mated / N_non-mated) -> p_ij = softmax_j(LLR_ij) ->
LID_i = log2(N p_i,m_i) bits -> outer aggregates (ALID, PDR, NDR, LID+, LID-, LIDmax).

Two calibration variants (:data:`LID_VARIANTS`):

``"reference-code"`` (default, :data:`~voxmetrics._types.DEFAULT_LID_VARIANT`)
    What the authors' public code does: sample sd (ddof = 1) and scikit-learn's
    ``LogisticRegression(class_weight="balanced")`` with its default L2 penalty (C = 1) on the
    weight (the intercept is not penalised): the model of the paper's Table 3 (w, b), Table 4
    (ALID, PDR, LID+, LID-, LIDmax) and Figure 4 (CCDF), which were computed with that code,
    solved exactly. The published code stops scikit-learn's lbfgs at ``tol=1e-4``; on
    near-separable dev sets its w and b then differ in the second decimal and its LIDs by up
    to a few hundredths of a bit per trial (docs, Methods > LID). Its penalised fit always has
    a finite optimum, also when the dev pools separate (as they do for original speech and
    weak anonymisers).
``"maximum-likelihood"``
    Population sd (ddof = 0), unweighted, unpenalised maximum likelihood. This reproduces the
    worked example of Šterns et al. 2025 (section 5.2, 0.900 bits for the given w); on real
    data its w and LIDs differ from Table 3 and 4. The old name ``"metrics"`` is still
    accepted as an alias (deprecated).

With separable dev pools the unpenalised likelihood has no finite maximum: the
maximum-likelihood variant then uses the stated cap w = ±:data:`W_MAX` with the decision
boundary in the middle of the gap between the pools, flags the calibration as not converged and
warns; its LIDs then go to extreme values (thousands of bits below zero). Displays and exports
show LIDs within [:data:`~voxmetrics._types.LID_DISPLAY_FLOOR`, log2 N] whatever the variant
(:func:`clamp_lid_bits`).

Everything that scales with the number of scores runs on row blocks
(:func:`~voxmetrics.metrics.ranks.row_blocks`), so a 22,024 x 4,949 matrix needs a few blocks'
worth of memory on top of itself.

One module per role: :mod:`~voxmetrics.metrics.lid.calibration` (steps 1-2: row z-norm, the
variants and the fit of w, b), :mod:`~voxmetrics.metrics.lid.logistic` (its solver, Newton's
method over every pair), :mod:`~voxmetrics.metrics.lid.binned` (the same fit on the pairs'
binned moments, for large dev sets) and :mod:`~voxmetrics.metrics.lid.disclosure` (steps
3-6: posteriors, LID and its aggregates).
The names below are the package's public surface.
"""

from __future__ import annotations

from voxmetrics.metrics.lid.calibration import (
    LID_VARIANTS,
    CalibrationCurve,
    LIDCalibration,
    calibrate_lid,
    calibration_curve,
    pooled_calibration_curve,
    resolve_lid_variant,
    row_znorm,
)
from voxmetrics.metrics.lid.disclosure import (
    LID_BITS_KEYS,
    LIDResult,
    beyond_display_range,
    clamp_lid_bits,
    clamp_lid_number,
    lid,
    lid_ccdf,
    lid_cross_calibrated,
    lid_result,
    lid_rows,
    log_posteriors,
    posterior,
)
from voxmetrics.metrics.lid.logistic import W_MAX

__all__ = [
    "LID_BITS_KEYS",
    "LID_VARIANTS",
    "W_MAX",
    "CalibrationCurve",
    "LIDCalibration",
    "LIDResult",
    "beyond_display_range",
    "calibrate_lid",
    "calibration_curve",
    "clamp_lid_bits",
    "clamp_lid_number",
    "lid",
    "lid_ccdf",
    "lid_cross_calibrated",
    "lid_result",
    "lid_rows",
    "log_posteriors",
    "pooled_calibration_curve",
    "posterior",
    "resolve_lid_variant",
    "row_znorm",
]
