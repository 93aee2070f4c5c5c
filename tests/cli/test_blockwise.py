"""``evaluate --scheduler`` (voxmetrics/cli/_blockwise.py): what it refuses before any cluster
starts, where its blocks come from, and its quiet workers.

That its numbers equal the in-memory ones is tested in tests/evaluation/test_blockwise.py (which
runs a local cluster); these tests start none.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from voxmetrics.cli import _blockwise, main
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.writers import write_scores
from voxmetrics.errors import VoxMetricsInputError


def _sm(prefix: str = "t") -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        [[1.0, 0.0], [0.0, 1.0]],
        trial_ids=[f"{prefix}1", f"{prefix}2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )


@pytest.fixture
def chunks(tmp_path):
    """A folder of two NPZ score chunks (and a file that is no chunk)."""
    folder = tmp_path / "chunks"
    folder.mkdir()
    write_scores(_sm("x"), folder / "a.npz", format="npz")
    write_scores(_sm("y"), folder / "b.npz", format="npz")
    (folder / "notes.txt").write_text("not a chunk")
    return folder


def test_every_refused_option_is_an_option_of_evaluate(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    help_text = capsys.readouterr().out
    flags = [flag for flag, _, _ in _blockwise._NOT_BLOCKWISE]
    assert flags == [
        "--bootstrap",
        "--cross-calibrate",
        "--trials",
        "--distance",
        "--by",
        "--trial-attributes",
    ]
    assert all(flag in help_text for flag in flags)
    assert all(why and not why.endswith(".") for _, _, why in _blockwise._NOT_BLOCKWISE)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--trial-attributes", "attrs.csv"], "--trial-attributes cannot be used with --scheduler"),
        (["--workers", "0"], "--workers must be at least 1."),
        (["--dev-trials", "key"], "--dev-trials was given without --dev; add --dev DEV."),
        (["--embeddings", "e.npz"], "give either EVAL or --embeddings, not both."),
        (["--bootstrap", "0", "--by", "sex"], "--by cannot be used with --scheduler"),
    ],
)
def test_refusals_before_any_cluster_starts(chunks, capsys, extra, message):
    assert main(["evaluate", str(chunks), "--scheduler", "local", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_json_output_that_is_a_folder_is_refused_first(chunks, capsys):
    argv = ["evaluate", str(chunks), "--scheduler", "local", "--bootstrap", "5"]
    assert main([*argv, "--json", str(chunks)]) == 2
    assert "is a directory" in capsys.readouterr().err  # before the option refusals


def test_score_chunks_of_a_folder_are_its_npz_and_parquet_files(chunks):
    scores = _blockwise._score_chunks(chunks, "chunks")
    assert [Path(p).name for p in scores.paths] == ["a.npz", "b.npz"]
    one = _blockwise._score_chunks(chunks / "b.npz", "b.npz")
    assert [Path(p).name for p in one.paths] == ["b.npz"]


def test_score_chunks_refuse_an_empty_folder_and_other_files(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(VoxMetricsInputError, match=r"^empty: with --scheduler, EVAL is a folder"):
        _blockwise._score_chunks(tmp_path / "empty", "empty")
    write_scores(_sm(), tmp_path / "s.csv", format="csv")
    with pytest.raises(VoxMetricsInputError, match=r"or use --embeddings\.$"):
        _blockwise._score_chunks(tmp_path / "s.csv", "s.csv")


def test_quiet_workers_silence_the_worker_logs_and_the_port_note_for_the_run():
    worker = logging.getLogger("distributed.worker")
    nanny = logging.getLogger("distributed.nanny")
    before = (worker.level, nanny.level)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _blockwise._quiet_workers():
            assert worker.level == nanny.level == logging.CRITICAL
            warnings.warn("Port 8787 is already in use.", UserWarning, stacklevel=1)
            warnings.warn("something else", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["something else"]
    assert (worker.level, nanny.level) == before
    with pytest.raises(RuntimeError), _blockwise._quiet_workers():
        raise RuntimeError
    assert (worker.level, nanny.level) == before  # restored after a failure too
