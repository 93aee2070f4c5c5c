"""Nelder-Mead on many small problems at once, step for step SciPy's.

:func:`nelder_mead_many` runs ``scipy.optimize.minimize(method="Nelder-Mead")`` (fixed, not
adaptive, no bounds) on P problems in lock step: every problem takes the same steps, evaluates
the same points and stops at the same iteration as SciPy would on it alone, with the same
floating-point operations, so the optima are the same floats. The objective is asked for
the values of many problems' points in one call, which is what makes many small fits (one
per speaker) cheap: SciPy's loop costs tens of microseconds a step in Python alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["MESSAGES", "NelderMeadResults", "nelder_mead_many"]

MESSAGES = (
    "Optimization terminated successfully.",
    "Maximum number of function evaluations has been exceeded.",
    "Maximum number of iterations has been exceeded.",
)
"""SciPy's messages by status: 0 converged, 1 too many evaluations, 2 too many iterations."""

BatchObjective = Callable[[NDArray[np.intp], NDArray[np.float64]], ArrayLike]
"""``f(problems, points)``: the objective of each listed problem at its point (rows)."""

# SciPy's coefficients (reflection, expansion, contraction, shrink) and initial simplex steps
_RHO, _CHI, _PSI, _SIGMA = 1, 2, 0.5, 0.5
_NONZDELT, _ZDELT = 0.05, 0.00025


@dataclass(frozen=True)
class NelderMeadResults:
    """The outcome of each problem, as SciPy's ``OptimizeResult`` fields."""

    x: NDArray[np.float64]
    """P x n: the best vertex of each final simplex."""
    fun: NDArray[np.float64]
    """The objective there (the final simplex's minimum)."""
    status: NDArray[np.int64]
    """0 converged, 1 too many evaluations, 2 too many iterations (:data:`MESSAGES`)."""
    nfev: NDArray[np.int64]
    """Objective evaluations of each problem."""
    nit: NDArray[np.int64]
    """Iterations of each problem."""

    def message(self, i: int) -> str:
        """SciPy's message for problem ``i``."""
        return MESSAGES[int(self.status[i])]


def nelder_mead_many(
    fun: BatchObjective,
    x0: ArrayLike,
    *,
    xatol: float,
    fatol: float,
    maxiter: int,
    maxfev: int,
    progress: Callable[[NDArray[np.bool_]], None] | None = None,
    every: int = 100,
) -> NelderMeadResults:
    """Minimise P problems from the starts ``x0`` (P x n) as SciPy's Nelder-Mead each.

    ``fun(problems, points)`` returns the objective of problem ``problems[i]`` at
    ``points[i]``; it must equal, float for float, the function SciPy would be given.
    A problem stops as SciPy's loop does: converged (``xatol`` and ``fatol``), or at ``maxfev``
    evaluations (in the middle of a step: the simplex as it then is) or ``maxiter`` iterations.
    ``progress(finished)``, if given, is called every ``every`` iterations with the mask of the
    problems that have stopped.
    """
    x0 = np.asarray(x0, dtype=np.float64)
    n_problems, n = x0.shape
    sim = np.empty((n_problems, n + 1, n))
    sim[:, 0] = x0
    for k in range(n):
        y = x0.copy()
        y[:, k] = np.where(x0[:, k] != 0, (1 + _NONZDELT) * x0[:, k], _ZDELT)
        sim[:, k + 1] = y
    fsim = np.full((n_problems, n + 1), np.inf)
    fcalls = np.zeros(n_problems, dtype=np.int64)

    def call(rows: NDArray[np.intp], points: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        # SciPy's wrapper refuses a call once maxfev were made (the step stops there)
        ok = fcalls[rows] < maxfev
        fcalls[rows[ok]] += 1
        values = np.asarray(fun(rows[ok], points[ok]), dtype=np.float64)
        return ok, values

    def sort(rows: NDArray[np.intp]) -> None:
        ind = np.argsort(fsim[rows], axis=1)
        sim[rows] = np.take_along_axis(sim[rows], ind[:, :, None], axis=1)
        fsim[rows] = np.take_along_axis(fsim[rows], ind, axis=1)

    problems = np.arange(n_problems)
    alive = problems
    for k in range(n + 1):
        ok, values = call(alive, sim[alive, k])
        fsim[alive[ok], k] = values
        alive = alive[ok]  # a refused call ends the initial evaluations
    sort(problems)
    sort(problems)  # SciPy sorts twice (in its finally clause and after)
    iterations = np.ones(n_problems, dtype=np.int64)
    running = np.ones(n_problems, dtype=bool)
    step = 0
    while True:
        going = running & (fcalls < maxfev) & (iterations < maxiter)
        act = problems[going]
        if not act.size:
            break
        if progress is not None and step % every == 0:
            progress(~going)
        step += 1
        s, f = sim[act], fsim[act]
        spread_x = np.max(np.abs(s[:, 1:] - s[:, :1]).reshape(act.size, -1), axis=1)
        spread_f = np.max(np.abs(f[:, :1] - f[:, 1:]), axis=1)
        converged = (spread_x <= xatol) & (spread_f <= fatol)
        running[act[converged]] = False
        act, s, f = act[~converged], s[~converged], f[~converged]
        if not act.size:
            break
        _step(call, act, s, f, sim, fsim, iterations, n)
        sort(act)
    status = np.where(fcalls >= maxfev, 1, np.where(iterations >= maxiter, 2, 0))
    return NelderMeadResults(
        x=sim[:, 0].copy(), fun=np.min(fsim, axis=1), status=status, nfev=fcalls, nit=iterations
    )


def _step(
    call: Callable[[NDArray[np.intp], NDArray[np.float64]], tuple[NDArray, NDArray]],
    act: NDArray[np.intp],
    s: NDArray[np.float64],
    f: NDArray[np.float64],
    sim: NDArray[np.float64],
    fsim: NDArray[np.float64],
    iterations: NDArray[np.int64],
    n: int,
) -> None:
    """One iteration of SciPy's loop for the problems ``act`` (their simplices ``s``, ``f``)."""
    rho, chi, psi, sigma = _RHO, _CHI, _PSI, _SIGMA
    xbar = np.add.reduce(s[:, :-1], 1) / n
    last = s[:, -1]
    xr = (1 + rho) * xbar - rho * last
    _, fxr = call(act, xr)  # every active problem has an evaluation left
    complete = np.ones(act.size, dtype=bool)  # steps not cut short by maxfev
    shrink = np.zeros(act.size, dtype=bool)

    def put(i: NDArray[np.intp], x: NDArray[np.float64], fx: NDArray[np.float64]) -> None:
        sim[act[i], -1] = x
        fsim[act[i], -1] = fx

    better = fxr < f[:, 0]
    e = np.flatnonzero(better)  # expand
    if e.size:
        xe = (1 + rho * chi) * xbar[e] - rho * chi * last[e]
        ok, fxe = call(act[e], xe)
        complete[e[~ok]] = False
        e, xe, fr = e[ok], xe[ok], fxr[e[ok]]
        take = fxe < fr
        put(e, np.where(take[:, None], xe, xr[e]), np.where(take, fxe, fr))
    other = ~better
    r = np.flatnonzero(other & (fxr < f[:, -2]))  # reflect
    put(r, xr[r], fxr[r])
    worse = other & ~(fxr < f[:, -2])
    c = np.flatnonzero(worse & (fxr < f[:, -1]))  # contract outside
    if c.size:
        xc = (1 + psi * rho) * xbar[c] - psi * rho * last[c]
        ok, fxc = call(act[c], xc)
        complete[c[~ok]] = False
        c, xc = c[ok], xc[ok]
        take = fxc <= fxr[c]
        put(c[take], xc[take], fxc[take])
        shrink[c[~take]] = True
    cc = np.flatnonzero(worse & ~(fxr < f[:, -1]))  # contract inside
    if cc.size:
        xcc = (1 - psi) * xbar[cc] + psi * last[cc]
        ok, fxcc = call(act[cc], xcc)
        complete[cc[~ok]] = False
        cc, xcc = cc[ok], xcc[ok]
        take = fxcc < f[cc, -1]
        put(cc[take], xcc[take], fxcc[take])
        shrink[cc[~take]] = True
    h = np.flatnonzero(shrink)
    for j in range(1, n + 1):  # one vertex after the other, as SciPy (maxfev may stop it)
        if not h.size:
            break
        rows = act[h]
        sim[rows, j] = sim[rows, 0] + sigma * (sim[rows, j] - sim[rows, 0])
        ok, fj = call(rows, sim[rows, j])
        fsim[rows[ok], j] = fj
        complete[h[~ok]] = False
        h = h[ok]
    iterations[act[complete]] += 1
