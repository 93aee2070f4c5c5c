"""The former run-count kernels of the bootstrap, kept as references, and tied score matrices.

Used by ``test_uncertainty.py`` (the replicates with the former kernels swapped back in),
``test_zebra.py`` (``_LeftIndex``, ``speaker_run_counts`` and ``replicate_run_counts`` against
their former kernels) and ``test_pools.py`` (``pav_runs`` against the former per-run logs).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import isotonic_regression

from voxmetrics.metrics.pools import PAVRuns
from voxmetrics.metrics.zebra import _z

_LN2 = np.log(2.0)


# --- the former kernels ------------------------------------------------------------------------


def old_speaker_run_counts(pools, scores, targets, speaker_index, n_speakers, mask=None, block=1):
    """The former kernel: searchsorted of every score, int64 COO parts, summed by tocsr."""
    v = pools.values
    n_slots = 3 * v.size + 1
    n = scores.shape[1]
    order = np.argsort(speaker_index, kind="stable")
    step = max(1, block // n)
    spk_parts, slot_parts, count_parts = [], [], []
    for r0 in range(0, order.size, step):
        rows = order[r0 : r0 + step]
        blk = scores[rows]
        spk = speaker_index[rows]
        first = int(spk.min())
        pos = np.searchsorted(v, blk, side="left")
        at = v[np.minimum(pos, v.size - 1)] == blk
        slot = np.where(at, 3 * pos + 2, 3 * pos)
        slot[np.arange(rows.size), targets[rows]] -= 1
        keys = ((spk - first)[:, None] * n_slots + slot).ravel()
        if mask is not None:
            keys = keys[mask[rows].ravel()]
        counts = np.bincount(keys, minlength=(int(spk.max()) - first + 1) * n_slots)
        hit = np.flatnonzero(counts)
        spk_parts.append(hit // n_slots + first)
        slot_parts.append(hit % n_slots)
        count_parts.append(counts[hit])
    coo = sparse.coo_array(
        (np.concatenate(count_parts), (np.concatenate(spk_parts), np.concatenate(slot_parts))),
        shape=(n_speakers, n_slots),
    )
    return coo.tocsr()


def old_pav_runs(rc, *, targets_first, laplace):
    labels, counts, slots = rc.runs(targets_first=targets_first)
    y, w = labels, counts
    if laplace:
        y = np.concatenate([[1.0, 0.0], y, [1.0, 0.0]])
        w = np.concatenate([[1.0, 1.0], w, [1.0, 1.0]])
    p = isotonic_regression(y, weights=w).x
    if laplace:
        p = p[2:-2]
    with np.errstate(divide="ignore"):
        llr = np.log(p) - np.log1p(-p) - np.log(rc.n_tar / rc.n_non)
    return PAVRuns(labels, counts, slots, llr, p)


def old_d_ece_runs(r, n_tar, n_non):
    is_tar = r.labels == 1.0
    t, n = r.llr[is_tar], r.llr[~is_tar]
    with np.errstate(over="ignore"):
        zt = r.counts[is_tar] @ _z(np.exp(t), t)
        zn = r.counts[~is_tar] @ _z(np.exp(-n), -n)
    return float((zt / n_tar + zn / n_non) / _LN2)


def old_min_cllr_terms(r, n_tar, n_non):
    is_tar = r.labels == 1.0
    c_tar = r.counts[is_tar] @ np.logaddexp(0.0, -r.llr[is_tar]) / n_tar
    c_non = r.counts[~is_tar] @ np.logaddexp(0.0, r.llr[~is_tar]) / n_non
    return min(float(0.5 * (c_tar + c_non) / _LN2), 1.0)


# --- data --------------------------------------------------------------------------------------


def tied_matrix(seed, t_n=60, n=9, decimals=1, dtype=np.float64):
    """Coarse scores (many ties within and across the pools) and trial speakers."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=(t_n, n)), decimals).astype(dtype)
    t = rng.integers(0, n, size=t_n)
    s[np.arange(t_n), t] += dtype(0.5 if seed % 3 else 0.0)
    spk = rng.integers(0, 7, size=t_n)
    return s, t, spk
