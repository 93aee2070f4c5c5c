"""Verification of a condition: the standard ASV outputs from its sorted pools, and the priors.

:func:`verification_of` computes :func:`~voxmetrics.metrics.dcf.verification` on the matrix's
cached :class:`~voxmetrics.metrics.pools.SortedPools` (the non-mated pool is not built);
:func:`parse_priors` reads the target priors a user types.
"""

from __future__ import annotations

from collections.abc import Sequence

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.dcf import VerificationResult, verification_from_pools
from voxmetrics.metrics.eer import eer_from_pools
from voxmetrics.metrics.pools import SortedPools

__all__ = ["eer_of", "parse_priors", "verification_of"]


def eer_of(sm: ScoreMatrix) -> float:
    """The EER of ``sm``'s listed pairs (SpeechBrain's), from its cached sorted pools.

    Shown beside the verification and ZEBRA numbers (the 1-to-1 view next to each metric).
    """
    return eer_from_pools(SortedPools.of(sm.pairwise_view())).eer


def verification_of(
    sm: ScoreMatrix,
    *,
    p_targets: Sequence[float],
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    scores_are_llrs: bool = False,
) -> VerificationResult:
    """The detection costs (minDCF / actDCF), DET and APE curves and d' of ``sm``'s pools."""
    return verification_from_pools(
        SortedPools.of(sm.pairwise_view()),  # every listed pair, as the condition's report
        p_targets=tuple(p_targets),
        c_miss=c_miss,
        c_fa=c_fa,
        scores_are_llrs=scores_are_llrs,
    )


def parse_priors(text: str) -> tuple[float, ...]:
    """Target priors from text: numbers separated by commas or semicolons.

    Only the syntax is checked here; :func:`verification_of` checks each is in (0, 1).

    Examples
    --------
    >>> parse_priors("0.01, 0.001;0.5")
    (0.01, 0.001, 0.5)
    >>> parse_priors("0.01, x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    voxmetrics.errors.VoxMetricsInputError: Target priors '0.01, x': give numbers separated by ...
    """
    try:
        return tuple(float(x) for x in text.replace(";", ",").split(",") if x.strip())
    except ValueError:
        raise VoxMetricsInputError(
            f"Target priors '{text}': give numbers separated by commas, e.g. 0.01, 0.001."
        ) from None
