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
"""

from __future__ import annotations

import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import (
    DEFAULT_LID_VARIANT,
    LID_DISPLAY_FLOOR,
    LID_VARIANT_ALIASES,
    LIDVariant,
)
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks, target_ranks

__all__ = [
    "LID_BITS_KEYS",
    "LID_VARIANTS",
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
    "posterior",
    "resolve_lid_variant",
    "row_znorm",
]

ClassWeight = Literal["balanced"] | None
Variant = LIDVariant

LID_VARIANTS: dict[str, tuple[ClassWeight, int, float | None]] = {
    "reference-code": ("balanced", 1, 1.0),
    "maximum-likelihood": (None, 0, None),
}
"""Calibration variant -> (class_weight, ddof, penalty_c) of :func:`calibrate_lid`; the first
is the default."""


class _Unset:
    """Marks an explicit calibration option the caller did not give."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()
_EXPLICIT_BASE: tuple[ClassWeight, int, float | None] = (None, 0, None)
"""Where the explicit options start when only some are given: the unpenalised fit."""

_VARIANT_ALIASES = LID_VARIANT_ALIASES

_LN2 = math.log(2.0)
_WARM_START_PAIRS = 2_000_000
W_MAX = 1e4
"""Cap on |w|: beyond it the fit is reported as not converged (separable dev pools)."""
_WORKERS = max(1, min(8, os.cpu_count() or 1))


def resolve_lid_variant(name: str) -> Variant:
    """The canonical name of a LID calibration variant (accepts the old alias "metrics").

    Examples
    --------
    >>> resolve_lid_variant("metrics"), resolve_lid_variant("reference-code")
    ('maximum-likelihood', 'reference-code')
    """
    canonical = _VARIANT_ALIASES.get(name, name)
    if canonical not in LID_VARIANTS:
        raise VoxMetricsInputError(
            f"unknown LID variant {name!r}; use one of {', '.join(LID_VARIANTS)}."
        )
    return canonical  # type: ignore[return-value]


def row_znorm(scores: ArrayLike, *, ddof: int = 0) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Row-wise z-scores and the mask of degenerate rows (docs, Methods > LID, step 1).

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Raw scores.
    ddof : int, default 0
        0 = population sd (VoxMetrics'); 1 = sample sd (the authors' public code).

    Returns
    -------
    z : ndarray, shape (T, N)
        (s_ij - mean_i) / sd_i; rows with sd_i = 0 are all 0 (no evidence).
    degenerate : ndarray of bool, shape (T,)
        Rows whose scores are all equal, or whose spread is below the float64 resolution of
        their values (e.g. 1e300 + differences float64 cannot hold).

    Notes
    -----
    Each row is first scaled by a power of two so its largest magnitude is in [0.5, 1): z is
    scale invariant, the scaling is exact, and no sum or square can overflow or underflow, so
    any finite rescaling of the scores (1e-300 to 1e300) gives the same z-scores.

    Examples
    --------
    >>> z, deg = row_znorm([[0.9, 0.7, 0.4, 1.1, 1.2, 0.4], [1, 1, 1, 1, 1, 1]])
    >>> np.round(z[0], 2).tolist(), deg.tolist()
    ([0.37, -0.27, -1.22, 1.01, 1.33, -1.22], [False, True])
    """
    s = np.asarray(scores)
    if s.dtype != np.float32:
        s = s.astype(np.float64, copy=False)
    # z is invariant to rescaling: bring each row to max |s| in [0.5, 1) by a power of two
    # (exact, so ordinary scores give bit-identical z) so that no sum or square overflows or
    # underflows for any finite scale, 1e-300 or 1e300 alike
    peak = np.abs(s).max(axis=1, keepdims=True) if s.size else np.ones((s.shape[0], 1))
    peak = peak.astype(np.float64)
    _, exponent = np.frexp(np.where(np.isfinite(peak) & (peak > 0), peak, 1.0))
    if s.dtype == np.float32:
        # float32 scores times 2^-e in float64: exact (no float32 value times 2^-e leaves the
        # float64 normal range), so the same numbers as ldexp, without its scalar loop
        s = np.multiply(s, np.ldexp(1.0, -exponent))
    else:
        s = np.ldexp(s, -exponent)
    top = np.ldexp(peak, -exponent)  # max |s| of each scaled row (the scaling is exact)
    mean = s.mean(axis=1, keepdims=True)
    centred = np.subtract(s, mean, out=s)  # s is this function's own scaled copy
    sd = np.sqrt(np.square(centred).sum(axis=1, keepdims=True) / (s.shape[1] - ddof))
    # a row is degenerate when its spread is at rounding level (all scores equal)
    scale = np.maximum(np.abs(mean), top)
    degenerate = (sd <= 1e-12 * scale).ravel() | (sd == 0).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.divide(centred, np.where(sd == 0, 1.0, sd), out=centred)
    z[degenerate] = 0.0
    return z, degenerate


@dataclass(frozen=True)
class LIDCalibration:
    """The logistic calibration of LID (docs, Methods > LID, step 2)."""

    w: float
    """Weight on the row z-score."""
    b: float
    """Bias (reported; it cancels in the softmax)."""
    prior_log_odds: float
    """ln(N_mated / N_non-mated) of the calibration data (cancels too)."""
    n_pairs: int
    """(trial, enrolled) pairs the fit used."""
    class_weight: ClassWeight = None
    """None = unweighted maximum likelihood; "balanced" = the authors' public code."""
    ddof: int = 0
    """Degrees of freedom of the row sd (0 = population)."""
    source: str = "dev"
    """"dev" or "cross-calibrated (k-fold on eval)"."""
    converged: bool = True
    """False when the maximum-likelihood fit did not converge (e.g. separable dev pools)."""

    penalty_c: float | None = None
    """Inverse strength C of the L2 penalty w^2 / (2 C) on w (None = unpenalised)."""

    @property
    def variant(self) -> str:
        """The variant's name: "reference-code", "maximum-likelihood" or "custom".

        See :data:`LID_VARIANTS`.
        """
        for name, options in LID_VARIANTS.items():
            if (self.class_weight, self.ddof, self.penalty_c) == options:
                return name
        return "custom"

    def to_dict(self) -> dict[str, float | int | str | bool | None]:
        """JSON-safe dictionary of the fields."""
        return {
            "w": self.w,
            "b": self.b,
            "prior_log_odds": self.prior_log_odds,
            "n_pairs": self.n_pairs,
            "class_weight": self.class_weight,
            "ddof": self.ddof,
            "source": self.source,
            "converged": self.converged,
            "penalty_c": self.penalty_c,
            "variant": self.variant,
        }


_SUM_CHUNK = 1 << 14
"""Scores whose logistic terms are computed at once (their temporaries stay in the cache)."""


def _terms(eta: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """softplus(eta) = log(1 + e^eta), p = sigmoid(eta), v = p (1 - p), overflow-free."""
    e = np.exp(-np.abs(eta))
    softplus = np.maximum(eta, 0.0) + np.log1p(e)
    p = np.where(eta >= 0, 1.0, e) / (1.0 + e)
    return softplus, p, p * (1.0 - p)


def _block_sums(z: NDArray[np.floating], w: float, b: float) -> NDArray[np.float64]:
    """Sums over the pairs of a block of: softplus, p, p z, v, v z, v z^2 (eta = w z + b).

    Each sum equals numpy's ``.sum()`` of the block's whole term array, bit for bit, without
    building those arrays (6 to 10 of them, 32 MB each for a block of 4 M scores, mapped afresh
    on every Newton pass): numpy adds a long array pairwise, splitting it in halves (rounded
    down to a multiple of 8) down to 128 elements; the terms are computed on the halves of at
    most :data:`_SUM_CHUNK` elements of that same tree, summed there, and the partial sums added
    back up the tree in its order.
    """
    zz = z.ravel()

    def node(lo: int, hi: int) -> NDArray[np.float64]:
        n = hi - lo
        if n <= _SUM_CHUNK:
            c = zz[lo:hi].astype(np.float64, copy=False)
            sp, p, v = _terms(w * c + b)
            vz = v * c
            return np.array([sp.sum(), p.sum(), (p * c).sum(), v.sum(), vz.sum(), (vz * c).sum()])
        half = n // 2
        half -= half % 8
        return node(lo, lo + half) + node(lo + half, hi)

    return node(0, zz.size)


def _fit_logistic(
    z_blocks: list[NDArray[np.floating]],
    z_mated: NDArray[np.float64],
    *,
    class_weight: ClassWeight,
    penalty_c: float | None = None,
    start: tuple[float, float] | None = None,
    max_iter: int = 100,
    tol: float = 1e-12,
) -> tuple[float, float, bool]:
    """Univariate logistic regression by Newton's method with step halving.

    Minimises sum_pairs c_y log-loss + w^2 / (2 C) (no penalty when ``penalty_c`` is None; the
    intercept is never penalised), which is scikit-learn's ``LogisticRegression`` objective
    divided by C.

    The data are all (trial, enrolled) pairs: ``z_blocks`` hold every z-score (rows x N per
    block) and ``z_mated`` the T mated ones (label 1); every other pair has label 0. Sums over
    the pairs are taken as "every pair as a non-mated one" plus a correction on the T mated
    pairs, so no T x N label array is built.
    """
    n1 = z_mated.size
    n = sum(z.size for z in z_blocks)
    n0 = n - n1
    c1, c0 = (n / (2 * n1), n / (2 * n0)) if class_weight == "balanced" else (1.0, 1.0)

    def pass_over(w: float, b: float) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        # -log-likelihood: c1 softplus(-eta) on mated pairs, c0 softplus(eta) on the others;
        # softplus(-eta) = softplus(eta) - eta. numpy releases the GIL, so blocks run in
        # parallel threads; the block sums are added in block order (deterministic).
        if len(z_blocks) > 1:
            with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
                parts = list(pool.map(lambda z: _block_sums(z, w, b), z_blocks))
        else:
            parts = [_block_sums(z, w, b) for z in z_blocks]
        s0 = np.sum(parts, axis=0)
        eta1 = w * z_mated + b
        sp1, p1, v1 = _terms(eta1)
        m = (
            sp1.sum(),
            (sp1 - eta1).sum(),
            p1.sum(),
            (p1 * z_mated).sum(),
            v1.sum(),
            (v1 * z_mated).sum(),
            (v1 * z_mated**2).sum(),
            z_mated.sum(),
        )
        nll = c0 * (s0[0] - m[0]) + c1 * m[1]
        # gradient of nll: sum c (p - y) [z, 1]
        g_w = c0 * (s0[2] - m[3]) + c1 * (m[3] - m[7])
        g_b = c0 * (s0[1] - m[2]) + c1 * (m[2] - n1)
        h_ww = c0 * (s0[5] - m[6]) + c1 * m[6]
        h_wb = c0 * (s0[4] - m[5]) + c1 * m[5]
        h_bb = c0 * (s0[3] - m[4]) + c1 * m[4]
        if penalty_c is not None:
            nll += w * w / (2 * penalty_c)
            g_w += w / penalty_c
            h_ww += 1 / penalty_c
        return float(nll), np.array([g_w, g_b]), np.array([[h_ww, h_wb], [h_wb, h_bb]])

    w, b = start if start is not None else (0.0, math.log(n1 * c1 / (n0 * c0)))
    nll, g, h = pass_over(w, b)
    for _ in range(max_iter):
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            return w, b, False
        if not np.isfinite(step).all():
            return w, b, False
        t = 1.0
        while True:  # halve the Newton step until the loss does not increase
            w_new, b_new = w - t * step[0], b - t * step[1]
            nll_new, g_new, h_new = pass_over(w_new, b_new)
            if nll_new <= nll + 1e-12 * abs(nll):
                break
            t /= 2
            if t < 1e-10:  # no descent left: stop where we are, unconverged
                return w, b, False
        if abs(w_new) > W_MAX:  # the likelihood keeps growing with |w|: no finite optimum
            return math.copysign(W_MAX, w_new), b_new, False
        done = abs(t * step[0]) <= tol * max(1.0, abs(w_new)) and abs(t * step[1]) <= tol * max(
            1.0, abs(b_new)
        )
        w, b, nll, g, h = w_new, b_new, nll_new, g_new, h_new
        if done:
            return w, b, True
    return w, b, False


def _check_calibration_inputs(
    scores: ArrayLike,
    targets: ArrayLike,
    ddof: int,
    class_weight: ClassWeight,
    penalty_c: float | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    s, t = check_matrix(scores, targets)
    if ddof not in (0, 1):
        raise VoxMetricsInputError(f"`ddof` must be 0 or 1, got {ddof!r}.")
    if class_weight not in (None, "balanced"):
        raise VoxMetricsInputError(
            f'`class_weight` must be None or "balanced", got {class_weight!r}.'
        )
    if penalty_c is not None and not (
        isinstance(penalty_c, (int, float)) and penalty_c > 0 and math.isfinite(penalty_c)
    ):
        raise VoxMetricsInputError(
            f"`penalty_c` must be None (no penalty) or a finite C > 0, got {penalty_c!r}."
        )
    return s, t


def _variant_options(
    variant: str | None, class_weight: Any, ddof: Any, penalty_c: Any
) -> tuple[ClassWeight, int, float | None]:
    """(class_weight, ddof, penalty_c) of a named variant, or the explicit options.

    Without a variant and without explicit options: the default variant
    (:data:`~voxmetrics._types.DEFAULT_LID_VARIANT`). Explicit options not given take the
    unpenalised fit's values (no class weight, population sd, no penalty).
    """
    given = [x is not _UNSET for x in (class_weight, ddof, penalty_c)]
    if variant is None:
        if not any(given):
            return LID_VARIANTS[DEFAULT_LID_VARIANT]
        picked = (class_weight, ddof, penalty_c)
        cw, dd, pc = (
            x if g else base for x, g, base in zip(picked, given, _EXPLICIT_BASE, strict=True)
        )
        return cw, dd, pc
    if any(given):
        raise VoxMetricsInputError(
            "give either `variant` or the explicit `class_weight`, `ddof`, `penalty_c`, not both."
        )
    return LID_VARIANTS[resolve_lid_variant(variant)]


def clamp_lid_bits(value: float | None, n_enrolled: int) -> float | None:
    """A LID number (or its chance level) as displays and exports show it, in bits.

    Values below :data:`~voxmetrics._types.LID_DISPLAY_FLOOR` (-64 bits) are shown as the
    floor and values above the ceiling log2 N as the ceiling (rounding only; LID <= log2 N by
    definition). Non-finite values and None pass through (None stays None, NaN stays NaN).
    The JSON keeps the raw numbers and flags the clamp.

    Examples
    --------
    >>> clamp_lid_bits(-7525.0, 5), clamp_lid_bits(1.79, 5), clamp_lid_bits(None, 5)
    (-64.0, 1.79, None)
    >>> round(clamp_lid_bits(9.0, 5), 4)  # log2 5
    2.3219
    """
    if value is None or not math.isfinite(value) or n_enrolled < 1:
        return value
    return float(min(max(value, LID_DISPLAY_FLOOR), math.log2(n_enrolled)))


LID_BITS_KEYS = frozenset({"alid", "lid_plus", "lid_minus", "lid_max", "lid_q95"})
"""The LID numbers in bits, which displays clamp (:func:`clamp_lid_bits`); PDR, NDR are not."""


def clamp_lid_number(key: str, value: float | None, n_enrolled: int) -> float | None:
    """``value`` as displays show it: :func:`clamp_lid_bits` for the LID numbers in bits.

    Examples
    --------
    >>> clamp_lid_number("lid_minus", -7525.0, 5), clamp_lid_number("pdr", 0.4, 5)
    (-64.0, 0.4)
    """
    return clamp_lid_bits(value, n_enrolled) if key in LID_BITS_KEYS else value


def beyond_display_range(values: dict[str, float | None], n_enrolled: int) -> list[str]:
    """The keys of the LID numbers in bits that displays clamp (below -64 bits or above log2 N).

    Examples
    --------
    >>> beyond_display_range({"alid": -1288.0, "lid_max": 2.0, "pdr": 0.1}, 5)
    ['alid']
    """
    return [
        k
        for k, v in values.items()
        if k in LID_BITS_KEYS
        and v is not None
        and math.isfinite(v)
        and (v < LID_DISPLAY_FLOOR or v > math.log2(n_enrolled) + 1e-9)
    ]


def calibrate_lid(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    variant: str | None = None,
    class_weight: ClassWeight = _UNSET,
    ddof: int = _UNSET,
    penalty_c: float | None = _UNSET,
    source: str = "dev",
) -> LIDCalibration:
    """Learn LID's logistic calibration (w, b) on a dev score matrix (docs, Methods > LID, step 2).

    Univariate logistic regression of y_ij = [j = m_i] on the row z-scores z_ij over all
    (trial, enrolled) pairs, fitted by Newton's method over row blocks. By default it is the
    authors' public code exactly (``variant="reference-code"``): sample sd and
    ``LogisticRegression(class_weight="balanced")`` with its default L2 penalty, C = 1;
    ``variant="maximum-likelihood"`` is the unpenalised maximum likelihood (scikit-learn's
    ``LogisticRegression(C=np.inf)``, population sd).

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Dev scores.
    targets : array_like of int, shape (T,)
        Column of each dev trial's own speaker.
    variant : {"reference-code", "maximum-likelihood"}, optional
        A named preset of the three options below (:data:`LID_VARIANTS`); "metrics" is
        accepted as the old name of "maximum-likelihood". Exclusive with the options. With
        neither a variant nor an option: "reference-code".
    class_weight : {None, "balanced"}, optional
        None (unweighted) or "balanced" (each class weighs half of the fit).
    ddof : {0, 1}, optional
        Row sd: 0 = population, 1 = sample (the authors' code).
    penalty_c : float, optional
        C of an L2 penalty w^2 / (2 C) on w (None = unpenalised). Explicit options not given
        take the unpenalised fit's values (None, 0, None).
    source : str
        Label of where the calibration was learned, carried into results.

    Returns
    -------
    LIDCalibration

    Warns
    -----
    DegenerateDataWarning
        When an unpenalised fit has no finite optimum (typically: mated and non-mated z-scores
        are perfectly separated) or rows are degenerate. With separated pools w is set to
        ±:data:`W_MAX` and b puts the decision boundary w z + b = 0 in the middle of the gap
        between the pools, whatever the float precision of the input.
    """
    class_weight, ddof, penalty_c = _variant_options(variant, class_weight, ddof, penalty_c)
    s, t = _check_calibration_inputs(scores, targets, ddof, class_weight, penalty_c)
    z_blocks, mated = [], []
    n_degenerate = 0
    non_min, non_max = np.inf, -np.inf
    for rows in row_blocks(*s.shape):
        z, deg = row_znorm(s[rows], ddof=ddof)
        keep = ~deg
        n_degenerate += int(deg.sum())
        idx = np.arange(z.shape[0]), t[rows]
        mated.append(z[idx][keep])
        if keep.any():
            masked = z.copy()
            masked[idx] = np.nan
            non_min = min(non_min, float(np.nanmin(masked[keep])))
            non_max = max(non_max, float(np.nanmax(masked[keep])))
        # z is kept in the input's precision: a float32 matrix costs one float32 copy
        z_blocks.append(z[keep].astype(s.dtype, copy=False))
    if n_degenerate == s.shape[0]:
        raise VoxMetricsInputError(
            "every dev trial has identical scores for all enrolled identities, so there is "
            "nothing to calibrate on; check the dev score file."
        )
    if n_degenerate:
        warnings.warn(
            f"{n_degenerate} dev trial(s) have identical scores (to float64 precision) for "
            "every enrolled identity and were left out of the calibration.",
            DegenerateDataWarning,
            stacklevel=2,
        )
    z_mated = np.concatenate(mated)
    # (quasi-)complete separation of the pools: the likelihood has no finite maximum
    separated = penalty_c is None and (z_mated.min() >= non_max or z_mated.max() <= non_min)
    if separated:
        # where Newton's method would stop on the way to |w| = infinity depends on rounding
        # (float32 and float64 copies of the same data stopped at w = 24 and w = 1e4): use the
        # stated cap and the boundary in the middle of the gap instead
        above = z_mated.min() >= non_max
        w = W_MAX if above else -W_MAX
        gap_mid = (z_mated.min() + non_max) / 2 if above else (z_mated.max() + non_min) / 2
        b, converged = -w * float(gap_mid), False
    else:
        w, b, converged = _fit(z_blocks, mated, z_mated, class_weight, penalty_c)
    if not converged:
        why = (
            "the dev mated and non-mated z-scores are perfectly separated, so the "
            f"maximum-likelihood w is infinite; the cap w = {w:.4g} is used with the "
            "decision boundary in the middle of the gap"
            if separated
            else f"Newton's method found no finite optimum; w = {w:.4g} is used (|w| is capped "
            f"at {W_MAX:g})"
        )
        warnings.warn(
            f"the LID calibration did not converge: {why}, so LIDs are close to their extreme "
            'values. Use a dev set with overlapping pools or the penalised "reference-code" '
            "variant.",
            DegenerateDataWarning,
            stacklevel=2,
        )
    n_trials = s.shape[0] - n_degenerate
    return LIDCalibration(
        w=float(w),
        b=float(b),
        prior_log_odds=math.log(1.0 / (s.shape[1] - 1)),
        n_pairs=n_trials * s.shape[1],
        class_weight=class_weight,
        ddof=ddof,
        source=source,
        converged=converged,
        penalty_c=penalty_c,
    )


def _fit(
    z_blocks: list[NDArray[np.floating]],
    mated: list[NDArray[np.float64]],
    z_mated: NDArray[np.float64],
    class_weight: ClassWeight,
    penalty_c: float | None,
) -> tuple[float, float, bool]:
    start = None
    n_pairs = sum(z.size for z in z_blocks)
    if n_pairs > _WARM_START_PAIRS:
        # Newton converges quadratically near the optimum: fit every k-th trial first, then
        # finish on all pairs (the result is the full-data optimum either way)
        k = math.ceil(n_pairs / _WARM_START_PAIRS)
        sub_z = [np.ascontiguousarray(z[::k]) for z in z_blocks]  # the same values
        sub_mated = np.concatenate([m[::k] for m in mated])
        w0, b0, ok = _fit_logistic(
            sub_z, sub_mated, class_weight=class_weight, penalty_c=penalty_c, tol=1e-6
        )
        start = (w0, b0) if ok else None
    return _fit_logistic(
        z_blocks, z_mated, class_weight=class_weight, penalty_c=penalty_c, start=start
    )


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class LIDResult:
    """Per-trial LID and its outer aggregates (docs, Methods > LID, steps 5-6)."""

    lid: NDArray[np.float64] = field(repr=False)
    """LID_i = log2(N p_i,m_i) in bits, one per trial (<= log2 N)."""
    p_target: NDArray[np.float64] = field(repr=False)
    """Posterior p_i,m_i of the true identity."""
    rank: NDArray[np.int64] = field(repr=False)
    """Rank of the target among the trial's scores (ties against the attacker)."""
    n_enrolled: int
    """N."""
    calibration: LIDCalibration
    """w, b and the prior term used."""
    n_degenerate: int = 0
    """Eval trials whose scores are all equal (LID = 0 there)."""
    fold_w: tuple[float, ...] = ()
    """Per-fold w when cross-calibrated on eval."""

    @property
    def n_trials(self) -> int:
        """T."""
        return int(self.lid.size)

    @property
    def w(self) -> float:
        """Calibration weight."""
        return self.calibration.w

    @property
    def b(self) -> float:
        """Calibration bias (reported; cancels in the softmax)."""
        return self.calibration.b

    @property
    def alid(self) -> float:
        """Average LID, bits."""
        return float(self.lid.mean())

    @property
    def pdr(self) -> float:
        """Positive disclosure rate: share of trials with LID > 0."""
        return float((self.lid > 0).mean())

    @property
    def ndr(self) -> float:
        """Negative disclosure rate, 1 - PDR."""
        return 1.0 - self.pdr

    @property
    def lid_plus(self) -> float | None:
        """Mean of the positive LIDs (None when there is none)."""
        pos = self.lid[self.lid > 0]
        return float(pos.mean()) if pos.size else None

    @property
    def lid_minus(self) -> float | None:
        """Mean of the LIDs <= 0 (None when there is none)."""
        neg = self.lid[self.lid <= 0]
        return float(neg.mean()) if neg.size else None

    @property
    def lid_max(self) -> float:
        """Worst case: the largest LID, bits."""
        return float(self.lid.max())

    @property
    def ceiling(self) -> float:
        """log2 N, the largest possible LID."""
        return math.log2(self.n_enrolled)

    @property
    def label(self) -> str:
        """How the calibration was obtained, for display next to every number."""
        return self.calibration.source

    def to_dict(self) -> dict[str, float | None]:
        """The ``lid`` block of the command-line JSON contract."""
        return {
            "w": self.w,
            "b": self.b,
            "alid": self.alid,
            "pdr": self.pdr,
            "ndr": self.ndr,
            "lid_plus": self.lid_plus,
            "lid_minus": self.lid_minus,
            "lid_max": self.lid_max,
        }


def lid_rows(
    s: NDArray[np.float64], t: NDArray[np.intp], w: float, b: float, prior: float, ddof: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """Per-row LID, posterior of the target and degenerate-row count under (w, b, prior, ddof).

    The kernel of :func:`lid`: row blocks on parallel threads
    (:func:`~voxmetrics.metrics.parallel.map_blocks`), cache-sized chunks within each. A row's
    values depend on that row only, so every cut of the rows gives the same numbers.

    Examples
    --------
    >>> v, p, n_deg = lid_rows(np.array([[2.0, 0.0]]), np.array([0]), 1.0, 0.0, 0.0, 0)
    >>> round(float(v[0]), 4), round(float(p[0]), 4), n_deg  # z = (1, -1): p = e/(e + 1/e)
    (0.8169, 0.8808, 0)
    """
    lid_out = np.empty(s.shape[0])
    p_out = np.empty(s.shape[0])
    log_n = math.log(s.shape[1])

    def one(blk: slice) -> int:  # writes its own rows of the outputs
        n_deg = 0
        for ch in row_blocks(blk.stop - blk.start, s.shape[1], CHUNK_ELEMENTS):
            rows = slice(blk.start + ch.start, blk.start + ch.stop)  # one value per row
            log_p, deg = log_posteriors(s[rows], w, b, prior, ddof)
            n_deg += int(deg.sum())
            own = log_p[np.arange(log_p.shape[0]), t[rows]]
            lid_out[rows] = (log_n + own) / _LN2
            p_out[rows] = np.exp(own)
        return n_deg

    n_deg = sum(map_blocks(one, row_blocks(*s.shape)))  # row blocks on parallel threads
    return lid_out, p_out, n_deg


def log_posteriors(
    scores: NDArray[np.floating], w: float, b: float, prior: float, ddof: int
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Log-posterior of every enrolled identity, per row, and the mask of degenerate rows.

    ``log_softmax(w z + b - prior)`` over each row's z-scores (:func:`row_znorm`); b and the
    prior shift a row's LLRs equally and cancel. The one formula of :func:`lid_rows`,
    :func:`posterior` and the chance levels' LID of every cell.

    Examples
    --------
    >>> lp, deg = log_posteriors(np.array([[2.0, 0.0]]), 1.0, 0.0, 0.0, 0)
    >>> np.round(np.exp(lp), 4).tolist(), deg.tolist()  # z = (1, -1)
    ([[0.8808, 0.1192]], [False])
    """
    z, deg = row_znorm(scores, ddof=ddof)
    x = np.multiply(z, w, out=z)  # z is row_znorm's own array: w z + (b - prior), in place
    x += b - prior
    # log_softmax along the rows, SciPy's formula step by step (the same numbers), in place
    x_max = x.max(axis=1, keepdims=True)
    x_max[~np.isfinite(x_max)] = 0
    x -= x_max
    with np.errstate(divide="ignore"):
        x -= np.log(np.exp(x).sum(axis=1, keepdims=True))
    return x, deg


def lid(scores: ArrayLike, targets: ArrayLike, calibration: LIDCalibration) -> LIDResult:
    """Per-trial LID of an eval score matrix under a calibration learned on dev.

    Parameters
    ----------
    scores : array_like, shape (T, N)
        Eval scores.
    targets : array_like of int, shape (T,)
        Column of each eval trial's own speaker.
    calibration : LIDCalibration
        From :func:`calibrate_lid` on a dev matrix of disjoint speakers.

    Returns
    -------
    LIDResult

    Notes
    -----
    The softmax is computed as ``log_softmax`` (log-sum-exp), so no w overflows. b and the
    prior term shift every LLR of a row equally and cancel; they are reported only.

    Examples
    --------
    The worked example of docs, Methods > LID (Šterns et al. 2025, section 5.2):

    >>> cal = LIDCalibration(w=1.5, b=-1.0, prior_log_odds=math.log(1 / 5), n_pairs=0)
    >>> r = lid([[0.9, 0.7, 0.4, 1.1, 1.2, 0.4]], [3], cal)
    >>> round(float(r.lid[0]), 3), round(float(r.p_target[0]), 2), int(r.rank[0])
    (0.9, 0.31, 2)
    """
    s, t = check_matrix(scores, targets)
    c = calibration
    lid_values, p, n_deg = lid_rows(s, t, c.w, c.b, c.prior_log_odds, c.ddof)
    return lid_result(
        lid_values,
        p,
        target_ranks(s, t),
        n_enrolled=int(s.shape[1]),
        calibration=c,
        n_degenerate=n_deg,
    )


def lid_result(
    lid_values: NDArray[np.float64],
    p_target: NDArray[np.float64],
    rank: NDArray[np.int64],
    *,
    n_enrolled: int,
    calibration: LIDCalibration,
    n_degenerate: int,
) -> LIDResult:
    """The :class:`LIDResult` of :func:`lid_rows`' outputs and the target ranks.

    Warns (:class:`~voxmetrics.errors.DegenerateDataWarning`) when rows without evidence got
    LID = 0.
    """
    if n_degenerate:
        warnings.warn(
            f"{n_degenerate} eval trial(s) have identical scores (to float64 precision) for "
            "every enrolled identity: they carry no evidence and get LID = 0.",
            DegenerateDataWarning,
            stacklevel=3,
        )
    return LIDResult(
        lid=_ro(lid_values),
        p_target=_ro(p_target),
        rank=_ro(rank),
        n_enrolled=n_enrolled,
        calibration=calibration,
        n_degenerate=n_degenerate,
    )


def lid_cross_calibrated(
    scores: ArrayLike,
    targets: ArrayLike,
    speakers: ArrayLike,
    *,
    k: int = 5,
    variant: str | None = None,
    class_weight: ClassWeight = _UNSET,
    ddof: int = _UNSET,
    penalty_c: float | None = _UNSET,
    seed: int = 0,
) -> LIDResult:
    """LID without a dev set: speaker-disjoint k-fold cross-calibration on eval.

    The trial speakers are split at random into ``k`` folds; the trials of each fold get the
    calibration learned on the trials of the other folds. The result is labelled
    "cross-calibrated (k-fold on eval)" and carries every fold's w; its ``w`` and ``b`` are the
    folds' means.

    Parameters
    ----------
    scores, targets : array_like
        Eval matrix and target columns.
    speakers : array_like of str, shape (T,)
        Speaker of each trial (folds never split a speaker).
    k : int, default 5
        Number of folds (at most the number of speakers, at least 2).
    variant, class_weight, ddof, penalty_c : see :func:`calibrate_lid`.
    seed : int
        Seed of the fold assignment.
    """
    class_weight, ddof, penalty_c = _variant_options(variant, class_weight, ddof, penalty_c)
    s, t = _check_calibration_inputs(scores, targets, ddof, class_weight, penalty_c)
    spk = np.asarray(speakers).astype(str)
    if spk.shape != (s.shape[0],):
        raise VoxMetricsInputError("`speakers` needs one speaker label per trial.")
    uniq, inverse = np.unique(spk, return_inverse=True)
    if not 2 <= k <= uniq.size:
        raise VoxMetricsInputError(
            f"cross-calibration needs 2 <= k <= number of trial speakers ({uniq.size}), got "
            f"k = {k}."
        )
    fold_of_speaker = np.random.default_rng(seed).permutation(uniq.size) % k
    fold = fold_of_speaker[inverse]
    label = f"cross-calibrated ({k}-fold on eval)"
    lid_values = np.empty(s.shape[0])
    p = np.empty(s.shape[0])
    cals = []
    n_deg = 0
    with warnings.catch_warnings():  # re-emitted once below, not once per fold
        warnings.simplefilter("ignore", DegenerateDataWarning)
        for f in range(k):
            held = fold == f
            cal = calibrate_lid(
                s[~held],
                t[~held],
                class_weight=class_weight,
                ddof=ddof,
                penalty_c=penalty_c,
                source=label,
            )
            cals.append(cal)
            lid_values[held], p[held], d = lid_rows(
                s[held], t[held], cal.w, cal.b, cal.prior_log_odds, ddof
            )
            n_deg += d
    n_unconverged = sum(not c.converged for c in cals)
    if n_unconverged:
        warnings.warn(
            f"the LID calibration did not converge in {n_unconverged} of {k} folds (separable "
            "pools?); their LIDs are close to their extreme values.",
            DegenerateDataWarning,
            stacklevel=2,
        )
    if n_deg:
        warnings.warn(
            f"{n_deg} eval trial(s) have identical scores (to float64 precision) for every "
            "enrolled identity: they carry no evidence and get LID = 0.",
            DegenerateDataWarning,
            stacklevel=2,
        )
    mean_cal = LIDCalibration(
        w=float(np.mean([c.w for c in cals])),
        b=float(np.mean([c.b for c in cals])),
        prior_log_odds=cals[0].prior_log_odds,
        n_pairs=int(s.size),
        class_weight=class_weight,
        ddof=ddof,
        source=label,
        converged=all(c.converged for c in cals),
        penalty_c=penalty_c,
    )
    return LIDResult(
        lid=_ro(lid_values),
        p_target=_ro(p),
        rank=_ro(target_ranks(s, t)),
        n_enrolled=int(s.shape[1]),
        calibration=mean_cal,
        n_degenerate=n_deg,
        fold_w=tuple(c.w for c in cals),
    )


def posterior(scores: ArrayLike, calibration: LIDCalibration) -> NDArray[np.float64]:
    """The attacker's posterior over the N enrolled identities for each trial (step 4).

    Parameters
    ----------
    scores : array_like, shape (T, N) or (N,)
        Raw scores of one or more trials.
    calibration : LIDCalibration

    Returns
    -------
    ndarray, same shape as ``scores``
        p_ij = softmax_j(w z_ij + b - prior); each row sums to 1.

    Examples
    --------
    >>> cal = LIDCalibration(w=1.5, b=-1.0, prior_log_odds=math.log(1 / 5), n_pairs=0)
    >>> np.round(posterior([0.9, 0.7, 0.4, 1.1, 1.2, 0.4], cal), 2).tolist()
    [0.12, 0.05, 0.01, 0.31, 0.5, 0.01]
    """
    s = np.asarray(scores, dtype=np.float64)
    one_row = s.ndim == 1
    c = calibration
    log_p, _ = log_posteriors(np.atleast_2d(s), c.w, c.b, c.prior_log_odds, c.ddof)
    p = np.exp(log_p)
    return p[0] if one_row else p


def lid_ccdf(values: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Complementary CDF of per-trial LID: percent of trials exceeding x bits.

    Returns
    -------
    x : ndarray
        The distinct LID values, ascending.
    percent : ndarray
        100 * #{i : LID_i > x} / T at each x (a right-continuous step function).

    Examples
    --------
    >>> x, pct = lid_ccdf([0.5, -1.0, 0.5, 2.0])
    >>> x.tolist(), pct.tolist()
    ([-1.0, 0.5, 2.0], [75.0, 25.0, 0.0])
    """
    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    x, first = np.unique(v, return_index=True)
    last_plus_one = np.append(first[1:], v.size)
    return x, 100.0 * (v.size - last_plus_one) / v.size


@dataclass(frozen=True)
class CalibrationCurve:
    """The fitted sigmoid of a LID calibration against the empirical mated rate in z bins."""

    bin_centres: NDArray[np.float64] = field(repr=False)
    """Centre of each z bin that holds pairs."""
    mated_rate: NDArray[np.float64] = field(repr=False)
    """Share of mated pairs among the pairs of each bin."""
    counts: NDArray[np.int64] = field(repr=False)
    """Pairs per bin."""
    z_grid: NDArray[np.float64] = field(repr=False)
    """z values at which the fitted curve is given."""
    fitted: NDArray[np.float64] = field(repr=False)
    """sigmoid(w z + b): the calibration's probability that a pair is mated."""
    w: float
    """Weight of the calibration."""
    b: float
    """Bias of the calibration."""


def calibration_curve(
    scores: ArrayLike,
    targets: ArrayLike,
    calibration: LIDCalibration,
    *,
    bins: int = 30,
) -> CalibrationCurve:
    """Empirical mated rate per z bin of a (dev) matrix next to the fitted logistic curve.

    Parameters
    ----------
    scores, targets : array_like
        The matrix the calibration was learned on (or any matrix to check it on).
    calibration : LIDCalibration
    bins : int
        Equal-width bins over the observed z range.

    Returns
    -------
    CalibrationCurve
    """
    s, t = check_matrix(scores, targets)
    lo, hi = np.inf, -np.inf
    blocks = row_blocks(*s.shape)
    for rows in blocks:
        z, _ = row_znorm(s[rows], ddof=calibration.ddof)
        lo, hi = min(lo, float(z.min())), max(hi, float(z.max()))
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    counts = np.zeros(bins, dtype=np.int64)
    mated = np.zeros(bins, dtype=np.int64)
    for rows in blocks:
        z, _ = row_znorm(s[rows], ddof=calibration.ddof)
        counts += np.histogram(z, bins=edges)[0]
        mated += np.histogram(z[np.arange(z.shape[0]), t[rows]], bins=edges)[0]
    keep = counts > 0
    centres = (edges[:-1] + edges[1:]) / 2
    grid = np.linspace(lo, hi, 200)
    return CalibrationCurve(
        bin_centres=_ro(centres[keep]),
        mated_rate=_ro(mated[keep] / counts[keep]),
        counts=_ro(counts[keep]),
        z_grid=_ro(grid),
        fitted=_ro(1.0 / (1.0 + np.exp(-(calibration.w * grid + calibration.b)))),
        w=calibration.w,
        b=calibration.b,
    )
