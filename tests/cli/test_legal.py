"""``python -m voxmetrics legal``: singling out, linkability and 1 - EER against the number of
speakers (Vauquier et al. 2025), the library's numbers, bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.data.readers import read_embeddings

from .cli_cases import run as _run


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("linkage_demo")
    assert main(["demo", str(out)]) == 0
    return out


def test_legal_command_is_the_library_evaluation(demo_dir, capsys, tmp_path):
    from voxmetrics.metrics.legal import legal_evaluation

    emb, meta = demo_dir / "anon-mild_embeddings.npz", demo_dir / "anon-mild_embeddings.csv"
    out_json, out_html = tmp_path / "legal.json", tmp_path / "legal.html"
    status, out, err = _run(
        [
            "legal",
            "--embeddings",
            str(emb),
            "--metadata",
            str(meta),
            "--lengths",
            "1,3,30",
            "--draws",
            "2",
            "--seed",
            "4",
            "--json",
            str(out_json),
            "--html",
            str(out_html),
            "--attacker",
            "informed",
        ],
        capsys,
    )
    assert status == 0, err
    result = json.loads(out)
    assert json.loads(out_json.read_text()) == result
    expected = legal_evaluation(
        read_embeddings(emb, metadata=meta), [1, 3, 30], n_draws=2, seed=4
    ).to_dict()
    assert result == json.loads(json.dumps(expected))
    assert result["lengths"] == [1, 3] and result["skipped"][0]["length"] == 30
    page = out_html.read_text()
    assert "L = 3" in page and "anon-mild_embeddings (informed)" in page


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--lengths", "1,x"], "--lengths"),
        (["--lengths", "0"], "0 is not a count"),
        (["--draws", "0"], "--draws"),
        (["--lengths", "500"], "no conversation length"),
    ],
)
def test_legal_command_bad_input_is_one_line(demo_dir, capsys, extra, message):
    emb, meta = demo_dir / "anon-mild_embeddings.npz", demo_dir / "anon-mild_embeddings.csv"
    status, _out, err = _run(
        ["legal", "--embeddings", str(emb), "--metadata", str(meta), *extra], capsys
    )
    assert status == 2 and message in err and "Traceback" not in err
