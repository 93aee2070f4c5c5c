"""Voice similarity matrices, De-Identification and voice distinctiveness.

Between two utterance sets A and B (o = original, a = anonymised), the speaker-level matrix
M[i, j] = sigmoid(mean LLR over all ordered pairs (k in A of speaker i, l in B of speaker j)
whose utterance ids differ), then symmetrised M <- (M + M^T) / 2. An utterance is never compared
with itself or with its own anonymised version (they share the utterance id). The LLRs come
from PAV with Laplace's rule on the matrix's pooled pair scores (same speaker = target; as
VoicePrivacy 2022, the default) or are the raw scores (as VoicePAT).

D_diag(M) = |mean(diag) - mean(off-diag)|; DeID = 1 - D_diag(M_oa) / D_diag(M_oo);
G_VD = 10 log10(D_diag(M_aa) / D_diag(M_oo)) dB.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.errors import LeftOutSpeakersWarning, VoxMetricsInputError
from voxmetrics.limits import check_count
from voxmetrics.metrics._scipy import special
from voxmetrics.metrics.pav import pav_llrs

__all__ = [
    "Calibration",
    "SimilarityMatrix",
    "SimilarityResult",
    "VoiceDistinctiveness",
    "d_diag",
    "similarity_matrix",
    "voice_distinctiveness",
    "voice_similarity",
]

Calibration = Literal["pav", "raw"]
_Utterances = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class SimilarityMatrix:
    """A symmetric speaker x speaker voice similarity matrix."""

    speakers: NDArray[np.str_] = field(repr=False)
    """Row / column speaker labels."""
    matrix: NDArray[np.float64] = field(repr=False)
    """sigmoid of the mean pair LLR, symmetrised; in (0, 1)."""
    mean_score: NDArray[np.float64] = field(repr=False)
    """Mean raw cosine score of each speaker pair (symmetrised), for display."""
    n_pairs: NDArray[np.int64] = field(repr=False)
    """Utterance pairs behind each cell (both directions)."""
    calibration: Calibration
    """"pav" (PAV + Laplace LLRs of the pooled pair scores) or "raw"."""

    @property
    def d_diag(self) -> float:
        """|mean(diag) - mean(off-diag)|."""
        return d_diag(self.matrix)


def d_diag(matrix: ArrayLike) -> float:
    """Diagonal dominance |mean(diag) - mean(off-diag)| of a square matrix.

    Examples
    --------
    >>> d_diag([[0.9, 0.2], [0.2, 0.8]])
    0.65
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise VoxMetricsInputError("D_diag needs a square matrix of at least 2 x 2.")
    off = ~np.eye(m.shape[0], dtype=bool)
    return float(abs(np.diag(m).mean() - m[off].mean()))


def _unit(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return unit_rows(x)


def similarity_matrix(
    a_embeddings: ArrayLike,
    a_speakers: ArrayLike,
    a_utt_ids: ArrayLike,
    b_embeddings: ArrayLike,
    b_speakers: ArrayLike,
    b_utt_ids: ArrayLike,
    *,
    calibration: Calibration = "pav",
) -> SimilarityMatrix:
    """Speaker-level voice similarity matrix between utterance sets A and B.

    Parameters
    ----------
    a_embeddings, b_embeddings : array_like, shape (U_a, d) and (U_b, d)
        Utterance embeddings (cosine scoring).
    a_speakers, b_speakers : array_like of str
        Speaker of each utterance.
    a_utt_ids, b_utt_ids : array_like of str
        Utterance ids; an anonymised copy keeps its original's id, and pairs with equal ids
        are skipped.
    calibration : {"pav", "raw"}
        LLRs from PAV + Laplace on the pooled pair scores (default) or the raw scores.

    Returns
    -------
    SimilarityMatrix
        Over the speakers present in both sets, sorted.
    """
    if calibration not in ("pav", "raw"):
        raise VoxMetricsInputError(f'`calibration` must be "pav" or "raw", got {calibration!r}.')
    ea, eb = (_unit(np.asarray(x, dtype=np.float64)) for x in (a_embeddings, b_embeddings))
    sa, sb = (np.asarray(x).astype(str).ravel() for x in (a_speakers, b_speakers))
    ua, ub = (np.asarray(x).astype(str).ravel() for x in (a_utt_ids, b_utt_ids))
    if ea.ndim != 2 or eb.ndim != 2 or ea.shape[1] != eb.shape[1]:
        raise VoxMetricsInputError(
            f"dimension mismatch: the embeddings compared have shapes {ea.shape} and {eb.shape} "
            "(utterances x dimensions); both sets must come from the same extractor, with the "
            "same number of dimensions."
        )
    if not (ea.shape[0] == sa.size == ua.size and eb.shape[0] == sb.size == ub.size):
        raise VoxMetricsInputError("each embedding needs one speaker and one utterance id.")
    check_count("similarity", "utterance pairs", ea.shape[0] * eb.shape[0], "max_cells")
    speakers = np.intersect1d(sa, sb)
    if speakers.size < 2:
        raise VoxMetricsInputError(
            "a similarity matrix needs at least 2 speakers present in both utterance sets."
        )
    keep_a, keep_b = np.isin(sa, speakers), np.isin(sb, speakers)
    ea, sa, ua, eb, sb, ub = ea[keep_a], sa[keep_a], ua[keep_a], eb[keep_b], sb[keep_b], ub[keep_b]
    ia, ib = np.searchsorted(speakers, sa), np.searchsorted(speakers, sb)
    scores = ea @ eb.T
    # utterance ids as integer codes: one integer comparison per pair, not a string one
    codes = np.unique(np.concatenate([ua, ub]), return_inverse=True)[1]
    valid = codes[: ua.size, None] != codes[None, ua.size :]
    same = ia[:, None] == ib[None, :]
    if calibration == "pav":
        tar_mask, non_mask = valid & same, valid & ~same
        if not tar_mask.any() or not non_mask.any():
            raise VoxMetricsInputError(
                "PAV calibration needs same-speaker and different-speaker utterance pairs; "
                "each speaker needs at least two utterances (or use calibration='raw')."
            )
        tar_llr, non_llr = pav_llrs(scores[tar_mask], scores[non_mask], laplace=True)
        llr = np.zeros_like(scores)
        llr[tar_mask], llr[non_mask] = tar_llr, non_llr
    else:
        llr = scores
    # per speaker pair sums in one pass over the valid pairs (cell = i * n_spk + j)
    n_spk = speakers.size
    cell = (ia[:, None] * n_spk + ib[None, :])[valid]
    size = n_spk * n_spk
    counts = np.bincount(cell, minlength=size).reshape(n_spk, n_spk).astype(np.float64)
    sums = np.bincount(cell, weights=llr[valid], minlength=size).reshape(n_spk, n_spk)
    raw_sums = np.bincount(cell, weights=scores[valid], minlength=size).reshape(n_spk, n_spk)
    if (counts == 0).any():
        i, j = np.argwhere(counts == 0)[0]
        raise VoxMetricsInputError(
            f"speakers '{speakers[i]}' and '{speakers[j]}' have no utterance pair with distinct "
            "ids; give each speaker at least two utterances."
        )
    m = special.expit(sums / counts)
    sym_counts = counts + counts.T
    return SimilarityMatrix(
        speakers=speakers,
        matrix=(m + m.T) / 2,
        mean_score=(raw_sums + raw_sums.T) / sym_counts,
        n_pairs=sym_counts.astype(np.int64),
        calibration=calibration,
    )


@dataclass(frozen=True)
class VoiceDistinctiveness:
    """De-identification and gain of voice distinctiveness (VoicePrivacy 2022)."""

    deid: float
    """1 - D_diag(M_oa) / D_diag(M_oo): 1 = full de-identification."""
    g_vd: float
    """10 log10(D_diag(M_aa) / D_diag(M_oo)) dB: 0 = distinctiveness preserved."""
    d_diag_oo: float
    """D_diag of original vs original."""
    d_diag_oa: float
    """D_diag of original vs anonymised."""
    d_diag_aa: float
    """D_diag of anonymised vs anonymised."""

    def to_dict(self) -> dict[str, float | None]:
        """The CLI's ``similarity`` JSON object (G_VD = -inf, no distinctiveness left, is null)."""
        return {
            "deid": self.deid,
            "g_vd": self.g_vd if math.isfinite(self.g_vd) else None,
            "d_diag_oo": self.d_diag_oo,
            "d_diag_oa": self.d_diag_oa,
            "d_diag_aa": self.d_diag_aa,
        }


def voice_distinctiveness(
    m_oo: ArrayLike, m_oa: ArrayLike, m_aa: ArrayLike
) -> VoiceDistinctiveness:
    """DeID and G_VD from the three similarity matrices (docs, Methods > Voice similarity matrices).

    Examples
    --------
    The check of docs, Methods > Voice similarity matrices:

    >>> m_oo = [[.9, .2, .1], [.2, .8, .3], [.1, .3, .85]]
    >>> m_oa = [[.6, .3, .2], [.3, .5, .35], [.2, .35, .55]]
    >>> m_aa = [[.7, .4, .3], [.4, .65, .45], [.3, .45, .7]]
    >>> v = voice_distinctiveness(m_oo, m_oa, m_aa)
    >>> round(v.deid, 6), round(v.g_vd, 6)
    (0.589744, -3.357921)
    """
    oo, oa, aa = d_diag(m_oo), d_diag(m_oa), d_diag(m_aa)
    if oo == 0:
        raise VoxMetricsInputError(
            "the original-vs-original matrix has no diagonal dominance (D_diag = 0), so DeID "
            "and G_VD are undefined."
        )
    g_vd = 10.0 * math.log10(aa / oo) if aa > 0 else -math.inf
    return VoiceDistinctiveness(
        deid=1.0 - oa / oo, g_vd=g_vd, d_diag_oo=oo, d_diag_oa=oa, d_diag_aa=aa
    )


@dataclass(frozen=True)
class SimilarityResult:
    """The three similarity matrices of an anonymiser and their DeID / G_VD."""

    oo: SimilarityMatrix
    """Original vs original."""
    oa: SimilarityMatrix
    """Original vs anonymised."""
    aa: SimilarityMatrix
    """Anonymised vs anonymised."""
    distinctiveness: VoiceDistinctiveness
    """DeID, G_VD and the three D_diag values."""
    left_out: tuple[str, ...] = ()
    """Speakers left out because they have fewer than two utterances in a set (no
    same-speaker pair of distinct utterances), sorted."""

    def to_dict(self) -> dict[str, Any]:
        """The CLI's ``similarity`` JSON object, with the number of speakers left out."""
        return {**self.distinctiveness.to_dict(), "n_speakers_left_out": len(self.left_out)}


def _utterances(es: EmbeddingSet, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = (es.meta["split"] == split).to_numpy()
    if not rows.any():
        raise VoxMetricsInputError(f"{es.source or 'embeddings'}: no utterance in split '{split}'.")
    meta = es.meta.loc[rows]
    return es.embeddings[rows], meta["speaker"].to_numpy(), meta["utt_id"].to_numpy()


def voice_similarity(
    original: EmbeddingSet,
    anonymised: EmbeddingSet,
    *,
    split: str = "eval",
    calibration: Calibration = "pav",
    cache: MutableMapping[Any, SimilarityMatrix] | None = None,
) -> SimilarityResult:
    """M_oo, M_oa, M_aa over all utterances (enrolment and trial) of a split, DeID and G_VD.

    The anonymised set's utterances keep their originals' ids, so an utterance is never paired
    with its own anonymised version. A speaker with a single utterance in either set has no
    same-speaker pair, so its diagonal cell is undefined: such speakers are left out of all
    three matrices, counted in :attr:`SimilarityResult.left_out` and named in a
    :class:`~voxmetrics.errors.LeftOutSpeakersWarning`.

    ``cache`` (a dict, filled here) holds matrices already computed, keyed by the content of
    the two utterance sets and the calibration: across the conditions of a study M_oo of the
    original is computed once, and a condition that is the original reuses it as M_oa and M_aa.
    """
    o, a = _utterances(original, split), _utterances(anonymised, split)
    single = np.union1d(_single_utterance_speakers(o), _single_utterance_speakers(a))
    if single.size:
        shown = ", ".join(f"'{x}'" for x in single[:5]) + (", ..." if single.size > 5 else "")
        warnings.warn(
            f"{single.size} speaker(s) with a single utterance in split '{split}' left out of "
            f"the similarity matrices (a same-speaker pair needs two): {shown}.",
            LeftOutSpeakersWarning,
            stacklevel=2,
        )
        o, a = _without_speakers(o, single), _without_speakers(a, single)
    ko, ka = _content_key(o), _content_key(a)

    def matrix(x: _Utterances, kx: str, y: _Utterances, ky: str) -> SimilarityMatrix:
        if cache is None:
            return similarity_matrix(*x, *y, calibration=calibration)
        key = (kx, ky, calibration)
        if key not in cache:
            cache[key] = similarity_matrix(*x, *y, calibration=calibration)
        return cache[key]

    oo, oa, aa = matrix(o, ko, o, ko), matrix(o, ko, a, ka), matrix(a, ka, a, ka)
    return SimilarityResult(
        oo=oo,
        oa=oa,
        aa=aa,
        distinctiveness=voice_distinctiveness(oo.matrix, oa.matrix, aa.matrix),
        left_out=tuple(single.tolist()),
    )


def _content_key(u: _Utterances) -> str:
    """A digest of an utterance set's embeddings, speakers and ids (the cache key)."""
    h = hashlib.blake2b(digest_size=20)
    for x in (np.asarray(u[0], dtype=np.float64), *(np.asarray(v).astype(str) for v in u[1:])):
        h.update(f"{x.dtype.str}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()


def _single_utterance_speakers(u: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Speakers with fewer than two distinct utterance ids."""
    pairs = np.unique(np.stack([u[1].astype(str), u[2].astype(str)], axis=1), axis=0)
    speakers, n = np.unique(pairs[:, 0], return_counts=True)
    return speakers[n < 2]


def _without_speakers(
    u: tuple[np.ndarray, np.ndarray, np.ndarray], speakers: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = ~np.isin(u[1].astype(str), speakers)
    return u[0][keep], u[1][keep], u[2][keep]
