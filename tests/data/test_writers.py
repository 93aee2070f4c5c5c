"""The writers (voxmetrics.data.writers): every format reads back to an equal object."""

from __future__ import annotations

import pytest
from sparse_cases import (
    block_mask,
    full_matrix,
    listed_rows,
)

from voxmetrics.data import read_scores


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
