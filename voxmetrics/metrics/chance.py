"""Chance levels: the value of every headline number when the scores carry no speaker information.

Computed on the user's own scores: the enrolled identity of each trial is replaced by a
uniformly drawn column (a permutation of the enrolled identities). Linkability, ALID and PDR
have closed forms (exact expectations over that draw); the other statistics are averaged over
seeded draws. The work splits into row blocks (:func:`chance_block`) put together in row order
(:func:`chance_levels_from_blocks`), in memory or on Dask workers, bit for bit alike; LID rides
along on the same pass (:func:`lid_with_chance`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._resampled import srd_from_hist
from voxmetrics.metrics._validation import check_matrix
from voxmetrics.metrics.legal import linkability_grid
from voxmetrics.metrics.lid import LIDCalibration, LIDResult, lid_result, log_posteriors
from voxmetrics.metrics.parallel import map_blocks
from voxmetrics.metrics.pools import Ties, check_ties
from voxmetrics.metrics.ranks import CHUNK_ELEMENTS, entry_ranks_and_max, row_blocks, target_ranks
from voxmetrics.metrics.uncertainty import WORST_Q

__all__ = [
    "MAX_DRAWN",
    "ChanceBlock",
    "ChanceLevels",
    "chance_block",
    "chance_columns",
    "chance_levels",
    "chance_levels_from_blocks",
    "lid_from_blocks",
    "lid_with_chance",
]

_LN2 = math.log(2.0)

MAX_DRAWN = 4_000_000
"""Most (draws x trials) cells :func:`chance_levels` keeps (the draws shrink, to >= 20)."""


@dataclass(frozen=True, eq=False)
class ChanceLevels:
    """Values expected when the scores carry no speaker information, on the user's scores."""

    values: dict[str, float | None]
    """Metric key -> chance level."""
    curve_n: NDArray[np.int64] = field(repr=False)
    """N' of the linkability curve."""
    curve: NDArray[np.float64] = field(repr=False)
    """Chance linkability at each N'."""
    n_draws: int = 0
    """Draws of random identities behind the Monte Carlo levels."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the levels and the draws."""
        return {**self.values, "n_draws": self.n_draws}


def chance_levels(
    scores: ArrayLike,
    *,
    calibration: LIDCalibration | None = None,
    n_draws: int = 200,
    seed: int = 0,
    q: float = WORST_Q,
    ties: Ties = "reference",
) -> ChanceLevels:
    """Chance levels of linkability, the SRD statistics and LID for this score matrix.

    Each trial's enrolled identity is replaced by a uniformly drawn column j (a permutation of
    the enrolled identities: the scores keep their distribution, the link to the speaker is
    cut). Closed forms, exact expectations over j: linkability = mean_i (1/N) #{j : s_ij >=
    every other score of row i} (1/N without ties; ties go to the true speaker, as
    linkability's) and its curve 1/N'; ALID = mean_ij
    log2(N p_ij) and PDR = mean_ij [p_ij > 1/N] under ``calibration``. The SRD statistics
    (whose plug-in estimates are biased upward when trials are few against N) and the other
    LID aggregates are averaged over ``n_draws`` seeded draws (fewer, but at least 20, when
    draws x trials would exceed 4 million). Each row is sorted once and the drawn entries are
    located in it by binary search (:func:`~voxmetrics.metrics.ranks.entry_ranks`), in row
    blocks, so memory stays bounded on large matrices. ``ties`` is the SRD ranks' tie rule.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = chance_levels(rng.normal(size=(35, 131)), n_draws=50)
    >>> round(c.values["linkability"], 4), c.values["mean_d"] > 1.5
    (0.0076, True)
    """
    s = np.asarray(scores)
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    if s.ndim != 2 or s.shape[1] < 2:
        raise VoxMetricsInputError("`scores` must be a T x N matrix with N >= 2.")
    check_ties(ties)
    n_trials, n = s.shape
    cols = chance_columns(n_trials, n, n_draws=n_draws, seed=seed)
    parts = _chance_parts(s, cols, calibration, ties)
    return chance_levels_from_blocks(parts, n, q=q)


def _chance_parts(
    s: NDArray[np.floating],
    cols: NDArray[np.int64],
    calibration: LIDCalibration | None,
    ties: Ties,
    targets: NDArray[np.intp] | None = None,
) -> list[ChanceBlock]:
    """:func:`chance_block` of every row block, the blocks run on parallel threads."""

    def one(blk: slice) -> ChanceBlock:
        return chance_block(
            s[blk],
            cols[:, blk],
            calibration=calibration,
            ties=ties,
            targets=None if targets is None else targets[blk],
        )

    return map_blocks(one, row_blocks(*s.shape))


def lid_with_chance(
    scores: ArrayLike,
    targets: ArrayLike,
    calibration: LIDCalibration,
    *,
    n_draws: int = 200,
    seed: int = 0,
    q: float = WORST_Q,
    ties: Ties = "reference",
) -> tuple[LIDResult, ChanceLevels]:
    """:func:`~voxmetrics.metrics.lid.lid` and :func:`chance_levels` in one pass over the rows.

    Both need every row's z-scores and log-posteriors under ``calibration``; they are computed
    once. The LID result is the same bit for bit as ``lid(scores, targets, calibration)``, the
    chance levels as ``chance_levels(scores, calibration=calibration, ...)``.

    Examples
    --------
    >>> from voxmetrics.metrics.lid import lid
    >>> rng = np.random.default_rng(0)
    >>> s, t = rng.normal(size=(30, 8)), np.arange(30) % 8
    >>> s[np.arange(30), t] += 1.0
    >>> cal = LIDCalibration(w=2.0, b=-1.0, prior_log_odds=math.log(1 / 7), n_pairs=0)
    >>> r, c = lid_with_chance(s, t, cal, n_draws=20)
    >>> bool((r.lid == lid(s, t, cal).lid).all()), round(c.values["linkability"], 3)
    (True, 0.125)
    """
    s, t = check_matrix(scores, targets)
    check_ties(ties)
    n_trials, n = s.shape
    cols = chance_columns(n_trials, n, n_draws=n_draws, seed=seed)
    parts = _chance_parts(s, cols, calibration, ties, t)
    result = lid_from_blocks(parts, target_ranks(s, t), n_enrolled=n, calibration=calibration)
    return result, chance_levels_from_blocks(parts, n, q=q)


def lid_from_blocks(
    parts: Sequence[ChanceBlock],
    ranks: NDArray[np.int64],
    *,
    n_enrolled: int,
    calibration: LIDCalibration,
) -> LIDResult:
    """The LID result of the rows of ``parts``, each row's LID computed with its chance block.

    ``parts`` are :func:`chance_block` of consecutive row blocks under ``calibration`` with the
    rows' ``targets``; ``ranks`` the rows' target ranks (``ties="reference"``). In memory
    (:func:`lid_with_chance`) and on Dask workers alike.
    """
    return lid_result(
        np.concatenate([b.lid for b in parts]),
        np.concatenate([b.p_target for b in parts]),
        ranks,
        n_enrolled=n_enrolled,
        calibration=calibration,
        n_degenerate=sum(b.n_degenerate for b in parts),
    )


def chance_columns(
    n_trials: int, n: int, *, n_draws: int = 200, seed: int = 0
) -> NDArray[np.int64]:
    """The identities :func:`chance_levels` draws: a (draws x trials) matrix of columns.

    ``n_draws`` shrinks (to at least 20) when draws x trials would exceed 4 million.

    Examples
    --------
    >>> chance_columns(3, 4, n_draws=2, seed=0).shape
    (2, 3)
    """
    if n_draws < 1:
        raise VoxMetricsInputError("`n_draws` must be >= 1.")
    # bound the (draws x trials) work on large matrices: at least 20 draws
    n_draws = max(1, min(n_draws, max(20, MAX_DRAWN // n_trials)))
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_draws, n_trials))


@dataclass(frozen=True, eq=False)
class ChanceBlock:
    """What :func:`chance_levels` needs of one block of rows (see :func:`chance_block`)."""

    drawn: NDArray[np.int32] = field(repr=False)
    """Rank of the drawn column of each row, per draw (draws x rows)."""
    lid_drawn: NDArray[np.float64] | None = field(repr=False)
    """LID of the drawn column of each row, per draw; None without a calibration."""
    n_top: int
    """Cells ranked first in their row (ties share the first place)."""
    n_pos: int
    """Cells with a positive LID."""
    lid_sum: float
    """Sum of the LID of every cell of the block."""
    lid: NDArray[np.float64] | None = field(default=None, repr=False)
    """LID of each row's own speaker (``targets`` given, with a calibration), else None."""
    p_target: NDArray[np.float64] | None = field(default=None, repr=False)
    """Posterior of each row's own speaker (as ``lid``)."""
    n_degenerate: int = 0
    """Rows without evidence (constant scores; as ``lid``)."""


def chance_block(
    scores: ArrayLike,
    columns: ArrayLike,
    *,
    calibration: LIDCalibration | None = None,
    ties: Ties = "reference",
    targets: ArrayLike | None = None,
) -> ChanceBlock:
    """The per-row work of :func:`chance_levels` on one block of rows.

    ``columns`` are the block's columns of :func:`chance_columns`. Rows are independent, and
    the block's sums are taken chunk by chunk in row order (chunks of
    :data:`~voxmetrics.metrics.ranks.CHUNK_ELEMENTS` scores), so blocks computed anywhere (one
    machine, or Dask workers) and put together in row order with
    :func:`chance_levels_from_blocks` give the same chance levels, ALID included, bit for bit.
    With ``targets`` (each row's own column) and a calibration, the block also carries the LID
    of each row's own speaker, the same numbers as :func:`~voxmetrics.metrics.lid.lid_rows`:
    the z-scores and log-posteriors of the rows are computed once for both.

    Examples
    --------
    >>> b = chance_block(np.array([[0.9, 0.1], [0.5, 0.5]]), np.array([[0, 1]]))
    >>> b.drawn.tolist(), b.n_top  # row 2 ties: both cells rank first (ties="reference": 2)
    ([[1, 2]], 3)
    """
    s = np.asarray(scores)
    if s.dtype not in (np.float32, np.float64):
        s = s.astype(np.float64)
    cb = np.asarray(columns)
    n_rows, n = s.shape
    drawn = np.empty(cb.shape, dtype=np.int32)
    lid_drawn = lid_t = p_t = t = None
    if calibration is not None:
        lid_drawn = np.empty(cb.shape)
        if targets is not None:
            t = np.asarray(targets, dtype=np.intp)
            lid_t, p_t = np.empty(n_rows), np.empty(n_rows)
    n_top = n_pos = n_deg = 0
    lid_sum = 0.0
    log_n = math.log(n)
    # row-wise work in cache-sized chunks (their temporaries stay in the processor's cache)
    for ch in row_blocks(n_rows, n, CHUNK_ELEMENTS):
        sb = s[ch]
        # rank of each drawn column within its row: #{k : s_ik >= s_ij} (ties against the
        # attacker) or 1 + #{k : s_ik > s_ij} (ties for the attacker)
        drawn[:, ch], top = entry_ranks_and_max(sb, cb[:, ch], ties=ties)
        # columns ranked first with ties for the attacker: the scores equal to the row max
        # (the last of the row's sorted scores; -0.0 == +0.0, so the count is np.max's)
        n_top += int(np.count_nonzero(sb == top))
        if lid_drawn is not None and calibration is not None:
            c = calibration
            lid, deg = log_posteriors(sb, c.w, c.b, c.prior_log_odds, c.ddof)  # as lid_rows'
            rows = np.arange(sb.shape[0])
            if t is not None and lid_t is not None and p_t is not None:
                own = lid[rows, t[ch]]
                lid_t[ch] = (log_n + own) / _LN2
                p_t[ch] = np.exp(own)
                n_deg += int(deg.sum())
            np.add(log_n, lid, out=lid)  # the LID of every cell, in place
            lid /= _LN2
            lid_drawn[:, ch] = lid[rows, cb[:, ch]]
            n_pos += int(np.count_nonzero(lid > 0))
            lid_sum += float(lid.sum())
    return ChanceBlock(drawn, lid_drawn, n_top, n_pos, lid_sum, lid_t, p_t, n_deg)


def chance_levels_from_blocks(
    blocks: Sequence[ChanceBlock], n: int, *, q: float = WORST_Q
) -> ChanceLevels:
    """:func:`chance_levels` from its :func:`chance_block` results, in row order.

    Examples
    --------
    >>> s, cols = np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[0, 1]])  # 1 draw, 2 rows
    >>> parts = [chance_block(s[i : i + 1], cols[:, i : i + 1]) for i in (0, 1)]
    >>> c = chance_levels_from_blocks(parts, 2)
    >>> c.values["linkability"], c.n_draws  # one cell of each row ranks first: 2 / 4
    (0.5, 1)
    """
    drawn = np.concatenate([b.drawn for b in blocks], axis=1)
    n_draws, n_trials = drawn.shape
    n_top = n_pos = 0
    lid_sum = 0.0
    for b in blocks:  # in row order, as one machine's loop
        n_top += b.n_top
        n_pos += b.n_pos
        lid_sum += b.lid_sum
    values: dict[str, float | None] = {"linkability": n_top / (n_trials * n)}
    grid = linkability_grid(n)
    # rank histogram of each draw: counts of (draw, rank) pairs (exact integers, as floats)
    cells = (np.arange(n_draws)[:, None] * n + (drawn - 1)).ravel()
    h = np.bincount(cells, minlength=n_draws * n).reshape(n_draws, n).astype(np.float64)
    for k, v in srd_from_hist(h, q).items():
        values[k] = float(np.mean(v))
    if blocks and blocks[0].lid_drawn is not None:
        x = np.concatenate([b.lid_drawn for b in blocks], axis=1)
        values["alid"] = lid_sum / (n_trials * n)
        pdr = n_pos / (n_trials * n)
        values["pdr"] = pdr
        values["ndr"] = 1.0 - pdr
        pos = x > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            lp = np.where(pos.any(1), np.where(pos, x, 0).sum(1) / pos.sum(1), np.nan)
            lm = np.where((~pos).any(1), np.where(~pos, x, 0).sum(1) / (~pos).sum(1), np.nan)
        values["lid_plus"] = float(np.nanmean(lp)) if np.isfinite(lp).any() else None
        values["lid_minus"] = float(np.nanmean(lm)) if np.isfinite(lm).any() else None
        values["lid_max"] = float(x.max(axis=1).mean())
        values["lid_q95"] = float(np.quantile(x, q, axis=1, method="inverted_cdf").mean())
    return ChanceLevels(values, grid, 1.0 / grid.astype(np.float64), n_draws)
