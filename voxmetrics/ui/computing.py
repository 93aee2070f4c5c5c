"""The one call path from a page to the library: :func:`compute`, cached on content hashes.

A page names the library function it runs at the call site::

    intervals = ui.compute(analysis.condition_intervals, condition, lid, n_boot=200).value

:func:`compute` looks the result up in a server-wide store, keyed on the function's qualified
name and the :func:`content_key` of its arguments (bound to the function's signature, so a
default passed or left out is the same entry): a sha256 of arrays, bytes and uploads, the
``content_hash`` of score matrices, embeddings and conditions, never the raw arrays. Each
function keeps at most :data:`MAX_ENTRIES` results (least recently used dropped first).

On a miss it runs the function, with a spinner (``spinner=``) or a progress bar fed by the
function's ``progress(fraction, message)`` callback (``bar=``), so neither is drawn on a hit.
The :class:`~voxmetrics.errors.VoxMetricsWarning` messages raised go into the
:class:`Outcome` and are stored with the value, so a hit shows them again (in the page's
notes, :mod:`voxmetrics.ui.notes`, each once and named after its condition); a
:class:`~voxmetrics.errors.VoxMetricsInputError` is shown as one message (nothing is stored)
and the outcome says so. Stored values are shared by every session without a copy: like
every result object of the library, they are read-only.

The store is shared by every browser session, and one session never gets another's data from
it: a key is made of the data itself (sha256 digests of every array, byte string, upload and
label, never a name or a size alone, and for a lambda or a page's own function what it closes
over), so a hit needs the very data that made the entry, which that session already has. Only
what every session shares anyway (the demo study, the study given at start, the loaded
models) is reused across sessions without it.

A result is computed once however many sessions ask for it at the same moment (single
flight): the first call that misses computes it, and the calls asking for the same key
meanwhile wait for it, then share the same outcome. They draw no progress bar of their own but
the :data:`WAITING` spinner (when the page asked for a spinner or a bar), and once a second an
empty placeholder, where Streamlit stops or reruns a waiting session whose visitor left or
changed a widget. A :class:`~voxmetrics.errors.VoxMetricsInputError` reaches every waiting
call as the same error (nothing is stored). A computing call that stops without a result
(Streamlit's ``StopException`` or ``RerunException`` when its visitor leaves or changes a
widget, or any other error) lets the waiting calls go, and one of them computes it. No lock is
held while a function runs, so a function computed through the store may ask it for other keys
(the Report page's ``attack_of=ui.cached(default_attack)``, the condition reports behind
``evaluator=ui.condition_report``); one that asks for its own key computes it again instead
of waiting for itself.

A result of :func:`compute` passed on to another :func:`compute` is keyed by the call that
made it (no hashing of its arrays again). :func:`cached` is the same store for a callback the
library calls (e.g. the ``evaluator`` of
:func:`~voxmetrics.report.study.build_study_report`): it returns the bare value, lets errors
through and raises the stored warnings again for the enclosing :func:`compute`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import threading
import warnings
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from voxmetrics._lru import LRU
from voxmetrics.analysis.sbls import Attack
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import VoxMetricsInputError, VoxMetricsWarning, kept_warnings
from voxmetrics.ui.notes import add_notes

__all__ = [
    "DEFAULT_ENTRIES",
    "MAX_ENTRIES",
    "WAITING",
    "Outcome",
    "ResultStore",
    "cached",
    "clear_caches",
    "compute",
    "content_key",
    "show_warnings",
    "stored",
]

T = TypeVar("T")

DEFAULT_ENTRIES = 64
"""Results kept per library function unless :data:`MAX_ENTRIES` says otherwise."""
MAX_ENTRIES: dict[str, int] = {
    # parsed uploads and loaded models are large: a few
    "read_scores": 8,
    "scored_embeddings": 4,
    "load_extractor": 2,
    "demo_study": 1,
    "build_study_report": 8,
    # per condition and option set
    "evaluate_condition": 128,
    "compare_conditions": 32,
    "condition_intervals": 128,
    "embeddings_attack": 64,
    "predictions_attack": 32,
    "attack_sbls": 128,
    "sbls_intervals": 128,
    "condition_fits": 128,
    # every back-end's scores of one condition
    "compare_attackers": 4,
    # one per histogram (every condition, speaker and loss)
    "fit_beta_binomial": 1024,
    # similarity matrices hold every pair of speakers
    "legal": 32,
    "similarity": 32,
    "pav_transform_of": 32,
    "speaker_mean_scores": 16,
    "distinctiveness_against": 16,
}
"""Results kept per library function (by its name)."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What a :func:`compute` call gave: the value, its warnings, or the error shown instead."""

    value: T
    """The result (None when :attr:`failed`)."""
    warnings: tuple[str, ...] = ()
    """Messages of the :class:`~voxmetrics.errors.VoxMetricsWarning` raised computing it."""
    error: str | None = None
    """The :class:`~voxmetrics.errors.VoxMetricsInputError` message shown, if the input was bad."""

    @property
    def failed(self) -> bool:
        """Whether the input was bad (the message was shown, :attr:`value` is None)."""
        return self.error is not None


WAITING = "Waiting for the same result another visitor is computing…"
"""The spinner of a session waiting for a result another session is computing."""
_POLL_S = 1.0  # how often a waiting session lets Streamlit stop or rerun it


class _Flight:
    """A result being computed: the calls that ask for its key meanwhile wait for it."""

    __slots__ = ("done", "error", "outcome", "owner")

    def __init__(self) -> None:
        self.owner = threading.get_ident()  # the thread computing it
        self.done = threading.Event()  # set once it has landed
        self.outcome: Any = None  # what it gave: stored, or None
        self.error: VoxMetricsInputError | None = None  # or the bad input it found


class ResultStore:
    """The results of one function, shared by every session: an LRU with single flight on top.

    The values live in a bounded, thread-safe :class:`~voxmetrics._lru.LRU`. Each key is
    computed by one call at a time: :meth:`claim` opens a flight for the first caller who
    misses, hands it to the others, and :meth:`land` ends it. Thread-safe.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: LRU[Hashable, Any] = LRU(max_entries)
        self._flights: dict[Hashable, _Flight] = {}
        self._lock = threading.Lock()  # a claim or a landing sees items and flights at once

    def get(self, key: Hashable) -> Any | None:
        """The stored value, or None."""
        return self._items.get(key)

    def put(self, key: Hashable, value: Any) -> None:
        """Store a value, dropping the least recently used beyond ``max_entries``."""
        self._items.put(key, value)

    def claim(self, key: Hashable) -> tuple[Any | None, _Flight | None]:
        """The stored value, or who computes it.

        ``(value, None)`` on a hit; ``(None, None)`` when the caller is to compute it (then it
        must :meth:`land` it, whatever happens); ``(None, flight)`` while another call computes
        it (wait for ``flight.done``).
        """
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                return value, None
            flight = self._flights.get(key)
            if flight is None:
                self._flights[key] = _Flight()
            return None, flight

    def land(
        self, key: Hashable, value: Any | None = None, *, error: VoxMetricsInputError | None = None
    ) -> None:
        """End the flight of ``key`` that :meth:`claim` opened, and wake the calls waiting.

        ``value`` (unless None) is stored and the waiting calls take it; with an ``error`` they
        raise it; with neither (the computing call was interrupted), they claim the key again
        and one of them computes it.
        """
        with self._lock:
            flight = self._flights.pop(key)
            if value is not None:
                self._items.put(key, value)
        flight.outcome, flight.error = value, error
        flight.done.set()

    def clear(self) -> None:
        """Forget every stored value (the flights under way land as usual)."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


_LOCK = threading.RLock()  # re-entered by a weakref callback during collection
_STORES: dict[str, ResultStore] = {}
_ORIGINS: dict[int, tuple[weakref.ref, str]] = {}


def _store(name: str, short_name: str) -> ResultStore:
    with _LOCK:
        store = _STORES.get(name)
        if store is None:
            store = _STORES[name] = ResultStore(MAX_ENTRIES.get(short_name, DEFAULT_ENTRIES))
        return store


def clear_caches() -> None:
    """Forget every stored result (for tests); live results keep their keys."""
    with _LOCK:
        stores = list(_STORES.values())
    for store in stores:  # outside the lock: a dropped result's weakref callback takes it
        store.clear()


# ---------------------------------------------------------------- content keys


def _sha(data: Any) -> str:
    return hashlib.sha256(data).hexdigest()


def remember(value: Any, key: str) -> None:
    """Key ``value`` by ``key``, the call that made it, for as long as it lives."""
    ident = id(value)

    def forget(dead: weakref.ref, ident: int = ident) -> None:
        if _LOCK is None:  # interpreter shutdown: the module's globals are already cleared
            return
        with _LOCK:
            if _ORIGINS.get(ident, (None,))[0] is dead:
                del _ORIGINS[ident]

    try:
        ref = weakref.ref(value, forget)
    except TypeError:  # tuples, dicts, numbers: keyed by their content
        return
    with _LOCK:
        _ORIGINS[ident] = (ref, key)


def _origin(value: Any) -> str | None:
    entry = _ORIGINS.get(id(value))
    if entry is not None and entry[0]() is value:
        return f"<{entry[1]}>"
    return None


def _array_key(a: np.ndarray) -> str:
    if a.dtype.hasobject:
        digest = _sha("\x1f".join(map(str, a.ravel().tolist())).encode())
    else:
        digest = _sha(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
    return f"array[{a.dtype.str}{a.shape}]:{digest}"


def _function_key(fn: Any) -> str:
    if isinstance(fn, functools.partial):
        bound = f"{content_key(fn.args)};{content_key(fn.keywords)}"
        return f"partial({_function_key(fn.func)};{bound})"
    if inspect.ismethod(fn):
        return f"method({content_key(fn.__self__)}.{fn.__func__.__qualname__})"
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    code = getattr(fn, "__code__", None)
    if code is not None and ("<" in name or name.startswith("__main__.")):
        # a lambda, a local function or a page's own: where it is written, and what it
        # closes over (a key without it would hand one session's result to another)
        name += f"@{code.co_filename}:{code.co_firstlineno}"
        cells = []
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                cells.append(content_key(cell.cell_contents))
            except ValueError:  # a cell not filled yet
                cells.append("empty")
        if cells:
            name += f"[{','.join(cells)}]"
    return f"fn:{name}"


def _is_upload(value: Any) -> bool:
    return isinstance(getattr(value, "name", None), str) and callable(
        getattr(value, "getvalue", None)
    )


def _study_key(study: Study) -> str:
    parts = (
        study.name,
        tuple(sorted(study.settings.to_dict().items())),
        tuple(
            (c.name, c.attacker, c.description, c.content_hash, repr(c.utility))
            for c in study.conditions
        ),
    )
    return f"Study:{_sha(repr(parts).encode())}"


def _structure_key(value: Any) -> str | None:
    """Keys of containers, frames and dataclasses (None for anything else)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        rows = pd.util.hash_pandas_object(value, index=True).to_numpy()
        names = list(value.columns) if isinstance(value, pd.DataFrame) else [value.name]
        layout = repr((names, str(value.dtypes)))
        return f"{type(value).__name__}:{_sha(rows)}:{_sha(layout.encode())}"
    if isinstance(value, Mapping):  # in order: a result may follow the order of its input
        items = ",".join(f"{content_key(k)}={content_key(v)}" for k, v in value.items())
        return f"{type(value).__name__}{{{items}}}"
    if isinstance(value, set | frozenset):
        return f"{type(value).__name__}{{{','.join(sorted(content_key(v) for v in value))}}}"
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return f"{type(value).__name__}({','.join(content_key(v) for v in value)})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(
            f"{f.name}={content_key(getattr(value, f.name))}" for f in dataclasses.fields(value)
        )
        return f"{type(value).__qualname__}({fields})"
    return None


def content_key(value: Any) -> str:
    """A string that changes whenever what ``value`` holds changes: part of a cache key.

    Arrays, bytes and uploaded files by a sha256 of their content; score matrices and
    embedding sets by their ``content_hash``; a condition by its attacker and content hash
    (not its name: renaming recomputes nothing); a study by its name, settings and its
    conditions' names, attackers, descriptions, content and utility numbers; an SBLS attack by
    its key; functions by their qualified name; containers, frames and dataclasses field by field; a
    value :func:`compute` returned by the call that made it.

    Raises
    ------
    TypeError
        For a value it cannot key (call :func:`compute` with ``cache=False``).

    Examples
    --------
    >>> import numpy as np
    >>> content_key(np.arange(3)) == content_key(np.arange(3))
    True
    >>> content_key((1, "a", None))
    "tuple(int:1,str:'a',NoneType:None)"
    """
    known = _origin(value)
    if known is not None:
        return known
    if value is None or isinstance(value, bool | int | float | complex | str):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"bytes:{_sha(value)}"
    if isinstance(value, np.ndarray):
        return _array_key(value)
    if isinstance(value, np.generic):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, Condition):
        return f"Condition:{value.attacker}|{value.content_hash}"
    if isinstance(value, Study):
        return _study_key(value)
    if isinstance(value, Attack):
        return f"Attack:{value.key}"
    content_hash = getattr(value, "content_hash", None)
    if isinstance(content_hash, str):
        return f"{type(value).__name__}:{content_hash}"
    if _is_upload(value):
        return f"upload:{value.name}:{_sha(value.getvalue())}"
    structure = _structure_key(value)
    if structure is not None:
        return structure
    if inspect.isroutine(value) or isinstance(value, functools.partial | type):
        return _function_key(value)
    if inspect.ismodule(value):  # a function closing over a module: the module is its name
        return f"module:{value.__name__}"
    raise TypeError(
        f"cannot key a {type(value).__qualname__} by its content; run it with cache=False"
    )


@functools.lru_cache(maxsize=512)
def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _call_key(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> str:
    """The function and every argument it receives, defaults included, as one key."""
    signature = _signature(fn)
    if signature is None:
        named: dict[str, Any] = {"args": args, "kwargs": dict(sorted(kwargs.items()))}
    else:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        named = dict(bound.arguments)
        for name, param in signature.parameters.items():
            if param.kind is inspect.Parameter.VAR_KEYWORD:  # **options: in any order
                named[name] = dict(sorted(named[name].items()))
    arguments = ",".join(f"{name}={content_key(v)}" for name, v in named.items())
    return f"{_function_key(fn)}({arguments})"


# ---------------------------------------------------------------- running


def show_warnings(
    messages: Sequence[str], *, prefix: str = "", conditions: Sequence[str] = ()
) -> None:
    """Add the messages to the page's notes, as warnings of the condition ``prefix``.

    Each (condition, message) is shown once per page, in one block
    (:func:`voxmetrics.ui.notes.add_notes`); without a ``prefix``, a message starting with
    one of ``conditions`` and a colon is that condition's.
    """
    add_notes(messages, condition=prefix, conditions=conditions)


def _capture(fn: Callable[..., T], args: tuple, kwargs: dict[str, Any]) -> Outcome[T]:
    """Call ``fn``; collect the VoxMetrics warnings it raises (others pass through)."""
    with kept_warnings(VoxMetricsWarning) as kept:  # this session's only (thread-safe)
        value = fn(*args, **kwargs)
    return Outcome(value, tuple(dict.fromkeys(str(w.message) for w in kept)))


def _execute(
    fn: Callable[..., T],
    args: tuple,
    kwargs: dict[str, Any],
    spinner: str | None,
    bar: str | None,
) -> Outcome[T]:
    if bar is not None:
        shown = st.progress(0.0, text=f"{bar}…")

        def progress(fraction: float, message: str) -> None:
            shown.progress(min(1.0, max(0.0, float(fraction))), text=f"{bar}: {message}")

        try:
            return _capture(fn, args, {**kwargs, "progress": progress})
        finally:
            shown.empty()
    if spinner is not None:
        with st.spinner(spinner, show_time=True):
            return _capture(fn, args, kwargs)
    return _capture(fn, args, kwargs)


def _run(
    fn: Callable[..., T],
    args: tuple,
    kwargs: dict[str, Any],
    *,
    cache: bool = True,
    spinner: str | None = None,
    bar: str | None = None,
) -> Outcome[T]:
    """The stored outcome of ``fn(*args, **kwargs)``, computed on a miss; errors propagate.

    A call that misses while another computes the same key waits for that one (single
    flight) and shares its outcome or its bad-input error.
    """
    if not cache:
        return _execute(fn, args, kwargs, spinner, bar)
    key = _call_key(fn, args, kwargs)
    store = _store(_function_key(fn), getattr(fn, "__name__", ""))
    while True:
        hit, flight = store.claim(key)
        if hit is not None:
            return hit
        if flight is None:
            return _fly(store, key, fn, args, kwargs, spinner, bar)
        if flight.owner == threading.get_ident():  # fn asks for itself: never wait on oneself
            return _execute(fn, args, kwargs, spinner, bar)
        _wait(flight, shown=spinner is not None or bar is not None)
        if flight.error is not None:
            raise flight.error
        if flight.outcome is not None:
            return flight.outcome
        # the computing call stopped without a result (its visitor left): claim it again


def _fly(
    store: ResultStore,
    key: str,
    fn: Callable[..., T],
    args: tuple,
    kwargs: dict[str, Any],
    spinner: str | None,
    bar: str | None,
) -> Outcome[T]:
    """Compute the claimed ``key``, and land it for the calls waiting, whatever happens."""
    out: Outcome[T] | None = None
    error: VoxMetricsInputError | None = None
    try:
        out = _execute(fn, args, kwargs, spinner, bar)
        remember(out.value, key)
    except VoxMetricsInputError as exc:  # bad input: the same for every caller
        error = exc
        raise
    finally:  # StopException, RerunException or any other error: a waiting call computes it
        store.land(key, out, error=error)
    return out


def _wait(flight: _Flight, *, shown: bool) -> None:
    """Block until ``flight`` lands, under the :data:`WAITING` spinner when ``shown``.

    Every :data:`_POLL_S` an empty placeholder is drawn again: each Streamlit call is where it
    stops or reruns a script whose visitor left or changed a widget, so a waiting session
    follows its visitor at once instead of waiting for the other's result.
    """
    if flight.done.wait(_POLL_S):
        return
    with st.spinner(WAITING, show_time=True) if shown else contextlib.nullcontext():
        slot = st.empty()
        while not flight.done.wait(_POLL_S):
            slot.empty()


def stored(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Outcome[T] | None:
    """The stored outcome of ``fn(*args, **kwargs)`` (as :func:`compute` keeps it), or None.

    Nothing is computed: a page may take a result another page already has, e.g. the
    Linkage page the full condition reports of the Overview.
    """
    return _store(_function_key(fn), getattr(fn, "__name__", "")).get(_call_key(fn, args, kwargs))


def compute(
    fn: Callable[..., T],
    /,
    *args: Any,
    cache: bool = True,
    spinner: str | None = None,
    bar: str | None = None,
    warn: bool | str = True,
    **kwargs: Any,
) -> Outcome[T]:
    """Run the library function ``fn(*args, **kwargs)`` for a page: cached, errors shown.

    Parameters
    ----------
    fn : callable
        The library function, named at the call site.
    *args, **kwargs
        Its arguments.
    cache : bool
        Keep the result in the server-wide store, keyed on :func:`content_key` of the
        arguments (default); False for a call that is cheap or takes what cannot be keyed.
    spinner : str, optional
        Text of a spinner shown while the result is computed (not on a hit; a session that
        waits for another session computing the same result shows :data:`WAITING` instead).
    bar : str, optional
        Label of a progress bar shown while the result is computed (not on a hit, nor while
        waiting for another session's computation: :data:`WAITING`); ``fn`` receives
        ``progress=`` a callback ``(fraction, message)`` that moves it.
    warn : bool or str
        Add the VoxMetrics warnings to the page's notes (True), as warnings of this
        condition (a string: its name), or not at all (False): they are in
        :attr:`Outcome.warnings` either way. The page shows each (condition, message) once,
        in one block (:mod:`voxmetrics.ui.notes`).

    Returns
    -------
    Outcome
        The value and its warnings; for bad input (a
        :class:`~voxmetrics.errors.VoxMetricsInputError`, shown with ``st.error``) a failed
        outcome whose value is None.
    """
    try:
        out = _run(fn, args, kwargs, cache=cache, spinner=spinner, bar=bar)
    except VoxMetricsInputError as exc:
        st.error(str(exc), icon=":material/error:")
        return Outcome(None, error=str(exc))  # type: ignore[arg-type]
    if warn:
        show_warnings(out.warnings, prefix=warn if isinstance(warn, str) else "")
    return out


def _reuse(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    out = _run(fn, args, kwargs)
    for message in out.warnings:  # for the enclosing compute to collect
        warnings.warn(message, VoxMetricsWarning, stacklevel=2)
    return out.value


def cached(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` through the store of :func:`compute`, for the library to call back.

    The returned function gives the bare value, raises the errors and re-raises the stored
    warnings, so the :func:`compute` around the library call collects them. For example,
    the Report page's ``attack_of=ui.cached(default_attack)`` trains each condition's
    attacker once for the Overview and the report alike.
    """
    return functools.partial(_reuse, fn)
