"""The one error family and the warnings of VoxMetrics.

Every problem with a user's input surfaces as a :class:`VoxMetricsInputError` whose message says
what is wrong, where (file, line or row) and how to fix it. The dashboard and the command line
catch this one type and show its message; anything else is a bug.
"""

from __future__ import annotations

__all__ = [
    "DegenerateDataWarning",
    "ExcludedTrialsWarning",
    "IgnoredEmbeddingsWarning",
    "IncompleteScoresWarning",
    "LeftOutSpeakersWarning",
    "VoxMetricsInputError",
    "VoxMetricsWarning",
]


class VoxMetricsInputError(ValueError):
    """Bad input: the message says what is wrong, where, and how to fix it."""


class VoxMetricsWarning(UserWarning):
    """Base class of the warnings VoxMetrics emits for legal but degenerate input."""


class ExcludedTrialsWarning(VoxMetricsWarning):
    """Some trials were excluded because their speaker is not enrolled."""


class DegenerateDataWarning(VoxMetricsWarning):
    """The input is legal but carries little or no information (e.g. constant scores)."""


class IgnoredEmbeddingsWarning(VoxMetricsWarning):
    """Some embeddings have no metadata row (or belong to another system) and were ignored."""


class IncompleteScoresWarning(VoxMetricsWarning):
    """Broken score pairs (no score, NaN, rows that end early) were dropped, as asked for.

    Emitted only when the reader was told to accept an incomplete file
    (``allow_incomplete=True``, command line ``--allow-incomplete``); otherwise such a file is
    refused.
    """


class LeftOutSpeakersWarning(VoxMetricsWarning):
    """Some speakers were left out of a metric that needs more of their utterances."""
