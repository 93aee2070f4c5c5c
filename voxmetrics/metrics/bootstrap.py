"""Speaker-level bootstrap intervals (docs, Methods > Uncertainty).

Trial speakers are resampled with replacement and all their trials move together; the metric
is recomputed on eval with the calibration held fixed; the interval is the percentile interval.
For per-trial metrics such as LID the recomputation is a weighted aggregate of per-speaker
sums, so B = 1000 replicates cost one (B x S) matrix product.

A :class:`BootstrapInterval` writes itself as text, ``f"{interval:.2f}"`` giving
"0.47 [0.44, 0.50]" and :meth:`~BootstrapInterval.bounds_text` "[0.44, 0.50]"; every table,
page, report and export writes an interval this way (:func:`interval_text` and
:func:`bounds_text` for numbers that are not held in one, such as the (low, high) pairs of a
condition's utility).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import MISSING, Progress
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count

__all__ = [
    "BootstrapInterval",
    "bounds_text",
    "draws_key",
    "interval_text",
    "lid_bootstrap",
    "percentile_interval",
    "speaker_bootstrap",
    "speaker_resample_counts",
    "weighted_quantile",
]


def _shown(x: Any) -> bool:
    """Whether ``x`` is a number to write (not None, NaN or pandas' NA)."""
    try:
        return x is not None and not math.isnan(x)
    except TypeError:  # pandas' NA
        return False


def bounds_text(low: Any, high: Any, spec: str = ".3f") -> str | None:
    """The bounds of an interval as text, "[low, high]", each formatted with ``spec``.

    None when a bound is missing (None or NaN): the caller says what it shows instead
    (:data:`~voxmetrics._types.MISSING`, "undefined"). ``spec`` is a format specification:
    ``".3f"``, ``".1%"`` (percent, with the sign), ``"z.2f"`` (no "-0.00").

    Examples
    --------
    >>> bounds_text(0.4401, 0.5049), bounds_text(0.1, 0.25, ".1%"), bounds_text(None, 0.5)
    ('[0.440, 0.505]', '[10.0%, 25.0%]', None)
    >>> bounds_text(-0.001, 0.004, ".2f"), bounds_text(-0.001, 0.004, "z.2f")
    ('[-0.00, 0.00]', '[0.00, 0.00]')
    """
    if not (_shown(low) and _shown(high)):
        return None
    return f"[{format(float(low), spec)}, {format(float(high), spec)}]"


def interval_text(estimate: Any, low: Any = None, high: Any = None, spec: str = ".3f") -> str:
    """A number with its interval as text, "0.470 [0.440, 0.500]", each formatted with ``spec``.

    The number alone when a bound is missing; :data:`~voxmetrics._types.MISSING` when the
    number is (None or NaN). The one place an interval is written beside its value: the
    format of :class:`BootstrapInterval` (``f"{interval:.3f}"``) and of the tables.

    Examples
    --------
    >>> interval_text(0.4712, 0.4401, 0.5049), interval_text(1.8, 1.25, 2.5, ".2f")
    ('0.471 [0.440, 0.505]', '1.80 [1.25, 2.50]')
    >>> interval_text(0.5), interval_text(0.5, float("nan"), 0.6), interval_text(None, 0.1, 0.2)
    ('0.500', '0.500', '–')
    """
    if not _shown(estimate):
        return MISSING
    text = format(float(estimate), spec)
    bounds = bounds_text(low, high, spec)
    return text if bounds is None else f"{text} {bounds}"


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile interval from a speaker-level bootstrap.

    It writes itself as text: ``f"{interval:.3f}"`` is the estimate with its bounds,
    "0.470 [0.440, 0.500]" (:func:`interval_text`: the estimate alone without bounds, "–"
    without an estimate), :meth:`bounds_text` the bounds alone. A format specification applies
    to each number (``.2f``, ``.1%``, ``z.2f``); an empty one gives ``str(interval)``.

    Examples
    --------
    >>> iv = BootstrapInterval(0.4712, 0.4401, 0.5049, 0.95, 200, 200)
    >>> f"{iv:.3f}", f"{iv:.1%}", iv.bounds_text(".2f"), iv.bounds
    ('0.471 [0.440, 0.505]', '47.1% [44.0%, 50.5%]', '[0.44, 0.50]', (0.4401, 0.5049))
    >>> f"{iv.map(lambda x: 100 * x):.1f}"
    '47.1 [44.0, 50.5]'
    """

    estimate: float | None
    """The metric on the full data."""
    low: float | None
    """Lower bound (None when the metric is undefined in too many replicates)."""
    high: float | None
    """Upper bound."""
    confidence: float
    """Coverage, e.g. 0.95."""
    n_boot: int
    """Replicates drawn."""
    n_valid: int
    """Replicates in which the metric was defined."""

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-safe dictionary of the fields."""
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "n_boot": self.n_boot,
            "n_valid": self.n_valid,
        }

    def __format__(self, spec: str) -> str:
        """The estimate with its bounds, "0.470 [0.440, 0.500]" (:func:`interval_text`)."""
        if not spec:
            return str(self)
        return interval_text(self.estimate, self.low, self.high, spec)

    def bounds_text(self, spec: str = ".3f") -> str | None:
        """The bounds alone, "[0.440, 0.500]"; None when one is missing (:func:`bounds_text`)."""
        return bounds_text(self.low, self.high, spec)

    @property
    def bounds(self) -> tuple[float, float] | None:
        """``(low, high)`` as floats, None when a bound is missing.

        The pair a condition's utility (:attr:`voxmetrics.data.utility.Utility.intervals`) and
        the privacy-utility plane keep.
        """
        if not (_shown(self.low) and _shown(self.high)):
            return None
        return float(self.low), float(self.high)  # type: ignore[arg-type]

    def map(self, f: Callable[[float], float | None]) -> BootstrapInterval:
        """The interval with ``f`` applied to the estimate and both bounds (None stays None).

        The numbers in another unit, or as a display shows them (e.g. LID bits clamped).
        """
        return replace(
            self,
            estimate=None if self.estimate is None else f(self.estimate),
            low=None if self.low is None else f(self.low),
            high=None if self.high is None else f(self.high),
        )


def draws_key(speakers: ArrayLike, *, n_boot: int, seed: int) -> str:
    """Which speaker-bootstrap replicates a seed draws: ``"<speakers digest>:<B>:<seed>"``.

    The same distinct speakers, replicates and seed draw the same replicates (here and in
    :class:`~voxmetrics.metrics.uncertainty.SpeakerDraws`), so two numbers whose keys match are
    paired replicate by replicate; numbers whose keys differ were resampled independently.

    Examples
    --------
    >>> draws_key(["b", "a", "b"], n_boot=200, seed=0) == draws_key(["a", "b"], n_boot=200, seed=0)
    True
    >>> draws_key(["a", "b"], n_boot=200, seed=0).endswith(":200:0")
    True
    """
    uniq = np.unique(np.asarray(speakers).astype(str).ravel())
    digest = hashlib.sha256("\n".join(uniq.tolist()).encode("utf-8")).hexdigest()[:16]
    return f"{digest}:{int(n_boot)}:{int(seed)}"


def speaker_resample_counts(
    speakers: ArrayLike, *, n_boot: int, rng: np.random.Generator
) -> tuple[NDArray[np.int64], NDArray[np.intp], int]:
    """How often each speaker is drawn in each replicate.

    Returns
    -------
    counts : ndarray of int, shape (n_boot, S)
        Row b: multiplicity of each of the S speakers in replicate b (rows sum to S).
    inverse : ndarray of int, shape (T,)
        Speaker index of each trial.
    n_speakers : int
        S.
    """
    check_count("bootstrap", "replicates", n_boot, "max_replicates")
    spk = np.asarray(speakers).astype(str)
    uniq, inverse = np.unique(spk, return_inverse=True)
    s = uniq.size
    cells = f"replicate x speaker counts ({n_boot:,} x {s:,})"
    check_count("bootstrap", cells, n_boot * s, "max_cells")
    counts = rng.multinomial(s, np.full(s, 1.0 / s), size=n_boot).astype(np.int64)
    return counts, inverse, s


def weighted_quantile(values: ArrayLike, weights: ArrayLike, q: float) -> NDArray[np.float64]:
    """Inverse-CDF q-quantile of ``values`` under each row of ``weights``.

    The smallest value x whose weighted share of values <= x reaches q (numpy's
    ``method="inverted_cdf"`` for unit weights); NaN for a row of zero weight.

    Parameters
    ----------
    values : array_like, shape (n,)
    weights : array_like, shape (B, n) or (n,)
        Non-negative weights.
    q : float in (0, 1]

    Examples
    --------
    >>> weighted_quantile([3.0, 1.0, 2.0], [[1, 1, 1], [0, 2, 1]], 0.5).tolist()
    [2.0, 1.0]
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    order = np.argsort(v, kind="stable")
    sv, sw = v[order], w[:, order]
    cum = np.cumsum(sw, axis=1)
    total = cum[:, -1]
    # count of positions strictly below the q share; guard rounding with a relative epsilon
    k = (cum < q * total[:, None] * (1 - 1e-12)).sum(axis=1)
    out = sv[np.minimum(k, v.size - 1)]
    return np.where(total > 0, out, np.nan)


def percentile_interval(
    estimate: float | None, reps: NDArray[np.float64], confidence: float, n_boot: int
) -> BootstrapInterval:
    """The percentile interval of ``n_boot`` bootstrap replicates around ``estimate``.

    The interval every bootstrap of the package reports: the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles (numpy's linear interpolation) of the finite
    replicates; no bounds (None) when fewer than half of the replicates are finite (the metric
    was undefined in too many of them).

    Parameters
    ----------
    estimate : float or None
        The metric on the full data.
    reps : ndarray of float, shape (n_boot,)
        The metric in each replicate (NaN or infinite where undefined).
    confidence : float in (0, 1)
        Coverage.
    n_boot : int
        Replicates drawn.

    Examples
    --------
    >>> iv = percentile_interval(0.5, np.linspace(0.0, 1.0, 101), 0.9, 101)
    >>> iv.low, iv.high, iv.n_valid
    (0.05, 0.95, 101)
    >>> percentile_interval(0.5, np.full(10, np.nan), 0.95, 10).low is None
    True
    """
    ok = reps[np.isfinite(reps)]
    alpha = (1.0 - confidence) / 2
    if ok.size < 0.5 * n_boot:
        low = high = None
    else:
        low, high = (float(v) for v in np.quantile(ok, [alpha, 1.0 - alpha]))
    return BootstrapInterval(estimate, low, high, confidence, n_boot, int(ok.size))


def lid_bootstrap(
    lid: ArrayLike,
    speakers: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of ALID, PDR, LID+ and LIDmax.

    Parameters
    ----------
    lid : array_like, shape (T,)
        Per-trial LID (bits) under a fixed calibration.
    speakers : array_like of str, shape (T,)
        Speaker of each trial.
    n_boot : int, default 1000
        Replicates.
    confidence : float, default 0.95
        Coverage of the percentile interval.
    seed : int
        Seed; the same seed gives the same intervals.
    progress : callable(fraction, message), optional
        Called as the replicates are computed.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys ``alid``, ``pdr``, ``lid_plus``, ``lid_max``.

    Examples
    --------
    >>> ci = lid_bootstrap([1.0, 1.0, -1.0, -1.0], ["a", "a", "b", "b"], n_boot=200)
    >>> ci["pdr"].estimate, 0.0 <= ci["pdr"].low <= ci["pdr"].high <= 1.0
    (0.5, True)
    """
    values = np.asarray(lid, dtype=np.float64).ravel()
    spk = np.asarray(speakers).astype(str).ravel()
    if values.size == 0 or spk.shape != values.shape:
        raise VoxMetricsInputError("`lid` and `speakers` must be non-empty and of equal length.")
    if n_boot < 1 or not 0 < confidence < 1:
        raise VoxMetricsInputError("`n_boot` must be >= 1 and `confidence` in (0, 1).")
    rng = np.random.default_rng(seed)
    counts, inverse, s = speaker_resample_counts(spk, n_boot=n_boot, rng=rng)
    pos = values > 0
    n = np.bincount(inverse, minlength=s).astype(np.float64)
    total = np.bincount(inverse, weights=values, minlength=s)
    n_pos = np.bincount(inverse, weights=pos.astype(np.float64), minlength=s)
    sum_pos = np.bincount(inverse, weights=np.where(pos, values, 0.0), minlength=s)
    spk_max = np.full(s, -np.inf)
    np.maximum.at(spk_max, inverse, values)

    reps = {k: np.empty(n_boot) for k in ("alid", "pdr", "lid_plus", "lid_max")}
    chunk = 100
    for start in range(0, n_boot, chunk):
        w = counts[start : start + chunk].astype(np.float64)
        sl = slice(start, start + w.shape[0])
        n_b = w @ n
        reps["alid"][sl] = (w @ total) / n_b
        reps["pdr"][sl] = (w @ n_pos) / n_b
        with np.errstate(invalid="ignore", divide="ignore"):
            reps["lid_plus"][sl] = np.where(w @ n_pos > 0, (w @ sum_pos) / (w @ n_pos), np.nan)
        reps["lid_max"][sl] = np.where(w > 0, spk_max, -np.inf).max(axis=1)
        if progress is not None:
            progress(min(1.0, sl.stop / n_boot), f"Bootstrap {sl.stop}/{n_boot}")
    estimates = {
        "alid": float(values.mean()),
        "pdr": float(pos.mean()),
        "lid_plus": float(values[pos].mean()) if pos.any() else None,
        "lid_max": float(values.max()),
    }
    return {k: percentile_interval(estimates[k], reps[k], confidence, n_boot) for k in reps}


def speaker_bootstrap(
    statistic: Callable[[NDArray[np.intp]], dict[str, float]],
    speakers: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap of any statistic of a subset of trials (docs, Methods > Uncertainty).

    Parameters
    ----------
    statistic : callable(trial_indices) -> dict of str to float
        Recomputes the metric(s) on the trials with these row indices (a trial drawn twice
        appears twice). Called once with all trials for the estimates, then once per replicate.
    speakers : array_like of str, shape (T,)
        Speaker of each trial; a speaker's trials move together.
    n_boot, confidence, seed, progress :
        As :func:`lid_bootstrap`.

    Returns
    -------
    dict of str to BootstrapInterval
        One interval per key of ``statistic``'s result.

    Examples
    --------
    >>> values = np.array([1.0, 2.0, 3.0, 4.0])
    >>> ci = speaker_bootstrap(lambda idx: {"mean": float(values[idx].mean())},
    ...                        ["a", "a", "b", "b"], n_boot=100)
    >>> ci["mean"].estimate, 1.5 <= ci["mean"].low <= ci["mean"].high <= 3.5
    (2.5, True)
    """
    spk = np.asarray(speakers).astype(str).ravel()
    if spk.size == 0:
        raise VoxMetricsInputError("`speakers` is empty.")
    if n_boot < 1 or not 0 < confidence < 1:
        raise VoxMetricsInputError("`n_boot` must be >= 1 and `confidence` in (0, 1).")
    rng = np.random.default_rng(seed)
    counts, inverse, _ = speaker_resample_counts(spk, n_boot=n_boot, rng=rng)
    trials_of = np.split(np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse))[:-1])
    estimates = statistic(np.arange(spk.size))
    reps = {k: np.empty(n_boot) for k in estimates}
    step = max(1, n_boot // 100)
    for b in range(n_boot):
        idx = np.concatenate([np.tile(trials_of[j], c) for j, c in enumerate(counts[b]) if c])
        for k, v in statistic(idx).items():
            reps[k][b] = np.nan if v is None else v
        if progress is not None and ((b + 1) % step == 0 or b + 1 == n_boot):
            progress((b + 1) / n_boot, f"Bootstrap {b + 1}/{n_boot}")
    return {
        k: percentile_interval(None if v is None else float(v), reps[k], confidence, n_boot)
        for k, v in estimates.items()
    }
