"""The one error family and the warnings of VoxMetrics.

Every problem with a user's input surfaces as a :class:`VoxMetricsInputError` whose message says
what is wrong, where (file, line or row) and how to fix it. The dashboard and the command line
catch this one type and show its message; anything else is a bug.

A warning concerns one condition of a study: :func:`warnings_of` puts the condition's name in
front of every warning raised while it is evaluated, so the command line and the dashboard can
say which condition a warning is about.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BadInputResult",
    "DegenerateDataWarning",
    "ExcludedTrialsWarning",
    "IgnoredEmbeddingsWarning",
    "IncompleteScoresWarning",
    "LeftOutSpeakersWarning",
    "VoxMetricsInputError",
    "VoxMetricsWarning",
    "named",
    "raise_bad_input",
    "returning_bad_input",
    "warnings_of",
]


class VoxMetricsInputError(ValueError):
    """Bad input: the message says what is wrong, where, and how to fix it."""


@dataclass(frozen=True)
class BadInputResult:
    """A remote task's :class:`VoxMetricsInputError`, returned as a value.

    A Dask task that raises is retried (bad input would fail again) and its worker logs an
    error block with the traceback; one that returns this instead is neither, and the client
    raises its one-line message (:func:`raise_bad_input`).
    """

    message: str


def returning_bad_input(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, with a :class:`VoxMetricsInputError` returned as a :class:`BadInputResult`."""
    try:
        return fn(*args)
    except VoxMetricsInputError as exc:
        return BadInputResult(str(exc))


def raise_bad_input(value: Any, futures: Any = ()) -> Any:
    """``value``, unless it is a :class:`BadInputResult`: then cancel ``futures`` and raise it."""
    if isinstance(value, BadInputResult):
        for other in futures:
            other.cancel()
        raise VoxMetricsInputError(value.message)
    return value


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


def named(condition: str, message: str) -> str:
    """``message`` with the condition's name in front (``"condition: message"``), once.

    Examples
    --------
    >>> named("plain", "the fit did not converge")
    'plain: the fit did not converge'
    >>> named("plain", "plain: the fit did not converge")
    'plain: the fit did not converge'
    """
    prefix = f"{condition}: "
    return message if not condition or message.startswith(prefix) else prefix + message


@contextlib.contextmanager
def warnings_of(condition: str, *, into: list[str] | None = None) -> Iterator[None]:
    """Raise each :class:`VoxMetricsWarning` of the block again, named after ``condition``.

    Each message gets ``"condition: "`` in front (:func:`named`; once, however deep the
    blocks nest) and keeps its category; a message raised several times in the block is
    raised once, and appended to ``into`` when given (e.g. the notes of a report). Other
    warnings pass through unchanged.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     with warnings_of("plain"):
    ...         for _ in range(2):
    ...             warnings.warn("the fit did not converge", DegenerateDataWarning)
    >>> [str(w.message) for w in caught]
    ['plain: the fit did not converge']
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            recorded = list(caught)
    seen: set[tuple[type, str]] = set()
    for w in recorded:  # outside the recording block: to the caller's filters
        if not issubclass(w.category, VoxMetricsWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        key = (w.category, named(condition, str(w.message)))
        if key not in seen:
            seen.add(key)
            if into is not None and key[1] not in into:
                into.append(key[1])
            warnings.warn_explicit(key[1], w.category, w.filename, w.lineno)
