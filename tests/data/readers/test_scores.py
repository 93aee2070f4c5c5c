"""Any score file (voxmetrics.data.readers.scores): read_scores in every format, negate_scores."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from sparse_cases import (
    block_mask,
    full_matrix,
    kaldi_files,
    listed_rows,
    npz_bytes,
)

from tests.data.readers.input_error_cases import GOOD_ROWS, KALDI_KEY, input_error, long_csv
from voxmetrics.data import (
    read_scores,
    write_scores,
)
from voxmetrics.errors import IncompleteScoresWarning

from .round_trip_cases import assert_same_matrix
from .round_trip_cases import studies as _studies


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


SUFFIX = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz"])
def test_scores_round_trip(small_sm, tmp_path, fmt):
    path = tmp_path / f"study{SUFFIX[fmt]}"
    assert write_scores(small_sm, path, format=fmt) == [path]
    data = path.read_bytes()
    for got in (
        read_scores(path),
        read_scores(path, format=fmt),
        read_scores(str(path)),
        read_scores(data),
        read_scores(data, format=fmt, name="upload"),
    ):
        assert_same_matrix(got, small_sm)
        assert set(got.attributes) == {"sex", "age_group"}
        assert got.n_excluded_trials == 0
    assert read_scores(path).source == path.name
    assert read_scores(data).source == "uploaded file"
    assert read_scores(data, name="x.bin").source == "x.bin"


@settings(max_examples=40, deadline=None)
@given(sm=_studies())
def test_any_labels_and_scores_round_trip_exactly(sm):
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("csv", "parquet", "npz"):
            (path,) = write_scores(sm, Path(tmp) / f"s.{fmt}", format=fmt)
            assert_same_matrix(read_scores(path.read_bytes()), sm)


# ----------------------------------------------------------------------------------------------
# Bad input to read_scores: a missing file, a wrong explicit format, a stray trials file,
# an NPY or a Kaldi key given as the scores
# ----------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    with input_error(r"nope\.csv: no such file .*check the path"):
        read_scores(tmp_path / "nope.csv")


def test_wrong_explicit_format_and_stray_trials(tmp_path, small_sm):
    (path,) = write_scores(small_sm, tmp_path / "s.parquet", format="parquet")
    with input_error(r"s\.parquet: format='csv' was given but the file is PARQUET"):
        read_scores(path, format="csv")
    with input_error(
        r"s\.parquet: format='npz' was given but the file is PARQUET; pass the right "
        "format or format='auto'"
    ):
        read_scores(path, format="npz")
    with input_error(
        r"format='parquet' was given but the file does not start with the PARQUET "
        "signature"
    ):
        read_scores(long_csv(GOOD_ROWS), format="parquet")
    with input_error(r"s\.parquet: a trials \(key\) file was given but the scores are parquet"):
        read_scores(path, trials=b"a t1 target\n")
    with input_error(r"unknown format 'xls'; use one of auto, csv, parquet, npz, kaldi"):
        read_scores(path, format="xls")  # type: ignore[arg-type]


def test_npy_is_not_a_score_file():
    buf = io.BytesIO()
    np.save(buf, np.eye(3))
    with input_error(r"s\.npy: not a score file: an NPY file holds one bare array without labels"):
        read_scores(buf.getvalue(), name="s.npy")


def test_key_file_given_as_the_scores():
    with input_error(
        r"key: not a score file: this is a Kaldi key file .*pass the scores file as "
        r"the source and this one as trials=\.\.\. \(command line: --trials\)"
    ):
        read_scores(KALDI_KEY, name="key")
