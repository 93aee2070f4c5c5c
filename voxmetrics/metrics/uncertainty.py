"""Speaker-level intervals and worst-case quantiles of every headline number.

One set of speaker-level replicate weights serves every metric family: a replicate draws the
trial speakers with replacement (enrolled identities held fixed) and every number is recomputed
from per-speaker sums weighted by how often each speaker was drawn, never from a resampled copy
of the matrix:

* per-trial metrics (linkability and its curve against N', LID's aggregates) are weighted means
  of per-speaker sums, one (B x S) matrix product;
* the SRD statistics are functions of the weighted rank histogram (B x N);
* the pooled 1-to-1 metrics (ROCCH-EER, min Cllr, D_ECE, log10 l) run PAV on the label runs of
  :class:`~voxmetrics.metrics.pools.SortedPools` reweighted per speaker (exact); Cllr uses
  per-speaker sums of its two terms (exact); the EER is read off the reweighted runs (exact to
  within one step of the ROC, see :func:`eer_from_runs`).

Worst cases (LIDmax, MaxD, log10 l) are sample maxima: a percentile bootstrap of a maximum is
inconsistent (Bickel and Freedman 1981; Andrews 2000); for LIDmax its upper bound is the
observed maximum itself. Beside each maximum we therefore report a high quantile of the same
per-trial quantity (the level exceeded by 5 % of trials, ``*_q95``), a smooth functional whose
speaker-level percentile bootstrap is consistent (Hall and Martin 1988); its coverage is checked
by simulation in the tests. The maxima keep no interval (``None``).

The chance levels of the same numbers are in :mod:`voxmetrics.metrics.chance`; the intervals of
singling out and of the similarity matrices (from embeddings) in
:mod:`voxmetrics.metrics.embedding_intervals`; the paired comparison of two conditions,
replicate by replicate under the same draws, in :mod:`voxmetrics.metrics.paired`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._types import Progress
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count
from voxmetrics.metrics._resampled import MAXIMA, speaker_sums, srd_from_hist
from voxmetrics.metrics.bootstrap import BootstrapInterval, percentile_interval, weighted_quantile
from voxmetrics.metrics.legal import link_rank_ties, linkability_grid
from voxmetrics.metrics.legal.linking import prob_no_beater
from voxmetrics.metrics.pools import PAVRuns, RunCounts, SortedPools, Ties, check_ties, pav_runs
from voxmetrics.metrics.ranks import (
    row_blocks,
    target_ranks,
)
from voxmetrics.metrics.zebra import d_ece_from_runs, replicate_run_counts, speaker_run_counts

__all__ = [
    "REPLICATE_FAMILIES",
    "WORST_Q",
    "ConditionReplicates",
    "SpeakerDraws",
    "condition_replicates",
    "eer_from_runs",
    "grouped_replicates",
    "lid_intervals",
    "weighted_quantile",
]

WORST_Q = 0.95
"""Quantile reported beside each maximum: the level exceeded by 5 % of trials."""

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


@dataclass(frozen=True, eq=False)
class SpeakerDraws:
    """Replicate weights: how often each speaker is drawn in each of B replicates.

    Build with :meth:`draw`; the same speakers, ``n_boot`` and seed give the same draws as
    :func:`~voxmetrics.metrics.bootstrap.speaker_resample_counts` (so the LID and ZEBRA
    bootstraps of the same seed see the same replicates).

    Examples
    --------
    >>> d = SpeakerDraws.draw(["b", "a", "b"], n_boot=4, seed=0)
    >>> d.speakers.tolist(), d.counts.shape, d.counts.sum(axis=1).tolist()
    (['a', 'b'], (4, 2), [2, 2, 2, 2])
    """

    speakers: NDArray[np.str_]
    """(S,) distinct speakers, sorted."""
    counts: NDArray[np.int64] = field(repr=False)
    """(B, S) multiplicity of each speaker in each replicate."""
    seed: int = 0
    """Seed of the draws."""

    @property
    def n_boot(self) -> int:
        """B."""
        return int(self.counts.shape[0])

    @classmethod
    def draw(cls, speakers: ArrayLike, *, n_boot: int, seed: int = 0) -> SpeakerDraws:
        """Draw ``n_boot`` replicates of the distinct ``speakers`` (multinomial, S draws)."""
        check_count("bootstrap", "replicates", n_boot, "max_replicates")
        if n_boot < 1:
            raise VoxMetricsInputError("`n_boot` must be >= 1 replicate.")
        uniq = np.unique(np.asarray(speakers).astype(str).ravel())
        if uniq.size == 0:
            raise VoxMetricsInputError("no speakers to resample; give at least one trial.")
        s = uniq.size
        check_count(
            "bootstrap", f"replicate x speaker counts ({n_boot:,} x {s:,})", n_boot * s, "max_cells"
        )
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(s, np.full(s, 1.0 / s), size=n_boot).astype(np.int64)
        return cls(uniq, counts, seed)

    def index(self, trial_speakers: ArrayLike) -> NDArray[np.intp]:
        """Column of each trial's speaker in :attr:`counts` (every speaker must be drawn)."""
        spk = np.asarray(trial_speakers).astype(str).ravel()
        pos = np.searchsorted(self.speakers, spk)
        pos = np.minimum(pos, self.speakers.size - 1)
        bad = self.speakers[pos] != spk
        if bad.any():
            raise VoxMetricsInputError(
                f"{int(bad.sum())} trial(s) belong to speakers absent from the replicate draws "
                f"(first: {spk[bad][0]!r}); draw over every trial speaker of the condition."
            )
        return pos


def eer_from_runs(rc: RunCounts, *, ties: Ties = "reference") -> float:
    """EER of (possibly reweighted) run counts.

    FRR(t) = share of targets <= t, FAR(t) = share of non-targets > t. Thresholds at each
    distinct target value are evaluated exactly; inside a cell of non-targets (between two
    target values) FRR is constant and FAR can be brought as close to it as the cell allows,
    so the gap there is the distance from FRR to the cell's FAR range. The lowest threshold of
    smallest gap gives EER = (FAR + FRR) / 2. With distinct non-target scores this equals
    SpeechBrain's EER up to one step of the ROC (1 / n_tar + 1 / n_non for unit weights),
    below any bootstrap interval's resolution; non-target scores tied with each other inside a
    cell widen that to the weight of the tied group. Under ``ties="attacker"`` a tied score may
    also accept its targets and reject its non-targets.

    Examples
    --------
    >>> rc = RunCounts(cells=np.array([1.0, 0.0, 1.0]), tar_at=np.array([1.0, 2.0]),
    ...                non_at=np.array([0.0, 1.0]))
    >>> eer_from_runs(rc), eer_from_runs(rc, ties="attacker")
    (0.5, 0.3333333333333333)
    """
    check_ties(ties)
    n_tar, n_non = rc.n_tar, rc.n_non
    cum_tar = np.cumsum(rc.tar_at)  # targets <= v_k
    non_le = np.cumsum(rc.cells[:-1] + rc.non_at)  # non-targets <= v_k
    frr_at = cum_tar / n_tar
    far_at = (n_non - non_le) / n_non
    # cell k (k = 0..K): below v_k, above v_{k-1}; FRR = targets <= v_{k-1}
    frr_cell = np.concatenate([[0.0], frr_at])
    far_hi = np.concatenate([[1.0], far_at])  # threshold just above v_{k-1}
    far_lo = far_hi - rc.cells / n_non  # threshold just below v_k (all of cell k rejected)
    far_cell = np.clip(frr_cell, far_lo, far_hi)
    # candidates in threshold order: cell 0, v_0, cell 1, v_1, ...
    frr = np.empty(2 * frr_at.size + 1)
    far = np.empty_like(frr)
    frr[0::2], far[0::2] = frr_cell, far_cell
    frr[1::2], far[1::2] = frr_at, far_at
    if ties == "attacker":
        # at v_k: accept its targets, reject its non-targets
        frr_a = frr_cell[:-1]
        gap_a = np.abs(far_at - frr_a)
        e_a = (far_at + frr_a) / 2
    gap = np.abs(far - frr)
    k = int(np.argmin(gap))
    best, eer = gap[k], (far[k] + frr[k]) / 2
    if ties == "attacker":
        ka = int(np.argmin(gap_a))
        if gap_a[ka] < best or (gap_a[ka] == best and 2 * ka + 1 <= k):
            eer = e_a[ka]
    return float(eer)


def _rocch_eer_runs(
    rc: RunCounts, *, targets_first: bool, pav: PAVRuns | None = None
) -> tuple[float, float]:
    """ROCCH-EER and min Cllr of run counts (PAV without Laplace; ``pav`` when computed)."""
    r = pav_runs(rc, targets_first=targets_first, laplace=False) if pav is None else pav
    n_tar, n_non = rc.n_tar, rc.n_non
    ends = np.flatnonzero(np.diff(r.posterior) != 0)
    cum_tar = np.cumsum(r.counts * r.labels)
    cum_non = np.cumsum(r.counts * (1.0 - r.labels))
    pmiss = np.concatenate([[0.0], cum_tar[ends] / n_tar, [1.0]])
    pfa = np.concatenate([[1.0], (n_non - cum_non[ends]) / n_non, [0.0]])
    x0, x1, y0, y1 = pfa[:-1], pfa[1:], pmiss[:-1], pmiss[1:]
    det = x0 * y1 - x1 * y0
    den = (x0 - x1) + (y1 - y0)
    ok = (x0 != x1) & (y0 != y1)
    seg = np.zeros_like(det)
    seg[ok] = det[ok] / den[ok]
    eer_rocch = float(max(0.0, seg.max()))
    is_tar = r.labels == 1.0
    c_tar = r.counts[is_tar] @ r.per_run(lambda x: np.logaddexp(0.0, -x))[is_tar] / n_tar
    c_non = r.counts[~is_tar] @ r.per_run(lambda x: np.logaddexp(0.0, x))[~is_tar] / n_non
    return eer_rocch, min(float(0.5 * (c_tar + c_non) / _LN2), 1.0)


@dataclass(frozen=True, eq=False)
class ConditionReplicates:
    """Every headline number of one condition and its value in each replicate."""

    estimates: dict[str, float | None]
    """Metric key -> value on the full data."""
    reps: dict[str, NDArray[np.float64]] = field(repr=False)
    """Metric key -> (B,) replicate values (NaN where undefined)."""
    curve_n: NDArray[np.int64] = field(repr=False)
    """N' of the linkability curve."""
    curve: NDArray[np.float64] = field(repr=False)
    """Linkability at each N' on the full data."""
    curve_reps: NDArray[np.float64] = field(repr=False)
    """(B, G) the curve in each replicate."""

    def intervals(self, confidence: float = 0.95) -> dict[str, BootstrapInterval]:
        """Percentile interval of every number (the maxima: ``low = high = None``)."""
        if not 0 < confidence < 1:
            raise VoxMetricsInputError("`confidence` must be in (0, 1).")
        out = {}
        for k, est in self.estimates.items():
            b = self.reps[k].size
            if k in MAXIMA:
                out[k] = BootstrapInterval(est, None, None, confidence, b, 0)
            elif k in _BASIC and est is not None:
                pct = percentile_interval(est, self.reps[k], confidence, b)
                if pct.low is None or pct.high is None:
                    out[k] = pct
                else:  # the replicates' spread about their mean, placed about the estimate
                    centre = float(np.nanmean(self.reps[k]))
                    low = max(0.0, est - (centre - pct.low))
                    high = est + (pct.high - centre)
                    out[k] = BootstrapInterval(est, low, high, confidence, b, pct.n_valid)
            else:
                out[k] = percentile_interval(est, self.reps[k], confidence, b)
        return out

    def curve_band(self, confidence: float = 0.95) -> NDArray[np.float64]:
        """(G, 3) rows [N', low, high] of the linkability curve's pointwise interval."""
        if self.curve_n.size == 0:  # no complete trial: no curve
            return np.zeros((0, 3))
        a = (1.0 - confidence) / 2
        lo, hi = np.nanquantile(self.curve_reps, [a, 1 - a], axis=0)
        return np.column_stack([self.curve_n, lo, hi])


_BASIC = ("mean_d",)
"""Plug-in divergences biased upward under resampling (a replicate's duplicated speakers
sharpen its rank histogram, so every replicate sits above the estimate): their interval is the
replicates' percentile spread about the replicates' mean, placed about the estimate (floored
at 0). It is an interval for the expected plug-in value at this T and N, which is what the
chance level is too, so "the interval contains the chance level" compares like with like."""


REPLICATE_FAMILIES: dict[str, tuple[str, ...]] = {
    "pairwise": ("eer", "eer_rocch", "cllr", "min_cllr"),
    "zebra": ("d_ece", "log10_l", "log10_l_q95"),
    "linkability": ("linkability",),
    "srd": ("mean_d", "idr", "max_d", "max_d_q95"),
    "lid": ("alid", "pdr", "ndr", "lid_plus", "lid_minus", "lid_max", "lid_q95"),
}
"""The replicate keys of each family of :func:`condition_replicates` (``linkability`` adds
the curve against N' too)."""


def condition_replicates(
    scores: ArrayLike,
    targets: ArrayLike,
    speakers: ArrayLike,
    draws: SpeakerDraws,
    *,
    lid: ArrayLike | None = None,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
    estimates: Mapping[str, float | None] | None = None,
    q: float = WORST_Q,
    mask: ArrayLike | None = None,
    complete: tuple[ArrayLike, ArrayLike, ArrayLike] | None = None,
    linkability_rule: str = "code",
    ranks: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    families: Collection[str] = tuple(REPLICATE_FAMILIES),
    progress: Progress | None = None,
) -> ConditionReplicates:
    """Every headline number of one condition under the replicate weights ``draws``.

    Parameters
    ----------
    scores, targets : array_like
        The T x N eval matrix and the target column of each trial.
    speakers : array_like of str, shape (T,)
        Speaker of each trial (each must be in ``draws.speakers``).
    draws : SpeakerDraws
        Replicate weights; share one between conditions to pair them.
    lid : array_like, optional
        Per-trial LID (bits) under the condition's fixed calibration, one per trial of the
        1-to-N metrics (every trial, or each trial of ``complete``); adds the LID numbers.
    ties : {"reference", "attacker"}
        Tie rule of the pooled metrics.
    pools : SortedPools, optional
        The matrix's pools (of its listed pairs, with ``mask``) when already built.
    estimates : mapping, optional
        Full-data values to report instead of the ones recomputed here (e.g. the exact EER).
    q : float
        Quantile reported beside each maximum.
    mask : array_like of bool, shape (T, N), optional
        A sparse trial list: the listed pairs (unlisted scores may be NaN). The pairwise
        numbers (EER, ROCCH-EER, Cllr, min Cllr, ZEBRA) of a replicate are those of the listed
        pairs of its resampled trials; the 1-to-N numbers (linkability, its curve, SRD, LID)
        come from ``complete``.
    complete : (scores, targets, speakers), optional
        With ``mask``: the complete trials that the 1-to-N numbers rank
        (:meth:`~voxmetrics.data.model.ScoreMatrix.complete_rows`); None when there are none
        (those numbers are then absent). Without ``mask`` the matrix itself.
    linkability_rule : {"code", "strict"}
        When a trial is linked (:func:`~voxmetrics.metrics.legal.linkability`).
    ranks : (ranks under the linkability rule's tie rule, ranks with ``ties``), optional
        :func:`~voxmetrics.metrics.ranks.target_ranks` of the 1-to-N trials, when already
        computed (the point estimate's); computed here otherwise.
    families : collection of str
        The numbers to replicate, by family (:data:`REPLICATE_FAMILIES`; default every one):
        each family's numbers are the same floats whichever others are asked for with it.
    progress : callable(fraction, message), optional
        Called as the replicates of the pooled numbers advance.

    Returns
    -------
    ConditionReplicates
        Keys ``eer, eer_rocch, cllr, min_cllr, linkability, mean_d, idr, max_d, max_d_q95,
        d_ece, log10_l, log10_l_q95`` and, with ``lid``, ``alid, pdr, ndr, lid_plus,
        lid_minus, lid_max, lid_q95`` (a sparse list without complete trials: the pairwise
        ones only, and an empty curve); those of ``families`` only.

    Examples
    --------
    >>> S = np.array([[.9, .1], [.8, .2], [.3, .7], [.4, .6]])
    >>> d = SpeakerDraws.draw(["a", "a", "b", "b"], n_boot=50, seed=1)
    >>> r = condition_replicates(S, [0, 0, 1, 1], ["a", "a", "b", "b"], d)
    >>> r.estimates["linkability"], float(np.nanmin(r.reps["linkability"]))
    (1.0, 1.0)
    """
    check_ties(ties)
    unknown = sorted(set(families) - set(REPLICATE_FAMILIES))
    if unknown:
        raise VoxMetricsInputError(
            f"unknown replicate families {unknown}; use some of {', '.join(REPLICATE_FAMILIES)}."
        )
    s, t = _matrix_and_targets(scores, targets)
    inv = draws.index(speakers)
    if inv.size != s.shape[0]:
        raise VoxMetricsInputError(
            f"`speakers` must give one speaker per trial ({s.shape[0]}), got {inv.size}."
        )
    m = None
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != s.shape:
            raise VoxMetricsInputError(
                f"`mask` has shape {m.shape} but the scores {s.shape}; give one per score."
            )
    elif complete is None:
        complete = (s, t, speakers)
    est: dict[str, float | None] = {}
    reps: dict[str, NDArray[np.float64]] = {}
    grid = np.zeros(0, dtype=np.int64)
    curve, curve_reps = np.zeros(0), np.zeros((draws.n_boot, 0))
    if complete is not None:
        s1, t1 = _matrix_and_targets(complete[0], complete[1])
        inv1 = draws.index(complete[2])
        if inv1.size != s1.shape[0]:
            raise VoxMetricsInputError(
                f"the complete trials need one speaker each ({s1.shape[0]}), got {inv1.size}."
            )
        if "linkability" in families or "srd" in families:
            grid, curve, curve_reps = _one_to_n_replicates(
                s1, t1, inv1, draws, est, reps, ties, q, link_rank_ties(linkability_rule), ranks,
                srd="srd" in families,
            )  # fmt: skip
    pooled = {f for f in ("pairwise", "zebra") if f in families}
    if pooled:
        _pairwise_replicates(s, t, inv, draws, est, reps, ties, pools, q, m, pooled, progress)
    if lid is not None and complete is not None and "lid" in families:
        x = np.asarray(lid, dtype=np.float64).ravel()
        if x.shape != (inv1.size,):
            raise VoxMetricsInputError(
                f"`lid` must have one value per trial of the 1-to-N metrics ({inv1.size})."
            )
        lid_est, lid_reps = _lid_replicates(x, draws.counts, inv1, q)
        est.update(lid_est)
        reps.update(lid_reps)
    if estimates:
        est.update({k: v for k, v in estimates.items() if k in est})
    return ConditionReplicates(est, reps, grid, curve, curve_reps)


def _matrix_and_targets(
    scores: ArrayLike, targets: ArrayLike
) -> tuple[NDArray[np.floating], NDArray[np.intp]]:
    s = np.asarray(scores)
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    t = np.asarray(targets, dtype=np.intp).ravel()
    if s.ndim != 2 or t.shape != (s.shape[0],):
        raise VoxMetricsInputError(
            f"`scores` must be a T x N matrix with one target per row; got {s.shape} and {t.shape}."
        )
    return s, t


def _one_to_n_replicates(
    s: NDArray[np.floating],
    t: NDArray[np.intp],
    inv: NDArray[np.intp],
    draws: SpeakerDraws,
    est: dict[str, float | None],
    reps: dict[str, NDArray[np.float64]],
    ties: Ties,
    q: float,
    link_ties: Ties = "attacker",
    given: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    *,
    srd: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """Linkability, its curve and (``srd``) the SRD numbers of complete trials into the dicts.

    ``est`` and ``reps`` receive them. ``link_ties``: the rank rule of the linkability rule
    (:func:`~voxmetrics.metrics.legal.link_rank_ties`).
    """
    n = s.shape[1]
    n_spk = draws.speakers.size
    w = draws.counts.astype(np.float64)  # (B, S)
    # linkability and its curve: ties go to the true speaker under the code's rule (the
    # authors' code), against it under the strict one; the SRD ranks follow ``ties``
    if given is None:
        link_ranks = target_ranks(s, t, ties=link_ties)
        ranks = target_ranks(s, t, ties=ties) if srd else link_ranks
    else:
        link_ranks, ranks = given
    link = _linkability_replicates(link_ranks, n, inv, draws)
    est["linkability"] = link.estimates["linkability"]
    reps["linkability"] = link.reps["linkability"]
    grid, curve, curve_reps = link.curve_n, link.curve, link.curve_reps
    if not srd:
        return grid, curve, curve_reps
    onehot = np.zeros((n_spk, n))
    np.add.at(onehot, (inv, ranks - 1), 1.0)
    full_h = onehot.sum(axis=0, keepdims=True)
    for k, v in srd_from_hist(full_h, q).items():
        est[k] = float(v[0])
    for k, v in srd_from_hist(w @ onehot, q).items():
        reps[k] = v
    return grid, curve, curve_reps


def _speaker_mean(
    draws: SpeakerDraws, inv: NDArray[np.intp]
) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """``mean_of(x)``: the (B,) or (B, G) replicate means of per-trial values x (T,) or (T, G)."""
    n_spk = draws.speakers.size
    w = draws.counts.astype(np.float64)  # (B, S)
    n_b = w @ np.bincount(inv, minlength=n_spk).astype(np.float64)  # trials per replicate
    with np.errstate(invalid="ignore", divide="ignore"):
        n_b = np.where(n_b > 0, n_b, np.nan)

    def mean_of(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return (w @ speaker_sums(x, inv, n_spk)) / (n_b if x.ndim == 1 else n_b[:, None])

    return mean_of


def _linkability_replicates(
    link_ranks: NDArray[np.int64], n_enrolled: int, inv: NDArray[np.intp], draws: SpeakerDraws
) -> ConditionReplicates:
    """Linkability and its curve against N' (exact expectation) in each replicate."""
    mean_of = _speaker_mean(draws, inv)
    link = (link_ranks == 1).astype(np.float64)
    grid = linkability_grid(n_enrolled)
    p_curve = np.column_stack([prob_no_beater(link_ranks - 1, n_enrolled, int(m)) for m in grid])
    return ConditionReplicates(
        {"linkability": float(link.mean())},
        {"linkability": mean_of(link)},
        grid,
        p_curve.mean(axis=0),
        mean_of(p_curve),
    )


GroupRanks = tuple[
    NDArray[np.int64] | None, NDArray[np.int64] | None, int, ArrayLike, NDArray[np.float64] | None
]
"""One complete group of :func:`grouped_replicates`: (ranks under the linkability rule, ranks
under the SRD tie rule, its N, its trials' speakers, its trials' LID); None where not asked."""


def grouped_replicates(
    groups: Sequence[GroupRanks],
    draws: SpeakerDraws,
    *,
    families: Collection[str] = ("linkability", "srd", "lid"),
    q: float = WORST_Q,
) -> ConditionReplicates:
    """The 1-to-N numbers pooled over complete groups, under the replicate weights ``draws``.

    Each trial is ranked within its group (e.g. a VoicePrivacy list, complete per gender).
    Linkability, its curve against N' (on the grid of the smallest group's N, each trial with
    its own group's N) and LID are pooled over the trials; the SRD statistics are the mean of
    the groups' statistics weighted by their trials, in each replicate by their resampled
    trials.

    Examples
    --------
    >>> d = SpeakerDraws.draw(["a", "b", "c", "d"], n_boot=20, seed=1)
    >>> g = [(np.array([1, 2]), np.array([1, 2]), 3, ["a", "b"], None),
    ...      (np.array([1, 1]), np.array([1, 1]), 4, ["c", "d"], None)]
    >>> r = grouped_replicates(g, d, families=("linkability", "srd"))
    >>> r.estimates["linkability"], r.curve_n.tolist()
    (0.75, [2, 3])
    """
    invs = [draws.index(g[3]) for g in groups]
    inv = np.concatenate(invs)
    est: dict[str, float | None] = {}
    reps: dict[str, NDArray[np.float64]] = {}
    grid = np.zeros(0, dtype=np.int64)
    curve, curve_reps = np.zeros(0), np.zeros((draws.n_boot, 0))
    if ("linkability" in families or "srd" in families) and all(g[0] is not None for g in groups):
        ranks = [g[0] for g in groups if g[0] is not None]  # all of them (the test above)
        mean_of = _speaker_mean(draws, inv)
        link = np.concatenate([(r == 1).astype(np.float64) for r in ranks])
        est["linkability"], reps["linkability"] = float(link.mean()), mean_of(link)
        grid = linkability_grid(min(g[2] for g in groups))
        p_curve = np.concatenate(
            [
                np.column_stack([prob_no_beater(r - 1, g[2], int(m)) for m in grid])
                for r, g in zip(ranks, groups, strict=True)
            ]
        )
        curve, curve_reps = p_curve.mean(axis=0), mean_of(p_curve)
    if "srd" in families and all(g[1] is not None for g in groups):
        _grouped_srd(groups, invs, draws, est, reps, q)
    if "lid" in families and all(g[4] is not None for g in groups):
        x = np.concatenate([np.asarray(g[4], dtype=np.float64) for g in groups])
        lid_est, lid_reps = _lid_replicates(x, draws.counts, inv, q)
        est.update(lid_est)
        reps.update(lid_reps)
    return ConditionReplicates(est, reps, grid, curve, curve_reps)


def _grouped_srd(
    groups: Sequence[GroupRanks],
    invs: Sequence[NDArray[np.intp]],
    draws: SpeakerDraws,
    est: dict[str, float | None],
    reps: dict[str, NDArray[np.float64]],
    q: float,
) -> None:
    """The SRD statistics of the groups, trial-weighted, into ``est`` / ``reps``."""
    w = draws.counts.astype(np.float64)  # (B, S)
    n_spk = draws.speakers.size
    point: dict[str, float] = {}
    weighted: dict[str, NDArray[np.float64]] = {}
    total, total_b = 0.0, np.zeros(draws.n_boot)
    for g, inv in zip(groups, invs, strict=True):
        onehot = np.zeros((n_spk, g[2]))
        np.add.at(onehot, (inv, np.asarray(g[1]) - 1), 1.0)
        full_h = onehot.sum(axis=0, keepdims=True)
        t_g = float(full_h.sum())
        for k, v in srd_from_hist(full_h, q).items():
            point[k] = point.get(k, 0.0) + t_g * float(v[0])
        h_b = w @ onehot
        n_b = h_b.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            stats = srd_from_hist(np.where(n_b[:, None] > 0, h_b, 1.0), q)
        for k, v in stats.items():
            weighted[k] = weighted.get(k, np.zeros(draws.n_boot)) + np.where(n_b > 0, n_b * v, 0)
        total += t_g
        total_b += n_b
    for k in point:
        est[k] = point[k] / total
        with np.errstate(invalid="ignore", divide="ignore"):
            reps[k] = np.where(total_b > 0, weighted[k] / total_b, np.nan)


def _pairwise_replicates(
    s: NDArray[np.floating],
    t: NDArray[np.intp],
    inv: NDArray[np.intp],
    draws: SpeakerDraws,
    est: dict[str, float | None],
    reps: dict[str, NDArray[np.float64]],
    ties: Ties,
    pools: SortedPools | None,
    q: float,
    mask: NDArray[np.bool_] | None,
    families: Collection[str] = ("pairwise", "zebra"),
    progress: Progress | None = None,
) -> None:
    """The pooled numbers of the (listed) pairs into ``est`` / ``reps``.

    EER, ROCCH-EER, Cllr and min Cllr (the ``pairwise`` family) and ZEBRA (``zebra``).
    """
    n_trials = s.shape[0]
    if "pairwise" in families:
        _cllr_replicates(s, t, inv, draws, est, reps, mask)
    if pools is None:
        rows = np.arange(n_trials)
        if mask is None:
            pools = SortedPools.from_matrix(s, t)
        else:
            own = np.zeros(s.shape, dtype=bool)
            own[rows, t] = True
            pools = SortedPools.from_pools(s[mask & own], s[mask & ~own])
    per_speaker = speaker_run_counts(pools, s, t, inv, draws.speakers.size, mask=mask)
    ref = ties == "reference"
    for k in (k for f in ("pairwise", "zebra") if f in families for k in REPLICATE_FAMILIES[f]):
        if k == "cllr":  # by per-speaker sums (above); the rest on reweighted runs
            continue
        reps[k] = np.full(draws.n_boot, np.nan)

    def pooled(rc: RunCounts) -> dict[str, float]:
        # one PAV without Laplace for the ROCCH, min Cllr and D_ECE: targets first at a tie
        # under the reference rule (BOSARIS rocch, ZEBRA's rocch_pava), else non-targets first
        z = pav_runs(rc, targets_first=ref, laplace=False)
        out = {}
        if "pairwise" in families:
            eer_r, mc = _rocch_eer_runs(rc, targets_first=ref, pav=z)
            out.update({"eer": eer_from_runs(rc, ties=ties), "eer_rocch": eer_r, "min_cllr": mc})
        if "zebra" in families:
            lap = pav_runs(rc, targets_first=False, laplace=True)
            mag = np.abs(lap.llr) / _LN10
            out.update(
                {
                    "d_ece": d_ece_from_runs(z, rc.n_tar, rc.n_non),
                    "log10_l": float(mag.max()),
                    "log10_l_q95": float(weighted_quantile(mag, lap.counts, q)[0]),
                }
            )
        return out

    est.update(pooled(pools.counts))
    for start, weighted in replicate_run_counts(per_speaker, draws.counts):
        for i, row in enumerate(weighted):
            rc = RunCounts(cells=row[0::3], tar_at=row[1::3], non_at=row[2::3])
            if rc.n_tar > 0 and rc.n_non > 0:
                for k, v in pooled(rc).items():
                    reps[k][start + i] = v
        if progress is not None:
            done = start + len(weighted)
            progress(done / draws.n_boot, f"bootstrap {done}/{draws.n_boot}")


def _cllr_replicates(
    s: NDArray[np.floating],
    t: NDArray[np.intp],
    inv: NDArray[np.intp],
    draws: SpeakerDraws,
    est: dict[str, float | None],
    reps: dict[str, NDArray[np.float64]],
    mask: NDArray[np.bool_] | None,
) -> None:
    """Cllr of the (listed) pairs into ``est`` / ``reps``, by per-speaker sums of its terms."""
    n_trials, n = s.shape
    n_spk = draws.speakers.size
    w = draws.counts.astype(np.float64)  # (B, S)
    tar_term = np.zeros(n_trials)
    non_term = np.zeros(n_trials)
    rows = np.arange(n_trials)
    for blk in row_blocks(n_trials, n):
        sb = s[blk].astype(np.float64)
        r = rows[: sb.shape[0]]
        mated = sb[r, t[blk]]
        if mask is None:
            tar_term[blk] = np.logaddexp(0.0, -mated)
            non_term[blk] = np.logaddexp(0.0, sb).sum(axis=1) - np.logaddexp(0.0, mated)
        else:  # the listed pairs only (unlisted scores may be NaN: never summed)
            mb = mask[blk].copy()
            own = mb[r, t[blk]]
            mb[r, t[blk]] = False
            tar_term[blk] = np.where(own, np.logaddexp(0.0, -np.where(own, mated, 0.0)), 0.0)
            non_term[blk] = np.where(mb, np.logaddexp(0.0, np.where(mb, sb, 0.0)), 0.0).sum(1)
    c_tar = w @ speaker_sums(tar_term, inv, n_spk)
    c_non = w @ speaker_sums(non_term, inv, n_spk)
    if mask is None:
        n_b = w @ np.bincount(inv, minlength=n_spk).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            n_b = np.where(n_b > 0, n_b, np.nan)
        est["cllr"] = float(0.5 * (tar_term.mean() + non_term.sum() / (n_trials * (n - 1))) / _LN2)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps["cllr"] = 0.5 * (c_tar / n_b + c_non / (n_b * (n - 1))) / _LN2
    else:
        own_listed = mask[rows, t]
        n_tar_t = own_listed.astype(np.float64)  # listed mated pairs of each trial
        n_non_t = mask.sum(axis=1) - n_tar_t  # listed non-mated pairs of each trial
        n_tar_b = w @ speaker_sums(n_tar_t, inv, n_spk)
        n_non_b = w @ speaker_sums(n_non_t, inv, n_spk)
        est["cllr"] = float(
            0.5 * (tar_term.sum() / n_tar_t.sum() + non_term.sum() / n_non_t.sum()) / _LN2
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            reps["cllr"] = np.where(
                (n_tar_b > 0) & (n_non_b > 0),
                0.5 * (c_tar / n_tar_b + c_non / n_non_b) / _LN2,
                np.nan,
            )


def _lid_replicates(
    x: NDArray[np.float64], counts: NDArray[np.int64], inv: NDArray[np.intp], q: float
) -> tuple[dict[str, float | None], dict[str, NDArray[np.float64]]]:
    """LID aggregates of per-trial LID ``x`` on the full data and under each replicate."""
    n_spk = counts.shape[1]
    w = counts.astype(np.float64)
    n_b = w @ np.bincount(inv, minlength=n_spk).astype(np.float64)
    pos = (x > 0).astype(np.float64)
    tot = w @ speaker_sums(x, inv, n_spk)
    npos = w @ speaker_sums(pos, inv, n_spk)
    spos = w @ speaker_sums(np.where(x > 0, x, 0.0), inv, n_spk)
    reps: dict[str, NDArray[np.float64]] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        reps["alid"] = tot / n_b
        reps["pdr"] = npos / n_b
        reps["ndr"] = 1.0 - npos / n_b
        reps["lid_plus"] = np.where(npos > 0, spos / npos, np.nan)
        nneg = n_b - npos
        reps["lid_minus"] = np.where(nneg > 0, (tot - spos) / nneg, np.nan)
    spk_max = np.full(n_spk, -np.inf)
    np.maximum.at(spk_max, inv, x)
    reps["lid_max"] = np.where(counts > 0, spk_max, -np.inf).max(axis=1)
    reps["lid_q95"] = weighted_quantile(x, w[:, inv], q)
    p = x > 0
    est: dict[str, float | None] = {
        "alid": float(x.mean()),
        "pdr": float(p.mean()),
        "ndr": float(1 - p.mean()),
        "lid_plus": float(x[p].mean()) if p.any() else None,
        "lid_minus": float(x[~p].mean()) if (~p).any() else None,
        "lid_max": float(x.max()),
        "lid_q95": float(np.quantile(x, q, method="inverted_cdf")),
    }
    return est, reps


def lid_intervals(
    lid: ArrayLike,
    speakers: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    q: float = WORST_Q,
) -> dict[str, BootstrapInterval]:
    """Speaker-level intervals of ALID, PDR, NDR, LID+, LID-, LID q95 (LIDmax: no interval).

    The LID part of :func:`condition_replicates`, for callers that have only per-trial LID.
    The draws are those of :class:`SpeakerDraws` with the same seed.

    Examples
    --------
    >>> ci = lid_intervals([1.0, 1.0, -1.0, -1.0], ["a", "a", "b", "b"], n_boot=200)
    >>> ci["pdr"].estimate, ci["lid_max"].low, ci["ndr"].low <= 0.5 <= ci["ndr"].high
    (0.5, None, True)
    """
    x = np.asarray(lid, dtype=np.float64).ravel()
    spk = np.asarray(speakers).astype(str).ravel()
    if x.size == 0 or spk.shape != x.shape:
        raise VoxMetricsInputError("`lid` and `speakers` must be non-empty and of equal length.")
    draws = SpeakerDraws.draw(spk, n_boot=n_boot, seed=seed)
    est, reps = _lid_replicates(x, draws.counts, draws.index(spk), q)
    grid = np.zeros(0, dtype=np.int64)
    empty = np.zeros((draws.n_boot, 0))
    return ConditionReplicates(est, reps, grid, np.zeros(0), empty).intervals(confidence)
