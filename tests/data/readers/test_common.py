"""voxmetrics.data.readers._common: sources, column names, line numbers and incomplete files."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from voxmetrics.data import readers
from voxmetrics.data.readers._common import (
    FORMATS,
    LABEL_COLUMNS,
    SCORE_COLUMNS,
    Where,
    as_str_array,
    attribute_array,
    incomplete,
    load_source,
)
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError
from voxmetrics.limits import get_limits, use_limits


def test_public_names_are_the_packages():
    assert readers.SCORE_COLUMNS is SCORE_COLUMNS
    assert SCORE_COLUMNS == ("trial_id", "trial_speaker", "enrol_speaker", "score")
    assert readers.FORMATS is FORMATS and "kaldi-key" in FORMATS
    # every label column is read as text; the score is not a label
    assert {"trial_id", "enrol_speaker", "utt_id", "speaker", "system"} <= set(LABEL_COLUMNS)
    assert "score" not in LABEL_COLUMNS


def test_load_source_bytes_and_paths(tmp_path):
    assert load_source(b"abc", None) == (b"abc", "uploaded file")
    assert load_source(bytearray(b"ab"), "up.csv") == (b"ab", "up.csv")
    assert load_source(memoryview(b"xy"), "m") == (b"xy", "m")
    p = tmp_path / "s.csv"
    p.write_bytes(b"1,2\n")
    assert load_source(p, None) == (b"1,2\n", "s.csv")
    assert load_source(str(p), "named") == (b"1,2\n", "named")
    with pytest.raises(VoxMetricsInputError, match=r"^gone\.csv: no such file"):
        load_source(tmp_path / "gone.csv", None)
    with pytest.raises(TypeError, match=r"source must be a path .* got int"):
        load_source(3, None)  # type: ignore[arg-type]


def test_load_source_refuses_bytes_over_the_limit():
    small = dataclasses.replace(get_limits(), max_file_bytes=4)
    with use_limits(small):
        assert load_source(b"1234", None)[0] == b"1234"
        with pytest.raises(
            VoxMetricsInputError,
            match=r"^up: the file is 5 bytes, over the limit max_file_bytes=4;",
        ):
            load_source(b"12345", "up")


def test_where_names_lines_or_rows():
    w = Where("f.csv", "line", np.array([2, 3, 7]))
    assert w(2) == "line 7" and w.name == "f.csv"
    assert Where("f.parquet", "row", np.array([0, 1]))(1) == "row 1"


def test_incomplete_refuses_or_warns():
    with pytest.raises(VoxMetricsInputError) as info:
        incomplete("f.csv: 3 pairs are missing", 3, False)
    text = str(info.value)
    assert text.startswith("f.csv: 3 pairs are missing. Write the file again complete")
    assert "allow_incomplete=True" in text and "--allow-incomplete" in text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        incomplete("f.csv: 1,234 pairs are missing", 1234, True)
    assert len(caught) == 1 and caught[0].category is IncompleteScoresWarning
    assert "1,234 pair(s) are left out and the metrics use the listed pairs only" in str(
        caught[0].message
    )


def test_as_str_array():
    got = as_str_array(iter([1, "a", 2.5]))
    assert got.dtype.kind == "U" and got.tolist() == ["1", "a", "2.5"]


def test_attribute_array():
    ints = np.array([1, 2])
    assert attribute_array(ints) is ints  # numbers stay numbers
    when = np.array(["2024-01-01"], dtype="datetime64[D]")
    assert attribute_array(when) is when
    text = attribute_array(np.array(["F", "M"], dtype=object))
    assert text.dtype.kind == "U" and text.tolist() == ["F", "M"]
    gaps = attribute_array(np.array(["F", None, float("nan")], dtype=object))
    assert gaps.dtype == object and gaps.tolist() == ["F", None, None]
