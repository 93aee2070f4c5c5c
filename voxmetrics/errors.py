"""The one error family and the warnings of VoxMetrics.

Every problem with a user's input surfaces as a :class:`VoxMetricsInputError` whose message says
what is wrong, where (file, line or row) and how to fix it. The dashboard and the command line
catch this one type and show its message; anything else is a bug.

A warning concerns one condition of a study: :func:`warnings_of` puts the condition's name in
front of every warning raised while it is evaluated, so the command line and the dashboard can
say which condition a warning is about.

Warnings are gathered per thread (:func:`recorded_warnings`, :func:`kept_warnings`), not with
:class:`warnings.catch_warnings`, which swaps the process-wide hook: two dashboard sessions
computing at once on two threads would otherwise lose each other's warnings or take them.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
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
    "kept_warnings",
    "named",
    "raise_bad_input",
    "recorded_warnings",
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


# ---------------------------------------------------------------- warnings per thread

_SINK: ContextVar[list[warnings.WarningMessage] | None] = ContextVar("voxmetrics_warnings")
"""Where the warnings of this thread (this context) go while it records them."""
_EVERY = "(?#voxmetrics records every warning)"
"""The message pattern of the "always" filter in place while a thread records: an empty
regular expression (a comment) that matches every message, and names the filter."""
_HOOK_LOCK = threading.Lock()
_recording = 0  # blocks recording now, in all threads
_previous: Callable[..., Any] = warnings.showwarning  # what the hook hands the others to


def _route(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """The process-wide ``warnings.showwarning``, installed by the first recording.

    A warning goes to the records of the thread that raised it when that thread is recording,
    to the hook it replaced otherwise.
    """
    sink = _SINK.get(None)
    if sink is None:
        _previous(message, category, filename, lineno, file, line)
    else:
        sink.append(warnings.WarningMessage(message, category, filename, lineno, file, line))


def _ours(item: tuple[Any, ...]) -> bool:
    return getattr(item[1], "pattern", None) == _EVERY


def _start_recording() -> None:
    """Install the hook (again, if something replaced it) and the "always" filter."""
    global _previous, _recording
    with _HOOK_LOCK:
        _recording += 1
        if warnings.showwarning is not _route:
            _previous = warnings.showwarning
            warnings.showwarning = _route
        if not any(_ours(item) for item in warnings.filters):
            # every warning reaches the hook while a thread records (as simplefilter("always")
            # did), not only the first one raised at each place
            warnings.filterwarnings("always", message=_EVERY)


def _stop_recording() -> None:
    """Drop the "always" filter when no thread records any more (the hook stays)."""
    global _recording
    with _HOOK_LOCK:
        _recording -= 1
        if _recording == 0:
            filters: Any = warnings.filters  # a list (typeshed says a Sequence), changed in place
            filters[:] = [item for item in filters if not _ours(item)]


@contextlib.contextmanager
def recorded_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning this thread raises in the block, and none of the other threads'.

    :class:`warnings.catch_warnings` (``record=True``) swaps a process-wide hook: warnings that
    other threads raise meanwhile land in its list, and its own may land in theirs. Here one
    process-wide hook, installed once, hands each warning to the records of the thread (the
    :mod:`contextvars` context) that raised it, and to the hook it replaced when that thread
    is not recording. While a thread records, every warning is shown each time it is raised
    (as ``simplefilter("always")``); blocks nest (the innermost records). A thread started in
    the block records into it only when it runs in a copy of the block's context
    (:func:`~voxmetrics.metrics.parallel.map_blocks` does); code that still swaps the hook
    itself (``catch_warnings(record=True)`` on another thread) still takes what is raised
    meanwhile, so the package records this way only.

    Examples
    --------
    >>> with recorded_warnings() as caught:
    ...     warnings.warn("the fit did not converge", DegenerateDataWarning)
    >>> [(w.category.__name__, str(w.message)) for w in caught]
    [('DegenerateDataWarning', 'the fit did not converge')]
    """
    records: list[warnings.WarningMessage] = []
    _start_recording()
    token = _SINK.set(records)
    try:
        yield records
    finally:
        _SINK.reset(token)
        _stop_recording()


def _pass_on(w: warnings.WarningMessage) -> None:
    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


@contextlib.contextmanager
def kept_warnings(*categories: type[Warning]) -> Iterator[list[warnings.WarningMessage]]:
    """Keep the warnings of ``categories`` this thread raises in the block; pass on the others.

    The list holds the kept ones once the block ends (the caller shows, stores or drops
    them); the others are raised again as they were, after the block (also when it fails).
    Thread-safe, unlike ``catch_warnings`` with ``simplefilter("ignore", category)``, which
    silences every thread.

    Examples
    --------
    >>> with kept_warnings(DegenerateDataWarning) as kept:
    ...     warnings.warn("the fit did not converge", DegenerateDataWarning)
    >>> [str(w.message) for w in kept]
    ['the fit did not converge']
    """
    kept: list[warnings.WarningMessage] = []
    try:
        with recorded_warnings() as caught:
            yield kept
    finally:
        for w in caught:
            if issubclass(w.category, categories):
                kept.append(w)
            else:
                _pass_on(w)


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
    with recorded_warnings() as caught:
        try:
            yield
        finally:
            recorded = list(caught)
    seen: set[tuple[type, str]] = set()
    for w in recorded:  # outside the recording block: to the caller's filters
        if not issubclass(w.category, VoxMetricsWarning):
            _pass_on(w)
            continue
        key = (w.category, named(condition, str(w.message)))
        if key not in seen:
            seen.add(key)
            if into is not None and key[1] not in into:
                into.append(key[1])
            warnings.warn_explicit(key[1], w.category, w.filename, w.lineno)
