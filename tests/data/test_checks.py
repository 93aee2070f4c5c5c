"""voxmetrics.data._checks: the checks ScoreMatrix.from_arrays runs once, each with its message."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.data._checks import (
    RESERVED_ATTRIBUTES,
    check_finite,
    check_labels,
    check_unique,
    enrolled_trials,
    listed_mask,
    score_array,
    trial_attributes,
    unlisted_nan,
)
from voxmetrics.data._finite import remember_finite
from voxmetrics.errors import VoxMetricsInputError

TIDS = np.array(["t1", "t2"])
ESPK = np.array(["a", "b", "c"])


def test_listed_mask_of_a_complete_matrix_is_none():
    s = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    assert listed_mask(s, None, True, TIDS, "w") is None
    s[0, 1] = np.nan  # NaN cells are unlisted only when nan_missing is asked for
    assert listed_mask(s, None, False, TIDS, "w") is None


def test_listed_mask_from_nan_cells():
    s = np.array([[0.1, np.nan, 0.3], [np.nan, 0.5, np.nan]])
    m = listed_mask(s, None, True, TIDS, "w")
    assert m.tolist() == [[True, False, True], [False, True, False]]


def test_listed_mask_given_mask_is_checked():
    s = np.zeros((2, 3))
    m = np.array([[True, False, True], [False, True, False]])
    assert listed_mask(s, m, False, TIDS, "w") is not None
    with pytest.raises(VoxMetricsInputError, match=r"^w: the mask has dtype int64; it must be"):
        listed_mask(s, m.astype(np.int64), False, TIDS, "w")
    with pytest.raises(
        VoxMetricsInputError, match=r"shape mismatch: the mask is \(3, 2\) but the scores are"
    ):
        listed_mask(s, m.T, False, TIDS, "w")


def test_listed_mask_refuses_a_trial_without_pair():
    s = np.array([[0.1, 0.2, 0.3], [np.nan, np.nan, np.nan]])
    with pytest.raises(
        VoxMetricsInputError, match=r"^w: 1 trial\(s\) have no listed pair \(first: 't2'\)"
    ):
        listed_mask(s, None, True, TIDS, "w")


def test_check_unique_counts_duplicates():
    check_unique(np.array(["a", "b"]), "trial id", "w")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^w: 2 duplicate trial id label\(s\) \(e\.g\. 'a' appears 3 times\); each "
        r"trial id must appear once\.$",
    ):
        check_unique(np.array(["a", "b", "a", "c", "a", "b"]), "trial id", "w")


def test_score_array_keeps_float32_and_casts_the_rest():
    assert score_array(np.zeros((2, 2), np.float32), "w").dtype == np.float32
    s = score_array([[1, 2], [3, 4]], "w")
    assert s.dtype == np.float64 and s.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(VoxMetricsInputError, match=r"^w: scores are not numeric \("):
        score_array([["x", "y"]], "w")
    with pytest.raises(VoxMetricsInputError, match=r"must be a 2-D array .*got shape \(3,\)"):
        score_array([1.0, 2.0, 3.0], "w")


def test_check_labels_messages():
    check_labels((2, 3), TIDS, np.array(["a", "b"]), ESPK, "w")
    with pytest.raises(VoxMetricsInputError, match=r"2 rows \(trials\) but there are 1 trial ids"):
        check_labels((2, 3), TIDS[:1], np.array(["a", "b"]), ESPK, "w")
    with pytest.raises(VoxMetricsInputError, match=r"3 columns .* but there are 2 enrolled"):
        check_labels((2, 3), TIDS, np.array(["a", "b"]), ESPK[:2], "w")
    with pytest.raises(VoxMetricsInputError, match=r"only 1 enrolled identity; a 1-to-N search"):
        check_labels((2, 1), TIDS, np.array(["a", "b"]), ESPK[:1], "w")
    with pytest.raises(VoxMetricsInputError, match=r"duplicate enrolled speaker label"):
        check_labels((2, 2), TIDS, np.array(["a", "b"]), np.array(["a", "a"]), "w")
    with pytest.raises(VoxMetricsInputError, match=r"duplicate trial id label\(s\) \(e\.g\. 't'"):
        check_labels((2, 3), np.array(["t", "t"]), np.array(["a", "b"]), ESPK, "w")


def test_unlisted_nan_in_place_or_copied():
    s = np.array([[1.0, 2.0], [3.0, 4.0]])
    m = np.array([[True, False], [False, True]])
    out, copy = unlisted_nan(s, m, copy=False)
    assert out is s and copy is False  # changed in place: no second T x N array
    assert np.isnan(s[0, 1]) and np.isnan(s[1, 0]) and s[0, 0] == 1.0
    t = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    out, copy = unlisted_nan(t, m, copy=True)
    assert out is not t and copy is False and out.dtype == np.float32
    assert t[0, 1] == 2.0 and np.isnan(out[0, 1]) and out[1, 1] == 4.0
    t.setflags(write=False)  # a read-only array is never written
    out, copy = unlisted_nan(t, m, copy=False)
    assert out is not t and np.isnan(out[1, 0])


def test_check_finite_names_the_first_bad_cell():
    s = np.array([[0.1, 0.2, np.inf], [np.nan, 0.5, 0.6]])
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^w: 2 score\(s\) are NaN or infinite \(first: trial 't1', enrolled 'c' = inf\)",
    ):
        check_finite(s, None, TIDS, ESPK, "w")
    m = np.array([[True, True, False], [True, True, True]])
    with pytest.raises(
        VoxMetricsInputError,
        match=r"1 listed score\(s\) are NaN or infinite \(first: trial 't2', enrolled 'a' = nan\)",
    ):
        check_finite(s, m, TIDS, ESPK, "w")
    m[1, 0] = False  # only unlisted cells are not finite
    check_finite(s, m, TIDS, ESPK, "w")


def test_check_finite_trusts_a_remembered_matrix():
    s = np.array([[0.1, np.nan], [0.3, 0.4]])
    s.setflags(write=False)
    remember_finite(s)  # a reader's word: not summed again (here deliberately wrong)
    check_finite(s, None, TIDS, ESPK[:2], "w")


def test_trial_attributes():
    attrs = trial_attributes({"sex": ["F", "M"], "age": np.array([30, 40])}, 2, "w")
    assert attrs["sex"].tolist() == ["F", "M"] and attrs["age"].dtype.kind == "i"
    text = trial_attributes({"note": np.array(["x", None], dtype=object)}, 2, "w")["note"]
    assert text.dtype.kind == "U" and text.tolist() == ["x", ""]
    assert trial_attributes(None, 2, "w") == {}
    for name in RESERVED_ATTRIBUTES:
        with pytest.raises(VoxMetricsInputError, match=f"cannot be called '{name}'"):
            trial_attributes({name: [1, 2]}, 2, "w")
    with pytest.raises(
        VoxMetricsInputError, match=r"attribute 'sex' has shape \(3,\); it needs one value per "
    ):
        trial_attributes({"sex": ["F", "M", "F"]}, 2, "w")


def test_enrolled_trials():
    got = enrolled_trials(np.array(["a", "x", "b"]), np.array(["a", "b"]), "w")
    assert got.tolist() == [True, False, True]
    with pytest.raises(
        VoxMetricsInputError, match=r"^w: none of the 2 trials has an enrolled speaker"
    ):
        enrolled_trials(np.array(["x", "y"]), np.array(["a", "b"]), "w")
