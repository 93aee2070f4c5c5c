"""voxmetrics.data.summary: score histograms (hand-counted), matrix descriptions, facts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from score_cases import score_matrix

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.data.summary import (
    ScoreHistogram,
    condition_facts,
    describe_matrix,
    score_histogram,
)
from voxmetrics.data.utility import Utility
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError

# trials t1..t3 of the enrolled a, b, c (mated scores 0.9, 0.8, 0.65 on the diagonal); t4 of z,
# who is not enrolled: its pairs are all non-mated
SCORES = np.array(
    [
        [0.9, 0.1, 0.4],
        [0.2, 0.8, 0.0],
        [0.5, 0.7, 0.65],
        [0.25, 0.35, 0.45],
    ]
)
MASK = np.array([[1, 1, 0], [0, 1, 1], [1, 1, 1], [1, 0, 0]], dtype=bool)


def _matrix(mask=None, source="x.csv") -> ScoreMatrix:
    def build() -> ScoreMatrix:
        return ScoreMatrix.from_arrays(
            SCORES,
            trial_ids=["t1", "t2", "t3", "t4"],
            trial_speakers=["a", "b", "c", "z"],
            enrol_speakers=["a", "b", "c"],
            source=source,
            mask=mask,
        )

    if mask is not None:  # a sparse list keeps the trial of z as a row
        return build()
    with pytest.warns(ExcludedTrialsWarning, match="1 of 4 trials have a speaker who is not"):
        return build()


def _small(speakers=("a", "b")) -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        [[0.9, 0.1], [0.2, 0.8]],
        trial_ids=["t1", "t2"],
        trial_speakers=list(speakers),
        enrol_speakers=list(speakers),
    )


def test_histogram_of_a_complete_matrix_counted_by_hand():
    h = score_histogram(_matrix(), bins=3)
    np.testing.assert_allclose(h.edges, [0.0, 0.3, 0.6, 0.9])
    assert h.mated.tolist() == [0, 0, 3]
    # non-mated: 0.1 0.2 0.0 0.25 | 0.4 0.5 0.35 0.45 | 0.7 (t4's three pairs included)
    assert h.non_mated.tolist() == [4, 4, 1]
    assert (h.n_bins, h.n_mated, h.n_non_mated, h.source) == (3, 3, 9, "x.csv")
    np.testing.assert_allclose(h.centers, [0.15, 0.45, 0.75])
    np.testing.assert_allclose(h.widths, [0.3, 0.3, 0.3])
    np.testing.assert_allclose(h.mated_density, [0.0, 0.0, 1 / 0.3])
    np.testing.assert_allclose((h.non_mated_density * h.widths).sum(), 1.0)
    assert h.mated.dtype == np.int64 and not h.edges.flags.writeable
    assert not h.mated.flags.writeable and not h.non_mated.flags.writeable


def test_histogram_of_a_sparse_list_counts_the_listed_pairs():
    h = score_histogram(_matrix(MASK), bins=3)
    np.testing.assert_allclose(h.edges, [0.0, 0.3, 0.6, 0.9])
    assert h.mated.tolist() == [0, 0, 3]
    # listed non-mated pairs: 0.1 0.0 0.25 | 0.5 | 0.7
    assert h.non_mated.tolist() == [3, 1, 1]


def test_histogram_of_constant_scores_has_one_visible_bin():
    sm = ScoreMatrix.from_arrays(
        np.full((2, 2), 0.5), trial_ids=["t1", "t2"], trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )  # fmt: skip
    h = score_histogram(sm, bins=2)
    assert h.edges.tolist() == [0.0, 0.5, 1.0]
    assert h.mated.tolist() == [0, 2] and h.non_mated.tolist() == [0, 2]


def test_histogram_to_dict():
    d = score_histogram(_small(), bins=2).to_dict()
    assert d == {
        "edges": [0.1, 0.5, 0.9],
        "mated": [0, 2],
        "non_mated": [2, 0],
        "source": "",
    }


@pytest.mark.parametrize("bins", [0, -3, True, 2.0, "10", None])
def test_histogram_bins_must_be_a_positive_integer(bins):
    with pytest.raises(VoxMetricsInputError, match=r"^`bins` must be a positive integer, got "):
        score_histogram(_small(), bins=bins)
    assert score_histogram(_small(), bins=np.int64(4)).n_bins == 4


def test_describe_matrix():
    assert describe_matrix("eval", _small()) == "eval: T = 2 trials × N = 2 enrolled, 0 excluded"
    assert describe_matrix("eval", _matrix()) == (
        "eval: T = 3 trials × N = 3 enrolled, 0 excluded, 1 with a speaker not enrolled "
        "(non-mated pairs of the pairwise metrics)"
    )
    assert describe_matrix("dev", _matrix(MASK)).endswith(
        "; a sparse trial list of 8 pairs (EER, Cllr and ZEBRA use every listed pair; complete "
        "trials for the 1-to-N metrics: 1 (against 3))"
    )


def test_describe_a_sparse_list_without_complete_trial():
    sm = ScoreMatrix.from_arrays(
        [[0.9, 0.1, np.nan], [np.nan, 0.8, 0.2], [0.3, np.nan, 0.7]],
        trial_ids=["t1", "t2", "t3"], trial_speakers=["a", "b", "c"],
        enrol_speakers=["a", "b", "c"], nan_missing=True,
    )  # fmt: skip
    assert describe_matrix("eval", sm) == (
        "eval: T = 3 trials × N = 3 enrolled, 0 excluded; a sparse trial list of 6 pairs (EER, "
        "Cllr and ZEBRA use every listed pair; complete trials for the 1-to-N metrics: none)"
    )


def test_condition_facts():
    meta = pd.DataFrame(
        {
            "utt_id": ["u1", "u2", "u3", "u4"],
            "speaker": ["a", "a", "b", "b"],
            "role": ["enrol", "trial", "enrol", "trial"],
            "split": ["eval"] * 4,
        }
    )
    es = EmbeddingSet.from_arrays(np.eye(4)[:, :3] + 0.1, meta)
    u = Utility(wer=0.0468, rho_f0=0.5, source="results.txt")
    cond = Condition(
        "c", eval=_small(), dev=_small(("d", "e")), embeddings=es, score_kind="distance", utility=u
    )
    assert condition_facts(cond) == [
        "4 utterances, d = 3",
        "eval: T = 2 trials × N = 2 enrolled, 0 excluded",
        "dev: T = 2 trials × N = 2 enrolled, 0 excluded",
        "distances negated on reading (higher = closer now)",
        "utility: WER 4.7%, rho_F0 50.0% (results.txt)",
    ]
    assert condition_facts(Condition("c", eval=_small())) == [
        "eval: T = 2 trials × N = 2 enrolled, 0 excluded"
    ]
    # a utility without numbers says nothing
    assert len(condition_facts(Condition("c", eval=_small(), utility=Utility(source="x")))) == 1


# ----------------------------------------------------------------------------------------------
# score_histogram of complete random matrices: every score counted once, densities,
# validation of bins, JSON, a frozen result
# ----------------------------------------------------------------------------------------------


def test_histogram_counts_every_score_once():
    rng = np.random.default_rng(0)
    sm = score_matrix(
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
    h = score_histogram(score_matrix(np.ones((3, 3))), bins=4)
    assert h.edges[0] == 0.5 and h.edges[-1] == 1.5
    assert h.n_mated == 3 and h.n_non_mated == 6


@pytest.mark.parametrize("bins", [0, -3, 2.5, True, "60"])
def test_histogram_rejects_bad_bins(bins):
    with pytest.raises(VoxMetricsInputError, match="bins"):
        score_histogram(score_matrix(np.eye(3)), bins=bins)


def test_histogram_to_dict_is_json_safe():
    import json

    d = score_histogram(score_matrix(np.eye(3)), bins=3).to_dict()
    assert json.loads(json.dumps(d))["mated"] == [0, 0, 3]


def test_histogram_type_is_frozen():
    h = ScoreHistogram(edges=np.array([0.0, 1.0]), mated=np.array([1]), non_mated=np.array([2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.source = "x"  # type: ignore[misc]
