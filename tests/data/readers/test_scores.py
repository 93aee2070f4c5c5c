"""Any score file (voxmetrics.data.readers.scores): read_scores in every format, negate_scores."""

from __future__ import annotations

import io

import pytest
from sparse_cases import (
    block_mask,
    full_matrix,
    kaldi_files,
    listed_rows,
    npz_bytes,
)

from voxmetrics.data import read_scores
from voxmetrics.errors import IncompleteScoresWarning


def test_every_format_reads_the_same_sparse_list():
    sm = full_matrix()
    mask = block_mask(sm)
    df = listed_rows(sm, mask)
    from_csv = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    buf = io.BytesIO()
    df.to_parquet(buf)
    from_parquet = read_scores(buf.getvalue(), name="s.parquet")
    from_mask = read_scores(npz_bytes(sm, mask), name="s.npz")
    with pytest.warns(IncompleteScoresWarning, match="216 NaN"):  # NaN: only when asked for
        from_nan = read_scores(npz_bytes(sm, mask, nan=True), name="s.npz", allow_incomplete=True)
    scores, key = kaldi_files(df)
    from_kaldi = read_scores(scores, trials=key, name="scores", trials_name="trials")
    pairs = zip(sm.trial_ids, sm.trial_speakers, strict=True)
    u2s = "".join(f"{t} {s}\n" for t, s in pairs).encode()
    from_u2s = read_scores(scores, trials=u2s, name="scores", trials_name="utt2spk")
    for other in (from_parquet, from_mask, from_nan):
        assert from_csv.equals(other)
    for other in (from_kaldi, from_u2s):  # Kaldi carries no attributes
        assert other.n_pairs == from_csv.n_pairs
        assert sorted(other.tar.tolist()) == sorted(from_csv.tar.tolist())
        assert sorted(other.non.tolist()) == sorted(from_csv.non.tolist())
    back = from_csv.to_long_frame()  # the listed pairs only
    assert len(back) == int(mask.sum())
    assert read_scores(back.to_csv(index=False).encode(), name="b.csv").equals(from_csv)
