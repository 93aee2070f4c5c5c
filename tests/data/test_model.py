"""The data model (voxmetrics.data.model): ScoreMatrix and EmbeddingSet.

Derived values, validation at construction, cosine scoring, the ``train`` split,
``EmbeddingSet.score_matrix_with`` and the complete rows of a sparse list.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmetrics import EmbeddingSet, ExcludedTrialsWarning, ScoreMatrix, VoxMetricsInputError
from voxmetrics.data import read_embeddings
from voxmetrics.data.model import SPLIT_VALUES


def _sm(**kw):
    args = dict(
        scores=[[0.9, 0.1, 0.3], [0.2, 0.8, 0.4]],
        trial_ids=["t1", "t2"],
        trial_speakers=["b", "c"],
        enrol_speakers=["b", "c", "a"],
    )
    args.update(kw)
    scores = args.pop("scores")
    return ScoreMatrix.from_arrays(scores, **args)


def test_targets_pools_and_read_only():
    sm = _sm()
    assert sm.targets.tolist() == [0, 1]
    assert sm.tar.tolist() == [0.9, 0.8]
    assert sm.non.tolist() == [0.1, 0.3, 0.2, 0.4]
    with pytest.raises(ValueError):
        sm.scores[0, 0] = 1.0


def test_content_hash_tracks_content():
    assert _sm().content_hash == _sm().content_hash
    assert _sm().content_hash != _sm(scores=[[0.9, 0.1, 0.3], [0.2, 0.8, 0.41]]).content_hash
    assert _sm().content_hash != _sm(trial_ids=["t1", "t3"]).content_hash


def test_unenrolled_trial_is_left_out_of_1_to_n_and_counted_as_non_mated():
    with pytest.warns(ExcludedTrialsWarning, match="1 of 3 trials"):
        sm = _sm(
            scores=[[0.9, 0.1, 0.3], [0.2, 0.8, 0.4], [0.5, 0.5, 0.5]],
            trial_ids=["t1", "t2", "t3"],
            trial_speakers=["b", "c", "zz"],
        )
    assert sm.n_trials == 2 and sm.n_excluded_trials == 0 and sm.n_other_trials == 1
    assert sm.complete_rows() is sm  # the 1-to-N trials: its own
    view = sm.pairwise_view()
    assert view.n_pairs == 9 and view.tar.tolist() == [0.9, 0.8]
    assert sorted(view.non.tolist()) == [0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.5]
    with pytest.raises(VoxMetricsInputError, match="none of the 2 trials"):
        _sm(trial_speakers=["x", "y"])


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"scores": [[0.9, np.nan, 0.3], [0.2, 0.8, 0.4]]}, "NaN or infinite.*trial 't1'"),
        ({"scores": [[0.9, "x", 0.3], [0.2, 0.8, 0.4]]}, "not numeric"),
        ({"trial_ids": ["t1"]}, "shape mismatch: scores have 2 rows"),
        ({"enrol_speakers": ["b", "c"]}, "shape mismatch: scores have 3 columns"),
        ({"enrol_speakers": ["b", "c", "b"]}, "duplicate enrolled speaker.*'b'"),
        ({"trial_ids": ["t1", "t1"]}, "duplicate trial id"),
        ({"scores": [[0.9], [0.8]], "enrol_speakers": ["b"]}, "at least 2 enrolled"),
        ({"scores": [0.9, 0.8]}, "2-D array"),
        ({"attributes": {"sex": ["F"]}}, "attribute 'sex'.*one value per trial"),
    ],
)
def test_validation_messages(kw, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        _sm(**kw)


def _meta(rows):
    return pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"])


def test_cosine_scoring_against_mean_of_normalised_enrolment():
    meta = _meta(
        [
            ("e1", "a", "enrol", "eval"),
            ("e2", "a", "enrol", "eval"),
            ("e3", "b", "enrol", "eval"),
            ("t1", "a", "trial", "eval"),
            ("t2", "b", "trial", "eval"),
        ]
    )
    # a's enrolment: (10, 0) and (0, 1) -> normalised (1, 0), (0, 1) -> profile direction (1, 1)
    emb = [[10, 0], [0, 1], [0, 3], [1, 1], [3, 4]]
    sm = EmbeddingSet.from_arrays(emb, meta).score_matrix("eval")
    expected = np.array([[1.0, 1 / np.sqrt(2)], [7 / (5 * np.sqrt(2)), 0.8]])
    np.testing.assert_allclose(sm.scores, expected, rtol=1e-12)
    assert sm.enrol_speakers.tolist() == ["a", "b"]


@pytest.mark.parametrize(
    ("emb", "rows", "message"),
    [
        ([[1, 0]], [("e1", "a", "enrol", "eval"), ("t1", "a", "trial", "eval")], "shape mismatch"),
        (
            [[1, 0], [0, 0]],
            [("e1", "a", "enrol", "eval"), ("t1", "a", "trial", "eval")],
            "all zeros",
        ),
        (
            [[1, 0], [1, 1]],
            [("e1", "a", "enroll", "eval"), ("t1", "a", "trial", "eval")],
            r"row 1 \(first data row = 1\) has role 'enroll'",
        ),
        (
            [[1, 0], [1, np.inf]],
            [("e1", "a", "enrol", "eval"), ("t1", "a", "trial", "eval")],
            "'t1' has NaN",
        ),
    ],
)
def test_embedding_validation(emb, rows, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        EmbeddingSet.from_arrays(emb, _meta(rows))


def test_missing_metadata_column():
    with pytest.raises(VoxMetricsInputError, match=r"lacks column.*split"):
        EmbeddingSet.from_arrays(
            [[1.0]], pd.DataFrame({"utt_id": ["u"], "speaker": ["a"], "role": ["enrol"]})
        )


def test_score_matrix_of_one_system():
    # used to fail with pandas 3 ("output array is read-only": an in-place &= on .to_numpy())
    meta = _meta(
        [
            ("e1", "a", "enrol", "eval"),
            ("t1", "a", "trial", "eval"),
            ("e2", "b", "enrol", "eval"),
            ("t2", "b", "trial", "eval"),
        ]
        * 2
    )
    meta["utt_id"] = [f"u{k}" for k in range(8)]
    meta["system"] = ["original"] * 4 + ["anon"] * 4
    rng = np.random.default_rng(0)
    es = EmbeddingSet.from_arrays(rng.normal(size=(8, 3)), meta)
    sm = es.score_matrix("eval", system="anon")
    assert sm.trial_ids.tolist() == ["u5", "u7"]
    with pytest.raises(VoxMetricsInputError, match="found 0 enrolment and 0 trial"):
        es.score_matrix("eval", system="nope")


def _set(splits=("train", "dev", "eval")) -> EmbeddingSet:
    rows = []
    for split in splits:
        for s in range(3):
            for role in ("enrol", "trial", "trial"):
                rows.append((f"{split}{s}{role}{len(rows)}", f"{split}{s}", role, split, "F"))
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split", "sex"])
    return EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(len(rows), 4)), meta)


def test_the_train_split_is_accepted_never_scored_and_trained_on_first(tmp_path):
    es = _set()
    assert SPLIT_VALUES == ("dev", "eval", "train")
    assert es.splits() == ["dev", "eval"] and es.training_split() == "train"
    assert _set(("dev", "eval")).training_split() == "dev"
    assert _set(("eval",)).training_split() is None
    # the readers accept it too
    np.savez(tmp_path / "e.npz", embeddings=es.embeddings, utt_ids=es.meta["utt_id"].to_numpy(str))
    es.meta.to_csv(tmp_path / "e.csv", index=False)
    assert read_embeddings(tmp_path / "e.npz", metadata=tmp_path / "e.csv").training_split() == (
        "train"
    )
    bad = es.meta.assign(split=["test"] * len(es.meta))
    with pytest.raises(VoxMetricsInputError, match="use one of dev, eval, train"):
        EmbeddingSet.from_arrays(es.embeddings, bad)


def test_score_matrix_with_lays_out_the_matrix_as_score_matrix():
    es = _set()
    seen = {}

    def scorer(enrol, enrol_speakers, trials):
        seen["shapes"] = (enrol.shape, trials.shape)
        names = np.unique(enrol_speakers)
        return names, np.arange(trials.shape[0] * names.size, dtype=float).reshape(-1, names.size)

    got = es.score_matrix_with("eval", scorer)
    want = es.score_matrix("eval")
    assert seen["shapes"] == ((3, 4), (6, 4))  # the split's enrolment and trials, as given
    assert got.trial_ids.tolist() == want.trial_ids.tolist()
    assert got.enrol_speakers.tolist() == want.enrol_speakers.tolist()
    assert got.attributes["sex"].tolist() == want.attributes["sex"].tolist()
    assert got.scores[1, 2] == 5.0
