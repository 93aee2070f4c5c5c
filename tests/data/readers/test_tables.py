"""CSV and Parquet tables (voxmetrics.data.readers.tables): columns named twice, damaged Parquet."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    parquet_bytes,
    parquet_rows,
    refused,
)

from tests.data.readers.input_error_cases import GOOD_ROWS, input_error, long_csv
from voxmetrics.cli import main
from voxmetrics.data import (
    read_scores,
    read_table,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import Limits, use_limits


def test_read_table_csv_and_parquet(tmp_path):
    df = pd.DataFrame({"utt_id": ["001", "002"], "speaker": ["a", "b"], "x": [1.5, 2.0]})
    df.to_parquet(tmp_path / "t.parquet")
    df.to_csv(tmp_path / "t.csv", index=False)
    for p in (tmp_path / "t.parquet", tmp_path / "t.csv"):
        got = read_table(p)
        assert got["utt_id"].tolist() == ["001", "002"]
        assert got["x"].tolist() == [1.5, 2.0]
    assert read_table(io.BytesIO(b"a,b\n1,2\n").getvalue()).shape == (1, 2)


_LONG = (
    ["t1", "a", "a", "0.9"],
    ["t1", "a", "b", "0.1"],
    ["t2", "b", "a", "0.2"],
    ["t2", "b", "b", "0.8"],
)


def _csv(names: list[str], rows: list[list[Any]]) -> bytes:
    return "".join(",".join(map(str, r)) + "\n" for r in [names, *rows]).encode()


def _twice(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Command lines whose input names a column twice, and what the message must say."""
    files = {}
    names = ["trial_id", "trial_speaker", "score", "enrol_speaker", "score"]
    rows = [[t, s, float(v), e, float(v)] for t, s, e, v in _LONG]
    (tmp_path / "s.csv").write_bytes(_csv(names, rows))
    files["long-csv"] = (
        ["evaluate", "s.csv"],
        "column 'score' appears twice in s.csv (columns 3 and 5)",
    )
    (tmp_path / "s.parquet").write_bytes(parquet_rows(names, rows))
    files["long-parquet"] = (
        ["evaluate", "s.parquet"],
        "column 'score' appears twice in s.parquet (columns 3 and 5)",
    )
    spaced = ["trial_id", " trial_speaker", "enrol_speaker", "score", "trial_speaker "]
    (tmp_path / "sp.csv").write_bytes(_csv(spaced, [[t, s, e, v, s] for t, s, e, v in _LONG]))
    files["long-csv-spaces"] = (
        ["evaluate", "sp.csv"],
        "column 'trial_speaker' appears twice in sp.csv (columns 2 and 5)",
    )
    ok = _csv(["trial_id", "trial_speaker", "enrol_speaker", "score"], list(_LONG))
    (tmp_path / "ok.csv").write_bytes(ok)
    (tmp_path / "attrs.csv").write_bytes(
        _csv(["trial_id", "sex", "age", "sex"], [["t1", "F", 30, "F"], ["t2", "M", 40, "M"]])
    )
    files["trial-attributes"] = (
        ["evaluate", "ok.csv", "--by", "sex", "--trial-attributes", "attrs.csv"],
        "column 'sex' appears twice in attrs.csv (columns 2 and 4)",
    )
    meta = ["utt_id", "speaker", "role", "split", "speaker", "speaker"]
    utts = [
        ["e1", "a", "enrol", "eval"],
        ["e2", "b", "enrol", "eval"],
        ["u1", "a", "trial", "eval"],
    ]
    (tmp_path / "meta.csv").write_bytes(_csv(meta, [[*u, u[1], u[1]] for u in utts]))
    np.savez(tmp_path / "emb.npz", embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "u1"]))
    files["metadata-csv"] = (
        ["evaluate", "--embeddings", "emb.npz", "--metadata", "meta.csv"],
        "column 'speaker' appears 3 times in meta.csv (columns 2, 5 and 6)",
    )
    emb_rows = [[*u, [1.0, 0.0]] for u in utts]
    (tmp_path / "emb.parquet").write_bytes(
        parquet_rows(
            ["utt_id", "speaker", "role", "utt_id", "embedding"],
            [[u[0], u[1], u[2], u[0], e] for *u, e in emb_rows],
        )
    )
    files["embeddings-parquet"] = (
        ["evaluate", "--embeddings", "emb.parquet"],
        "column 'utt_id' appears twice in emb.parquet (columns 1 and 4)",
    )
    (tmp_path / "labels.csv").write_bytes(_csv(["utt_id", "speaker", "sex"], [["u1", "a", "F"]]))
    (tmp_path / "pred.csv").write_bytes(
        _csv(["utt_id", "attribute", "class", "score", "score"], [["u1", "sex", "F", 0.9, 0.9]])
    )
    files["predictions-csv"] = (
        ["sbls", "--metadata", "labels.csv", "--predictions", "pred.csv"],
        "column 'score' appears twice in pred.csv (columns 4 and 5)",
    )
    return files


@pytest.mark.parametrize(
    "case",
    [
        "long-csv",
        "long-parquet",
        "long-csv-spaces",
        "trial-attributes",
        "metadata-csv",
        "embeddings-parquet",
        "predictions-csv",
    ],
)
def test_a_column_named_twice_is_named_on_the_command_line(tmp_path, monkeypatch, capsys, case):
    argv, message = _twice(tmp_path)[case]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "; keep one" in err, err
    assert ".1" not in err and "Traceback" not in err and err.count("\n") == 1


def test_a_column_named_twice_through_python_m_voxmetrics(tmp_path):
    files = _twice(tmp_path)
    for case in ("long-csv", "long-parquet"):
        argv, message = files[case]
        out = subprocess.run(
            [sys.executable, "-m", "voxmetrics", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        )
        assert out.returncode == 2, out.stderr
        assert message in out.stderr and "Traceback" not in out.stderr
        assert out.stderr.count("\n") == 1, out.stderr  # one line, no Arrow internals


def test_read_table_and_the_readers_name_a_column_named_twice():
    data = _csv(["utt_id", "speaker", "utt_id"], [["u1", "a", "u1"]])
    with pytest.raises(
        VoxMetricsInputError, match=r"column 'utt_id' appears twice in t\.csv \(columns 1 and 3\)"
    ):
        read_table(data, name="t.csv")
    names = ["trial_id", "trial_speaker", "enrol_speaker", "score", "score", "score"]
    with pytest.raises(
        VoxMetricsInputError, match=r"'score' appears 3 times in s\.parquet \(columns 4, 5 and 6\)"
    ):
        read_scores(parquet_rows(names, [[*r, 1.0, 1.0] for r in _LONG]), name="s.parquet")
    # columns without a name (trailing commas) are not named twice
    sm = read_scores(
        _csv(
            ["trial_id", "trial_speaker", "enrol_speaker", "score", "", ""],
            [[*r, "", ""] for r in _LONG],
        )
    )
    assert sm.shape == (2, 2)


def _damaged_parquet() -> dict[str, bytes]:

    names = ["trial_id", "trial_speaker", "enrol_speaker", "score"]
    rows = [[t, s, e, float(v)] for t, s, e, v in _LONG]
    good = bytearray(parquet_rows(names, rows))
    for i in range(40, 120):  # the data pages, not the footer
        good[i] ^= 0x5A
    odd_index = {"index_columns": [{"kind": "range", "start": "x", "stop": 2, "step": 1}]}
    return {
        "flipped-pages": bytes(good),
        "pandas-metadata-not-json": parquet_rows(names, rows, {b"pandas": b"{not json"}),
        "pandas-metadata-odd-index": parquet_rows(
            names, rows, {b"pandas": json.dumps({**odd_index, "columns": []}).encode()}
        ),
    }


@pytest.mark.parametrize(
    "case", ["flipped-pages", "pandas-metadata-not-json", "pandas-metadata-odd-index"]
)
def test_a_damaged_parquet_file_is_one_line_naming_the_file(tmp_path, capsys, case):
    (tmp_path / "s.parquet").write_bytes(_damaged_parquet()[case])
    assert main(["evaluate", str(tmp_path / "s.parquet")]) == 2
    err = capsys.readouterr().err
    assert "s.parquet: damaged or unsupported Parquet file: it cannot be read as Parquet (" in err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    with pytest.raises(VoxMetricsInputError, match="damaged or unsupported Parquet file"):
        read_table(_damaged_parquet()[case], name="s.parquet")


_PQ_NAMES = ["trial_id", "trial_speaker", "enrol_speaker", "score"]


_PQ_COLUMNS = [
    ["t1", "t1", "t2", "t2"],
    ["a", "a", "b", "b"],
    ["a", "b", "a", "b"],
    [0.9, 0.1, 0.2, 0.8],
]


PARQUET_CASES = {
    "score-column-twice": (
        lambda: parquet_bytes([*_PQ_NAMES, "score"], [*_PQ_COLUMNS, _PQ_COLUMNS[3]]),
        r"column 'score' appears twice in s\.parquet \(columns 4 and 5\); keep one",
    ),
    "pandas-metadata-not-json": (
        lambda: parquet_bytes(_PQ_NAMES, _PQ_COLUMNS, {b"pandas": b"{not json"}),
        r"s\.parquet: damaged or unsupported Parquet file",
    ),
    "pandas-metadata-odd-index": (  # pandas raised a TypeError (a traceback) here
        lambda: parquet_bytes(
            _PQ_NAMES,
            _PQ_COLUMNS,
            {b"pandas": b'{"index_columns": [{"kind": "range", "start": "x"}], "columns": []}'},
        ),
        r"s\.parquet: damaged or unsupported Parquet file",
    ),
}


@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_malformed_parquet_gets_one_message(case):
    build, match = PARQUET_CASES[case]
    message = refused(read_scores, build(), name="s.parquet", match=match)
    assert "\n" not in message  # one line: no Arrow internals


def test_parquet_lookalike_is_refused():
    refused(
        read_scores,
        b"PAR1" + b"\0" * 100 + b"PAR1",
        name="s.parquet",
        match=r"s\.parquet.*cannot be read as Parquet",
    )
    refused(read_scores, b"PAR1" + b"\0" * 100, name="s.parquet", match=r"truncated or damaged")


def test_parquet_is_refused_by_its_footer_before_decompressing():
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["a", "b", "a", "b"],
            "score": [0.9, 0.1, 0.2, 0.8],
        }
    )
    data = df.to_parquet()
    assert read_scores(data, name="s.parquet").shape == (2, 2)
    with use_limits(Limits(max_rows=3)):
        refused(read_scores, data, name="s.parquet", match=r"4 rows.*max_rows=3")
    with use_limits(Limits(max_file_bytes=10)):
        refused(read_scores, data, name="s.parquet", match=r"max_file_bytes=10")
    wide = pd.DataFrame({f"c{i}": [0.0] for i in range(10_001)}).to_parquet()
    refused(read_scores, wide, name="w.parquet", match=r"10,001 columns.*max_columns")


@pytest.mark.parametrize("value", [[1], {"a": 1}], ids=["list", "struct"])
def test_parquet_list_or_struct_column_is_a_message(value):
    import pandas as pd

    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["a", "b", "a", "b"],
            "score": [0.9, 0.1, 0.2, 0.8],
            "sex": [value] * 4,
        }
    )
    buf = io.BytesIO()
    df.to_parquet(buf)
    refused(read_scores, buf.getvalue(), name="x.parquet", match=r"column 'sex' holds .* values")


# ----------------------------------------------------------------------------------------------
# Bad cells and columns of a long CSV / Parquet table: each message names the line (row),
# the value and the fix
# ----------------------------------------------------------------------------------------------


def test_missing_columns_are_listed_with_what_is_required():
    data = long_csv("t1,a,0.9\n", header="trial_id,trial_speaker,value\n")
    with input_error(
        r"s\.csv: missing column\(s\) enrol_speaker, score in the header \(line 1\); a "
        r"long scores file needs columns trial_id, trial_speaker, enrol_speaker, "
        r"score\. Found: trial_id, trial_speaker, value\. Rename or add the columns"
    ):
        read_scores(data, name="s.csv")


def test_missing_columns_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"trial_id": ["t1"], "score": [0.5]}).to_parquet(buf)
    with input_error(
        r"s\.parquet: missing column\(s\) trial_speaker, enrol_speaker among the "
        "columns; a long scores file needs columns"
    ):
        read_scores(buf.getvalue(), name="s.parquet")


def test_non_numeric_score_gives_line_and_value():
    data = long_csv("t1,a,a,0.9\nt1,a,b,high\nt2,b,a,0.2\nt2,b,b,0.8\n")
    with input_error(
        r"s\.csv: line 3: score 'high' is not a number; write each score as a plain "
        r"number, e\.g\. 0\.73"
    ):
        read_scores(data, name="s.csv")
    data = long_csv('t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,"0,2"\nt2,b,b,x\n')
    with input_error(
        r"line 4: score '0,2' is not a number \(2 non-numeric values in all\).*use "
        r"'\.' as the decimal separator"
    ):
        read_scores(data, name="s.csv")


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("nan", "missing or NaN"),
        ("NaN", "missing or NaN"),
        ("", "missing or NaN"),
        ("inf", r"infinite \(inf\)"),
        ("-Infinity", r"infinite \(-inf\)"),
    ],
)
def test_nan_or_infinite_score_gives_line(value, what):
    data = long_csv(f"t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,{value}\nt2,b,b,0.8\n")
    with input_error(
        rf"s\.csv: line 4: score is {what}; every \(trial, enrolled\) pair needs a "
        "finite score, so fix the value or re-run the scoring"
    ):
        read_scores(data, name="s.csv")


def test_nan_score_parquet_gives_row():
    df = pd.read_csv(io.BytesIO(long_csv(GOOD_ROWS)))
    df.loc[2, "score"] = np.nan
    buf = io.BytesIO()
    df.to_parquet(buf)
    with input_error(r"s\.parquet: row 3: score is missing or NaN"):
        read_scores(buf.getvalue(), name="s.parquet")


def test_wrong_number_of_fields_in_a_csv_line():
    with input_error(r"s\.csv: line 3 has 5 fields but the header has 4"):
        read_scores(long_csv("t1,a,a,0.9\nt1,a,b,0.1,extra\n"), name="s.csv")


def test_empty_label_cell():
    with input_error(
        r"s\.csv: line 3: column 'trial_speaker' is empty.*every row needs a "
        "trial_speaker"
    ):
        read_scores(long_csv("t1,a,a,0.9\nt1,,b,0.1\n"), name="s.csv")


def test_boolean_scores_are_not_numbers():
    with input_error(r"s\.csv: line 2: score 'True' is not a number"):
        read_scores(long_csv("t1,a,a,True\nt1,a,b,False\n"), name="s.csv")


def test_first_data_line_longer_than_the_header():
    with input_error(r"s\.csv: line 2 has 5 fields but the header has 4; give every line the same"):
        read_scores(long_csv("t1,a,a,0.9,x\nt1,a,b,0.1\n"), name="s.csv")
