"""Entry validation shared by the metric functions: clean float64 arrays or one clear error."""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.data._finite import frozen as _frozen
from voxmetrics.data._finite import known_finite as _known_finite
from voxmetrics.data._finite import remember_finite as _remember_finite
from voxmetrics.errors import VoxMetricsInputError

Ties = Literal["reference", "attacker"]
TIES: tuple[Ties, ...] = ("reference", "attacker")
"""The tie rules: ``"reference"`` (each metric as its reference code) and ``"attacker"``."""

LinkabilityRule = Literal["code", "strict"]
LINKABILITY_RULES: tuple[str, ...] = ("code", "strict")
"""When a trial is linked: ``"code"`` (the authors' public code, v2: the true speaker's score is
at least every other, a tie is a link) or ``"strict"`` (the paper's eq. 3: strictly above every
other, a tie is no link)."""


def check_linkability_rule(rule: str) -> str:
    """Validate a linkability rule name.

    Examples
    --------
    >>> check_linkability_rule("strict")
    'strict'
    """
    if rule not in LINKABILITY_RULES:
        raise VoxMetricsInputError(
            f"`linkability_rule` must be one of {', '.join(repr(r) for r in LINKABILITY_RULES)}, "
            f"got {rule!r}."
        )
    return rule


def check_ties(ties: str) -> Ties:
    """Validate a tie rule name.

    Examples
    --------
    >>> check_ties("attacker")
    'attacker'
    """
    for rule in TIES:
        if ties == rule:
            return rule
    raise VoxMetricsInputError(
        f"`ties` must be one of {', '.join(repr(t) for t in TIES)}, got {ties!r}."
    )


def _as_scores(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise VoxMetricsInputError(
            f"`{name}` must be an array of numbers; it could not be converted to float."
        ) from None
    if a.ndim != 1:
        a = a.ravel()
    if a.size == 0:
        raise VoxMetricsInputError(f"`{name}` is empty; give at least one score.")
    if not np.isfinite(a).all():
        raise VoxMetricsInputError(
            f"`{name}` has {int((~np.isfinite(a)).sum())} NaN or infinite value(s); every score "
            "must be a finite number."
        )
    return a


def check_scores(values: ArrayLike, name: str) -> NDArray[np.floating]:
    """``values`` as a finite, non-empty 1-D float array (float32 stays float32).

    The rest becomes float64; the sorted pools keep the scores' precision.

    Raises
    ------
    VoxMetricsInputError
        Naming ``name``: not numbers, empty, or a NaN or infinite value.

    Examples
    --------
    >>> check_scores(np.array([[0.5, 1.5]], dtype=np.float32), "tar").dtype
    dtype('float32')
    >>> check_scores([1, 2], "non").dtype
    dtype('float64')
    """
    try:
        a = np.asarray(values)
        if a.dtype not in (np.float32, np.float64):
            a = a.astype(np.float64)
    except (TypeError, ValueError):
        raise VoxMetricsInputError(
            f"`{name}` must be an array of numbers; it could not be converted to float."
        ) from None
    a = a.ravel()
    if a.size == 0:
        raise VoxMetricsInputError(f"`{name}` is empty; give at least one score.")
    if not np.isfinite(a).all():
        raise VoxMetricsInputError(
            f"`{name}` has {int((~np.isfinite(a)).sum())} NaN or infinite value(s); every score "
            "must be a finite number."
        )
    return a


def check_pools(tar: ArrayLike, non: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return ``tar`` and ``non`` as finite, non-empty 1-D float64 arrays."""
    return _as_scores(tar, "tar"), _as_scores(non, "non")


def check_llr_pools(
    tar: ArrayLike, non: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Like :func:`check_pools`, but LLRs may be +-inf (a categorical decision)."""
    out = []
    for values, name in ((tar, "tar"), (non, "non")):
        try:
            a = np.asarray(values, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise VoxMetricsInputError(f"`{name}` must be an array of numbers.") from None
        if a.size == 0:
            raise VoxMetricsInputError(f"`{name}` is empty; give at least one score.")
        if np.isnan(a).any():
            raise VoxMetricsInputError(f"`{name}` has NaN values; every LLR must be a number.")
        out.append(a)
    return out[0], out[1]


def check_matrix(
    scores: ArrayLike, targets: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Return a finite T x N float matrix and T valid target column indices.

    float32 and float64 matrices are returned as they are (no copy), so row-block metrics on
    a large float32 matrix never hold a float64 copy of it; anything else becomes float64.
    """
    try:
        s = np.asarray(scores)
        if s.dtype not in (np.float32, np.float64):
            s = s.astype(np.float64)
    except (TypeError, ValueError):
        raise VoxMetricsInputError("`scores` must be a 2-D array of numbers.") from None
    if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] < 2:
        raise VoxMetricsInputError(
            f"`scores` must be a T x N matrix with T >= 1 and N >= 2, got shape {s.shape}."
        )
    if not _known_finite(s):
        # sum is finite iff every element is (NaN and inf propagate) and needs no T x N mask
        if not np.isfinite(s.sum(dtype=np.float64)) and not np.isfinite(s).all():
            raise VoxMetricsInputError("`scores` has NaN or infinite values; all must be finite.")
        if _frozen(s):  # a read-only matrix cannot change: check it once
            _remember_finite(s)
    t = np.asarray(targets)
    if t.shape != (s.shape[0],) or t.dtype.kind not in "iu":
        raise VoxMetricsInputError(
            f"`targets` must hold one integer column index per trial ({s.shape[0]}), got "
            f"shape {t.shape} and dtype {t.dtype}."
        )
    if (t < 0).any() or (t >= s.shape[1]).any():
        raise VoxMetricsInputError(
            f"`targets` has column indices outside 0..{s.shape[1] - 1}; each must point at the "
            "trial's own enrolled speaker."
        )
    return s, t.astype(np.intp)
