"""The data model (voxmetrics.data.model): ScoreMatrix and EmbeddingSet.

Derived values, validation at construction, cosine scoring, the ``train`` split,
``EmbeddingSet.score_matrix_with`` and the complete rows of a sparse list.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    refused,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sparse_cases import block_mask, full_matrix, listed_rows, npz_bytes, with_mask

from tests.data.readers.input_error_cases import input_error, long_csv
from voxmetrics import EmbeddingSet, ExcludedTrialsWarning, ScoreMatrix, VoxMetricsInputError
from voxmetrics.data import read_embeddings, read_scores
from voxmetrics.data.model import SPLIT_VALUES
from voxmetrics.limits import Limits, use_limits


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


def _by_hand(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Mated and non-mated scores of the listed rows, one by one."""
    mated = (df.trial_speaker == df.enrol_speaker).to_numpy()
    return df.score.to_numpy()[mated], df.score.to_numpy()[~mated]


def test_complete_input_allocates_no_mask():
    sm = full_matrix()
    assert sm.mask is None and sm.is_complete and sm.n_pairs == sm.shape[0] * sm.shape[1]
    assert sm.complete_rows() is sm
    full_mask = ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        mask=np.ones(sm.shape, dtype=bool),
    )
    assert full_mask.mask is None  # a mask listing every pair is dropped
    assert read_scores(npz_bytes(sm, None), name="s.npz").mask is None


def test_sparse_pools_are_the_listed_pairs():
    sm = full_matrix()
    mask = block_mask(sm)
    sparse = read_scores(listed_rows(sm, mask).to_csv(index=False).encode(), name="s.csv")
    tar, non = _by_hand(listed_rows(sm, mask))
    assert sparse.n_pairs == int(mask.sum()) == tar.size + non.size
    assert sorted(sparse.tar.tolist()) == sorted(tar.tolist())
    assert sorted(sparse.non.tolist()) == sorted(non.tolist())
    assert np.isnan(sparse.scores[~sparse.mask]).all()


def test_complete_rows_of_a_matrix_with_holes():
    sm = full_matrix()
    mask = np.ones(sm.shape, dtype=bool)
    mask[0, 5] = mask[7, 1] = False  # trials u000 and u007 miss one pair each
    sparse = with_mask(sm, mask)
    full = sparse.complete_rows()
    keep = np.ones(sm.n_trials, dtype=bool)
    keep[[0, 7]] = False
    assert full.is_complete and full.trial_ids.tolist() == sm.trial_ids[keep].tolist()
    assert full.enrol_speakers.tolist() == sm.enrol_speakers.tolist()
    np.testing.assert_array_equal(full.scores, sm.scores[keep])


def test_complete_rows_drop_identities_never_listed():
    s = [[0.9, 0.1, np.nan], [0.2, 0.8, np.nan]]
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b", "c"],
        nan_missing=True,
    )
    full = sm.complete_rows()
    assert full.enrol_speakers.tolist() == ["a", "b"] and full.n_trials == 2


def test_no_complete_row_is_none():
    sm = full_matrix()
    sparse = ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        mask=block_mask(sm),
    )
    assert sparse.complete_rows() is None


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(2, 5), st.integers(0, 2**32 - 1), st.floats(0.2, 0.95))
def test_complete_rows_invariants(t, n, seed, density):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, size=t)
    mask = rng.random((t, n)) < density
    mask[np.arange(t), targets] = True  # every trial lists its own speaker
    mask[0, (targets[0] + 1) % n] = True  # and one non-mated pair at least
    scores = rng.normal(size=(t, n))
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(t)],
        trial_speakers=[f"s{j}" for j in targets],
        enrol_speakers=[f"s{j}" for j in range(n)],
        mask=mask,
    )
    assert sm.n_pairs == int(mask.sum()) == sm.tar.size + sm.non.size
    assert sm.tar.size == t
    full = sm.complete_rows()
    cols = mask.any(axis=0)
    rows = mask[:, cols].all(axis=1)
    if full is None:
        assert not rows.any() or cols.sum() < 2
        return
    assert full.is_complete
    assert full.trial_ids.tolist() == [f"t{i}" for i in np.flatnonzero(rows)]
    np.testing.assert_array_equal(full.scores, scores[np.ix_(rows, cols)])
    np.testing.assert_array_equal(
        full.targets, np.searchsorted(np.flatnonzero(cols), targets[rows])
    )


def test_model_refuses_what_it_cannot_use():
    kw = dict(trial_ids=["t1", "t2"], trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    with pytest.raises(VoxMetricsInputError, match=r"trial.*no listed pair.*'t2'"):
        ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], mask=[[True, True], [False, False]], **kw)
    with pytest.raises(VoxMetricsInputError, match=r"no mated \(target\) pair is listed"):
        ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], mask=[[False, True], [True, False]], **kw)
    with pytest.raises(VoxMetricsInputError, match=r"mask has dtype"):
        ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], mask=[[1, 1], [1, 0]], **kw)
    with pytest.raises(VoxMetricsInputError, match=r"shape mismatch: the mask"):
        ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], mask=[[True, True]], **kw)
    with pytest.raises(VoxMetricsInputError, match=r"infinite.*'t1'"):
        ScoreMatrix.from_arrays([[np.inf, 0.1], [0.2, 0.8]], nan_missing=True, **kw)
    with pytest.raises(VoxMetricsInputError, match=r"NaN or infinite"):  # NaN is opt-in
        ScoreMatrix.from_arrays([[np.nan, 0.1], [0.2, 0.8]], **kw)


def test_complete_rows_need_their_own_speaker_listed():
    # 'c' is never listed: t3 (speaker c) is listed against every listed identity, not its own
    s = [[0.9, 0.1, np.nan], [0.2, 0.8, np.nan], [0.3, 0.4, np.nan]]
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["a", "b", "c"],
        enrol_speakers=["a", "b", "c"],
        nan_missing=True,
    )
    full = sm.complete_rows()
    assert full.trial_ids.tolist() == ["t1", "t2"] and full.targets.tolist() == [0, 1]
    assert sm.tar.tolist() == [0.9, 0.8] and sorted(sm.non.tolist()) == [0.1, 0.2, 0.3, 0.4]


def test_with_attributes_by_trial_id():
    sm = full_matrix()
    table = pd.DataFrame({"trial_id": sm.trial_ids[::-1], "age": np.arange(sm.n_trials)[::-1]})
    out = sm.with_attributes(table)
    assert out.attributes["age"].tolist() == list(range(sm.n_trials))
    assert out.attributes["sex"].tolist() == sm.attributes["sex"].tolist()
    dup = pd.concat([table, table.iloc[:1]])
    with pytest.raises(VoxMetricsInputError, match=r"listed twice"):
        sm.with_attributes(dup)


def test_embedding_score_matrix_is_capped_before_allocation():
    from voxmetrics.synth import demo_study

    es = demo_study(n_speakers=6).conditions[0].embeddings
    with use_limits(Limits(max_cells=10)):
        refused(es.score_matrix, "eval", match=r"\(48 trials x 6 enrolled\).*max_cells=10")


# ----------------------------------------------------------------------------------------------
# Scores read from a file that no 1-to-N search can use: one enrolled identity, no trial of
# an enrolled speaker
# ----------------------------------------------------------------------------------------------


def test_fewer_than_two_enrolled():
    with input_error(r"s\.csv: only 1 enrolled identity; a 1-to-N search needs at least 2"):
        read_scores(long_csv("t1,a,a,0.9\nt2,b,a,0.1\n"), name="s.csv")


def test_no_trial_with_an_enrolled_speaker():
    data = long_csv("t1,x,a,0.9\nt1,x,b,0.1\nt2,y,a,0.2\nt2,y,b,0.8\n")
    with input_error(r"s\.csv: none of the 2 trials has an enrolled speaker.*same labels"):
        read_scores(data, name="s.csv")
