"""The writers (voxmetrics.data.writers): every format reads back to an equal object."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sparse_cases import (
    block_mask,
    full_matrix,
    listed_rows,
)

from tests.data.readers.input_error_cases import input_error
from voxmetrics.data import (
    ScoreMatrix,
    read_scores,
    write_scores,
)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz", "kaldi"])
def test_writers_round_trip_a_sparse_list(tmp_path, fmt):
    from voxmetrics.data import write_scores

    sm = full_matrix()
    sparse = read_scores(listed_rows(sm, block_mask(sm)).to_csv(index=False).encode(), name="s.csv")
    paths = write_scores(sparse, tmp_path / f"s.{fmt}", format=fmt)
    back = read_scores(paths[0], trials=paths[1] if fmt == "kaldi" else None)
    assert back.n_pairs == sparse.n_pairs
    if fmt == "kaldi":  # no attributes in Kaldi files
        assert sorted(back.non.tolist()) == sorted(sparse.non.tolist())
    else:
        assert back.equals(sparse)


def test_writers_never_pickle(small_sm, tmp_path):
    obj = ScoreMatrix.from_arrays(
        small_sm.scores,
        trial_ids=small_sm.trial_ids,
        trial_speakers=small_sm.trial_speakers,
        enrol_speakers=small_sm.enrol_speakers,
        attributes={"note": np.array(["x", None] * 6, dtype=object)},
    )
    (path,) = write_scores(obj, tmp_path / "o.npz", format="npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = read_scores(path)
    assert got.attributes["note"].tolist() == ["x", ""] * 6


# ----------------------------------------------------------------------------------------------
# The Kaldi writer refuses labels the format cannot hold
# ----------------------------------------------------------------------------------------------


def test_kaldi_writer_refuses_labels_it_cannot_hold(tmp_path):
    from voxmetrics.data import ScoreMatrix

    sm = ScoreMatrix.from_arrays(
        np.eye(2), trial_ids=["t 1", "t2"], trial_speakers=["a", "b"], enrol_speakers=["a", "b"]
    )
    with input_error(
        r"trial id 't 1' is empty or contains whitespace or a quote, which the Kaldi "
        "format cannot hold; write CSV, Parquet or NPZ instead"
    ):
        write_scores(sm, tmp_path / "s", format="kaldi")
