"""LID's calibration on a large dev set: the logistic fit solved on the pairs' binned moments.

The fit of :mod:`~voxmetrics.metrics.lid.logistic` sums, on every Newton pass, a softplus and a
sigmoid of every (trial, enrolled) pair: 4 to 10 passes over millions of pairs. Here one pass
cuts the z range into :data:`BINS` equal bins of width h and sums, per bin, the powers 0 to
:data:`ORDER` of each z's offset d from its bin's centre c (:class:`BinSums`). Any sum over
the pairs of g(w z + b) z^j (g = softplus, sigmoid or its derivative, j = 0, 1, 2) is then the
Taylor series of g about w c + b in w d, summed over the bins with those moments, every order
the moments hold kept; Newton's method runs on the bins (thousands of values) instead of the
pairs. The terms dropped are at most about (|w| h / 2)^(ORDER + 1) / (ORDER + 1)! of each
pair's term, and :func:`fit_binned` bounds their effect on (w, b) at the optimum from the
gradient's error bound and the Hessian: it keeps the binned optimum only when that bound is
within :data:`TOL` of |w| and |b| (relative), where the exact optimum (every pair summed in
float64) itself is known to about 1e-15. The mated pairs are few and summed exactly.
"""

from __future__ import annotations

import math

import numpy as np
from numpy import polynomial as P
from numpy.typing import NDArray

from voxmetrics.metrics.lid.logistic import ClassWeight, _newton, _terms

__all__ = ["BINNED_PAIRS", "BINS", "MAX_BINS", "ORDER", "TOL", "BinSums", "fit_binned"]

BINNED_PAIRS = 1 << 18
"""Calibrations on more (trial, enrolled) pairs than this are solved on binned moments."""

BINS = 1 << 12
"""Bins over the z range of the first chunk of rows (the range of all rows takes a few more)."""

MAX_BINS = 1 << 16
"""Bins an accumulator may grow to (a first chunk 16 times narrower than the rest: the caller
then solves on every pair)."""

ORDER = 6
"""Highest power of a z's offset from its bin's centre whose sum is kept."""

TOL = 1e-12
"""The binned optimum is kept when the bound of its truncation error in w and in b is within
this much of |w| and of |b| (relative); else the caller refines it on every pair."""

REMAINDER_BOUND = 10.0
"""Bound on |sigma^(k)(eta)| / sigma(eta) over every eta for k <= ORDER + 1 (its maximum is
2.64, at k = 7; ``tests/metrics/lid/test_binned.py`` computes it): the Taylor remainders' factor."""

_CHUNK = 1 << 15
"""Scores binned at once (their temporaries stay in the cache)."""


def _derivative_polynomials(order: int) -> list[tuple[bool, NDArray[np.float64]]]:
    """sigma^(k), k = 1..order, as v A(v) (odd k) or v q B(v) (even k): (has q, A or B).

    v = p (1 - p) and q = 1 - 2p = -tanh(eta / 2) (p = sigmoid(eta)), so every derivative is
    computed without cancellation in the tails. From sigma' = v: d/deta of v A(v) is
    v q (A + v A'), and of v q B(v) is v ((1 - 6 v) B + v (1 - 4 v) B') (v' = v q, q' = -2 v,
    q^2 = 1 - 4 v).
    """
    out: list[tuple[bool, NDArray[np.float64]]] = [(False, np.array([1.0]))]
    poly = P.Polynomial([1.0])
    v = P.Polynomial([0.0, 1.0])
    for _ in range(order - 1):
        with_q = out[-1][0]
        if with_q:
            poly = (1 - 6 * v) * poly + v * (1 - 4 * v) * poly.deriv()
        else:
            poly = poly + v * poly.deriv()
        out.append((not with_q, np.array(poly.coef, dtype=np.float64)))
    return out


_SIGMA_DERIVATIVES = _derivative_polynomials(ORDER + 1)


def derivatives(eta: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """[softplus, sigma, sigma', ..., sigma^(ORDER + 1)] at ``eta``: softplus's derivatives.

    Examples
    --------
    >>> d = derivatives(np.array([0.0]))
    >>> [round(float(x[0]), 4) for x in d[:5]]  # log 2, 1/2, 1/4, 0, -1/8
    [0.6931, 0.5, 0.25, 0.0, -0.125]
    """
    e = np.exp(-np.abs(eta))
    sp = np.maximum(eta, 0.0) + np.log1p(e)
    p = np.where(eta >= 0, 1.0, e) / (1.0 + e)
    v = e / (1.0 + e) ** 2  # p (1 - p), without 1 - p's cancellation where p ~ 1
    q = -np.tanh(eta / 2)
    out = [sp, p]
    for with_q, coef in _SIGMA_DERIVATIVES:
        poly = np.full_like(v, coef[-1])
        for c in coef[-2::-1]:  # Horner in v
            poly *= v
            poly += c
        out.append(v * q * poly if with_q else v * poly)
    return out


class BinSums:
    """The binned moments of z-scores, added chunk by chunk (the bins grow as needed).

    Bins of width h = 1 / ``scale`` from ``anchor``: bin k holds the z with
    floor((z - anchor) scale) = k (k may be negative), and row m of :attr:`moments` the sum of
    f^m over them, f = (z - anchor) scale - k - 1/2 in [-1/2, 1/2) (a z's offset from its
    bin's centre in bin widths; m = 0 counts them). Column i is bin :attr:`first` + i. Beyond
    :data:`MAX_BINS` bins :attr:`full` is set and nothing more is added.
    """

    def __init__(self, anchor: float, scale: float) -> None:
        self.anchor, self.scale = anchor, scale
        self.first = 0
        self.moments = np.zeros((ORDER + 1, 0))
        self.full = False

    def _cover(self, k_min: int, k_max: int) -> bool:
        """Widen the bins to k_min..k_max; False when that would pass MAX_BINS."""
        n = self.moments.shape[1]
        lo, hi = (
            (k_min, k_max) if n == 0 else (min(k_min, self.first), max(k_max, self.first + n - 1))
        )
        if hi - lo + 1 > MAX_BINS:
            self.full = True
            return False
        if n == 0 or lo < self.first or hi > self.first + n - 1:
            wider = np.zeros((ORDER + 1, hi - lo + 1))
            wider[:, self.first - lo : self.first - lo + n] = self.moments
            self.first, self.moments = lo, wider
        return True

    def add(self, z: NDArray[np.floating]) -> None:
        """Add the moments of the scores ``z`` (any shape; float32 ones are taken as they are)."""
        zz = z.ravel()
        for start in range(0, zz.size, _CHUNK):
            if self.full:
                return
            u = np.subtract(zz[start : start + _CHUNK], self.anchor, dtype=np.float64)
            u *= self.scale
            k = np.floor(u)
            f = np.subtract(u, k, out=u)
            f -= 0.5
            k_int = k.astype(np.intp)
            if not k_int.size or not self._cover(int(k_int.min()), int(k_int.max())):
                continue
            k_int -= self.first
            n = self.moments.shape[1]
            self.moments[0] += np.bincount(k_int, minlength=n)
            power = f.copy()
            for m in range(1, ORDER + 1):
                self.moments[m] += np.bincount(k_int, power, n)
                if m < ORDER:
                    power *= f

    def merge(self, other: BinSums) -> None:
        """Add another accumulator's moments (same anchor and scale), bin by bin."""
        if not other.full and not other.moments.shape[1]:
            return
        if other.full or not self._cover(other.first, other.first + other.moments.shape[1] - 1):
            self.full = True
            return
        at = other.first - self.first
        self.moments[:, at : at + other.moments.shape[1]] += other.moments


def fit_binned(
    bins: BinSums,
    z_mated: NDArray[np.float64],
    *,
    class_weight: ClassWeight,
    penalty_c: float | None,
) -> tuple[float, float, bool, bool]:
    """The logistic fit of :func:`~voxmetrics.metrics.lid.logistic.fit_w_b` on binned moments.

    Parameters
    ----------
    bins : BinSums
        The binned moments of every pair's z (mated ones included).
    z_mated : ndarray
        The mated pairs' z (label 1; every other pair has label 0).
    class_weight, penalty_c
        As :func:`~voxmetrics.metrics.lid.logistic.fit_w_b`.

    Returns
    -------
    (w, b, converged, accurate)
        ``accurate``: the truncation's effect on w and b is bounded within :data:`TOL` of
        |w| and |b| (relative).
    """
    moments = bins.moments
    keep = moments[0] > 0
    h = 1.0 / bins.scale
    centre = np.asarray(bins.anchor + (bins.first + np.flatnonzero(keep) + 0.5) * h, np.float64)
    count = moments[0][keep]
    n = round(float(count.sum()))
    # sums of d^m per bin (d = z - c), then of d^m z^j = d^m (c + d)^j for j = 0, 1, 2, each
    # with the orders m + i <= ORDER the moments hold
    d_sums = [moments[m][keep] * h**m for m in range(ORDER + 1)]
    dz = [
        [
            sum(
                math.comb(j, i) * centre ** (j - i) * d_sums[m + i]
                for i in range(min(j, ORDER - m) + 1)
            )
            for m in range(ORDER + 1)
        ]
        for j in range(3)
    ]
    factorial = [math.factorial(m) for m in range(ORDER + 2)]

    def sums(w: float, b: float) -> NDArray[np.float64]:
        # softplus, p, p z, v, v z, v z^2 summed over every pair (see logistic._block_sums)
        deriv = derivatives(w * centre + b)
        coef = [w**m / factorial[m] for m in range(ORDER + 1)]
        out = []
        for a, j in ((0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)):
            per_bin = coef[0] * deriv[a] * dz[j][0]
            for m in range(1, ORDER + 1):
                per_bin += coef[m] * deriv[a + m] * dz[j][m]
            out.append(per_bin.sum())
        return np.array(out)

    w, b, converged, hess = _newton(
        sums,
        n,
        z_mated,
        class_weight=class_weight,
        penalty_c=penalty_c,
        start=None,
        max_iter=100,
        tol=1e-12,
    )
    if not converged:
        return w, b, False, False
    # The gradient's binned sums, sum p and sum p z, lose the Taylor remainder of each pair:
    # |sigma^(k)(xi)| <= REMAINDER_BOUND e^rho sigma(w c + b) within rho = |w| h / 2 of the
    # centre's eta, times rho^k / k! (k = ORDER + 1; for p z's offset part, ORDER and one
    # factor |d| <= h / 2). Their weight is c0 (the mated pairs' sums are exact).
    rho = abs(w) * h / 2
    tail = REMAINDER_BOUND * math.exp(rho)
    last = rho ** (ORDER + 1) / factorial[ORDER + 1]
    p = _terms(w * centre + b)[1] * count
    c0 = n / (2 * (n - z_mated.size)) if class_weight == "balanced" else 1.0
    err_b = c0 * tail * last * p.sum()
    err_w = (
        c0
        * tail
        * (last * (p * np.abs(centre)).sum() + rho**ORDER / factorial[ORDER] * h / 2 * p.sum())
    )
    try:
        bound = np.abs(np.linalg.inv(hess)) @ np.array([err_w, err_b])
    except np.linalg.LinAlgError:
        return w, b, True, False
    accurate = bool(bound[0] <= TOL * abs(w) and bound[1] <= TOL * abs(b))
    return w, b, True, accurate
