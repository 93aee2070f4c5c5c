"""SBLS's speaker-level bootstrap as a reweighting, its intervals and the paired comparison.

The attacker is held fixed and the evaluation speakers are resampled; a replicate weights each
utterance by how often its speaker was drawn, since every quantity SBLS reads is a sum over
utterances. The result equals recomputing :func:`~voxmetrics.metrics.sbls.sbls` on the
resampled utterances (package docstring).
"""

from __future__ import annotations

import itertools
from collections.abc import MutableMapping
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from voxmetrics._types import Progress
from voxmetrics.analysis.sbls.attacks import Attack, SBLSOptions, attack_sbls
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import BootstrapInterval, percentile_interval
from voxmetrics.metrics.paired import Comparison, holm, paired_p_values
from voxmetrics.metrics.sbls import SBLSResult
from voxmetrics.metrics.uncertainty import SpeakerDraws

__all__ = [
    "COMPONENTS",
    "compare_sbls",
    "sbls_intervals",
    "sbls_replicates",
]

COMPONENTS: dict[str, str] = {
    "p_attr": "P_attr",
    "p_assoc": "P_assoc",
    "p_subgroup": "P_subgroup",
    "sbls": "SBLS",
}
"""Bootstrapped quantities: key of the statistic to column label."""

_CELLS = 4_000_000
"""Most (replicates x utterances) weights held at once by the per-utterance AUC sums."""

_PAIR_CELLS = 16_000_000
"""Most (classes x score columns x speakers x speakers) cells of the speaker-pair AUC sums;
beyond (or with more speakers than replicates), the AUCs are summed per utterance
(:func:`_auc_sums`), which is also exact."""


@dataclass(frozen=True, eq=False)
class _Attribute:
    """One attribute of an attack, prepared for reweighting."""

    y: NDArray[np.intp]
    """(n,) index of each utterance's true class in ``classes``."""
    n_classes: int
    """K: every class of the full data."""
    scores: NDArray[np.float64] | None
    """(n, m) class scores (None for hard predictions)."""
    order: tuple[NDArray[np.intp], ...] = ()
    """Soft: per score column, the utterances sorted by score."""
    starts: tuple[NDArray[np.intp], ...] = ()
    """Soft: per score column, where each run of tied scores starts in ``order``."""
    col: NDArray[np.intp] | None = None
    """Hard: (n,) column of each prediction among the attacker's classes."""
    n_cols: int = 0
    """Hard: M, the attacker's classes (its declared ones and every predicted value)."""
    declared: NDArray[np.bool_] | None = None
    """Hard: (M,) which of them the attacker declares (they count even when never predicted)."""


def _prepare(attack: Attack) -> list[_Attribute]:
    out = []
    for a, labels in attack.labels.items():
        y_str = np.asarray(labels).astype(str)
        classes, y = np.unique(y_str, return_inverse=True)
        pred = attack.predictions[a]
        if pred.scores is not None:
            scores = np.asarray(pred.scores, dtype=np.float64)
            orders, starts = [], []
            for j in range(scores.shape[1]):
                o = np.argsort(scores[:, j], kind="stable")
                s = scores[o, j]
                orders.append(o)
                starts.append(np.flatnonzero(np.r_[True, s[1:] != s[:-1]]))
            out.append(_Attribute(y, classes.size, scores, tuple(orders), tuple(starts)))
        else:
            hard = np.asarray(pred.predicted).astype(str)
            cols = np.array(sorted(set(pred.classes) | set(hard.tolist())))
            declared = np.isin(cols, np.array(pred.classes, dtype=str))
            col = np.searchsorted(cols, hard)
            out.append(
                _Attribute(y, classes.size, None, col=col, n_cols=cols.size, declared=declared)
            )
    return out


@overload
def _per_speaker(
    inv: NDArray[np.intp], n_spk: int, cell: NDArray[np.intp], n_cells: int, weights: None = None
) -> NDArray[np.intp]: ...
@overload
def _per_speaker(
    inv: NDArray[np.intp],
    n_spk: int,
    cell: NDArray[np.intp],
    n_cells: int,
    weights: NDArray[np.float64],
) -> NDArray[np.float64]: ...
def _per_speaker(
    inv: NDArray[np.intp],
    n_spk: int,
    cell: NDArray[np.intp],
    n_cells: int,
    weights: NDArray[np.float64] | None = None,
) -> NDArray[np.intp] | NDArray[np.float64]:
    """(S, n_cells) per-speaker counts (or sums of ``weights``) of each utterance's cell."""
    return np.bincount(inv * n_cells + cell, weights=weights, minlength=n_spk * n_cells).reshape(
        n_spk, n_cells
    )


def _auc_sums(att: _Attribute, wu: NDArray[np.float64]) -> NDArray[np.float64]:
    """(b, K, m) one-vs-rest AUC of each class with each score column under weights ``wu``.

    The weighted Mann-Whitney statistic with mid-ranks: pairs (positive i, negative j) count
    w_i w_j for s_i > s_j and half that for a tie; NaN where a class has no positive or no
    negative weight.
    """
    assert att.scores is not None
    b, k, m = wu.shape[0], att.n_classes, att.scores.shape[1]
    out = np.full((b, k, m), np.nan)
    for j in range(m):
        o, starts = att.order[j], att.starts[j]
        ws = wu[:, o]
        tied = starts.size < o.size  # without ties every run is one utterance: no sums
        total = np.add.reduceat(ws, starts, axis=1) if tied else ws
        ys = att.y[o]
        for c in range(k):
            pos = np.where(ys == c, ws, 0.0)
            if tied:
                pos = np.add.reduceat(pos, starts, axis=1)
            neg = total - pos
            below = np.cumsum(neg, axis=1) - neg
            num = (pos * (below + 0.5 * neg)).sum(axis=1)
            den = pos.sum(axis=1) * neg.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, c, j] = np.where(den > 0, num / den, np.nan)
    return out


def _auc_pairs(att: _Attribute, inv: NDArray[np.intp], n_spk: int) -> NDArray[np.float64]:
    """(K, m, S, S) Mann-Whitney sums of each class and score column between speakers.

    Cell [c, j, s, t]: over the utterances of speaker s in class c and of speaker t not in
    c, the count of pairs where s's score in column j is higher, plus half the ties. The
    weighted AUC of a replicate with speaker weights w is w A w / ((w pos_c) (w neg_c)), so
    the sums are built once and every replicate is a quadratic form in S weights.
    """
    assert att.scores is not None
    k, m = att.n_classes, att.scores.shape[1]
    n = att.y.size
    out = np.zeros((k, m, n_spk, n_spk))
    step = max(1, _CELLS // (2 * n_spk))  # utterances per chunk: (chunk x S) cells at most
    for j in range(m):
        o, starts = att.order[j], att.starts[j]
        gid = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, n]))
        spk, ys = inv[o], att.y[o]
        # chunks of about ``step`` utterances that end on a tie boundary (a tie run whole)
        cuts = np.unique(
            np.r_[starts[np.searchsorted(starts, np.arange(0, n, step), "right") - 1], n]
        )
        carry = np.zeros((k, n_spk))  # negatives of class c before the chunk, per speaker
        for p0, p1 in itertools.pairwise(cuts):
            g = gid[p0:p1] - gid[p0]
            n_g = int(g[-1]) + 1
            sp, yc = spk[p0:p1], ys[p0:p1]
            for c in range(k):
                is_neg = yc != c
                neg = np.bincount(g * n_spk + sp, weights=is_neg, minlength=n_g * n_spk)
                neg = neg.reshape(n_g, n_spk)
                # negatives scored below each tie run, plus half of those tied with it
                below = np.cumsum(neg, axis=0) - 0.5 * neg + carry[c]
                rows = np.flatnonzero(~is_neg)
                if rows.size:
                    rows = rows[np.argsort(sp[rows], kind="stable")]
                    who, first = np.unique(sp[rows], return_index=True)
                    out[c, j][who] += np.add.reduceat(below[g[rows]], first, axis=0)
                carry[c] += neg.sum(axis=0)
    return out


def _auc_from_pairs(
    pairs: NDArray[np.float64], class_spk: NDArray[np.intp], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """(b, K, m) weighted AUCs from :func:`_auc_pairs` and (S, K) class counts per speaker."""
    k, m = pairs.shape[:2]
    pos = w @ class_spk  # (b, K)
    neg = pos.sum(axis=1, keepdims=True) - pos
    out = np.empty((w.shape[0], k, m))
    for c in range(k):
        for j in range(m):
            out[:, c, j] = ((w @ pairs[c, j]) * w).sum(axis=1)
    den = (pos * neg)[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, out / np.where(den > 0, den, 1.0), np.nan)


def _nmi_rows(tables: NDArray[np.float64], k: NDArray[np.int64]) -> NDArray[np.float64]:
    """I(Y; Y_hat) / ln k of each (r x c) table of ``tables`` (b, r, c), clipped to [0, 1]."""
    n = tables.sum(axis=(1, 2), keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = tables / n
        px = p.sum(axis=2, keepdims=True)
        py = p.sum(axis=1, keepdims=True)
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / (px * py)), 0.0)
        mi = terms.sum(axis=(1, 2))
        out = np.where(k >= 2, mi / np.log(np.maximum(k, 2)), 0.0)
    return np.clip(out, 0.0, 1.0)


def _clip01(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.clip(x, 0.0, 1.0)


@dataclass(eq=False)
class _Replicates:
    """The speaker-weighted replicates of one attack, and what is learned per replicate.

    The class alignment of each attribute is redone per replicate; replicates sharing an
    alignment (its ``key``) share the mapping of every utterance to a true class, so P_assoc
    and P_subgroup are computed once per alignment (or combination of alignments).
    """

    atts: list[_Attribute]
    inv: NDArray[np.intp]
    """(n,) each utterance's speaker among the drawn speakers."""
    n_spk: int
    w: NDArray[np.float64]
    """(B, S) how often each speaker was drawn in each replicate."""
    class_spk: list[NDArray[np.intp]]
    """Per attribute, (S, K) utterances of each speaker in each true class."""
    present: list[NDArray[np.bool_]]
    """Per attribute, (B, K) the true classes present in each replicate."""
    k: NDArray[np.int64]
    """(A, B) number of true classes present."""
    leak: NDArray[np.float64]
    """(A, B) each attribute's leakage (chance-corrected, in [0, 1]); NaN: undefined."""
    nmi: NDArray[np.float64]
    """(A, B) each attribute's normalised mutual information; NaN: undefined."""
    keys: list[list[Any]]
    """Per attribute and replicate, the key of its class alignment (None: undefined)."""
    mappings: list[dict[Any, NDArray[np.intp]]]
    """Per attribute, alignment key to the (n,) true class each utterance is mapped to."""

    @classmethod
    def start(cls, attack: Attack, draws: SpeakerDraws) -> _Replicates:
        """The replicates of ``draws`` on ``attack``, nothing computed per replicate yet."""
        atts = _prepare(attack)
        inv = draws.index(attack.speakers)
        n_spk, n_boot = draws.speakers.size, draws.n_boot
        w = draws.counts.astype(np.float64)
        class_spk = [_per_speaker(inv, n_spk, a.y, a.n_classes) for a in atts]
        present = [w @ cs > 0 for cs in class_spk]
        return cls(
            atts=atts,
            inv=inv,
            n_spk=n_spk,
            w=w,
            class_spk=class_spk,
            present=present,
            k=np.stack([p.sum(axis=1) for p in present]),
            leak=np.full((len(atts), n_boot), np.nan),
            nmi=np.full((len(atts), n_boot), np.nan),
            keys=[[None] * n_boot for _ in atts],
            mappings=[{} for _ in atts],
        )

    @property
    def n_boot(self) -> int:
        """B, the replicates."""
        return int(self.w.shape[0])

    @overload
    def per_speaker(
        self, cell: NDArray[np.intp], n_cells: int, weights: None = None
    ) -> NDArray[np.intp]: ...
    @overload
    def per_speaker(
        self, cell: NDArray[np.intp], n_cells: int, weights: NDArray[np.float64]
    ) -> NDArray[np.float64]: ...
    def per_speaker(
        self, cell: NDArray[np.intp], n_cells: int, weights: NDArray[np.float64] | None = None
    ) -> NDArray[np.intp] | NDArray[np.float64]:
        """(S, n_cells) per-speaker counts (or sums of ``weights``) of each utterance's cell."""
        return _per_speaker(self.inv, self.n_spk, cell, n_cells, weights)

    def record(self, ai: int, bb: int, leak: float, key: Any) -> bool:
        """Store replicate ``bb``'s leakage and alignment of attribute ``ai``.

        True when the alignment is new: its mapping is then due in :attr:`mappings`.
        """
        self.leak[ai, bb] = leak
        self.keys[ai][bb] = key
        return key not in self.mappings[ai]


def _soft_leakage(
    reps: _Replicates, valid: NDArray[np.bool_], n: int, progress: Progress | None
) -> None:
    """Leakage and alignment of the soft attributes in the ``valid`` replicates, in chunks.

    The AUCs come from the speaker-pair sums (about n S + B S^2) when there are fewer
    speakers than replicates and the S x S tables stay small, else from the per-utterance
    sums (B n).
    """
    n_boot, n_spk = reps.n_boot, reps.n_spk
    pairs = [
        _auc_pairs(a, reps.inv, n_spk)
        if a.scores is not None
        and n_spk <= n_boot
        and a.n_classes * a.scores.shape[1] * n_spk**2 <= _PAIR_CELLS
        else None
        for a in reps.atts
    ]
    chunk = max(1, _CELLS // max(1, n if any(p is None for p in pairs) else n_spk))
    for start in range(0, n_boot, chunk):
        rows = np.arange(start, min(n_boot, start + chunk))
        rows = rows[valid[rows]]
        if rows.size:
            wu = None
            for ai, att in enumerate(reps.atts):
                if att.scores is None:
                    continue
                pair = pairs[ai]
                if pair is not None:
                    auc = _auc_from_pairs(pair, reps.class_spk[ai], reps.w[rows])
                else:
                    wu = reps.w[rows][:, reps.inv] if wu is None else wu
                    auc = _auc_sums(att, wu)
                for r, bb in enumerate(rows):
                    _align_soft(reps, ai, int(bb), auc[r])
        done = min(n_boot, start + chunk)
        if progress is not None:
            progress(0.8 * done / n_boot, f"Bootstrap {done}/{n_boot}")


def _align_soft(reps: _Replicates, ai: int, bb: int, auc: NDArray[np.float64]) -> None:
    """The alignment of true classes to score columns that maximizes the mean AUC."""
    att = reps.atts[ai]
    assert att.scores is not None
    pres = np.flatnonzero(reps.present[ai][bb])
    sub = auc[pres]
    _, perm = linear_sum_assignment(-sub)
    aligned = float(sub[np.arange(pres.size), perm].mean())
    leak = min(1.0, max(0.0, (aligned - 0.5) / 0.5))
    key = (tuple(pres.tolist()), tuple(perm.tolist()))
    if reps.record(ai, bb, leak, key):
        reps.mappings[ai][key] = pres[np.argmax(att.scores[:, perm], axis=1)]


def _hard_leakage(reps: _Replicates, rows: NDArray[np.intp]) -> None:
    """Leakage, alignment and NMI of the hard attributes in the replicates ``rows``."""
    for ai, att in enumerate(reps.atts):
        if att.scores is not None:
            continue
        assert att.col is not None and att.declared is not None
        col, declared = att.col, att.declared
        cells = reps.per_speaker(att.y * att.n_cols + col, att.n_classes * att.n_cols)
        raw = (reps.w[rows] @ cells).reshape(rows.size, att.n_classes, att.n_cols)
        for r, bb in enumerate(rows):
            leak, key = _align_hard(raw[r], np.flatnonzero(reps.present[ai][bb]), declared)
            if reps.record(ai, int(bb), leak, key):
                to_true = np.full(att.n_cols, -1)
                for true_c, col_c in key:
                    to_true[col_c] = true_c
                reps.mappings[ai][key] = to_true[col]
        reps.nmi[ai, rows] = _nmi_rows(raw, reps.k[ai, rows])


def _align_hard(
    counts: NDArray[np.float64], pres: NDArray[np.intp], declared: NDArray[np.bool_]
) -> tuple[float, tuple[tuple[int, int], ...]]:
    """Leakage and alignment (true class, attacker's class) pairs of one replicate.

    ``counts`` is its (K, M) weighted confusion table, ``pres`` the true classes present;
    the alignment maximizes the balanced accuracy over the attacker's classes it declares
    or predicts.
    """
    cols = np.flatnonzero(declared | (counts.sum(axis=0) > 0))
    sub = counts[np.ix_(pres, cols)]
    recall = sub / np.maximum(sub.sum(axis=1, keepdims=True), 1.0)
    ri, ci = linear_sum_assignment(-recall)
    ba = float(recall[ri, ci].sum()) / pres.size
    kk = pres.size
    leak = min(1.0, max(0.0, (ba - 1.0 / kk) / (1.0 - 1.0 / kk)))
    return leak, tuple(zip(pres[ri].tolist(), cols[ci].tolist(), strict=True))


def _soft_association(reps: _Replicates, rows: NDArray[np.intp]) -> None:
    """NMI of the soft attributes: of the aligned confusion table, per alignment."""
    for ai, att in enumerate(reps.atts):
        if att.scores is None:
            continue
        kc = att.n_classes
        for key, predicted in reps.mappings[ai].items():
            sel = np.array([bb for bb in rows if reps.keys[ai][bb] == key], dtype=np.intp)
            table = reps.per_speaker(att.y * kc + predicted, kc * kc)
            conf = (reps.w[sel] @ table).reshape(sel.size, kc, kc)
            reps.nmi[ai, sel] = _nmi_rows(conf, reps.k[ai, sel])


def _subgroup_protection(
    reps: _Replicates, rows: NDArray[np.intp], options: SBLSOptions
) -> NDArray[np.float64]:
    """(B,) P_subgroup: joint recovery of each full intersection.

    Computed once per combination of the attributes' alignments; NaN where no intersection
    reaches the minimum size.
    """
    atts = reps.atts
    shape = tuple(a.n_classes for a in atts)
    group = np.ravel_multi_index(tuple(a.y for a in atts), shape)
    n_groups = int(np.prod(shape))
    sizes = reps.w @ reps.per_speaker(group, n_groups)  # (B, G)
    p_sub = np.full(reps.n_boot, np.nan)
    combos: dict[tuple[Any, ...], list[int]] = {}
    for bb in rows:
        combos.setdefault(tuple(reps.keys[ai][bb] for ai in range(len(atts))), []).append(int(bb))
    for combo, members in combos.items():
        hit = np.ones(group.size, dtype=bool)
        for ai, key in enumerate(combo):
            hit &= reps.mappings[ai][key] == atts[ai].y
        sel = np.array(members, dtype=np.intp)
        hits = reps.w[sel] @ reps.per_speaker(group, n_groups, hit.astype(np.float64))
        p_sub[sel] = _subgroup_scores(hits, sizes[sel], options)
    return p_sub


def _subgroup_scores(
    hits: NDArray[np.float64], size: NDArray[np.float64], options: SBLSOptions
) -> NDArray[np.float64]:
    """(b,) P_subgroup from (b, G) weighted hits and sizes of the intersections.

    lambda (1 - worst recovery rate) + (1 - lambda) (lowest / highest protection), over the
    intersections of at least the minimum size.
    """
    lam = float(options.subgroup_lambda)
    used = size >= options.min_group_size
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(used, hits / np.where(size > 0, size, 1.0), np.nan)
    any_used = np.asarray(used.any(axis=1))  # (b,): an array (the stubs allow a scalar)
    worst = np.nanmax(np.where(any_used[:, None], rate, 0.0), axis=1)
    prot = 1.0 - rate
    hi = np.nanmax(np.where(any_used[:, None], prot, 0.0), axis=1)
    lo = np.nanmin(np.where(any_used[:, None], prot, 0.0), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(hi > 0, lo / np.where(hi > 0, hi, 1.0), 0.0)
    value = lam * (1.0 - worst) + (1.0 - lam) * ratio
    return np.where(any_used, value, np.nan)


def sbls_replicates(
    attack: Attack,
    options: SBLSOptions,
    draws: SpeakerDraws,
    *,
    progress: Progress | None = None,
) -> dict[str, NDArray[np.float64]]:
    """P_attr, P_assoc, P_subgroup and SBLS in every replicate of ``draws`` (NaN: undefined).

    A replicate weights each utterance by how often its speaker was drawn; the attacker's
    predictions are held fixed and the class alignment is redone per replicate. Equal to
    :func:`~voxmetrics.metrics.sbls.sbls` on the resampled utterances (a speaker drawn twice
    counts twice): undefined (NaN) where an attribute is left with one class, P_subgroup and
    SBLS undefined where no intersection reaches the minimum size.

    Parameters
    ----------
    attack : Attack
        The fixed attacker's output; every speaker must be in ``draws``.
    options : SBLSOptions
        Weights, lambda and minimum group size.
    draws : SpeakerDraws
        The replicate weights (share one between two attacks to pair them).
    progress : callable(fraction, message), optional
        Called as the replicates are computed.

    Returns
    -------
    dict of str to ndarray, shape (B,)
        Keys of :data:`COMPONENTS`.

    Examples
    --------
    >>> from voxmetrics.data.predictions import AttributePrediction
    >>> y = np.array(["F", "M"] * 20)
    >>> scores = np.c_[y == "F", y == "M"].astype(float)
    >>> attack = Attack({"sex": y}, {"sex": AttributePrediction(("F", "M"), scores=scores)},
    ...                 np.repeat([f"s{i}" for i in range(10)], 4), np.arange(40).astype(str),
    ...                 "perfect", "demo")
    >>> draws = SpeakerDraws.draw(attack.speakers, n_boot=3, seed=0)
    >>> sbls_replicates(attack, SBLSOptions(min_group_size=5), draws)["p_attr"].tolist()
    [0.0, 0.0, 0.0]
    """
    reps = _Replicates.start(attack, draws)
    valid = np.asarray((reps.k >= 2).all(axis=0))  # (B,): an array (the stubs allow a scalar)
    _soft_leakage(reps, valid, attack.n, progress)
    rows = np.flatnonzero(valid)
    if rows.size:
        _hard_leakage(reps, rows)
    _soft_association(reps, rows)
    p_sub = _subgroup_protection(reps, rows, options)
    w = tuple(float(x) for x in options.weights)
    p_attr = 1.0 - reps.leak.mean(axis=0)
    p_assoc = 1.0 - reps.nmi.mean(axis=0)
    if progress is not None:
        progress(1.0, f"Bootstrap {reps.n_boot}/{reps.n_boot}")
    return {
        "p_attr": p_attr,
        "p_assoc": p_assoc,
        "p_subgroup": p_sub,
        "sbls": w[0] * p_attr + w[1] * p_assoc + w[2] * p_sub,
    }


def _estimates(result: SBLSResult) -> dict[str, float | None]:
    return {key: getattr(result, key) for key in COMPONENTS}


def sbls_intervals(
    attack: Attack,
    options: SBLSOptions,
    *,
    n_boot: int,
    seed: int = 0,
    confidence: float = 0.95,
    result: SBLSResult | None = None,
    progress: Progress | None = None,
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of P_attr, P_assoc, P_subgroup and SBLS.

    The evaluation speakers are resampled with replacement (all their utterances move
    together, :class:`~voxmetrics.metrics.uncertainty.SpeakerDraws` with ``seed``), the
    attacker is held fixed (trained once) and each replicate reweights the utterances
    (:func:`sbls_replicates`); the interval is the percentile interval of the replicates
    where the number is defined (none when it is undefined in more than half of them).

    Parameters
    ----------
    attack : Attack
        The fixed attacker's output.
    options : SBLSOptions
        Weights, lambda and minimum group size.
    n_boot : int
        Replicates (>= 1).
    seed : int
        Seed of the resampling.
    confidence : float
        Coverage, default 0.95.
    result : SBLSResult, optional
        :func:`attack_sbls` of the attack, when already computed (the estimates).
    progress : callable(fraction, message), optional
        Called as the replicates are computed.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys of :data:`COMPONENTS`.
    """
    if not 0 < confidence < 1:
        raise VoxMetricsInputError("`confidence` must be in (0, 1).")
    draws = SpeakerDraws.draw(attack.speakers, n_boot=n_boot, seed=seed)
    reps = sbls_replicates(attack, options, draws, progress=progress)
    est = _estimates(result if result is not None else attack_sbls(attack, options))
    return {k: percentile_interval(est[k], reps[k], confidence, n_boot) for k in COMPONENTS}


def compare_sbls(
    a: Attack,
    b: Attack,
    draws: SpeakerDraws,
    options: SBLSOptions | None = None,
    *,
    confidence: float = 0.95,
    cache: MutableMapping[Any, Any] | None = None,
) -> dict[str, Comparison]:
    """Paired comparison B - A of SBLS and its components under the same replicate weights.

    Each difference gets the percentile interval of the replicate differences and the
    two-sided bootstrap p-value of :func:`~voxmetrics.metrics.paired.compare_replicates`;
    ``p_adjusted`` is Holm's adjustment over these four numbers (their own family: the
    identity numbers of a comparison keep theirs). Every speaker of both attacks must be in
    ``draws``. ``cache`` (a dict, filled here; one per ``draws``) keeps each attack's
    estimates and replicates, so that comparing several conditions with the same one computes
    its numbers once.
    """
    opts = options or SBLSOptions()
    alpha = (1.0 - confidence) / 2

    def numbers(att: Attack) -> tuple[dict[str, float | None], dict[str, NDArray[np.float64]]]:
        key = (att.key, opts.key())
        if cache is not None and key in cache:
            return cache[key]
        out = _estimates(attack_sbls(att, opts)), sbls_replicates(att, opts, draws)
        if cache is not None:
            cache[key] = out
        return out

    (est_a, rep_a), (est_b, rep_b) = numbers(a), numbers(b)
    out: dict[str, Comparison] = {}
    for key in COMPONENTS:
        va, vb = est_a[key], est_b[key]
        diff = None if va is None or vb is None else float(vb - va)
        d = rep_b[key] - rep_a[key]
        d = d[np.isfinite(d)]
        if diff is None or d.size < 0.5 * draws.n_boot:
            out[key] = Comparison(va, vb, diff, (None, None), None)
            continue
        lo, hi = (float(x) for x in np.quantile(d, [alpha, 1 - alpha]))
        p, p_res, floor = paired_p_values(d, diff)  # normal approximation, not floored
        out[key] = Comparison(va, vb, diff, (lo, hi), p, p_resampled=p_res, p_floor=floor)
    adjusted = holm({k: c.p_value for k, c in out.items()})
    return {k: replace(c, p_adjusted=adjusted[k]) for k, c in out.items()}
