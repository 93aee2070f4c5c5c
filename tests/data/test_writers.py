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
