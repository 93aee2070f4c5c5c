"""``python -m voxmetrics sbls`` (sbls.md; design.md command-line contract)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from voxmetrics.cli import main
from voxmetrics.data.readers import read_embeddings
from voxmetrics.metrics.sbls import builtin_attacker

from .cli_cases import run as _run

ATTRIBUTES = ("sex", "age_group")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "csv"]) == 0
    return out


def _files(d: Path, name: str) -> tuple[str, str]:
    return str(d / f"{name}_embeddings.npz"), str(d / f"{name}_embeddings.csv")


def _embeddings_args(d: Path, *extra: str) -> list[str]:
    emb, meta = _files(d, "anon-mild")
    original, _ = _files(d, "plain")
    return ["sbls", "--metadata", meta, "--embeddings", emb, "--original", original, *extra]


def _check_contract(result: dict) -> None:
    for key in ("sbls", "p_attr", "p_assoc", "p_subgroup"):
        assert 0.0 <= result[key] <= 1.0, key
    assert set(result["attributes"]) == set(ATTRIBUTES)
    for block in result["attributes"].values():
        assert {"auc", "leakage", "nmi"} <= set(block)
        assert 0.5 <= block["auc"] <= 1.0 and 0.0 <= block["leakage"] <= 1.0
    assert result["subgroups"]
    for row in result["subgroups"]:
        assert {"attribute", "group", "n", "auc", "leakage", "accuracy"} <= set(row)
    joint = [row for row in result["subgroups"] if row["attribute"] == "all"]
    assert len(joint) == 6  # sex x 3 age groups


@pytest.mark.parametrize("attacker", ["original", "anonymised"])
def test_builtin_attacker_writes_the_json_contract(demo_dir, tmp_path, capsys, attacker):
    out = tmp_path / "sbls.json"
    status, stdout, err = _run(
        _embeddings_args(demo_dir, "--attacker", attacker, "--json", str(out)), capsys
    )
    assert status == 0, err
    result = json.loads(out.read_text())
    assert json.loads(stdout) == result
    _check_contract(result)
    assert f"trained on {attacker} dev embeddings" in result["attacker"]
    assert result["attacker_trained_on"] == attacker
    assert result["weights"] == [0.4, 0.4, 0.2] and result["lambda"] == 0.7
    assert result["sbls"] == pytest.approx(
        0.4 * result["p_attr"] + 0.4 * result["p_assoc"] + 0.2 * result["p_subgroup"]
    )


def test_options_reach_the_score(demo_dir, capsys):
    status, stdout, err = _run(
        _embeddings_args(demo_dir, "--weights", "0,0,1", "--lambda", "1", "--min-group-size", "40"),
        capsys,
    )
    assert status == 0, err
    result = json.loads(stdout)
    used = [r for r in result["subgroups"] if r["attribute"] == "all" and r["used"]]
    assert all(r["n"] >= 40 for r in used)
    assert len(used) < 6  # the demo's smallest intersections have fewer than 40 utterances
    # weights (0, 0, 1) and lambda 1: SBLS = P_subgroup = 1 - max L_g over the used groups
    assert result["sbls"] == pytest.approx(result["p_subgroup"])
    assert result["p_subgroup"] == pytest.approx(1 - max(r["leakage"] for r in used))


def test_uploaded_predictions_give_the_same_numbers(demo_dir, tmp_path, capsys):
    """The built-in attacker's scores written as a predictions CSV (soft layout) and read
    back through ``--predictions`` give the same SBLS as ``--embeddings``."""
    emb, meta = _files(demo_dir, "anon-mild")
    original_emb, _ = _files(demo_dir, "plain")
    anonymised = read_embeddings(emb, metadata=meta)
    original = read_embeddings(original_emb, metadata=meta)
    dev = (original.meta["split"] == "dev").to_numpy()
    ev = (anonymised.meta["split"] == "eval").to_numpy()
    predictions = builtin_attacker(
        original.embeddings[dev],
        {a: original.meta[a].to_numpy()[dev] for a in ATTRIBUTES},
        anonymised.embeddings[ev],
    )
    utts = anonymised.meta["utt_id"].to_numpy()[ev]
    rows = [
        (u, a, c, float(p.scores[i, k]))
        for a, p in predictions.items()
        for i, u in enumerate(utts)
        for k, c in enumerate(p.classes)
    ]
    pred_csv = tmp_path / "predictions.csv"
    pd.DataFrame(rows, columns=["utt_id", "attribute", "class", "score"]).sample(
        frac=1.0, random_state=0
    ).to_csv(pred_csv, index=False)

    status, stdout, err = _run(_embeddings_args(demo_dir, "--attacker", "original"), capsys)
    assert status == 0, err
    builtin = json.loads(stdout)
    status, stdout, err = _run(["sbls", "--metadata", meta, "--predictions", str(pred_csv)], capsys)
    assert status == 0, err
    uploaded = json.loads(stdout)
    assert uploaded["attacker"] == "uploaded predictions"
    for key in ("sbls", "p_attr", "p_assoc", "p_subgroup"):
        assert uploaded[key] == pytest.approx(builtin[key], abs=1e-12), key
    for a in ATTRIBUTES:
        for key in ("auc", "leakage", "nmi", "balanced_accuracy"):
            assert uploaded["attributes"][a][key] == pytest.approx(
                builtin["attributes"][a][key], abs=1e-12
            )
    by_group = {(r["attribute"], r["group"]): r for r in builtin["subgroups"]}
    assert len(uploaded["subgroups"]) == len(by_group)
    for row in uploaded["subgroups"]:
        ref = by_group[(row["attribute"], row["group"])]
        assert row["n"] == ref["n"] and row["used"] == ref["used"]
        for key in ("auc", "leakage", "accuracy"):
            assert row[key] == pytest.approx(ref[key], abs=1e-12)


def _bad_predictions(tmp_path: Path, content: bytes) -> str:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize(
    ("make_args", "phrase"),
    [
        pytest.param(
            lambda d, t: _embeddings_args(d, "--weights", "1,2"), "weights", id="weights-1,2"
        ),
        pytest.param(
            lambda d, t: _embeddings_args(d, "--weights", "a,b,c"),
            "three numbers",
            id="weights-not-numbers",
        ),
        pytest.param(lambda d, t: _embeddings_args(d, "--lambda", "2"), "lambda", id="lambda"),
        pytest.param(
            lambda d, t: _embeddings_args(d, "--min-group-size", "0"),
            "min_group_size",
            id="min-group-size",
        ),
        pytest.param(
            lambda d, t: [
                "sbls",
                "--metadata",
                _files(d, "anon-mild")[1],
                "--embeddings",
                _files(d, "anon-mild")[0],
                "--attacker",
                "original",
            ],
            "original",
            id="original-attacker-without-original",
        ),
        pytest.param(
            lambda d, t: [
                "sbls",
                "--metadata",
                str(d / "nope.csv"),
                "--predictions",
                str(d / "nope2.csv"),
            ],
            "no such file",
            id="missing-file",
        ),
        pytest.param(
            lambda d, t: [
                "sbls",
                "--metadata",
                _files(d, "anon-mild")[1],
                "--predictions",
                _bad_predictions(t, b"\x00\x01 garbage \xff"),
            ],
            "bad.csv",
            id="garbage-predictions",
        ),
        pytest.param(
            lambda d, t: [
                "sbls",
                "--metadata",
                _files(d, "anon-mild")[1],
                "--predictions",
                _bad_predictions(t, b"utt_id,attribute,predicted\nnobody,sex,F\n"),
            ],
            "not in the metadata",
            id="unknown-utterance",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(demo_dir, tmp_path, capsys, make_args, phrase):
    status, stdout, err = _run(make_args(demo_dir, tmp_path), capsys)
    assert status == 2
    assert stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("voxmetrics: error: ")
    assert phrase in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("labels", "predictions", "phrase"),
    [
        pytest.param(
            "utt_id,speaker,split,sex\n",
            "utt_id,attribute,predicted\nu1,sex,F\n",
            "labels.csv: the labels file has a header but no rows",
            id="labels-header-only",
        ),
        pytest.param(
            "utt_id,speaker,split,sex\nu1,a,dev,F\n",
            "utt_id,attribute,predicted\nu1,sex,F\n",
            "labels.csv: the labels file has no row of split 'eval' (its splits: dev)",
            id="labels-no-eval-row",
        ),
        pytest.param(
            "utt_id,speaker,split,sex\nu1,a,eval,F\n",
            "utt_id,attribute,predicted\n",
            "pred.csv: the predictions file has a header but no rows",
            id="predictions-header-only",
        ),
        pytest.param(
            "utt_id,speaker,split,sex\nu1,a,eval,F\n",
            "utt_id,attribute,class,score\n",
            "pred.csv: the predictions file has a header but no rows",
            id="soft-predictions-header-only",
        ),
    ],
)
def test_files_without_rows_are_named(tmp_path, capsys, labels, predictions, phrase):
    (tmp_path / "labels.csv").write_text(labels)
    (tmp_path / "pred.csv").write_text(predictions)
    args = ["sbls", "--metadata", str(tmp_path / "labels.csv")]
    status, out, err = _run([*args, "--predictions", str(tmp_path / "pred.csv")], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith("voxmetrics: error: ") and phrase in err, err
    assert "at least one attribute" not in err and "not in the metadata" not in err


def test_the_default_attacker_is_the_study_reports(demo_dir, capsys):
    """One default attacker everywhere: the sbls command, the page and the study report."""
    from voxmetrics.evaluation import condition_sbls
    from voxmetrics.metrics.sbls import DEFAULT_ATTACKER

    status, stdout, err = _run(_embeddings_args(demo_dir), capsys)
    assert status == 0, err
    result = json.loads(stdout)
    assert result["attacker_trained_on"] == DEFAULT_ATTACKER == "anonymised"
    from voxmetrics.synth import demo_study

    report = condition_sbls(demo_study().get("anon-mild"))  # the demo the command wrote
    assert report is not None and report.trained_on == DEFAULT_ATTACKER
    assert result["sbls"] == pytest.approx(report.sbls, rel=1e-9)
    assert result["attacker"] == report.attacker


def test_bootstrap_adds_the_intervals_of_the_library(demo_dir, capsys):
    """--bootstrap B: `intervals` {key: [low, high]}, the analysis module's own numbers."""
    from voxmetrics.analysis.sbls import SBLSOptions, embedding_set_attack, sbls_intervals

    status, stdout, err = _run(
        _embeddings_args(demo_dir, "--bootstrap", "50", "--seed", "3"), capsys
    )
    assert status == 0, err
    result = json.loads(stdout)
    assert set(result["intervals"]) == {"sbls", "p_attr", "p_assoc", "p_subgroup"}
    for key, (low, high) in result["intervals"].items():
        assert low <= result[key] <= high, key
    emb, meta = _files(demo_dir, "anon-mild")
    attack = embedding_set_attack(read_embeddings(emb, metadata=meta))
    ivs = sbls_intervals(attack, SBLSOptions(), n_boot=50, seed=3)
    assert result["intervals"] == {k: [iv.low, iv.high] for k, iv in ivs.items()}
    status, stdout, err = _run(_embeddings_args(demo_dir), capsys)
    assert "intervals" not in json.loads(stdout)  # off by default


def test_bootstrap_of_uploaded_predictions_needs_speakers(demo_dir, tmp_path, capsys):
    _, meta = _files(demo_dir, "anon-mild")
    table = pd.read_csv(meta)
    ev = table[table["split"] == "eval"]
    pred = tmp_path / "hard.csv"
    pd.DataFrame(
        [(u, "sex", s) for u, s in zip(ev["utt_id"], ev["sex"], strict=True)],
        columns=["utt_id", "attribute", "predicted"],
    ).to_csv(pred, index=False)
    status, stdout, err = _run(
        ["sbls", "--metadata", meta, "--predictions", str(pred), "--bootstrap", "20"], capsys
    )
    assert status == 0, err
    result = json.loads(stdout)
    assert result["p_attr"] == 0.0 and result["intervals"]["p_attr"] == [0.0, 0.0]
    no_speaker = tmp_path / "meta.csv"
    table.drop(columns=["speaker"]).to_csv(no_speaker, index=False)
    status, stdout, err = _run(
        ["sbls", "--metadata", str(no_speaker), "--predictions", str(pred), "--bootstrap", "20"],
        capsys,
    )
    assert status == 2 and "speaker column" in err and "Traceback" not in err
