"""SRD: Similarity Rank Disclosure with beta-binomial models (Bäckström et al. 2026).

The rank of a trial's own speaker among its N scores (ties against the attacker) is a random
variable over 1..N. Its empirical distribution p_k, or a beta-binomial model gamma_k of it,
discloses e_k = log2(N p_k) bits at rank k; MeanD is their expectation, i.e. the
Kullback-Leibler divergence (bits) of the rank distribution from the uniform one.

Two corrections of the paper's text (docs, Methods > SRD): the disclosure is log2(N p_k), not its
negative, and the beta-binomial is B(j + alpha, N - j + beta) / B(alpha, beta) (scipy's
``betabinom(n=N-1, alpha, beta).pmf(k-1)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics._neldermead import nelder_mead_many
from voxmetrics.metrics._scipy import special
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.pools import Ties
from voxmetrics.metrics.ranks import target_ranks

__all__ = [
    "LOSSES",
    "BetaBinomialFit",
    "Loss",
    "SRDResult",
    "SRDStats",
    "SpeakerSRD",
    "beta_binomial_pmf",
    "fit_beta_binomial",
    "fit_beta_binomials",
    "prefit_beta_binomials",
    "rank_histogram",
    "shared_beta_binomial_fits",
    "srd",
    "srd_from_ranks",
    "srd_per_speaker",
    "srd_stats",
]

Loss = Literal["LL", "MS", "WMS", "RWMS", "CLL"]
LOSSES: tuple[Loss, ...] = ("LL", "MS", "WMS", "RWMS", "CLL")
"""The five fitting losses of Bäckström et al. 2026, section IV-B."""

CLL_PENALTY = 1e5
"""Weight of the rank-1 constraint in the CLL loss."""


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class SRDStats:
    """Disclosure statistics of a distribution over ranks 1..N (docs, Methods > SRD)."""

    mean_d: float
    """MeanD = sum_k p_k log2(N p_k) over p_k > 0, bits (>= 0)."""
    idr: float
    """Identification rate p_1 (equals linkability on empirical ranks)."""
    std_d: float
    """StDD = sqrt(sum_k p_k (e_k - MeanD)^2), bits."""
    max_d: float
    """MaxD = max e_k over p_k > 0, bits (<= log2 N)."""
    spread: float
    """Share of ranks k with p_k > 1/N."""

    def to_dict(self) -> dict[str, float]:
        """The ``srd`` block of the JSON contract."""
        return {
            "mean_d": self.mean_d,
            "idr": self.idr,
            "std_d": self.std_d,
            "max_d": self.max_d,
            "spread": self.spread,
        }


def srd_stats(p: ArrayLike) -> SRDStats:
    """Disclosure statistics of a probability distribution over ranks 1..N.

    Parameters
    ----------
    p : array_like, shape (N,)
        p[k-1] = probability of rank k; normalised here if it sums to something else.

    Returns
    -------
    SRDStats

    Examples
    --------
    All mass at rank 1 discloses log2 N bits; uniform ranks disclose nothing:

    >>> srd_stats([1, 0, 0, 0])
    SRDStats(mean_d=2.0, idr=1.0, std_d=0.0, max_d=2.0, spread=0.25)
    >>> srd_stats([1, 1, 1, 1])
    SRDStats(mean_d=0.0, idr=0.25, std_d=0.0, max_d=0.0, spread=0.0)
    """
    q = np.asarray(p, dtype=np.float64).ravel()
    if q.size < 2 or (q < 0).any() or not np.isfinite(q).all() or q.sum() <= 0:
        raise VoxMetricsInputError(
            "a rank distribution needs N >= 2 non-negative finite values with a positive sum."
        )
    q = q / q.sum()
    n = q.size
    pos = q > 0
    e = np.log2(n * q[pos])
    mean_d = float(max(0.0, (q[pos] * e).sum()))
    std_d = float(np.sqrt(max(0.0, (q[pos] * (e - mean_d) ** 2).sum())))
    # p_k > 1/N compared as N p_k > 1 so that exactly uniform bins never count
    spread = float((n * q > 1.0 + 1e-12).sum() / n)
    return SRDStats(
        mean_d=mean_d, idr=float(q[0]), std_d=std_d, max_d=float(e.max()), spread=spread
    )


def rank_histogram(ranks: ArrayLike, n_enrolled: int) -> NDArray[np.int64]:
    """Counts h_k of ranks k = 1..N (index k-1).

    Examples
    --------
    >>> rank_histogram([1, 1, 3], 4).tolist()
    [2, 0, 1, 0]
    """
    r = np.asarray(ranks, dtype=np.int64).ravel()
    if r.size and (r.min() < 1 or r.max() > n_enrolled):
        raise VoxMetricsInputError(f"ranks must lie in 1..{n_enrolled}.")
    return np.bincount(r - 1, minlength=n_enrolled).astype(np.int64)


@dataclass(frozen=True)
class SRDResult:
    """Empirical similarity-rank disclosure of a score matrix."""

    ranks: NDArray[np.int64] = field(repr=False)
    """Rank of each trial's target, 1..N."""
    histogram: NDArray[np.int64] = field(repr=False)
    """h_k, trials at rank k (index k-1)."""
    stats: SRDStats
    """MeanD, IdR, StDD, MaxD, Spread of the empirical distribution."""

    @property
    def n_enrolled(self) -> int:
        """N."""
        return int(self.histogram.size)

    @property
    def n_trials(self) -> int:
        """T."""
        return int(self.ranks.size)

    @property
    def distribution(self) -> NDArray[np.float64]:
        """p_k = h_k / T."""
        return self.histogram / self.histogram.sum()

    @property
    def sparse(self) -> bool:
        """Fewer than 10 trials per rank bin on average: prefer the fitted model."""
        return self.n_trials < 10 * self.n_enrolled

    def to_dict(self) -> dict[str, float]:
        """The ``srd`` block of the JSON contract."""
        return self.stats.to_dict()


def srd(scores: ArrayLike, targets: ArrayLike, *, ties: Ties = "reference") -> SRDResult:
    """Target ranks, their histogram and the disclosure statistics of a score matrix.

    Parameters
    ----------
    scores : array_like, shape (T, N)
    targets : array_like of int, shape (T,)
    ties : {"reference", "attacker"}
        Tie convention of the ranks (:func:`~voxmetrics.metrics.ranks.target_ranks`):
        "reference" gives a tied target the worst rank (no public implementation states one),
        "attacker" the best, so that IdR then equals the linkability of
        :func:`~voxmetrics.metrics.legal.linkability`.

    Returns
    -------
    SRDResult

    Examples
    --------
    The worked example of docs, Methods > EER and Cllr: every trial is at rank 1.

    >>> S = [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]]
    >>> r = srd(S, [0, 0, 1, 2])
    >>> r.histogram.tolist(), r.stats.mean_d, r.stats.idr
    ([4, 0, 0, 0], 2.0, 1.0)
    """
    s, t = check_matrix(scores, targets)
    return srd_from_ranks(target_ranks(s, t, ties=ties), s.shape[1])


def srd_from_ranks(ranks: NDArray[np.int64], n_enrolled: int) -> SRDResult:
    """:func:`srd` from the trials' target ranks (1..N, made read-only here).

    Examples
    --------
    >>> srd_from_ranks(np.array([1, 1, 2]), 3).histogram.tolist()
    [2, 1, 0]
    """
    hist = rank_histogram(ranks, n_enrolled)
    return SRDResult(ranks=_ro(ranks), histogram=_ro(hist), stats=srd_stats(hist))


def beta_binomial_pmf(n_enrolled: int, alpha: float, beta: float) -> NDArray[np.float64]:
    """gamma_k = BetaBinomial(n = N-1, alpha, beta).pmf(k-1) for k = 1..N.

    Examples
    --------
    alpha = beta = 1 is the uniform distribution over ranks:

    >>> np.round(beta_binomial_pmf(4, 1.0, 1.0), 6).tolist()
    [0.25, 0.25, 0.25, 0.25]

    Notes
    -----
    Computed in logs as C(n, k) B(k + alpha, n - k + beta) / B(alpha, beta) (the same values as
    ``scipy.stats.betabinom``) and renormalised, so that it sums to 1 to rounding even for
    shape parameters near the bounds of the fit, where the closed form loses a few digits.
    """
    gamma = np.exp(_beta_binomial_logpmf(n_enrolled, alpha, beta))
    return gamma / gamma.sum()


def _beta_binomial_logpmf(n_enrolled: int, alpha: float, beta: float) -> NDArray[np.float64]:
    return _beta_binomial_logpmf_of(n_enrolled)(alpha, beta)


def _log_binomial_coefficients(
    n_enrolled: int,
) -> tuple[NDArray[np.float64], float, NDArray[np.float64]]:
    """``(k, n, log C(n, k))`` for the ranks k = 0 .. n of N = ``n_enrolled`` identities."""
    k = np.arange(n_enrolled, dtype=np.float64)
    n = n_enrolled - 1.0
    gammaln = special.gammaln
    return k, n, gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _beta_binomial_logpmf_of(n_enrolled: int) -> Callable[[float, float], NDArray[np.float64]]:
    """Log gamma_k as a function of (alpha, beta): the binomial coefficients computed once."""
    k, n, log_comb = _log_binomial_coefficients(n_enrolled)
    n_k = n - k

    def logpmf(alpha: float, beta: float) -> NDArray[np.float64]:
        return log_comb + special.betaln(k + alpha, n_k + beta) - special.betaln(alpha, beta)

    return logpmf


def _loss(loss: Loss, p: NDArray[np.float64], pos: NDArray[np.bool_], log_gamma: np.ndarray):
    gamma = np.exp(log_gamma)
    if loss in ("LL", "CLL"):
        value = -(p[pos] * log_gamma[pos]).sum()
        if loss == "CLL":
            value += CLL_PENALTY * (p[0] - gamma[0]) ** 2
        return value
    d2 = (p - gamma) ** 2
    if loss == "MS":
        return d2.sum()
    if loss == "WMS":
        return (p * d2).sum()
    return (np.exp(-np.arange(1, p.size + 1)) * d2).sum()  # RWMS


@dataclass(frozen=True)
class BetaBinomialFit:
    """A beta-binomial model of a rank distribution fitted with one loss."""

    loss: Loss
    """Loss minimised: LL, MS, WMS, RWMS or CLL."""
    alpha: float
    """First shape parameter (> 0)."""
    beta: float
    """Second shape parameter (> 0)."""
    loss_value: float
    """Loss at the optimum."""
    converged: bool
    """Whether the optimiser converged to finite parameters; when False, say so, don't use."""
    message: str
    """The optimiser's account of how it stopped."""
    pmf: NDArray[np.float64] = field(repr=False)
    """gamma_k for k = 1..N."""
    kl_bits: float
    """KL(p || gamma) = sum_k p_k log2(p_k / gamma_k), bits (goodness of fit)."""
    rank1_match: float
    """|log2(p_1 / gamma_1)| (inf when p_1 = 0)."""
    stats: SRDStats
    """MeanD, IdR, StDD, MaxD, Spread of the model."""

    def to_dict(self) -> dict[str, float | str | bool | dict[str, float] | None]:
        """JSON-safe dictionary (without the pmf); infinities become None."""

        def finite(v: float) -> float | None:
            return v if math.isfinite(v) else None

        return {
            "loss": self.loss,
            "alpha": self.alpha,
            "beta": self.beta,
            "loss_value": self.loss_value,
            "converged": self.converged,
            "kl_bits": finite(self.kl_bits),
            "rank1_match": finite(self.rank1_match),
            **self.stats.to_dict(),
        }


_BOUND = 12.0  # |log alpha|, |log beta| beyond this is treated as divergence


def _moment_start(p: NDArray[np.float64]) -> tuple[float, float] | None:
    n = p.size - 1
    k = np.arange(p.size)
    mean = (p * k).sum()
    var = (p * (k - mean) ** 2).sum()
    mu = mean / n
    if not 0 < mu < 1 or n < 2:
        return None
    rho = (var / (n * mu * (1 - mu)) - 1) / (n - 1)
    if not 0 < rho < 1:
        return None
    total = 1 / rho - 1
    return math.log(mu * total), math.log((1 - mu) * total)


_STARTS = (
    (0.0, 0.0),
    (math.log(0.5), math.log(5.0)),
    (math.log(5.0), math.log(0.5)),
    (math.log(0.3), math.log(0.3)),
    (math.log(0.1), math.log(10.0)),
)
"""Nelder-Mead starts in (log alpha, log beta): uniform, skewed low, skewed high, U-shaped."""


class _Tolerances(TypedDict):
    """The stopping rules of :func:`~voxmetrics.metrics._neldermead.nelder_mead_many`."""

    xatol: float
    fatol: float
    maxiter: int
    maxfev: int


_NELDER_MEAD: _Tolerances = {"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000, "maxfev": 8000}


def fit_beta_binomial(p: ArrayLike, *, loss: Loss = "CLL") -> BetaBinomialFit:
    """Fit a beta-binomial model to a rank distribution by minimising one loss.

    Nelder-Mead in (log alpha, log beta) from several starting points (uniform, skewed to low
    and to high ranks, U-shaped, method of moments); the best optimum wins.

    Parameters
    ----------
    p : array_like, shape (N,)
        Histogram or distribution over ranks 1..N (normalised here).
    loss : {"LL", "MS", "WMS", "RWMS", "CLL"}
        See docs, Methods > SRD. CLL = LL + 1e5 (p_1 - gamma_1)^2 (the paper's choice).

    Returns
    -------
    BetaBinomialFit
        ``converged`` is False (and a DegenerateDataWarning is emitted) when no start
        converged to finite parameters.

    Examples
    --------
    >>> fit = fit_beta_binomial(beta_binomial_pmf(50, 0.3, 4.0), loss="LL")
    >>> round(fit.alpha, 3), round(fit.beta, 3), fit.converged
    (0.3, 4.0, True)
    """
    q = np.asarray(p, dtype=np.float64).ravel()
    shared = _SHARED_FITS.get()
    key = (loss, q.tobytes())
    if shared is not None and key in shared:
        fit, problem = shared[key]
    else:
        fit, problem = fit_beta_binomials(q[None, :], loss=loss)[0]
        if shared is not None:
            shared[key] = (fit, problem)
    if problem is not None:
        warnings.warn(problem, DegenerateDataWarning, stacklevel=2)
    return fit


_SHARED_FITS: contextvars.ContextVar[
    dict[tuple[str, bytes], tuple[BetaBinomialFit, str | None]] | None
] = contextvars.ContextVar("voxmetrics_shared_fits", default=None)


@contextlib.contextmanager
def shared_beta_binomial_fits() -> Iterator[None]:
    """Within the block, :func:`fit_beta_binomial` fits each distinct histogram once.

    A histogram met again (the same counts and loss) gets the fit already made, the same
    object, and its warning again; as the fit is a function of the histogram alone, every
    number is the one a new fit would give. Many small subsets (``evaluate --by`` an attribute
    of many values) share few histograms: a subset of 2 speakers with 1 trial each has one of
    3, and a fit that does not converge takes Nelder-Mead's full 4,000 iterations (about 1 s).
    :func:`prefit_beta_binomials` fits the histograms to come in one batch.
    """
    outer = _SHARED_FITS.get()
    token = _SHARED_FITS.set({} if outer is None else outer)
    try:
        yield
    finally:
        _SHARED_FITS.reset(token)


def prefit_beta_binomials(histograms: Iterable[ArrayLike], *, loss: Loss = "CLL") -> None:
    """Fit the distinct ``histograms`` not fitted yet, in one batch per number of ranks.

    Only inside :func:`shared_beta_binomial_fits` (elsewhere nothing is done): the fits are
    kept there for :func:`fit_beta_binomial`, each equal to its own fit float for float
    (:func:`fit_beta_binomials`). Histograms that are not valid are left to
    :func:`fit_beta_binomial` to refuse.
    """
    shared = _SHARED_FITS.get()
    if shared is None:
        return
    by_size: dict[int, dict[bytes, NDArray[np.float64]]] = {}
    for h in histograms:
        q = np.asarray(h, dtype=np.float64).ravel()
        if (loss, q.tobytes()) in shared:
            continue
        try:
            srd_stats(q)  # the check of fit_beta_binomials, row by row
        except VoxMetricsInputError:
            continue  # not a valid histogram: refused by its own fit, with its message
        by_size.setdefault(q.size, {})[q.tobytes()] = q
    for rows in by_size.values():
        fits = fit_beta_binomials(np.stack(list(rows.values())), loss=loss)
        for key, result in zip(rows, fits, strict=True):
            shared[(loss, key)] = result


def fit_beta_binomials(
    histograms: ArrayLike,
    *,
    loss: Loss = "CLL",
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[BetaBinomialFit, str | None]]:
    """:func:`fit_beta_binomial` of each row of ``histograms`` (H x N), all fitted at once.

    Each fit equals :func:`fit_beta_binomial` of its row, float for float; with it comes the
    message of the warning that function emits when the fit did not converge (None when it
    did). The Nelder-Mead runs of every row and start go in lock step (SciPy's algorithm,
    step for step), and the LL and CLL losses are evaluated on the ranks they read (those
    with p_k > 0, and rank 1), not on all N: a speaker's few trials make a fit a few
    milliseconds instead of 0.1 s.
    ``progress(done, total)``, if given, is told now and then how many rows are fitted.
    """
    if loss not in LOSSES:
        raise VoxMetricsInputError(f"`loss` must be one of {', '.join(LOSSES)}, got {loss!r}.")
    h = np.asarray(histograms, dtype=np.float64)
    if h.ndim != 2:
        raise VoxMetricsInputError("`histograms` must be a 2-D array (histograms x ranks).")
    if not h.shape[0]:
        return []
    qs = []
    for row in h:
        srd_stats(row)  # validates
        qs.append(row / row.sum())
    owner, x0 = [], []  # one Nelder-Mead problem per histogram and start
    for i, q in enumerate(qs):
        mom = _moment_start(q)
        for start in _STARTS + ((mom,) if mom is not None else ()):
            owner.append(i)
            x0.append(start)
    objective = _BatchLoss(loss, qs, np.asarray(owner, dtype=np.intp))
    report = None
    if progress is not None:
        firsts = np.searchsorted(objective.owner, np.arange(len(qs)))  # each row's first start

        def report(finished: NDArray[np.bool_]) -> None:
            progress(int(np.minimum.reduceat(finished, firsts).sum()), len(qs))

    x0s = np.asarray(x0, dtype=np.float64)
    runs = nelder_mead_many(objective, x0s, progress=report, **_NELDER_MEAD)
    out: list[tuple[BetaBinomialFit, str | None]] = []
    for i, q in enumerate(qs):
        best: int | None = None
        for j in np.flatnonzero(objective.owner == i).tolist():  # its starts, in order
            if np.isfinite(runs.fun[j]) and (best is None or runs.fun[j] < runs.fun[best]):
                best = j
        if best is None:
            raise VoxMetricsInputError("the beta-binomial fit found no finite loss from any start.")
        success = bool(runs.status[best] == 0)
        out.append(_fit_result(q, loss, runs.x[best], runs.fun[best], success, runs.message(best)))
    return out


def _fit_result(
    q: NDArray[np.float64],
    loss: Loss,
    x: NDArray[np.float64],
    fun: float,
    success: bool,
    optimiser_message: str,
) -> tuple[BetaBinomialFit, str | None]:
    """The fit at the best optimum ``x`` of ``q`` (normalised), and its warning if any."""
    n_enrolled = q.size
    pos = q > 0
    at_bound = bool(np.abs(x).max() >= _BOUND)
    ok = bool(success) and not at_bound
    message = (
        "the optimum lies at the parameter bound (alpha or beta -> 0 or infinity): the "
        "beta-binomial cannot represent this distribution"
        if at_bound
        else str(optimiser_message)
    )
    alpha, beta = math.exp(x[0]), math.exp(x[1])
    gamma = beta_binomial_pmf(n_enrolled, alpha, beta)
    problem = None
    if not ok:
        problem = (
            f"the beta-binomial {loss} fit did not converge ({message}; alpha = {alpha:.3g}, "
            f"beta = {beta:.3g}); do not rely on this model."
        )
    with np.errstate(divide="ignore"):
        kl = float((q[pos] * np.log2(q[pos] / gamma[pos])).sum())
        rank1 = abs(math.log2(q[0] / gamma[0])) if q[0] > 0 and gamma[0] > 0 else math.inf
    fit = BetaBinomialFit(
        loss=loss,
        alpha=alpha,
        beta=beta,
        loss_value=float(fun),
        converged=ok,
        message=message,
        pmf=_ro(gamma),
        kl_bits=kl,
        rank1_match=rank1,
        stats=srd_stats(gamma) if gamma.sum() > 0 else srd_stats(np.ones(n_enrolled)),
    )
    return fit, problem


class _BatchLoss:
    """The fit objective of many (histogram, start) problems at their points, in one call.

    Equal, float for float, to the objective of one fit: the same log pmf terms (element by
    element), the same sums (a row sum of a C-ordered array adds as the 1-D sum of that row)
    and, for CLL, the same scalar penalty. LL and CLL read log gamma_k only where p_k > 0
    (and at rank 1 for CLL); MS, WMS and RWMS need all N and run the one-fit objective.
    """

    def __init__(self, loss: Loss, qs: list[NDArray[np.float64]], owner: NDArray[np.intp]):
        self.loss, self.qs, self.owner = loss, qs, owner
        n_enrolled = qs[0].size
        self.logpmf = _beta_binomial_logpmf_of(n_enrolled)
        k, n, log_comb = _log_binomial_coefficients(n_enrolled)
        # the ranks each histogram reads (flat, histogram after histogram), grouped by their
        # count and by whether rank 1 is read for the CLL penalty only (then the p_k > 0
        # terms start at column 1): a group's rows are summed as one C-ordered array
        reads = [np.flatnonzero((q > 0) | ((k == 0) & (loss == "CLL"))) for q in qs]
        skips = [1 if loss == "CLL" and q[0] == 0 else 0 for q in qs]
        keys = sorted({(idx.size, skip) for idx, skip in zip(reads, skips, strict=True)})
        self.group_of = np.asarray(
            [keys.index((idx.size, skip)) for idx, skip in zip(reads, skips, strict=True)],
            dtype=np.intp,
        )
        self.m_of = np.asarray([idx.size for idx in reads], dtype=np.intp)
        self.start_of = np.concatenate([[0], np.cumsum(self.m_of)[:-1]]).astype(np.intp)
        flat = np.concatenate(reads)
        self.log_comb, self.k, self.n_k = log_comb[flat], k[flat], (n - k)[flat]
        self.row_of = np.zeros(len(qs), dtype=np.intp)
        self.groups = []
        for g, (m, skip) in enumerate(keys):
            members = np.flatnonzero(self.group_of == g)
            self.row_of[members] = np.arange(members.size)
            q_pos = np.stack([qs[i][qs[i] > 0] for i in members])
            self.groups.append((m, skip, q_pos, np.asarray([qs[i][0] for i in members])))

    def __call__(self, problems: NDArray[np.intp], x: NDArray[np.float64]) -> NDArray[np.float64]:
        """The objective of each problem at its point (inf beyond the bounds or not finite)."""
        out = np.full(problems.size, np.inf)
        near = np.flatnonzero(~(np.abs(x).max(axis=1) > _BOUND + 3))
        if self.loss not in ("LL", "CLL"):
            for i in near:
                out[i] = self._one(int(problems[i]), x[i])
            return out
        if not near.size:
            return out
        hist = self.owner[problems[near]]
        order = np.argsort(self.group_of[hist], kind="stable")  # group after group
        near, hist = near[order], hist[order]
        alpha = np.array([math.exp(v) for v in x[near, 0].tolist()])
        beta = np.array([math.exp(v) for v in x[near, 1].tolist()])
        lens = self.m_of[hist]
        ends = np.cumsum(lens)
        entry = np.arange(int(ends[-1])) + np.repeat(self.start_of[hist] - (ends - lens), lens)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # element by element the one-fit log pmf (its scalar betaln(alpha, beta) too)
            log_gamma = (
                self.log_comb[entry]
                + special.betaln(self.k[entry] + np.repeat(alpha, lens),
                                 self.n_k[entry] + np.repeat(beta, lens))
                - np.repeat(special.betaln(alpha, beta), lens)
            )  # fmt: skip
            counts = np.bincount(self.group_of[hist], minlength=len(self.groups))
            first = 0
            for (m, skip, q_pos, q0), count in zip(self.groups, counts, strict=True):
                if not count:
                    continue
                part = slice(first, first + count)
                rows = self.row_of[hist[part]]
                lg = log_gamma[ends[first] - m : ends[first + count - 1]].reshape(count, m)
                value = -(q_pos[rows] * lg[:, skip:]).sum(axis=1)
                if self.loss == "CLL":  # the penalty as the one-fit loss computes it
                    gamma0 = np.exp(np.ascontiguousarray(lg[:, 0]))
                    value = np.array(
                        [v + CLL_PENALTY * (p - c) ** 2
                         for v, p, c in zip(value, q0[rows], gamma0, strict=True)]
                    )  # fmt: skip
                out[near[part]] = np.where(np.isfinite(value), value, np.inf)
                first += count
        return out

    def _one(self, problem: int, x: NDArray[np.float64]) -> float:
        """The one-fit objective (all N ranks), for MS, WMS and RWMS."""
        q = self.qs[int(self.owner[problem])]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_gamma = self.logpmf(math.exp(x[0]), math.exp(x[1]))
            value = float(_loss(self.loss, q, q > 0, log_gamma))
        return value if math.isfinite(value) else np.inf


@dataclass(frozen=True)
class SpeakerSRD:
    """Per-speaker rank histograms, LL fits, mean disclosures (Bäckström et al. 2026, fig. 6-7)."""

    speakers: NDArray[np.str_] = field(repr=False)
    """The S trial speakers, sorted."""
    histograms: NDArray[np.int64] = field(repr=False)
    """S x N rank counts."""
    empirical_mean_d: NDArray[np.float64] = field(repr=False)
    """MeanD of each speaker's empirical rank distribution."""
    model_mean_d: NDArray[np.float64] = field(repr=False)
    """MeanD of each speaker's LL-fitted beta-binomial model (NaN where it did not converge)."""
    fits: tuple[BetaBinomialFit, ...] = field(repr=False)
    """The LL fit of each speaker."""

    def to_frame(self):  # pragma: no cover - thin pandas wrapper
        """One row per speaker: trials, IdR, empirical and model MeanD, alpha, beta."""
        import pandas as pd

        return pd.DataFrame(
            {
                "speaker": self.speakers,
                "n_trials": self.histograms.sum(axis=1),
                "idr": self.histograms[:, 0] / self.histograms.sum(axis=1),
                "mean_d_empirical": self.empirical_mean_d,
                "mean_d_model": self.model_mean_d,
                "alpha": [f.alpha for f in self.fits],
                "beta": [f.beta for f in self.fits],
                "converged": [f.converged for f in self.fits],
            }
        )


def srd_per_speaker(
    ranks: ArrayLike,
    speakers: ArrayLike,
    n_enrolled: int,
    *,
    loss: Loss = "LL",
    progress: Callable[[int, int], None] | None = None,
) -> SpeakerSRD:
    """Rank histogram, beta-binomial fit and MeanD of each trial speaker.

    Parameters
    ----------
    ranks : array_like of int, shape (T,)
        Target ranks (e.g. ``SRDResult.ranks``).
    speakers : array_like of str, shape (T,)
        Speaker of each trial.
    n_enrolled : int
        N.
    loss : Loss, default "LL"
        The paper recommends LL per speaker (CLL is unstable on sparse histograms).
    progress : callable(done, total), optional
        Told now and then how many speakers' models are fitted.
    """
    r = np.asarray(ranks, dtype=np.int64).ravel()
    spk = np.asarray(speakers).astype(str).ravel()
    if spk.shape != r.shape:
        raise VoxMetricsInputError("`ranks` and `speakers` need the same length.")
    rank_histogram(r, n_enrolled)  # validates 1 <= rank <= N
    uniq, inverse = np.unique(spk, return_inverse=True)
    hist = np.zeros((uniq.size, n_enrolled), dtype=np.int64)
    np.add.at(hist, (inverse, r - 1), 1)
    # every speaker's fit at once, each equal to fit_beta_binomial of its histogram (whose
    # non-convergence warnings are not raised here: model_mean_d says NaN instead)
    fits = (
        [fit for fit, _ in fit_beta_binomials(hist, loss=loss, progress=progress)]
        if uniq.size
        else []
    )
    emp = np.array([srd_stats(h).mean_d for h in hist])
    model = np.array([f.stats.mean_d if f.converged else np.nan for f in fits])
    return SpeakerSRD(
        speakers=_ro(uniq),
        histograms=_ro(hist),
        empirical_mean_d=_ro(emp),
        model_mean_d=_ro(model),
        fits=tuple(fits),
    )
