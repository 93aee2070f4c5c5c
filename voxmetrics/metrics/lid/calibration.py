"""LID's calibration (Šterns et al. 2025, steps 1-2): row z-norm and the logistic fit of w, b.

The variants (:data:`LID_VARIANTS`), the fit on a dev matrix (:func:`calibrate_lid`, solved in
:mod:`~voxmetrics.metrics.lid.logistic`) and the check of a calibration against the empirical
mated rate (:func:`calibration_curve`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import DEFAULT_LID_VARIANT, LID_VARIANT_ALIASES, LIDVariant
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.lid.binned import BINNED_PAIRS, BINS, BinSums, fit_binned
from voxmetrics.metrics.lid.logistic import W_MAX, ClassWeight, fit_w_b
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks

__all__ = [
    "LID_VARIANTS",
    "UNSET",
    "CalibrationCurve",
    "LIDCalibration",
    "Variant",
    "calibrate_lid",
    "calibration_curve",
    "check_calibration_inputs",
    "pooled_calibration_curve",
    "resolve_lid_variant",
    "row_znorm",
    "variant_options",
]

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


UNSET: Any = _Unset()

_EXPLICIT_BASE: tuple[ClassWeight, int, float | None] = (None, 0, None)
"""Where the explicit options start when only some are given: the unpenalised fit."""

_VARIANT_ALIASES = LID_VARIANT_ALIASES


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


def check_calibration_inputs(
    scores: ArrayLike,
    targets: ArrayLike,
    ddof: int,
    class_weight: ClassWeight,
    penalty_c: float | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The checked matrix and targets; refuse a bad ``ddof``, ``class_weight`` or ``penalty_c``."""
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


def variant_options(
    variant: str | None, class_weight: Any, ddof: Any, penalty_c: Any
) -> tuple[ClassWeight, int, float | None]:
    """(class_weight, ddof, penalty_c) of a named variant, or the explicit options.

    Without a variant and without explicit options: the default variant
    (:data:`~voxmetrics._types.DEFAULT_LID_VARIANT`). Explicit options not given take the
    unpenalised fit's values (no class weight, population sd, no penalty).
    """
    given = [x is not UNSET for x in (class_weight, ddof, penalty_c)]
    if variant is None:
        if not any(given):
            return LID_VARIANTS[DEFAULT_LID_VARIANT]
        base_cw, base_dd, base_pc = _EXPLICIT_BASE
        return (
            class_weight if given[0] else base_cw,
            ddof if given[1] else base_dd,
            penalty_c if given[2] else base_pc,
        )
    if any(given):
        raise VoxMetricsInputError(
            "give either `variant` or the explicit `class_weight`, `ddof`, `penalty_c`, not both."
        )
    return LID_VARIANTS[resolve_lid_variant(variant)]


def _dev_zscores(
    s: NDArray[np.floating], t: NDArray[np.intp], *, ddof: int, pool_range: bool
) -> tuple[list[NDArray[np.floating]], list[NDArray[np.float64]], int, float, float]:
    """The z-scores a calibration fits, by row block, and what it needs to know of them.

    Returns the z blocks, the mated z of each block, the number of degenerate rows and the
    min and max non-mated z. Each block holds the z-scores of its non-degenerate rows in the
    input's precision (a float32 matrix costs one float32 copy); the mated z of each block are
    float64. The z-norm runs in cache-sized chunks of rows (a row's z depend on that row only:
    the same numbers as whole blocks). The range of the non-mated z (the separation test of an
    unpenalised fit) is taken only with ``pool_range`` (else it is (inf, -inf)).
    """
    z_blocks, mated = [], []
    n_degenerate = 0
    non_min, non_max = np.inf, -np.inf
    for rows in row_blocks(*s.shape):
        n_rows = rows.stop - rows.start
        block = np.empty((n_rows, s.shape[1]), dtype=s.dtype)
        keep = np.empty(n_rows, dtype=bool)
        block_mated = []
        for ch in row_blocks(n_rows, s.shape[1], CHUNK_ELEMENTS):
            part = slice(rows.start + ch.start, rows.start + ch.stop)
            z, deg = row_znorm(s[part], ddof=ddof)
            keep[ch] = ~deg
            idx = np.arange(z.shape[0]), t[part]
            block_mated.append(z[idx][~deg])
            block[ch] = z
            if pool_range and not deg.all():
                z[idx] = np.nan  # z is row_znorm's own array, already copied
                non_min = min(non_min, float(np.nanmin(z[~deg])))
                non_max = max(non_max, float(np.nanmax(z[~deg])))
        n_degenerate += int(n_rows - keep.sum())
        mated.append(np.concatenate(block_mated))
        z_blocks.append(block if keep.all() else block[keep])
    return z_blocks, mated, n_degenerate, non_min, non_max


def _znorm_chunks(
    s: NDArray[np.floating], rows: slice, ddof: int
) -> Iterator[tuple[slice, NDArray[np.float64], NDArray[np.bool_]]]:
    """(rows of ``s``, their z-scores, degenerate mask) for each cache-sized chunk of ``rows``."""
    for ch in row_blocks(rows.stop - rows.start, s.shape[1], CHUNK_ELEMENTS):
        part = slice(rows.start + ch.start, rows.start + ch.stop)
        z, deg = row_znorm(s[part], ddof=ddof)
        yield part, z, deg


def _dev_binned(
    s: NDArray[np.floating], t: NDArray[np.intp], *, ddof: int, pool_range: bool
) -> tuple[BinSums | None, list[NDArray[np.float64]], int, float, float]:
    """What :func:`_dev_zscores` returns, with the z blocks' binned moments in their place.

    One pass of row blocks on parallel threads, each z-norming its rows chunk by chunk (the same
    numbers as :func:`_dev_zscores`) and binning them (:class:`~voxmetrics.metrics.lid.binned.
    BinSums`, merged in block order); no z block is kept. As there, the binned z are in the
    input's precision (float32 z of a float32 matrix) and the mated z float64: the same
    objective as Newton's method on the blocks. The bins' width is 1 / BINS of the z range of
    the first chunk with a non-degenerate row. The moments are None when there is no such row
    or the bins outgrow MAX_BINS.
    """
    bins = None
    for rows in row_blocks(s.shape[0], s.shape[1], CHUNK_ELEMENTS):
        z, deg = row_znorm(s[rows], ddof=ddof)
        kept = (z if not deg.any() else z[~deg]).astype(s.dtype, copy=False)
        if kept.size:
            lo, hi = float(kept.min()), float(kept.max())
            if hi > lo:
                bins = BinSums(lo, BINS / (hi - lo))
            break

    def one(rows: slice) -> tuple[NDArray[np.float64], int, float, float, BinSums | None]:
        mated, n_deg = [], 0
        non_lo, non_hi = np.inf, -np.inf
        part_bins = None if bins is None else BinSums(bins.anchor, bins.scale)
        for part, z, deg in _znorm_chunks(s, rows, ddof):
            n_deg += int(deg.sum())
            if deg.all():
                continue
            idx = np.arange(z.shape[0]), t[part]
            mated.append(z[idx][~deg])
            if part_bins is not None:
                kept = z if not deg.any() else z[~deg]
                part_bins.add(kept.astype(s.dtype, copy=False))
            if pool_range:
                z[idx] = np.nan  # z is row_znorm's own array, already binned
                non_lo = min(non_lo, float(np.nanmin(z[~deg])))
                non_hi = max(non_hi, float(np.nanmax(z[~deg])))
        mated_z = np.concatenate(mated) if mated else np.empty(0)
        return mated_z, n_deg, non_lo, non_hi, part_bins

    parts = map_blocks(one, row_blocks(*s.shape))
    if bins is not None:
        for part in parts:  # in block order
            bins.merge(part[4])  # type: ignore[arg-type]
    return (
        None if bins is None or bins.full else bins,
        [part[0] for part in parts],
        sum(part[1] for part in parts),
        min(part[2] for part in parts),
        max(part[3] for part in parts),
    )


def _fit_dev(
    s: NDArray[np.floating],
    t: NDArray[np.intp],
    *,
    ddof: int,
    class_weight: ClassWeight,
    penalty_c: float | None,
) -> tuple[float, float, bool, bool, int]:
    """(w, b, converged, separated, degenerate rows) of the calibration on a dev matrix.

    Up to :data:`~voxmetrics.metrics.lid.binned.BINNED_PAIRS` pairs, Newton's method on every
    pair (:func:`~voxmetrics.metrics.lid.logistic.fit_w_b`); beyond, the fit on their binned
    moments (:func:`~voxmetrics.metrics.lid.binned.fit_binned`), refined on every pair when its
    error bound is not met. Separated pools of an unpenalised fit: w = ±W_MAX, the boundary in
    the middle of the gap (see :func:`calibrate_lid`).
    """
    pool_range = penalty_c is None
    binned = s.size > BINNED_PAIRS
    if binned:
        moments, mated, n_degenerate, non_min, non_max = _dev_binned(
            s, t, ddof=ddof, pool_range=pool_range
        )
    else:
        z_blocks, mated, n_degenerate, non_min, non_max = _dev_zscores(
            s, t, ddof=ddof, pool_range=pool_range
        )
    if n_degenerate == s.shape[0]:
        return 0.0, 0.0, False, False, n_degenerate
    z_mated = np.concatenate(mated)
    # (quasi-)complete separation of the pools: the likelihood has no finite maximum
    if pool_range and (z_mated.min() >= non_max or z_mated.max() <= non_min):
        # where Newton's method would stop on the way to |w| = infinity depends on rounding
        # (float32 and float64 copies of the same data stopped at w = 24 and w = 1e4): use the
        # stated cap and the boundary in the middle of the gap instead
        above = z_mated.min() >= non_max
        w = W_MAX if above else -W_MAX
        gap_mid = (z_mated.min() + non_max) / 2 if above else (z_mated.max() + non_min) / 2
        return w, -w * float(gap_mid), False, True, n_degenerate
    start = None
    if binned:
        if moments is not None:
            w, b, ok, accurate = fit_binned(
                moments, z_mated, class_weight=class_weight, penalty_c=penalty_c
            )
            if accurate:
                return w, b, True, False, n_degenerate
            start = (w, b) if ok else None
        z_blocks = _dev_zscores(s, t, ddof=ddof, pool_range=False)[0]
    w, b, converged = fit_w_b(z_blocks, mated, z_mated, class_weight, penalty_c, start=start)
    return w, b, converged, False, n_degenerate


def calibrate_lid(
    scores: ArrayLike,
    targets: ArrayLike,
    *,
    variant: str | None = None,
    class_weight: ClassWeight = UNSET,
    ddof: int = UNSET,
    penalty_c: float | None = UNSET,
    source: str = "dev",
) -> LIDCalibration:
    """Learn LID's logistic calibration (w, b) on a dev score matrix (docs, Methods > LID, step 2).

    Univariate logistic regression of y_ij = [j = m_i] on the row z-scores z_ij over all
    (trial, enrolled) pairs, fitted by Newton's method over row blocks; beyond
    :data:`~voxmetrics.metrics.lid.binned.BINNED_PAIRS` pairs, on their binned moments
    (:mod:`~voxmetrics.metrics.lid.binned`: one pass over the pairs, w and b within 1e-12 of the
    exact optimum, else refined on every pair). By default it is the
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
    class_weight, ddof, penalty_c = variant_options(variant, class_weight, ddof, penalty_c)
    s, t = check_calibration_inputs(scores, targets, ddof, class_weight, penalty_c)
    w, b, converged, separated, n_degenerate = _fit_dev(
        s, t, ddof=ddof, class_weight=class_weight, penalty_c=penalty_c
    )
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


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


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
    return pooled_calibration_curve([(scores, targets)], calibration, bins=bins)


def pooled_calibration_curve(
    matrices: Sequence[tuple[ArrayLike, ArrayLike]],
    calibration: LIDCalibration,
    *,
    bins: int = 30,
) -> CalibrationCurve:
    """:func:`calibration_curve` of the pairs of several matrices binned together.

    For a condition calibrated per group (a VoicePrivacy list, complete within each gender):
    ``matrices`` are the groups' complete ``(scores, targets)``, each row z-normalised over its
    own matrix's identities as its group's calibration saw it. One matrix gives exactly
    :func:`calibration_curve`.
    """
    if not matrices:
        raise VoxMetricsInputError("no matrix to bin the calibration curve on; give at least one.")
    checked = [check_matrix(scores, targets) for scores, targets in matrices]
    lo, hi = np.inf, -np.inf
    for s, _ in checked:
        for rows in row_blocks(*s.shape):
            z, _ = row_znorm(s[rows], ddof=calibration.ddof)
            lo, hi = min(lo, float(z.min())), max(hi, float(z.max()))
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    counts = np.zeros(bins, dtype=np.int64)
    mated = np.zeros(bins, dtype=np.int64)
    for s, t in checked:
        for rows in row_blocks(*s.shape):
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
