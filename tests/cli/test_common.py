"""What the command handlers share (voxmetrics/cli/_common.py): exit codes, output checks,
reading inputs, JSON, the progress bar, ``--p-target``, EVAL or --embeddings, evaluate's end.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np
import pytest

from voxmetrics.cli import _common as common
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.writers import write_scores
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.evaluation import evaluate


def test_exit_codes():
    assert (common.EXIT_OK, common.EXIT_FAIL_ON, common.EXIT_BAD_INPUT) == (0, 1, 2)


def test_check_outputs_refuses_what_cannot_be_written(tmp_path):
    common.check_outputs([None, str(tmp_path / "new.json")], [None, str(tmp_path / "new")])
    (tmp_path / "old.json").write_text("{}")
    common.check_outputs([str(tmp_path / "old.json")], [str(tmp_path)])  # overwritten, filled
    with pytest.raises(VoxMetricsInputError, match=r"is a directory; give the path of a file"):
        common.check_outputs([str(tmp_path)])
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(VoxMetricsInputError, match=r"pipe: is not a regular file"):
        common.check_outputs([str(tmp_path / "pipe")])
    with pytest.raises(VoxMetricsInputError, match=r"old.json: exists and is not a folder"):
        common.check_outputs(folders=[str(tmp_path / "old.json")])


def _sm() -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        [[2.0, 0.0, 0.5], [0.1, 1.0, 0.3], [0.2, 0.4, 3.0], [1.5, 0.2, 0.1]],
        trial_ids=["t1", "t2", "t3", "t4"],
        trial_speakers=["a", "b", "c", "a"],
        enrol_speakers=["a", "b", "c"],
    )


def test_read_score_file_checks_the_paths_and_reads_the_matrix(tmp_path):
    write_scores(_sm(), tmp_path / "s.csv", format="csv")
    sm, left_out = common.read_score_file(str(tmp_path / "s.csv"), None, "auto")
    assert left_out == ()
    np.testing.assert_array_equal(sm.scores, _sm().scores)
    negated, _ = common.read_score_file(str(tmp_path / "s.csv"), None, "auto", distance=True)
    np.testing.assert_array_equal(negated.scores, -_sm().scores)
    with pytest.raises(VoxMetricsInputError, match=r"no such file"):
        common.read_score_file(str(tmp_path / "missing.csv"), None, "auto")
    with pytest.raises(VoxMetricsInputError, match=r"no such file"):
        common.read_score_file(str(tmp_path / "s.csv"), str(tmp_path / "no-key"), "auto")


def test_read_embedding_file_refuses_a_missing_ark_root(tmp_path):
    with pytest.raises(VoxMetricsInputError, match=r"^--ark-root .*nowhere: no such folder\.$"):
        common.read_embedding_file(__file__, None, ark_root=str(tmp_path / "nowhere"))
    with pytest.raises(VoxMetricsInputError, match=r"no such file"):
        common.read_embedding_file(str(tmp_path / "e.npz"), None)


def test_print_json_prints_and_writes_the_same_text(tmp_path, capsys):
    obj = {"eer": 0.25, "by": {"sex": ["F", "M"]}, "none": None}
    common.print_json(obj, str(tmp_path / "o.json"))
    out = capsys.readouterr().out
    assert out == json.dumps(obj, indent=2) + "\n"
    assert (tmp_path / "o.json").read_text(encoding="utf-8") == out
    common.print_json([1], None)
    assert capsys.readouterr().out == "[\n  1\n]\n"


def test_progress_bar_is_one_line_of_30_cells_on_stderr(capsys):
    common.progress_bar(0.5, "half")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "\r[" + "#" * 15 + "." * 15 + "] " + "half".ljust(40)
    common.progress_bar(1.0, "x" * 50)  # a long message is cut to 40 characters
    assert capsys.readouterr().err == "\r[" + "#" * 30 + "] " + "x" * 40


def test_priors():
    assert common.priors("0.01,0.001") == [0.01, 0.001]
    assert common.priors(" 0.5 , ,0.05,") == [0.5, 0.05]
    with pytest.raises(VoxMetricsInputError, match=r"^--p-target '0.01;0.1': give numbers"):
        common.priors("0.01;0.1")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"eval": "s.csv", "embeddings": "e.npz"}, "give either EVAL or --embeddings, not both."),
        ({"eval": "s.csv", "metadata": "m.csv"}, "--metadata goes with --embeddings."),
        ({"eval": "s.csv", "system": "B1"}, "--system goes with --embeddings."),
        ({}, "give scores EVAL or --embeddings EMB."),
    ],
)
def test_check_source_refusals(given, message):
    args = argparse.Namespace(**({"eval": None, "embeddings": None, "metadata": None} | given))
    args.system = given.get("system")
    with pytest.raises(VoxMetricsInputError) as caught:
        common.check_source(args, "scores")
    assert str(caught.value) == message


def test_check_source_accepts_either_source():
    for given in ({"eval": "s.csv"}, {"embeddings": "e.npz", "metadata": "m.csv", "system": "x"}):
        none = {"eval": None, "embeddings": None, "metadata": None, "system": None}
        common.check_source(argparse.Namespace(**(none | given)), "scores")


@pytest.fixture(scope="module")
def report():
    with warnings.catch_warnings():  # the tiny matrix is separable: its CLL fit warns, rightly
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate(_sm())


def _finish_args(tmp_path, fail_on=None):
    # --html (Plotly, slow to load) is tested in test_evaluate.py
    return argparse.Namespace(fail_on=fail_on, json=str(tmp_path / "r.json"), html=None)


def test_finish_prints_writes_and_records_the_input_warnings(report, tmp_path, capsys):
    args = _finish_args(tmp_path)
    assert common.finish(args, report, ["2 pairs left out"]) == common.EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert printed["input_warnings"] == ["2 pairs left out"]
    assert printed["eer"] == report.to_dict()["eer"]


def test_finish_exits_1_when_the_fail_on_condition_holds(report, tmp_path, capsys):
    eer = report.to_dict()["eer"]
    assert common.finish(_finish_args(tmp_path, f"eer >= {eer}"), report) == common.EXIT_FAIL_ON
    captured = capsys.readouterr()
    assert f"voxmetrics: --fail-on condition holds: eer >= {eer}" in captured.err
    assert json.loads(captured.out)["eer"] == eer  # the JSON is printed all the same
    assert common.finish(_finish_args(tmp_path, f"eer < {eer}"), report) == common.EXIT_OK


def test_finish_checks_a_bad_fail_on_before_writing_anything(report, tmp_path, capsys):
    with pytest.raises(VoxMetricsInputError):
        common.finish(_finish_args(tmp_path, "eer <<< 1"), report)
    assert capsys.readouterr().out == "" and not (tmp_path / "r.json").exists()
