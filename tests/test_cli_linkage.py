"""The command line's linkage outputs: linkability_vs_n, singling_out and ``similarity``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voxmetrics.cli import main
from voxmetrics.data.readers import read_embeddings
from voxmetrics.metrics.legal import linkability_curve, singling_out_embeddings
from voxmetrics.metrics.similarity import voice_similarity

SIMILARITY_KEYS = {"deid", "g_vd", "d_diag_oo", "d_diag_oa", "d_diag_aa", "n_speakers_left_out"}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("linkage_demo")
    assert main(["demo", str(out)]) == 0
    return out


def _run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_evaluate_gives_linkability_vs_n_on_the_demo_grid(demo_dir, capsys):
    status, out, err = _run(["evaluate", str(demo_dir / "anon-mild_eval.csv")], capsys)
    assert status == 0, err
    result = json.loads(out)
    curve = result["linkability_vs_n"]
    # N = 40 enrolled demo speakers: 2, 5, 10, 20 below N, then N (metrics.md 5)
    assert [n for n, _ in curve] == [2, 5, 10, 20, 40]
    values = [v for _, v in curve]
    assert all(0 <= v <= 1 for v in values)
    assert values == sorted(values, reverse=True)  # more candidates, harder linkage
    # at N' = N the candidate set is everyone: the expectation is linkability itself
    assert values[-1] == pytest.approx(result["linkability"], abs=1e-12)
    assert values[0] > 0.5  # anon-mild keeps 45 % of identity: better than a coin at N' = 2
    assert result["singling_out"] is None  # a score file has no embeddings


def test_evaluate_embeddings_adds_singling_out_and_lid(demo_dir, capsys):
    emb, meta = demo_dir / "anon-leaky_embeddings.npz", demo_dir / "anon-leaky_embeddings.csv"
    status, out, err = _run(["evaluate", "--embeddings", str(emb), "--metadata", str(meta)],
                            capsys)  # fmt: skip
    assert status == 0, err
    result = json.loads(out)
    so = result["singling_out"]
    assert set(so) == {"value", "chance", "n_speakers", "folds", "n_draws", "n_excluded_speakers"}
    # 40 eval speakers with 8 trial utterances each: 8 folds, chance (39/40)^39 = 0.372546
    assert so["n_speakers"] == 40 and so["folds"] == 8
    assert so["chance"] == pytest.approx((39 / 40) ** 39)
    expected = singling_out_embeddings(read_embeddings(emb, metadata=meta)).value
    assert so["value"] == pytest.approx(expected, abs=1e-12)
    # the embeddings carry a dev split, which calibrates LID
    assert result["lid"] is not None and result["lid"]["lid_max"] is not None
    assert [n for n, _ in result["linkability_vs_n"]] == [2, 5, 10, 20, 40]
    assert result["linkability_vs_n"][-1][1] == pytest.approx(result["linkability"])


def test_linkability_vs_n_matches_the_library(demo_dir, capsys):
    status, out, _ = _run(["evaluate", str(demo_dir / "plain_eval.npz")], capsys)
    assert status == 0
    from voxmetrics.data.readers import read_scores

    sm = read_scores(demo_dir / "plain_eval.npz")
    assert json.loads(out)["linkability_vs_n"] == linkability_curve(sm.scores, sm.targets).to_list()


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


def test_singling_out_is_null_when_speakers_have_one_trial(demo_dir, tmp_path, capsys):
    # keep one trial utterance per eval speaker: singling out has nothing to hold out, so the
    # report says null (with a warning) instead of failing the whole evaluation
    import pandas as pd

    meta = pd.read_csv(demo_dir / "plain_embeddings.csv")
    first = ~meta.duplicated(["speaker", "role"]) | (meta["role"] == "enrol")
    keep = meta[first | (meta["split"] == "dev")]
    keep.to_csv(tmp_path / "meta.csv", index=False)
    with np.load(demo_dir / "plain_embeddings.npz") as z:
        rows = np.isin(z["utt_ids"], keep["utt_id"])
        np.savez(tmp_path / "emb.npz", embeddings=z["embeddings"][rows], utt_ids=z["utt_ids"][rows])
    status, out, err = _run(["evaluate", "--embeddings", str(tmp_path / "emb.npz"),
                             "--metadata", str(tmp_path / "meta.csv")], capsys)  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["singling_out"] is None
    assert "singling out skipped" in err and "at least 2 trial embeddings" in err


# ---------------------------------------------------------------- legal (Vauquier et al. 2025)


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
