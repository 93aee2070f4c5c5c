"""Speaker-level intervals of the numbers computed from embeddings: singling out and similarity.

Singling out (:func:`~voxmetrics.metrics.legal.singling_out`) is resampled over its predicate
speakers; the voice similarity matrices
(:func:`~voxmetrics.metrics.similarity.voice_similarity`: DeID, G_VD and the three D_diag) over
their speakers, the matrices held fixed. The draws are those of
:class:`~voxmetrics.metrics.uncertainty.SpeakerDraws`, so a paired comparison can apply the
same draws to every number of two conditions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics._resampled import speaker_sums
from voxmetrics.metrics.bootstrap import BootstrapInterval, percentile_interval
from voxmetrics.metrics.uncertainty import SpeakerDraws

__all__ = [
    "similarity_intervals",
    "similarity_replicates",
    "singling_out_interval",
    "singling_out_replicates",
]


def singling_out_interval(
    result: Any, *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95
) -> BootstrapInterval:
    """Speaker-level interval of singling out: the predicate speakers resampled.

    Singling out is the mean over predicates (one per enrolled speaker with trial embeddings)
    of each predicate's isolation rate over the folds; a replicate draws the predicate
    speakers with replacement and takes the weighted mean, the population of held-out
    embeddings held fixed.

    Parameters
    ----------
    result : SinglingOutResult
        From :func:`~voxmetrics.metrics.legal.singling_out`.
    """
    if result.per_predicate is None or result.predicates is None:
        raise VoxMetricsInputError("this singling-out result has no per-predicate rates.")
    draws = SpeakerDraws.draw(result.predicates, n_boot=n_boot, seed=seed)
    reps = singling_out_replicates(result, draws)
    return percentile_interval(float(result.value), reps, confidence, draws.n_boot)


def singling_out_replicates(result: Any, draws: SpeakerDraws) -> NDArray[np.float64]:
    """(B,) singling out in each replicate of ``draws``: the predicates weighted by their draws.

    Each predicate (one per enrolled speaker) counts as often as its speaker is drawn; the
    population of held-out embeddings is held fixed. NaN in a replicate that draws no
    predicate speaker (possible when ``draws`` cover more speakers than the predicates, as in
    a paired comparison). With every weight 1 this is the singling out itself.

    Parameters
    ----------
    result : SinglingOutResult
        From :func:`~voxmetrics.metrics.legal.singling_out`, with per-predicate rates.
    draws : SpeakerDraws
        Drawn over (at least) every predicate speaker.

    Examples
    --------
    Two predicates isolating at rates 1 and 0: a replicate drawing the first twice gives 1.

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(predicates=np.array(["a", "b"]), per_predicate=np.array([1.0, 0.0]))
    >>> d = SpeakerDraws(np.array(["a", "b", "c"]), np.array([[2, 0, 1], [1, 1, 1], [0, 0, 3]]))
    >>> singling_out_replicates(r, d).tolist()
    [1.0, 0.5, nan]
    """
    if result.per_predicate is None or result.predicates is None:
        raise VoxMetricsInputError("this singling-out result has no per-predicate rates.")
    inv = draws.index(result.predicates)
    s = draws.speakers.size
    w = draws.counts.astype(np.float64)
    num = w @ speaker_sums(np.asarray(result.per_predicate, dtype=np.float64), inv, s)
    den = w @ np.bincount(inv, minlength=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _weighted_d_diag(m: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """D_diag of speaker-weighted matrices: off-diagonal over pairs of distinct speakers."""
    diag = np.diag(m)
    diag_mean = (w @ diag) / w.sum(axis=1)
    total = ((w @ m) * w).sum(axis=1)
    same = (w**2) @ diag
    with np.errstate(invalid="ignore", divide="ignore"):
        off_mean = (total - same) / (w.sum(axis=1) ** 2 - (w**2).sum(axis=1))
    return np.abs(diag_mean - off_mean)


def similarity_intervals(
    result: Any, *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, BootstrapInterval]:
    """Speaker-level intervals of DeID, G_VD and the three D_diag of a similarity result.

    A replicate draws the speakers of the matrices with replacement; the matrices (and their
    calibration) are held fixed, and D_diag is recomputed with each speaker weighted by its
    draws: the diagonal mean over drawn speakers, the off-diagonal mean over pairs of distinct
    speakers. With every weight 1 this is D_diag itself.

    Parameters
    ----------
    result : SimilarityResult
        From :func:`~voxmetrics.metrics.similarity.voice_similarity`.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys ``deid``, ``g_vd``, ``d_diag_oo``, ``d_diag_oa``, ``d_diag_aa``.
    """
    draws = SpeakerDraws.draw(result.oo.speakers, n_boot=n_boot, seed=seed)
    reps = similarity_replicates(result, draws)
    est = result.distinctiveness
    out = {}
    for k, r in reps.items():
        v = getattr(est, k)
        out[k] = percentile_interval(
            float(v) if math.isfinite(v) else None,
            np.where(np.isfinite(r), r, np.nan),
            confidence,
            draws.n_boot,
        )
    return out


def similarity_replicates(result: Any, draws: SpeakerDraws) -> dict[str, NDArray[np.float64]]:
    """DeID, G_VD and the three D_diag of ``result`` in each replicate of ``draws``.

    The matrices (and their calibration) are held fixed and D_diag is recomputed with each
    speaker weighted by its draws: the diagonal mean over drawn speakers, the off-diagonal mean
    over pairs of distinct speakers. NaN where undefined (a replicate drawing fewer than two of
    the matrices' speakers). With every weight 1 this is D_diag itself.

    Parameters
    ----------
    result : SimilarityResult
        From :func:`~voxmetrics.metrics.similarity.voice_similarity`.
    draws : SpeakerDraws
        Drawn over (at least) every speaker of the matrices.

    Returns
    -------
    dict of str to ndarray
        Keys ``deid``, ``g_vd`` (dB), ``d_diag_oo``, ``d_diag_oa``, ``d_diag_aa``; (B,) each.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from voxmetrics.metrics.similarity import SimilarityMatrix
    >>> def sm(m):
    ...     m = np.asarray(m, dtype=float)
    ...     return SimilarityMatrix(np.array(["a", "b"]), m, m, np.ones((2, 2), int), "raw")
    >>> r = SimpleNamespace(oo=sm([[.9, .1], [.1, .9]]), oa=sm([[.6, .2], [.2, .6]]),
    ...                     aa=sm([[.8, .4], [.4, .8]]))
    >>> d = SpeakerDraws(np.array(["a", "b"]), np.array([[1, 1], [2, 0]]))
    >>> reps = similarity_replicates(r, d)
    >>> np.round(reps["deid"], 3).tolist()  # 1 - 0.4 / 0.8, then one speaker only: undefined
    [0.5, nan]
    """
    mats = {"oo": result.oo, "oa": result.oa, "aa": result.aa}
    spk = mats["oo"].speakers
    for k, m in mats.items():
        if not np.array_equal(m.speakers, spk):
            raise VoxMetricsInputError(
                f"the {k} similarity matrix has other speakers than the original one; compute "
                "all three on the same split and speakers."
            )
    w = draws.counts[:, draws.index(spk)].astype(np.float64)
    d = {k: _weighted_d_diag(np.asarray(m.matrix, dtype=np.float64), w) for k, m in mats.items()}
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "deid": 1.0 - d["oa"] / d["oo"],
            "g_vd": 10.0 * np.log10(d["aa"] / d["oo"]),
            "d_diag_oo": d["oo"],
            "d_diag_oa": d["oa"],
            "d_diag_aa": d["aa"],
        }
