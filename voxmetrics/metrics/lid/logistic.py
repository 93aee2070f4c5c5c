"""The solver of LID's calibration: univariate logistic regression by Newton's method.

Sums over every (trial, enrolled) pair are taken on row blocks (on parallel threads) and, within
a block, on cache-sized halves of numpy's own pairwise-summation tree, so they equal numpy's
sums bit for bit without building the pairs' term arrays; a warm start on a subsample speeds up
large fits.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "W_MAX",
    "ClassWeight",
    "fit_w_b",
]

ClassWeight = Literal["balanced"] | None

W_MAX = 1e4
"""Cap on |w|: beyond it the fit is reported as not converged (separable dev pools)."""

_WARM_START_PAIRS = 2_000_000

_WORKERS = max(1, min(8, os.cpu_count() or 1))

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
    """Univariate logistic regression by Newton's method with step halving, over every pair.

    Minimises sum_pairs c_y log-loss + w^2 / (2 C) (no penalty when ``penalty_c`` is None; the
    intercept is never penalised), which is scikit-learn's ``LogisticRegression`` objective
    divided by C.

    The data are all (trial, enrolled) pairs: ``z_blocks`` hold every z-score (rows x N per
    block) and ``z_mated`` the T mated ones (label 1); every other pair has label 0. Sums over
    the pairs are taken as "every pair as a non-mated one" plus a correction on the T mated
    pairs, so no T x N label array is built.
    """

    def sums(w: float, b: float) -> NDArray[np.float64]:
        # numpy releases the GIL, so blocks run in parallel threads; the block sums are added
        # in block order (deterministic)
        if len(z_blocks) > 1:
            with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
                parts = list(pool.map(lambda z: _block_sums(z, w, b), z_blocks))
        else:
            parts = [_block_sums(z, w, b) for z in z_blocks]
        return np.sum(parts, axis=0)

    n = sum(z.size for z in z_blocks)
    w, b, converged, _ = _newton(
        sums,
        n,
        z_mated,
        class_weight=class_weight,
        penalty_c=penalty_c,
        start=start,
        max_iter=max_iter,
        tol=tol,
    )
    return w, b, converged


def _newton(
    sums: Callable[[float, float], NDArray[np.float64]],
    n: int,
    z_mated: NDArray[np.float64],
    *,
    class_weight: ClassWeight,
    penalty_c: float | None,
    start: tuple[float, float] | None,
    max_iter: int,
    tol: float,
) -> tuple[float, float, bool, NDArray[np.float64]]:
    """Newton's method with step halving on the n pairs whose non-mated sums ``sums`` gives.

    ``sums(w, b)``: the sums over every pair taken as a non-mated one of softplus, p, p z, v,
    v z, v z^2 (eta = w z + b), as :func:`_block_sums`; the T mated pairs (``z_mated``) are
    corrected for here. Returns (w, b, converged, Hessian of the objective at (w, b)).
    """
    n1 = z_mated.size
    n0 = n - n1
    c1, c0 = (n / (2 * n1), n / (2 * n0)) if class_weight == "balanced" else (1.0, 1.0)

    def pass_over(w: float, b: float) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        # -log-likelihood: c1 softplus(-eta) on mated pairs, c0 softplus(eta) on the others;
        # softplus(-eta) = softplus(eta) - eta
        s0 = sums(w, b)
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
            return w, b, False, h
        if not np.isfinite(step).all():
            return w, b, False, h
        t = 1.0
        while True:  # halve the Newton step until the loss does not increase
            w_new, b_new = w - t * step[0], b - t * step[1]
            nll_new, g_new, h_new = pass_over(w_new, b_new)
            if nll_new <= nll + 1e-12 * abs(nll):
                break
            t /= 2
            if t < 1e-10:  # no descent left: stop where we are, unconverged
                return w, b, False, h
        if abs(w_new) > W_MAX:  # the likelihood keeps growing with |w|: no finite optimum
            return math.copysign(W_MAX, w_new), b_new, False, h_new
        done = abs(t * step[0]) <= tol * max(1.0, abs(w_new)) and abs(t * step[1]) <= tol * max(
            1.0, abs(b_new)
        )
        w, b, nll, g, h = w_new, b_new, nll_new, g_new, h_new
        if done:
            return w, b, True, h
    return w, b, False, h


def fit_w_b(
    z_blocks: list[NDArray[np.floating]],
    mated: list[NDArray[np.float64]],
    z_mated: NDArray[np.float64],
    class_weight: ClassWeight,
    penalty_c: float | None,
    *,
    start: tuple[float, float] | None = None,
) -> tuple[float, float, bool]:
    """(w, b, converged) of the fit on all pairs.

    From ``start`` when given, else warm-started on a subsample when the pairs are many.
    """
    n_pairs = sum(z.size for z in z_blocks)
    if start is None and n_pairs > _WARM_START_PAIRS:
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
