"""``python -m voxmetrics similarity``: DeID and G_VD of original vs anonymised voices, the
library's numbers, single-utterance speakers left out, a system filter, bad input in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmetrics.cli import main
from voxmetrics.data.readers import read_embeddings
from voxmetrics.metrics.similarity import voice_similarity
from voxmetrics.synth import demo_study

from .cli_cases import run as _run

SIMILARITY_KEYS = {"deid", "g_vd", "d_diag_oo", "d_diag_oa", "d_diag_aa", "n_speakers_left_out"}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("linkage_demo")
    assert main(["demo", str(out)]) == 0
    return out


@pytest.mark.parametrize("calibration", ["pav", "raw"])
def test_similarity_writes_deid_and_gvd(demo_dir, tmp_path, capsys, calibration):
    out_json = tmp_path / "sim.json"
    argv = [
        "similarity",
        "--original", str(demo_dir / "plain_embeddings.npz"),
        "--anonymised", str(demo_dir / "anon-mild_embeddings.npz"),
        "--metadata", str(demo_dir / "plain_embeddings.csv"),
        "--calibration", calibration,
        "--json", str(out_json),
    ]  # fmt: skip
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    written = json.loads(out_json.read_text())
    assert set(written) == SIMILARITY_KEYS
    assert json.loads(out) == written
    # the same numbers as the library on the same files
    original = read_embeddings(demo_dir / "plain_embeddings.npz",
                               metadata=demo_dir / "plain_embeddings.csv")  # fmt: skip
    anonymised = read_embeddings(demo_dir / "anon-mild_embeddings.npz",
                                 metadata=demo_dir / "plain_embeddings.csv")  # fmt: skip
    expected = voice_similarity(original, anonymised, calibration=calibration).to_dict()
    assert written == pytest.approx(expected, abs=1e-12)
    # anon-mild keeps 45 % of each identity: partly de-identified, less distinctive
    assert 0 < written["deid"] < 1 and written["g_vd"] < 0
    assert written["d_diag_oa"] < written["d_diag_oo"]


def test_similarity_of_a_set_with_itself_is_no_de_identification(demo_dir, tmp_path, capsys):
    emb, meta = demo_dir / "plain_embeddings.npz", demo_dir / "plain_embeddings.csv"
    status, out, err = _run(["similarity", "--original", str(emb), "--anonymised", str(emb),
                             "--metadata", str(meta)], capsys)  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    assert result["deid"] == 0.0 and result["g_vd"] == 0.0


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("voxmetrics: error: ")
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # missing file
        (["similarity", "--original", "{d}/nope.npz", "--anonymised",
          "{d}/anon-mild_embeddings.npz", "--metadata", "{d}/plain_embeddings.csv"],
         "nope.npz: no such file"),
        # NPZ embeddings without their metadata
        (["similarity", "--original", "{d}/plain_embeddings.npz", "--anonymised",
          "{d}/anon-mild_embeddings.npz"], "metadata"),
        # a score file where embeddings are expected
        (["similarity", "--original", "{d}/plain_eval.npz", "--anonymised",
          "{d}/anon-mild_embeddings.npz", "--metadata", "{d}/plain_embeddings.csv"],
         "missing array(s) embeddings, utt_ids"),
        # embeddings and a score file together
        (["evaluate", "{d}/plain_eval.csv", "--embeddings", "{d}/plain_embeddings.npz",
          "--metadata", "{d}/plain_embeddings.csv"], "either EVAL or --embeddings"),
        # metadata without embeddings
        (["evaluate", "{d}/plain_eval.csv", "--metadata", "{d}/plain_embeddings.csv"],
         "--metadata goes with --embeddings"),
    ],
)  # fmt: skip
def test_bad_inputs_exit_2_with_one_line(demo_dir, capsys, argv, message):
    status, out, err = _run([a.format(d=demo_dir) for a in argv], capsys)
    assert status == 2
    assert out == ""
    assert message in _one_line_error(err)


# ---------------------------------------------------------------- legal (Vauquier et al. 2025)


def test_similarity_with_bootstrap_has_intervals(tmp_path, capsys):
    assert main(["demo", str(tmp_path), "--format", "csv"]) == 0
    capsys.readouterr()
    args = [
        "similarity",
        "--original", str(tmp_path / "plain_embeddings.npz"),
        "--anonymised", str(tmp_path / "anon-mild_embeddings.npz"),
        "--metadata", str(tmp_path / "plain_embeddings.csv"),
    ]  # fmt: skip
    assert main([*args, "--bootstrap", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    lo, hi = out["intervals"]["deid"]
    assert lo <= out["deid"] <= hi
    assert main(args) == 0
    assert "intervals" not in json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=8, seed=3)


def test_similarity_leaves_out_single_utterance_speakers(demo, tmp_path, capsys):
    es = demo.get("plain").embeddings
    anon = demo.get("anon-mild").embeddings
    meta = es.meta[["utt_id", "speaker", "role", "split"]].copy()
    # speaker of the first eval row keeps one utterance only
    first = meta[meta.split == "eval"].speaker.iloc[0]
    kept = meta[meta.speaker == first].utt_id.iloc[0]
    rows = meta[(meta.speaker != first) | (meta.utt_id == kept)]
    rows.to_csv(tmp_path / "meta.csv", index=False)
    for name, s in (("o", es), ("a", anon)):
        ids = s.meta.utt_id.to_numpy(dtype=str)
        np.savez(tmp_path / f"{name}.npz", embeddings=s.embeddings, utt_ids=ids)
    status, out, err = _run(
        ["similarity", "--original", tmp_path / "o.npz", "--anonymised", tmp_path / "a.npz",
         "--metadata", tmp_path / "meta.csv"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["n_speakers_left_out"] == 1
    assert "1 speaker(s) with a single utterance in split 'eval' left out" in err
    assert f"'{first}'" in err


def test_similarity_and_sbls_take_a_system(demo, tmp_path, capsys):
    plain, anon = demo.get("plain").embeddings, demo.get("anon-mild").embeddings
    meta = plain.meta
    anon_meta = meta.assign(system="B1", utt_id="b1-" + meta.utt_id)
    both = pd.concat([meta.assign(system="orig"), anon_meta])
    both.to_csv(tmp_path / "meta.csv", index=False)
    ids = meta.utt_id.to_numpy(dtype=str)
    np.savez(tmp_path / "o.npz", embeddings=plain.embeddings, utt_ids=ids)
    np.savez(tmp_path / "a.npz", embeddings=anon.embeddings, utt_ids=np.char.add("b1-", ids))
    status, out, err = _run(
        ["similarity", "--original", tmp_path / "o.npz", "--original-system", "orig",
         "--anonymised", tmp_path / "a.npz", "--system", "B1", "--metadata", tmp_path / "meta.csv"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["n_speakers_left_out"] == 0
    status, out, err = _run(
        ["sbls", "--embeddings", tmp_path / "a.npz", "--system", "B1", "--attacker",
         "anonymised", "--metadata", tmp_path / "meta.csv"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    status, _, err = _run(
        ["sbls", "--embeddings", tmp_path / "a.npz", "--attacker", "anonymised",
         "--metadata", tmp_path / "meta.csv"],
        capsys,
    )  # fmt: skip
    assert status == 2 and "utt_ids have no embedding" in err
