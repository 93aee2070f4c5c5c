"""Validation of score matrices: the checks :meth:`ScoreMatrix.from_arrays` runs once.

Private to :mod:`voxmetrics.data`: each raises
:class:`~voxmetrics.errors.VoxMetricsInputError` with a message saying what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.data._finite import known_finite
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "RESERVED_ATTRIBUTES",
    "check_finite",
    "check_labels",
    "check_unique",
    "enrolled_trials",
    "listed_mask",
    "score_array",
    "trial_attributes",
    "unlisted_nan",
]


RESERVED_ATTRIBUTES = ("trial_id", "trial_speaker", "enrol_speaker", "score")


def listed_mask(
    s: np.ndarray, mask: ArrayLike | None, nan_missing: bool, tids: np.ndarray, where: str
) -> NDArray[np.bool_] | None:
    """The T x N listed pairs of a sparse matrix (``mask`` or NaN cells), None when complete."""
    if mask is None:
        # a finite float64 sum: no NaN, so no T x N mask for a complete matrix
        if not nan_missing or known_finite(s) or np.isfinite(s.sum(dtype=np.float64)):
            return None
        m = ~np.isnan(s)
    else:
        m = np.asarray(mask)
        if m.dtype != bool:
            raise VoxMetricsInputError(
                f"{where}: the mask has dtype {m.dtype}; it must be boolean (True = listed pair)."
            )
        if m.shape != s.shape:
            raise VoxMetricsInputError(
                f"{where}: shape mismatch: the mask is {m.shape} but the scores are {s.shape}; "
                "give one True / False per (trial, enrolled) pair."
            )
    empty = ~m.any(axis=1)
    if empty.any():
        raise VoxMetricsInputError(
            f"{where}: {int(empty.sum())} trial(s) have no listed pair (first: "
            f"'{tids[int(np.argmax(empty))]}'); list at least one pair per trial or remove it."
        )
    return m


def check_unique(labels: np.ndarray, what: str, where: str) -> None:
    uniq, counts = np.unique(labels, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1]
        raise VoxMetricsInputError(
            f"{where}: {dup.size} duplicate {what} label(s) (e.g. '{dup[0]}' appears "
            f"{counts[counts > 1][0]} times); each {what} must appear once."
        )


def score_array(scores: ArrayLike, where: str) -> np.ndarray:
    """The scores as a 2-D float32 (kept) or float64 array."""
    try:
        s = np.asarray(scores)
        if s.dtype not in (np.float32, np.float64):
            s = s.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise VoxMetricsInputError(
            f"{where}: scores are not numeric ({exc}); give one number per (trial, enrolled) pair."
        ) from None
    if s.ndim != 2:
        raise VoxMetricsInputError(
            f"{where}: scores must be a 2-D array (trials x enrolled), got shape {s.shape}."
        )
    return s


def check_labels(
    shape: tuple[int, ...],
    tids: np.ndarray,
    tspk: np.ndarray,
    espk: np.ndarray,
    where: str,
) -> None:
    """One trial id and speaker per row, one unique label per column, two columns or more."""
    t, n = shape
    if tids.size != t or tspk.size != t:
        raise VoxMetricsInputError(
            f"{where}: shape mismatch: scores have {t} rows (trials) but there are "
            f"{tids.size} trial ids and {tspk.size} trial speakers; give one id and one "
            "speaker per row."
        )
    if espk.size != n:
        raise VoxMetricsInputError(
            f"{where}: shape mismatch: scores have {n} columns (enrolled identities) but "
            f"there are {espk.size} enrolled speaker labels; give one label per column."
        )
    if n < 2:
        raise VoxMetricsInputError(
            f"{where}: only {n} enrolled identity; a 1-to-N search needs at least 2 enrolled "
            "speakers."
        )
    check_unique(espk, "enrolled speaker", where)
    check_unique(tids, "trial id", where)


def unlisted_nan(s: np.ndarray, m: np.ndarray, *, copy: bool) -> tuple[np.ndarray, bool]:
    """The scores with NaN in the unlisted cells, and whether they still need a copy.

    Without ``copy`` a writeable array is changed in place (no second T x N array);
    otherwise the result is a fresh array, which needs no further copy.
    """
    if not copy and s.flags.writeable:
        np.copyto(s, s.dtype.type(np.nan), where=~m)
        return s, copy
    return np.where(m, s, s.dtype.type(np.nan)), False


def check_finite(
    s: np.ndarray, m: np.ndarray | None, tids: np.ndarray, espk: np.ndarray, where: str
) -> None:
    """Every listed score (every score of a complete matrix) is finite."""
    if m is not None:
        bad = m & ~np.isfinite(s)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise VoxMetricsInputError(
                f"{where}: {int(bad.sum())} listed score(s) are NaN or infinite (first: "
                f"trial '{tids[i]}', enrolled '{espk[j]}' = {s[i, j]}); every listed score "
                "must be a finite number."
            )
    # the float64 sum is finite iff every score is (no T x N mask for a clean matrix); a
    # read-only matrix a reader found finite is not summed again
    elif known_finite(s):
        return
    elif not np.isfinite(s.sum(dtype=np.float64)) and not np.isfinite(s).all():
        bad = ~np.isfinite(s)
        i, j = np.argwhere(bad)[0]
        raise VoxMetricsInputError(
            f"{where}: {int(bad.sum())} score(s) are NaN or infinite (first: trial "
            f"'{tids[i]}', enrolled '{espk[j]}' = {s[i, j]}); every score must be a finite "
            "number."
        )


def trial_attributes(
    attributes: Mapping[str, ArrayLike] | None, t: int, where: str
) -> dict[str, np.ndarray]:
    """The per-trial attributes as arrays of length ``t`` (text as str)."""
    attrs: dict[str, np.ndarray] = {}
    for name, values in (attributes or {}).items():
        if name in RESERVED_ATTRIBUTES:
            raise VoxMetricsInputError(
                f"{where}: an attribute cannot be called '{name}', which is a column of the "
                "score format; rename it."
            )
        a = np.asarray(values)
        if a.dtype.kind == "O":  # text as str, so nothing downstream pickles objects
            a = np.array(["" if v is None else str(v) for v in a.tolist()], dtype=str)
        if a.shape != (t,):
            raise VoxMetricsInputError(
                f"{where}: attribute '{name}' has shape {a.shape}; it needs one value per "
                f"trial ({t})."
            )
        attrs[str(name)] = a
    return attrs


def enrolled_trials(tspk: np.ndarray, espk: np.ndarray, where: str) -> NDArray[np.bool_]:
    """Which trials have an enrolled speaker (an error when none has)."""
    enrolled = np.isin(tspk, espk)
    if not enrolled.any():
        raise VoxMetricsInputError(
            f"{where}: none of the {tspk.size} trials has an enrolled speaker, so there is "
            "nothing to evaluate; check that trial speakers and enrolled speakers use the same "
            "labels."
        )
    return enrolled
