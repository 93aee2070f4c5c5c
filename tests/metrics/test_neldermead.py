"""Nelder-Mead on many problems in lock step (voxmetrics.metrics._neldermead).

Each problem of the batch follows ``scipy.optimize.minimize(method="Nelder-Mead")`` step for
step: the same points, values, evaluation and iteration counts, messages and statuses, also
when ``maxfev`` stops it in the middle of a step.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from voxmetrics.metrics._neldermead import nelder_mead_many


def _rosenbrock(x):
    return float((1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2)


def _plateau(x):
    # ties everywhere (a staircase) and an infinite region: sorting ties, inf vertices
    if x[0] > 3:
        return np.inf
    return float(np.floor(2 * abs(x[0] - 0.5)) + np.floor(abs(x[1] + 1)))


@pytest.mark.parametrize("objective", [_rosenbrock, _plateau])
@pytest.mark.parametrize("maxfev", [1, 2, 3, 4, 7, 25, 60, 8000])
@pytest.mark.parametrize("maxiter", [2, 30, 4000])
def test_nelder_mead_many_follows_scipy_step_for_step(objective, maxfev, maxiter):
    # small maxfev stop in the middle of a step (expansion, contraction, shrink)
    starts = [(0.0, 0.0), (-1.2, 1.0), (2.0, -3.0), (2.9, 0.4), (0.5, -1.0)]
    options = {"xatol": 1e-10, "fatol": 1e-14, "maxiter": maxiter, "maxfev": maxfev}

    def batch(problems, points):
        return [objective(p) for p in points]

    many = nelder_mead_many(batch, np.asarray(starts), **options)
    for i, x0 in enumerate(starts):
        res = minimize(objective, np.asarray(x0), method="Nelder-Mead", options=options)
        assert many.x[i].tolist() == res.x.tolist()
        assert many.fun[i] == res.fun
        assert many.nfev[i] == res.nfev
        assert many.nit[i] == res.nit
        assert many.message(i) == res.message
        assert (many.status[i] == 0) == res.success
