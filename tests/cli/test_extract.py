"""``python -m voxmetrics extract``: folder or zip + manifest -> embeddings NPZ + metadata CSV."""

from __future__ import annotations

import importlib.util
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from extractor_cases import make_study, write_tiny_ecapa
from metric_registry import forget_unimportable_modules

from voxmetrics.data.readers import read_embeddings
from voxmetrics.embeddings import conditions_from_embeddings

from .cli_cases import run


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    forget_unimportable_modules()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_tiny_ecapa(tmp_path_factory.mktemp("tiny_ecapa_cli"), seed=1)


def test_extract_folder_with_local_ecapa(tmp_path, model_dir, capsys):
    manifest = make_study(tmp_path / "audio")
    out = tmp_path / "emb.npz"
    argv = ["extract", "--manifest", manifest, "--audio-root", tmp_path / "audio", "--out", out]
    argv += ["--model", model_dir, "--device", "cpu", "--cache-dir", tmp_path / "cache"]
    status, stdout, err = run(argv, capsys)
    assert status == 0, err
    summary = json.loads(stdout)
    assert summary["n_embedded"] == 8 and summary["n_failed"] == 0
    assert "8/8 recordings" in err and "[####" in err
    es = read_embeddings(out, metadata=tmp_path / "emb.csv")
    assert es.embeddings.shape == (8, 16)
    np.testing.assert_allclose(np.linalg.norm(es.embeddings, axis=1), 1, atol=1e-6)
    assert set(es.meta["system"]) == {"original", "B1"}
    conds = {c.name: c for c in conditions_from_embeddings(es)}
    assert conds["B1 / ignorant"].embeddings.score_matrix("eval").shape == (2, 2)
    # a second run reads every embedding from the cache
    status, stdout, _ = run(argv, capsys)
    assert status == 0 and json.loads(stdout)["n_cached"] == 8


def zip_folder(folder, extra=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for p in sorted(folder.rglob("*.wav")):
            z.write(p, p.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


@pytest.mark.skipif(importlib.util.find_spec("resemblyzer") is None, reason="no resemblyzer")
def test_extract_zip_ge2e_with_a_corrupt_file(tmp_path, capsys):
    manifest = make_study(tmp_path / "audio")
    (tmp_path / "audio" / "B1" / "b_trial.wav").write_bytes(b"RIFF but not really audio")
    z = tmp_path / "study.zip"
    z.write_bytes(zip_folder(tmp_path / "audio"))
    status, stdout, err = run(
        [
            "extract",
            "--manifest",
            manifest,
            "--zip",
            z,
            "--model",
            "ge2e",
            "--device",
            "cpu",
            "--cache-dir",
            tmp_path / "cache",
            "--out",
            tmp_path / "g.npz",
        ],
        capsys,
    )
    assert status == 0, err
    assert json.loads(stdout)["n_failed"] == 1
    assert "skipped: B1/b_trial.wav: not a readable audio file" in err
    fails = pd.read_csv(tmp_path / "g.failures.csv")
    assert fails["utt_id"].tolist() == ["B1_b_trial"]
    es = read_embeddings(tmp_path / "g.npz", metadata=tmp_path / "g.csv")
    assert es.embeddings.shape == (7, 256)


def test_extract_refuses_unsafe_zip(tmp_path, model_dir, capsys):
    manifest = make_study(tmp_path / "audio")
    z = tmp_path / "evil.zip"
    z.write_bytes(zip_folder(tmp_path / "audio", {"../../escape.wav": b"x"}))
    status, _, err = run(
        [
            "extract",
            "--manifest",
            manifest,
            "--zip",
            z,
            "--model",
            model_dir,
            "--device",
            "cpu",
            "--out",
            tmp_path / "e.npz",
        ],
        capsys,
    )
    assert status == 2 and "outside the extraction folder" in err
    assert not (tmp_path / "e.npz").exists()


def test_extract_zip_over_cap(tmp_path, model_dir, capsys):
    manifest = make_study(tmp_path / "audio")
    z = tmp_path / "big.zip"
    z.write_bytes(zip_folder(tmp_path / "audio"))
    status, _, err = run(
        [
            "extract",
            "--manifest",
            manifest,
            "--zip",
            z,
            "--model",
            model_dir,
            "--device",
            "cpu",
            "--max-zip-mb",
            "0.01",
            "--out",
            tmp_path / "e.npz",
        ],
        capsys,
    )
    assert status == 2 and "over the cap" in err


@pytest.mark.parametrize("case", ["no-manifest", "bad-manifest", "nothing-usable", "bad-model"])
def test_extract_whole_run_errors_exit_2(tmp_path, model_dir, capsys, case):
    manifest = make_study(tmp_path / "audio")
    root, model = tmp_path / "audio", model_dir
    if case == "no-manifest":
        manifest = tmp_path / "missing.csv"
    elif case == "bad-manifest":
        manifest.write_text("utt_id,speaker\nu,a\n")
    elif case == "nothing-usable":
        root = tmp_path / "empty"
        root.mkdir()
    else:
        model = tmp_path / "audio"  # a folder without hyperparams.yaml
    status, _, err = run(
        [
            "extract",
            "--manifest",
            manifest,
            "--audio-root",
            root,
            "--model",
            model,
            "--device",
            "cpu",
            "--cache-dir",
            tmp_path / "c",
            "--out",
            tmp_path / "x.npz",
        ],
        capsys,
    )
    assert status == 2
    assert err.count("voxmetrics: error:") == 1
    needle = {
        "no-manifest": "no such file",
        "bad-manifest": "lacks column(s)",
        "nothing-usable": "none of the 8 recordings",
        "bad-model": "hyperparams.yaml",
    }[case]
    assert needle in err
