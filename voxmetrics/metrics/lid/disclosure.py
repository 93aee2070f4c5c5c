"""LID itself (Šterns et al. 2025, steps 3-6): posteriors, per-trial LID and its aggregates.

Under a calibration (:mod:`~voxmetrics.metrics.lid.calibration`): the posterior over the
enrolled identities, each trial's LID, the aggregates (ALID, PDR, NDR, LID+, LID-, LIDmax), the
cross-calibrated LID without a dev set, the CCDF, and how displays clamp the numbers in bits.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import LID_DISPLAY_FLOOR
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError, kept_warnings
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.lid.calibration import (
    UNSET,
    LIDCalibration,
    calibrate_lid,
    check_calibration_inputs,
    row_znorm,
    variant_options,
)
from voxmetrics.metrics.lid.logistic import ClassWeight
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, row_blocks, target_ranks

__all__ = [
    "LID_BITS_KEYS",
    "LIDResult",
    "beyond_display_range",
    "clamp_lid_bits",
    "clamp_lid_number",
    "lid",
    "lid_ccdf",
    "lid_cross_calibrated",
    "lid_result",
    "lid_rows",
    "log_posteriors",
    "posterior",
]

_LN2 = math.log(2.0)


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
    class_weight: ClassWeight = UNSET,
    ddof: int = UNSET,
    penalty_c: float | None = UNSET,
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
    class_weight, ddof, penalty_c = variant_options(variant, class_weight, ddof, penalty_c)
    s, t = check_calibration_inputs(scores, targets, ddof, class_weight, penalty_c)
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
    with kept_warnings(DegenerateDataWarning):  # dropped: said once below, not once per fold
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
