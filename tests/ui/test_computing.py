"""``ui.compute``: the one call path from a page to the library (keys, store, messages)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import StopException

from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import VoxMetricsInputError, VoxMetricsWarning
from voxmetrics.ui import computing
from voxmetrics.ui.computing import Outcome, cached, compute, content_key

pytestmark = pytest.mark.usefixtures("fresh_app_caches")

CALLS: list[tuple] = []


def scaled(x: np.ndarray, *, factor: float = 2.0) -> np.ndarray:
    CALLS.append(("scaled", factor))
    return x * factor


def noisy(n: int) -> int:
    CALLS.append(("noisy", n))
    warnings.warn(f"only {n} trials", VoxMetricsWarning, stacklevel=2)
    return n


def refuses(n: int) -> int:
    CALLS.append(("refuses", n))
    raise VoxMetricsInputError(f"{n} is not a valid count")


def counted(n: int, *, progress=None) -> int:
    CALLS.append(("counted", n))
    for k in range(3):
        progress((k + 1) / 3, f"step {k + 1}")
    return n


@pytest.fixture(autouse=True)
def _calls():
    CALLS.clear()
    yield
    CALLS.clear()


def test_a_second_call_with_the_same_content_is_a_hit():
    a = np.arange(5.0)
    first = compute(scaled, a)
    again = compute(scaled, a.copy())  # another array, the same content
    assert CALLS == [("scaled", 2.0)]
    assert again.value is first.value and not first.failed and first.warnings == ()
    compute(scaled, np.arange(5.0) + 1)
    assert len(CALLS) == 2


def test_defaults_given_or_left_out_are_one_entry_and_other_options_another():
    a = np.ones(3)
    compute(scaled, a)
    compute(scaled, a, factor=2.0)
    assert CALLS == [("scaled", 2.0)]
    np.testing.assert_array_equal(compute(scaled, a, factor=3.0).value, [3.0, 3.0, 3.0])
    assert CALLS == [("scaled", 2.0), ("scaled", 3.0)]


def test_cache_false_always_runs():
    compute(scaled, np.ones(2), cache=False)
    compute(scaled, np.ones(2), cache=False)
    assert len(CALLS) == 2


def test_warnings_are_kept_with_the_value_and_shown_again_on_a_hit():
    out = compute(noisy, 3)
    assert out == Outcome(3, ("only 3 trials",))
    assert compute(noisy, 3).warnings == ("only 3 trials",)
    assert CALLS == [("noisy", 3)]


def test_bad_input_is_a_failed_outcome_and_nothing_is_stored():
    out = compute(refuses, 4)
    assert out.failed and out.value is None and out.error == "4 is not a valid count"
    compute(refuses, 4)
    assert CALLS == [("refuses", 4), ("refuses", 4)]


def test_the_progress_bar_is_fed_only_while_computing():
    assert compute(counted, 7, bar="Counting").value == 7
    assert compute(counted, 7, bar="Counting").value == 7  # a hit: counted is not called
    assert CALLS == [("counted", 7)]


def test_each_function_keeps_a_bounded_number_of_results(monkeypatch):
    monkeypatch.setitem(computing.MAX_ENTRIES, "scaled", 2)
    monkeypatch.setattr(computing, "_STORES", {})  # stores made anew with that bound
    for k in range(4):
        compute(scaled, np.full(2, k))
    (store,) = [s for name, s in computing._STORES.items() if name.endswith(".scaled")]
    assert len(store) == 2
    compute(scaled, np.full(2, 0))  # the oldest was dropped
    assert len(CALLS) == 5


def test_cached_returns_the_value_and_replays_the_warnings():
    with pytest.warns(VoxMetricsWarning, match="only 2 trials"):
        assert cached(noisy)(2) == 2
    with pytest.warns(VoxMetricsWarning, match="only 2 trials"):
        assert cached(noisy)(2) == 2
    assert CALLS == [("noisy", 2)]
    with pytest.raises(VoxMetricsInputError):
        cached(refuses)(1)


def test_a_result_passed_on_is_keyed_by_the_call_that_made_it():
    a = np.arange(4.0)
    doubled = compute(scaled, a).value
    assert content_key(doubled).startswith("<fn:") and "scaled" in content_key(doubled)
    assert content_key(doubled.copy()).startswith("array[")  # a copy: by its content


def test_content_keys():
    sm_a = Condition("a", eval=_sm([[0.9, 0.1], [0.2, 0.8]]))
    renamed = dataclasses.replace(sm_a, name="b")
    other = dataclasses.replace(sm_a, attacker="ignorant")
    assert content_key(sm_a) == content_key(renamed)  # a renamed condition computes nothing
    assert content_key(sm_a) != content_key(other)
    assert content_key(sm_a.eval) == f"ScoreMatrix:{sm_a.eval.content_hash}"
    assert content_key(np.array(["x", "y"])) != content_key(np.array(["x", "z"]))
    assert content_key(np.arange(3, dtype=np.int64)) != content_key(np.arange(3, dtype=np.int32))
    assert content_key({"b": 1, "a": 2}) != content_key({"a": 2, "b": 1})  # order is kept
    assert content_key(pd.DataFrame({"x": [1, 2]})) != content_key(pd.DataFrame({"x": [1, 3]}))
    assert content_key(b"abc") == content_key(bytearray(b"abc"))
    study = Study(conditions=(sm_a,))
    assert content_key(study) != content_key(Study(conditions=(renamed,)))  # names in a report
    assert content_key(scaled) == f"fn:{__name__}.scaled"
    with pytest.raises(TypeError, match="cache=False"):
        content_key(object())


def _sm(scores):
    from voxmetrics.data.model import ScoreMatrix

    return ScoreMatrix.from_arrays(
        scores, trial_ids=["t1", "t2"], trial_speakers=["a", "b"], enrol_speakers=["a", "b"]
    )


# ---------------------------------------------------------------- simultaneous sessions

TIMEOUT = 20.0  # seconds: a deadlock fails the test instead of hanging it


class Sessions:
    """Calls run at the same moment, each in a thread of its own (as browser sessions are)."""

    def __init__(self, *calls):
        self.results: list = [None] * len(calls)
        self.threads = [
            threading.Thread(target=self._run, args=(k, call), daemon=True)
            for k, call in enumerate(calls)
        ]
        for t in self.threads:
            t.start()

    def _run(self, k, call):
        try:
            self.results[k] = ("value", call())
        except BaseException as exc:  # StopException included
            self.results[k] = ("raised", exc)

    def join(self) -> list:
        """What each call returned or raised, in order; fails if one is still blocked."""
        deadline = time.monotonic() + TIMEOUT
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in self.threads), "a session is still blocked"
        return self.results


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


@pytest.fixture
def gate():
    """An event the slow functions below wait for: opened by the test (or at its end)."""
    opened = threading.Event()
    GATES.append(opened)
    yield opened
    opened.set()
    GATES.clear()


GATES: list[threading.Event] = []


def _through_gate() -> None:
    assert GATES[0].wait(TIMEOUT), "the gate was never opened"


def slow(n: int) -> dict:
    CALLS.append(("slow", n))
    _through_gate()
    return {"n": n}


def slow_refuses(n: int) -> int:
    CALLS.append(("slow_refuses", n))
    _through_gate()
    raise VoxMetricsInputError(f"{n} is not a valid count")


def left_the_first_time(n: int) -> dict:
    CALLS.append(("left_the_first_time", n))
    _through_gate()
    if len(CALLS) == 1:  # the first visitor navigates away mid-computation
        raise StopException()
    return {"n": n}


@dataclasses.dataclass
class Seen:
    """What the sessions drew: spinner texts, and how many calls started waiting."""

    spinners: list[str] = dataclasses.field(default_factory=list)
    waits: list[bool] = dataclasses.field(default_factory=list)  # each wait: spinner shown?


@pytest.fixture
def seen(monkeypatch):
    """The spinners drawn and the waits begun, with a short poll of the waiting sessions."""
    seen, spinner, wait = Seen(), st.spinner, computing._wait

    @contextlib.contextmanager
    def recorded(text, **options):
        seen.spinners.append(text)
        with spinner(text, **options):
            yield

    def counted(flight, *, shown):
        seen.waits.append(shown)
        wait(flight, shown=shown)

    monkeypatch.setattr(computing, "_POLL_S", 0.01)
    monkeypatch.setattr(st, "spinner", recorded)
    monkeypatch.setattr(computing, "_wait", counted)
    return seen


def test_sessions_asking_at_once_share_one_computation(gate, seen):
    n = 8
    sessions = Sessions(*[lambda: compute(slow, 3, spinner="Slowly…") for _ in range(n)])
    wait_until(lambda: len(seen.spinners) == n, "the computing spinner and the waiting ones")
    gate.set()
    results = sessions.join()
    assert CALLS == [("slow", 3)]
    first = results[0][1].value
    assert first == {"n": 3}
    assert all(kind == "value" and out.value is first for kind, out in results)
    # one session computes under its spinner, the n - 1 others wait under WAITING
    assert sorted(seen.spinners) == ["Slowly…", *[computing.WAITING] * (n - 1)]
    assert compute(slow, 3).value is first and len(CALLS) == 1  # stored


def test_bad_input_reaches_every_waiting_session_and_nothing_is_stored(gate, seen):
    n = 5
    sessions = Sessions(*[lambda: cached(slow_refuses)(4) for _ in range(n)])
    wait_until(lambda: len(seen.waits) == n - 1, "the waiting sessions")
    gate.set()
    results = sessions.join()
    assert CALLS == [("slow_refuses", 4)]
    errors = [exc for kind, exc in results]
    assert all(kind == "raised" for kind, _ in results)
    assert all(exc is errors[0] for exc in errors)  # the same error
    assert isinstance(errors[0], VoxMetricsInputError)
    assert str(errors[0]) == "4 is not a valid count"
    out = compute(slow_refuses, 4)  # nothing was stored: computed again
    assert out.failed and len(CALLS) == 2


def test_an_interrupted_session_lets_a_waiting_one_compute(gate, seen):
    n = 4
    sessions = Sessions(
        *[lambda: compute(left_the_first_time, 5, spinner="Computing…") for _ in range(n)]
    )
    wait_until(lambda: len(seen.spinners) == n, "the computing spinner and the waiting ones")
    gate.set()
    results = sessions.join()
    assert CALLS == [("left_the_first_time", 5), ("left_the_first_time", 5)]
    stopped = [exc for kind, exc in results if kind == "raised"]
    assert len(stopped) == 1 and isinstance(stopped[0], StopException)
    values = [out.value for kind, out in results if kind == "value"]
    assert len(values) == n - 1 and all(v is values[0] for v in values)
    assert values[0] == {"n": 5} and compute(left_the_first_time, 5).value is values[0]


BARRIER: list[threading.Barrier] = []


def meets(n: int) -> int:
    CALLS.append(("meets", n))
    BARRIER[0].wait()  # broken (an error) unless two keys are computed at once
    return n


def test_different_keys_are_computed_at_the_same_time():
    BARRIER[:] = [threading.Barrier(2, timeout=TIMEOUT)]
    results = Sessions(lambda: compute(meets, 1).value, lambda: compute(meets, 2).value).join()
    BARRIER.clear()
    assert results == [("value", 1), ("value", 2)]
    assert sorted(CALLS) == [("meets", 1), ("meets", 2)]


def outer(ns: tuple[int, ...]) -> int:
    CALLS.append(("outer", ns))
    return sum(cached(slow)(n)["n"] for n in ns)  # as a report's evaluator=ui.cached(...)


def test_a_computed_function_may_ask_the_store_for_other_keys(gate, seen):
    slows = Sessions(lambda: compute(slow, 2).value["n"], lambda: compute(slow, 3).value["n"])
    wait_until(lambda: len(CALLS) == 2, "slow(2) and slow(3) under way")
    outers = Sessions(
        lambda: compute(outer, (2, 3, 1)).value, lambda: compute(outer, (2, 3, 1)).value
    )
    # one outer waits for slow(2) while computing, the other for that outer
    wait_until(lambda: len(seen.waits) == 2, "both outers waiting")
    gate.set()
    assert slows.join() == [("value", 2), ("value", 3)]
    assert outers.join() == [("value", 6), ("value", 6)]
    assert sorted(c for c in CALLS if c[0] == "slow") == [("slow", 1), ("slow", 2), ("slow", 3)]
    assert CALLS.count(("outer", (2, 3, 1))) == 1


def asks_for_itself(n: int) -> int:
    CALLS.append(("asks_for_itself", n))
    if len(CALLS) == 1:
        return cached(asks_for_itself)(n) + 1  # its own key, while computing it
    return n


def test_a_function_asking_for_its_own_key_computes_it_instead_of_waiting_on_itself():
    assert Sessions(lambda: compute(asks_for_itself, 1).value).join() == [("value", 2)]
    assert CALLS == [("asks_for_itself", 1), ("asks_for_itself", 1)]


def test_the_bound_holds_with_sessions_computing_at_once(monkeypatch):
    monkeypatch.setitem(computing.MAX_ENTRIES, "scaled", 4)
    monkeypatch.setattr(computing, "_STORES", {})

    def session(offset: int) -> list[float]:
        return [compute(scaled, np.full(2, (k + offset) % 12)).value[0] for k in range(30)]

    results = Sessions(*[functools.partial(session, s) for s in range(8)]).join()
    for s, (kind, values) in enumerate(results):
        assert kind == "value" and values == [2.0 * ((k + s) % 12) for k in range(30)]
    (store,) = [v for name, v in computing._STORES.items() if name.endswith(".scaled")]
    assert len(store) == 4


TURNS = threading.Barrier(2)


def noisy_in_turns(name: str, rounds: int) -> str:
    for k in range(rounds):
        TURNS.wait(TIMEOUT)  # the other session warns in the same moment
        warnings.warn(f"{name}: note {k}", VoxMetricsWarning, stacklevel=1)
    return name


def test_two_sessions_computing_at_once_each_keep_only_their_own_warnings():
    TURNS.reset()
    got = Sessions(
        lambda: compute(noisy_in_turns, "plain", 30), lambda: compute(noisy_in_turns, "anon", 30)
    ).join()
    for (kind, out), name in zip(got, ("plain", "anon"), strict=True):
        assert kind == "value" and out.value == name
        assert out.warnings == tuple(f"{name}: note {k}" for k in range(30))


RUNS: list[float] = []


@pytest.mark.usefixtures("fresh_app_caches")
def test_a_store_hit_needs_the_data_itself():
    """Every session shares the store of ``ui.compute``: an entry is found only with the very
    data that made it, also through a lambda or a page's function closing over its data."""
    import numpy as np

    from voxmetrics.ui.computing import compute, content_key

    RUNS.clear()

    def session(secret: np.ndarray):
        def mean_of():  # a local function closing over one session's data
            RUNS.append(secret.sum())
            return secret.mean()

        return mean_of

    a, b = np.arange(4.0), np.arange(4.0) + 100  # two sessions' data
    assert compute(session(a)).value == 1.5
    assert compute(session(b)).value == 101.5  # not the other session's result
    assert compute(lambda: b.max()).value == 103 and compute(lambda: a.max()).value == 3
    assert compute(session(a.copy())).value == 1.5 and len(RUNS) == 2  # same data: a hit
    assert content_key(a) != content_key(a + 1e-12)  # one changed value is another key
    # a page's own function (pages run as __main__): keyed by its file, not its name alone
    page_a, page_b = {"__name__": "__main__"}, {"__name__": "__main__"}
    exec(compile("def table(x):\n    return x + 1\n", "pages/a.py", "exec"), page_a)
    exec(compile("def table(x):\n    return x - 1\n", "pages/b.py", "exec"), page_b)
    assert compute(page_a["table"], 1).value == 2 and compute(page_b["table"], 1).value == 0
