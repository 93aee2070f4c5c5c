"""Errors and warnings (voxmetrics.errors): the input error, named warnings, per-thread records.

``warnings.catch_warnings`` swaps a process-wide hook, so two dashboard sessions computing on
two threads at once could lose each other's warnings or take them. voxmetrics.errors records
each thread's own (``recorded_warnings``, ``kept_warnings``, ``warnings_of``), and names each
warning's condition once (``named``, ``warnings_of``).
"""

from __future__ import annotations

import threading
import warnings

import pytest

from voxmetrics import errors
from voxmetrics.errors import (
    DegenerateDataWarning,
    ExcludedTrialsWarning,
    VoxMetricsWarning,
    kept_warnings,
    named,
    recorded_warnings,
    warnings_of,
)
from voxmetrics.evaluation.threat import PAPER_EXAMPLE_SCORES, paper_matrix
from voxmetrics.metrics.parallel import map_blocks

ROUNDS = 50


def _warn(text: str, category: type[Warning] = DegenerateDataWarning) -> None:
    warnings.warn(text, category, stacklevel=2)  # one place for every thread: one registry key


def _in_threads(*bodies):
    """Run each body on its own thread, all at once; what each returned, in order."""
    results: list = [None] * len(bodies)
    errors_: list = []

    def run(k, body):
        try:
            results[k] = body()
        except BaseException as exc:
            errors_.append(exc)

    threads = [threading.Thread(target=run, args=(k, b)) for k, b in enumerate(bodies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and not errors_, errors_
    return results


def test_two_threads_warning_at_once_each_record_only_their_own():
    turn = threading.Barrier(2)

    def session(name: str) -> list[str]:
        with recorded_warnings() as caught:
            for k in range(ROUNDS):
                turn.wait(10)  # both warn in the same moment, round after round
                _warn(f"{name} {k}")
                _warn("the fit did not converge")  # the same text from the same place
        return [str(w.message) for w in caught]

    a, b = _in_threads(lambda: session("a"), lambda: session("b"))
    for name, got in (("a", a), ("b", b)):
        own = [m for m in got if m != "the fit did not converge"]
        assert own == [f"{name} {k}" for k in range(ROUNDS)]
        assert got.count("the fit did not converge") == ROUNDS  # every time, not once


def test_warnings_of_in_two_threads_names_each_condition_in_its_own_records():
    turn = threading.Barrier(2)

    def session(name: str) -> list[str]:
        with recorded_warnings() as caught:
            with warnings_of(name):
                for _ in range(ROUNDS):
                    turn.wait(10)
                    _warn("the fit did not converge")
        return [str(w.message) for w in caught]

    assert _in_threads(lambda: session("plain"), lambda: session("anon")) == [
        ["plain: the fit did not converge"],
        ["anon: the fit did not converge"],
    ]


def test_kept_warnings_keep_their_category_and_pass_on_the_others():
    with recorded_warnings() as outer:
        with kept_warnings(ExcludedTrialsWarning) as kept:
            _warn("3 trials left out", ExcludedTrialsWarning)
            _warn("the fit did not converge")
    assert [str(w.message) for w in kept] == ["3 trials left out"]
    assert [(w.category, str(w.message)) for w in outer] == [
        (DegenerateDataWarning, "the fit did not converge")
    ]


def test_a_thread_that_records_nothing_is_not_disturbed():
    """Outside a recording, a warning goes to the hook that was there before (here pytest's)."""
    recording = threading.Event()
    done = threading.Event()

    def recorder() -> list[str]:
        with recorded_warnings() as caught:
            recording.set()
            done.wait(10)
            _warn("mine")
        return [str(w.message) for w in caught]

    def other() -> None:
        recording.wait(10)
        with pytest.warns(VoxMetricsWarning, match="not recorded") as seen:
            _warn("not recorded")
        done.set()
        assert [str(w.message) for w in seen] == ["not recorded"]

    assert _in_threads(recorder, other)[0] == ["mine"]
    assert not any(errors._ours(f) for f in warnings.filters)  # "always" only while recording


def test_row_blocks_on_other_threads_warn_into_their_callers_records(monkeypatch):
    monkeypatch.setenv("VOXMETRICS_THREADS", "4")

    def block(k: int) -> int:
        _warn(f"block {k}")
        return k

    with recorded_warnings() as caught:
        assert map_blocks(block, list(range(8))) == list(range(8))
    assert sorted(str(w.message) for w in caught) == sorted(f"block {k}" for k in range(8))


def test_warnings_of_names_each_warning_once_and_keeps_its_category():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with warnings_of("plain"):
            with warnings_of("plain"):  # nested: named once
                warnings.warn("the fit did not converge", DegenerateDataWarning, stacklevel=1)
            warnings.warn("the fit did not converge", DegenerateDataWarning, stacklevel=1)
            warnings.warn("not ours", DeprecationWarning, stacklevel=1)
    assert [(w.category, str(w.message)) for w in caught] == [
        (DegenerateDataWarning, "plain: the fit did not converge"),
        (DeprecationWarning, "not ours"),
    ]
    assert named("", "x") == "x" and named("a", "a: x") == "a: x"


def test_voxmetrics_input_error_is_a_value_error():
    with pytest.raises(ValueError):
        paper_matrix(PAPER_EXAMPLE_SCORES, [0, 0, 1, 9])
