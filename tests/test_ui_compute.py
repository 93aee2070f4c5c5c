"""``ui.compute``: the one call path from a page to the library (keys, store, messages)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

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
