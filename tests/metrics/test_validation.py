"""Input checks of the metrics (voxmetrics.metrics._validation).

Bad input is one ``VoxMetricsInputError`` naming the argument; a matrix is checked for finite
scores once, and only a matrix that cannot change afterwards (read-only, its base too) is
remembered as checked; the tie rule is one of two names.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.data.readers.input_error_cases import npz_score_file
from voxmetrics import (
    VoxMetricsInputError,
    baseline_metrics,
    cllr,
    eer,
    eer_result,
    eer_rocch,
    linkability,
    mated_pools,
    min_cllr,
)
from voxmetrics.metrics import zebra
from voxmetrics.metrics.pools import check_ties

# --------------------------------------------------------------------------------------------
# Bad input names the argument
# --------------------------------------------------------------------------------------------


GOOD_S = [[0.9, 0.1], [0.2, 0.8]]


@pytest.mark.parametrize(
    ("func", "args", "argument"),
    [
        (eer, ([], [1.0]), "tar"),
        (eer, ([1.0], []), "non"),
        (eer, ([1.0], [0.5, np.nan]), "non"),
        (eer, ([np.nan], [0.5]), "tar"),
        (eer, ([1.0, np.inf], [0.5]), "tar"),
        (eer, ("abc", [1.0]), "tar"),
        (eer, ([1.0], ["x", "y"]), "non"),
        (eer_result, ([], [1.0]), "tar"),
        (eer_rocch, ([1.0], [np.nan]), "non"),
        (min_cllr, ([np.nan], [0.0]), "tar"),
        (cllr, ([], [0.0]), "tar"),
        (cllr, ([0.0], [np.nan]), "non"),
        (cllr, ("abc", [0.0]), "tar"),
        (linkability, ([[1.0], [2.0]], [0, 0]), "scores"),  # N = 1
        (linkability, ([[1.0, np.nan]], [0]), "scores"),
        (linkability, ([["a", "b"]], [0]), "scores"),
        (linkability, (GOOD_S, [0, 2]), "targets"),
        (linkability, (GOOD_S, [-1, 0]), "targets"),
        (linkability, (GOOD_S, [0]), "targets"),
        (mated_pools, ([[1.0], [2.0]], [0, 0]), "scores"),
        (mated_pools, (GOOD_S, [0, 5]), "targets"),
        (baseline_metrics, ([[1.0], [2.0]], [0, 0]), "scores"),
        (baseline_metrics, (GOOD_S, [2, 0]), "targets"),
    ],
)
def test_invalid_input_raises_naming_the_argument(func, args, argument):
    with pytest.raises(VoxMetricsInputError, match=f"`{argument}`"):
        func(*args)


def test_input_error_is_a_value_error():
    with pytest.raises(ValueError, match="empty"):
        eer([], [1.0])


# --------------------------------------------------------------------------------------------
# The tie rule
# --------------------------------------------------------------------------------------------


def test_ties_change_what_they_should():
    # integer-rounded scores: ZEBRA's worst case puts non-targets first, so ties give evidence
    # to the attacker; min Cllr and D_ECE under the reference rule (targets first) do not
    tar = np.array([1.0, 2.0, 2.0, 3.0])
    non = np.array([0.0, 1.0, 2.0, 2.0])
    assert min_cllr(tar, non, ties="attacker") < min_cllr(tar, non)
    assert zebra(tar, non, ties="attacker").d_ece > zebra(tar, non).d_ece
    assert zebra([1.0, 2.0], [1.0, 2.0]).log10_l > 0
    assert eer_result([1.0, 2.0], [1.0, 2.0], ties="attacker").eer <= 0.5
    with pytest.raises(VoxMetricsInputError, match="ties"):
        check_ties("optimistic")


# --------------------------------------------------------------------------------------------
# The matrix's finiteness: checked once, remembered only when it cannot change
# --------------------------------------------------------------------------------------------


def test_check_matrix_remembers_only_matrices_that_cannot_change():
    from voxmetrics.metrics._validation import check_matrix

    t = np.array([0, 1])
    s = np.ones((2, 3))
    check_matrix(s, t)
    s[0, 0] = np.nan  # a writeable matrix is checked again every time
    with pytest.raises(VoxMetricsInputError, match="NaN"):
        check_matrix(s, t)
    s[0, 0] = 1.0
    view = s[:]
    view.setflags(write=False)  # read-only, but its base can still be written
    check_matrix(view, t)
    s[1, 2] = np.inf
    with pytest.raises(VoxMetricsInputError, match="NaN"):
        check_matrix(view, t)


def test_npz_matrix_is_known_finite_and_not_summed_again(tmp_path):
    from voxmetrics.data import _finite, model, read_scores
    from voxmetrics.metrics._validation import check_matrix

    s = np.arange(12, dtype=np.float32).reshape(4, 3) - np.float32(-0.0)
    sm = read_scores(npz_score_file(tmp_path / "x.npz", s))
    assert _finite.known_finite(sm.scores) and _finite.frozen(sm.scores)
    # the metrics take it as it is, known finite: not summed again
    got, _ = check_matrix(sm.scores, sm.targets)
    assert got is sm.scores
    again = model.ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        copy=False,
    )
    assert again.scores is sm.scores and _finite.known_finite(again.scores)


def test_a_writeable_matrix_is_never_taken_as_finite():
    from voxmetrics.data import _finite, model
    from voxmetrics.metrics._validation import check_matrix

    s = np.arange(6, dtype=np.float64).reshape(3, 2)
    labels = {"trial_ids": ["a", "b", "c"], "trial_speakers": ["x", "y", "x"]}
    sm = model.ScoreMatrix.from_arrays(s, enrol_speakers=["x", "y"], **labels)  # a copy
    assert _finite.known_finite(sm.scores) and not _finite.known_finite(s)
    s[0, 0] = np.inf  # the caller's array, changed afterwards, is checked again
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        check_matrix(s, np.array([0, 1, 0]))
    ro = s.view()
    ro.flags.writeable = False  # read-only, but its base is not: never remembered
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        check_matrix(ro, np.array([0, 1, 0]))
    assert not _finite.frozen(ro)
