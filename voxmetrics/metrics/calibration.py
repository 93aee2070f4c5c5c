"""Logistic-regression calibration and linear fusion of scores to LLRs (BOSARIS, PYLLR).

A score is only a likelihood ratio once calibrated. :func:`fit_calibration` learns an affine map
``llr = w s + b`` of one system's scores, :func:`fit_fusion` a linear combination
``llr = sum_i w_i s_i + b`` of several systems' scores of the same trials, both by minimising
the prior-weighted cross-entropy of BOSARIS' ``train_linear_fusion`` (and PYLLR's
``train_cal_fusion``):

    C(w, b) = P / N_tar * sum_tar log(1 + e^-(l + logit P))
              + (1 - P) / N_non * sum_non log(1 + e^(l + logit P)),   l = w . s + b

with the target prior ``P`` (0.5 by default), unregularised, so the learned ``l`` are
natural-log LLRs: the actual DCF, the actual Cllr and likelihood-ratio statements then mean
what they say. It is fitted on dev scores and applied to eval scores; a monotone map changes
no EER, min Cllr or ranking, a fusion may.

Very large pools are thinned for the fit: at most :data:`MAX_FIT_SCORES` of each class, drawn
with a seed (every target and non-target counts with its class weight either way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import VoxMetricsInputError

__all__ = ["MAX_FIT_SCORES", "LinearCalibration", "fit_calibration", "fit_fusion"]

MAX_FIT_SCORES = 200_000
"""Scores of each class (targets, non-targets) a calibration or fusion is fitted on at most."""


@dataclass(frozen=True)
class LinearCalibration:
    """An affine map of one or several systems' scores to natural-log LLRs.

    Examples
    --------
    >>> LinearCalibration(weights=(2.0,), offset=-1.0).apply([0.0, 1.0]).tolist()
    [-1.0, 1.0]
    """

    weights: tuple[float, ...]
    """One weight per system."""
    offset: float
    """The offset b."""
    prior: float = 0.5
    """The target prior the fit was weighted by."""
    cost: float | None = None
    """The prior-weighted cross-entropy at the optimum, in bits (None: not fitted)."""

    def apply(self, *scores: ArrayLike) -> NDArray[np.float64]:
        """``sum_i w_i scores_i + b`` (one array per system, all of one shape)."""
        if len(scores) != len(self.weights):
            raise VoxMetricsInputError(
                f"this calibration combines {len(self.weights)} system(s), got {len(scores)}."
            )
        out = np.full(np.shape(scores[0]), self.offset, dtype=np.float64)
        for w, s in zip(self.weights, scores, strict=True):
            out += w * np.asarray(s, dtype=np.float64)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        return {
            "weights": list(self.weights),
            "offset": self.offset,
            "prior": self.prior,
            "cost_bits": self.cost,
        }


def _thin(a: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.float64]:
    """At most :data:`MAX_FIT_SCORES` rows of ``a`` (a seeded draw without replacement)."""
    if a.shape[0] <= MAX_FIT_SCORES:
        return a
    return a[np.sort(rng.choice(a.shape[0], MAX_FIT_SCORES, replace=False))]


def _features(pools: Sequence[ArrayLike], what: str) -> NDArray[np.float64]:
    cols = [np.asarray(p, dtype=np.float64).ravel() for p in pools]
    if not cols or any(c.size != cols[0].size for c in cols) or cols[0].size == 0:
        raise VoxMetricsInputError(
            f"fusion: the {what} scores of every system must be the same non-empty trials."
        )
    x = np.stack(cols, axis=1)
    if not np.isfinite(x).all():
        raise VoxMetricsInputError(f"calibration: the {what} scores must be finite numbers.")
    return x


def fit_fusion(
    tars: Sequence[ArrayLike],
    nons: Sequence[ArrayLike],
    *,
    prior: float = 0.5,
    seed: int = 0,
) -> LinearCalibration:
    """Linear logistic-regression fusion of several systems' scores (BOSARIS, PYLLR).

    Parameters
    ----------
    tars, nons : sequence of array_like
        For each system, its target and its non-target scores (the same trials, in the same
        order, for every system).
    prior : float
        The target prior of the weighting, in (0, 1).
    seed : int
        Seed of the thinning of very large pools.

    Returns
    -------
    LinearCalibration
        The weights and offset giving natural-log LLRs.

    Examples
    --------
    Scores that are already LLRs of Gaussian pools N(+-1, 2) get a weight near 1:

    >>> rng = np.random.default_rng(0)
    >>> tar, non = rng.normal(1, np.sqrt(2), 20000), rng.normal(-1, np.sqrt(2), 20000)
    >>> c = fit_fusion([tar], [non])
    >>> round(c.weights[0], 1), round(c.offset, 1)
    (1.0, 0.0)
    """
    if not 0.0 < prior < 1.0:
        raise VoxMetricsInputError(f"the calibration prior must be in (0, 1), got {prior}.")
    rng = np.random.default_rng(seed)
    xt = _thin(_features(tars, "target"), rng)
    xn = _thin(_features(nons, "non-target"), rng)
    if xt.shape[1] != xn.shape[1]:
        raise VoxMetricsInputError("fusion: give target and non-target scores of every system.")
    # standardise for the optimiser, then map the solution back
    both = np.vstack([xt, xn])
    centre, scale = both.mean(axis=0), both.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    zt, zn = (xt - centre) / scale, (xn - centre) / scale
    logit = math.log(prior) - math.log1p(-prior)
    wt, wn = prior / zt.shape[0], (1.0 - prior) / zn.shape[0]

    from scipy.optimize import minimize
    from scipy.special import expit

    def cost(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        w, b = theta[:-1], theta[-1]
        lt = zt @ w + b + logit
        ln = zn @ w + b + logit
        c = wt * np.logaddexp(0.0, -lt).sum() + wn * np.logaddexp(0.0, ln).sum()
        gt = -wt * expit(-lt)  # d/dl of log(1 + e^-l)
        gn = wn * expit(ln)  # d/dl of log(1 + e^l)
        grad = np.concatenate([zt.T @ gt + zn.T @ gn, [gt.sum() + gn.sum()]])
        return float(c), grad

    start = np.zeros(xt.shape[1] + 1)
    fit = minimize(cost, start, jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    w_z, b_z = fit.x[:-1], fit.x[-1]
    weights = w_z / scale
    offset = float(b_z - weights @ centre)
    return LinearCalibration(
        weights=tuple(float(w) for w in weights),
        offset=offset,
        prior=float(prior),
        cost=float(fit.fun) / math.log(2.0),
    )


def fit_calibration(
    tar: ArrayLike, non: ArrayLike, *, prior: float = 0.5, seed: int = 0
) -> LinearCalibration:
    """Logistic-regression calibration of one system's scores: :func:`fit_fusion` of one.

    Examples
    --------
    >>> c = fit_calibration([2.0, 3.0, 0.5], [0.0, -1.0, 1.0])
    >>> bool(c.weights[0] > 0), c.apply(np.array([1.0])).shape
    (True, (1,))
    """
    return fit_fusion([tar], [non], prior=prior, seed=seed)
