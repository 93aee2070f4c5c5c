"""The score histogram (voxmetrics/data/summary.py): counts, bins, JSON, frozen."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.summary import ScoreHistogram, score_histogram
from voxmetrics.errors import VoxMetricsInputError


def _sm(scores, speakers=("a", "b", "c"), trial_speakers=None) -> ScoreMatrix:
    scores = np.asarray(scores, dtype=float)
    trial_speakers = trial_speakers or list(speakers[: scores.shape[0]])
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(scores.shape[0])],
        trial_speakers=trial_speakers,
        enrol_speakers=list(speakers),
    )


def test_histogram_counts_every_score_once():
    rng = np.random.default_rng(0)
    sm = _sm(
        rng.normal(size=(30, 4)),
        speakers=("a", "b", "c", "d"),
        trial_speakers=list("abcd" * 7 + "ab"),
    )
    h = score_histogram(sm, bins=17)
    assert h.edges.shape == (18,) and h.mated.shape == h.non_mated.shape == (17,)
    assert h.n_mated == 30 and h.n_non_mated == 30 * 3
    assert h.edges[0] == sm.scores.min() and h.edges[-1] == sm.scores.max()
    ref_tar, _ = np.histogram(sm.tar, bins=h.edges)
    ref_non, _ = np.histogram(sm.non, bins=h.edges)
    np.testing.assert_array_equal(h.mated, ref_tar)
    np.testing.assert_array_equal(h.non_mated, ref_non)
    for density in (h.mated_density, h.non_mated_density):
        assert np.sum(density * h.widths) == pytest.approx(1.0)
    assert not h.mated.flags.writeable


def test_histogram_of_constant_scores_has_a_visible_bin():
    h = score_histogram(_sm(np.ones((3, 3))), bins=4)
    assert h.edges[0] == 0.5 and h.edges[-1] == 1.5
    assert h.n_mated == 3 and h.n_non_mated == 6


@pytest.mark.parametrize("bins", [0, -3, 2.5, True, "60"])
def test_histogram_rejects_bad_bins(bins):
    with pytest.raises(VoxMetricsInputError, match="bins"):
        score_histogram(_sm(np.eye(3)), bins=bins)


def test_histogram_to_dict_is_json_safe():
    import json

    d = score_histogram(_sm(np.eye(3)), bins=3).to_dict()
    assert json.loads(json.dumps(d))["mated"] == [0, 0, 3]


def test_histogram_type_is_frozen():
    h = ScoreHistogram(edges=np.array([0.0, 1.0]), mated=np.array([1]), non_mated=np.array([2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.source = "x"  # type: ignore[misc]
