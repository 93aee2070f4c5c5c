"""``python -m voxmetrics evaluate``: the command-line contract of design.md (JSON keys, exit
codes 0 / 1 / 2, no traceback), every score format, ``--by`` subsets, and VoicePrivacy-style
inputs (Kaldi scores and x-vectors, distances, DCF and d', the system filter).

The blocks of single metrics have their own files: ``test_evaluate_lid.py``,
``test_evaluate_srd.py``, ``test_evaluate_zebra.py``, ``test_evaluate_linkage.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmetrics.cli import main
from voxmetrics.data import read_embeddings
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.metrics.dcf import d_prime, dcf
from voxmetrics.report import evaluate
from voxmetrics.synth import demo_study

from .cli_cases import kaldi_files as _kaldi
from .cli_cases import run as _run
from .cli_cases import vpc_xvectors as _xvectors

CONTRACT_KEYS = {
    "n_trials",
    "n_enrolled",
    "n_excluded_trials",
    "eer",
    "eer_rocch",
    "cllr",
    "min_cllr",
    "linkability",
    "lid",
    "srd",
    "srd_model",
    "zebra",
    "linkability_vs_n",
    "singling_out",
    "ties",
    "n_pairs",
    "trials_used",
    "intervals",
    "chance",
    "linkability_rule",
    "score_kind",
    "dcf",
    "d_prime",
    "tar_at_far",
    "utility",
}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "all"]) == 0
    return out


def test_evaluate_worked_example(worked_csv, capsys):
    status, out, err = _run(["evaluate", str(worked_csv)], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert set(result) == CONTRACT_KEYS
    assert result["eer"] == 0.5 and result["eer_rocch"] == 0.375 and result["linkability"] == 1.0
    assert (result["n_trials"], result["n_enrolled"], result["n_excluded_trials"]) == (4, 4, 0)
    assert result["n_pairs"] == 16 and result["trials_used"]["one_to_n"]["n_trials"] == 4
    assert result["lid"] is None  # no dev set, no cross-calibration
    # every trial is at rank 1 of 4: MeanD = MaxD = log2 4 = 2 bits, IdR = linkability = 1
    stats = {k: result["srd"][k] for k in ("mean_d", "idr", "std_d", "max_d", "spread")}
    assert stats == {"mean_d": 2.0, "idr": 1.0, "std_d": 0.0, "max_d": 2.0, "spread": 0.25}
    # chance: a random column of 4 wins its row; every row has exactly one strict winner
    assert result["chance"]["linkability"] == pytest.approx(1 / 4)
    assert result["intervals"] is None  # no bootstrap asked for
    assert result["srd_model"]["loss"] == "CLL"
    assert result["ties"] == "reference"


def test_evaluate_records_the_tie_rule(worked_csv, capsys):
    # the worked example has no target tied with a non-target: both rules agree
    status, out, err = _run(["evaluate", str(worked_csv), "--ties", "attacker"], capsys)
    assert status == 0, err
    result = json.loads(out)
    assert result["ties"] == "attacker"
    assert (result["eer"], result["eer_rocch"]) == (0.5, 0.375)
    with pytest.raises(SystemExit) as exc:  # argparse rejects an unknown choice
        main(["evaluate", str(worked_csv), "--ties", "optimistic"])
    assert exc.value.code == 2 and "--ties" in capsys.readouterr().err


def test_every_score_format_gives_the_same_metrics(demo_dir, capsys):
    results = {}
    for fmt, name in [
        ("csv", "anon-leaky_eval.csv"),
        ("parquet", "anon-leaky_eval.parquet"),
        ("npz", "anon-leaky_eval.npz"),
        ("kaldi", "anon-leaky_eval.scores"),
    ]:
        argv = ["evaluate", str(demo_dir / name)]
        if fmt == "kaldi":
            keys = sorted(
                p for p in demo_dir.glob("anon-leaky_eval.scores*") if p.suffix != ".scores"
            )
            assert keys, "write_scores(format='kaldi') wrote no key file"
            argv += ["--trials", str(keys[0])]
        status, out, err = _run(argv, capsys)
        assert status == 0, err
        results[fmt] = json.loads(out)
    first = results["csv"]
    assert first["n_trials"] == 320 and first["n_enrolled"] == 40 and first["eer"] >= 0.45
    for fmt, r in results.items():
        assert r == first, fmt  # the writers round-trip scores exactly


def test_dev_set_is_read_and_checked(demo_dir, capsys):
    status, _, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.npz"), "--dev", str(demo_dir / "plain_dev.npz")],
        capsys,
    )
    assert status == 0, err
    status, _, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.npz"), "--dev", str(demo_dir / "random_eval.npz")],
        capsys,
    )
    assert status == 2 and "share 40 speaker" in err


def test_json_and_html_outputs(worked_csv, tmp_path, capsys):
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    status, out, _ = _run(
        ["evaluate", str(worked_csv), "--json", str(js), "--html", str(page)], capsys
    )
    assert status == 0
    assert json.loads(js.read_text()) == json.loads(out)
    text = page.read_text()
    assert "<table" in text and "0.500" in text and "worked" in text
    # the styled page of `report --html`: report card, overview, methods, plotly.js once
    assert 'id="report-card"' in text and 'id="overview"' in text and 'id="methods"' in text
    assert text.count("plotly.js v") == 1


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(b"\x00\x01\x02 this is not a score file \xff")
    status, out, err = _run(["evaluate", str(garbage)], capsys)
    assert status == 2 and out == ""
    assert err.startswith("voxmetrics: error: ") and "garbage.csv" in err
    assert "Traceback" not in err
    status, _, err = _run(["evaluate", str(tmp_path / "missing.csv")], capsys)
    assert status == 2 and "no such file" in err


def test_kaldi_scores_without_key_say_how_to_fix(demo_dir, capsys):
    status, _, err = _run(["evaluate", str(demo_dir / "plain_eval.scores")], capsys)
    assert status == 2 and "--trials" in err


def test_by_many_small_subsets_is_fast_and_each_subset_is_its_own_report(
    tmp_path, capsys, monkeypatch
):
    """--by with 100 values of 2 speakers: the SRD fits of the subsets run in one batch.

    Each subset's report equals the subset evaluated alone, bit for bit (the fits before the
    batch took about 1 s each when the model could not represent the ranks).
    """
    import importlib
    import warnings

    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.evaluation import evaluate

    srd_module = importlib.import_module("voxmetrics.metrics.srd")
    n = 200
    rng = np.random.default_rng(3)
    spk = np.array([f"s{i:03d}" for i in range(n)])
    scores = rng.normal(size=(n, n)) + 3 * np.eye(n)
    group = np.array([f"g{i // 2:03d}" for i in range(n)])
    tids = np.array([f"t{i}" for i in range(n)])
    np.savez(
        tmp_path / "s.npz", scores=scores, trial_ids=tids, trial_speakers=spk, enrol_speakers=spk
    )
    pd.DataFrame({"trial_id": tids, "group": group}).to_csv(tmp_path / "a.csv", index=False)
    fitted: list[int] = []
    real = srd_module.fit_beta_binomials

    def counted(h, **kw):
        fitted.append(len(h))
        return real(h, **kw)

    monkeypatch.setattr(srd_module, "fit_beta_binomials", counted)
    argv = ["evaluate", str(tmp_path / "s.npz"), "--trial-attributes", str(tmp_path / "a.csv")]
    status, out, err = _run([*argv, "--by", "group"], capsys)
    assert status == 0, err
    by = json.loads(out)["by"]["group"]
    assert len(by) == 100
    # the whole matrix's fit, and one batch of the subsets' distinct histograms (at most 3)
    assert len(fitted) == 2 and max(fitted) <= 3, fitted
    monkeypatch.undo()
    sm = ScoreMatrix.from_arrays(
        scores, trial_ids=tids, trial_speakers=spk, enrol_speakers=spk, attributes={"group": group}
    )
    shapes: dict[float, str] = {}
    for value, sub in by.items():  # one subset of each rank histogram (2 trials: idr 0, .5, 1)
        shapes.setdefault(sub["srd"]["idr"], value)
    assert len(shapes) >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in shapes.values():
            alone = evaluate(sm.subset_attribute("group", value)).to_dict()
            assert json.loads(json.dumps(alone)) == by[value], value


def test_by_refuses_more_subsets_than_the_limit(tmp_path, capsys):
    n = 24
    spk = np.array([f"s{i:02d}" for i in range(n)])
    tids = np.array([f"t{i}" for i in range(n)])
    np.savez(tmp_path / "s.npz", scores=np.eye(n), trial_ids=tids, trial_speakers=spk,
             enrol_speakers=spk)  # fmt: skip
    group = [f"g{i // 2:02d}" for i in range(n)]
    pd.DataFrame({"trial_id": tids, "group": group}).to_csv(tmp_path / "a.csv", index=False)
    argv = ["evaluate", str(tmp_path / "s.npz"), "--trial-attributes", str(tmp_path / "a.csv")]
    status, out, err = _run([*argv, "--by", "group", "--limit", "max_subsets=10"], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith(
        "voxmetrics: error: --by group: 12 values of 'group', a subset each, over the limit "
        "max_subsets=10; "
    )
    assert "--limit max_subsets=VALUE" in err
    status, out, _ = _run([*argv, "--by", "group", "--limit", "max_subsets=12"], capsys)
    assert status == 0 and len(json.loads(out)["by"]["group"]) == 12


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=8, seed=3)


def test_distance_scores_are_negated_and_said(demo, tmp_path, capsys):
    sm = demo.get("anon-mild").eval
    sim_scores, trials = _kaldi(sm, tmp_path, "sim")
    dist_scores, _ = _kaldi(sm, tmp_path, "dist", negate=True)
    _, out_sim, _ = _run(["evaluate", sim_scores, "--trials", trials], capsys)
    status, out_dist, err = _run(
        ["evaluate", dist_scores, "--trials", trials, "--distance"], capsys
    )
    assert status == 0, err
    a, b = json.loads(out_sim), json.loads(out_dist)
    assert a["score_kind"] == "similarity" and b["score_kind"] == "distance (negated)"
    a.pop("score_kind"), b.pop("score_kind")
    assert a == b  # the same numbers as the similarity file
    # without --distance the distances would be read as similarities: a different result
    _, out_wrong, _ = _run(["evaluate", dist_scores, "--trials", trials], capsys)
    assert json.loads(out_wrong)["eer"] != a["eer"]
    with pytest.raises(SystemExit) as exc:  # argparse: exit status 2 with a usage line
        _run(["evaluate", dist_scores, "--distance", "--llr"], capsys)
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_dcf_block_and_d_prime(demo, tmp_path, capsys):
    sm = demo.get("anon-leaky").eval
    scores, trials = _kaldi(sm, tmp_path, "eval")
    status, out, err = _run(["evaluate", scores, "--trials", trials], capsys)
    assert status == 0, err
    r = json.loads(out)
    ref = dcf(sm.tar, sm.non)
    assert list(r["dcf"]) == ["0.01", "0.001"]
    for k, p in (("0.01", 0), ("0.001", 1)):
        assert r["dcf"][k]["min_dcf"] == pytest.approx(ref.min_dcf[p], abs=1e-12)
        assert r["dcf"][k]["act_dcf"] is None  # cosine scores are not LLRs
    assert r["d_prime"] == pytest.approx(d_prime(sm.tar, sm.non), rel=1e-12)
    status, out, err = _run(
        ["evaluate", scores, "--trials", trials, "--llr", "--p-target", "0.05", "--c-miss", "10"],
        capsys,
    )
    r = json.loads(out)
    ref = dcf(sm.tar, sm.non, p_targets=[0.05], c_miss=10, scores_are_llrs=True)
    assert r["score_kind"] == "llr"
    assert r["dcf"] == {
        "0.05": {"min_dcf": pytest.approx(ref.min_dcf[0]), "act_dcf": pytest.approx(ref.act_dcf[0])}
    }
    status, _, err = _run(["evaluate", scores, "--trials", trials, "--p-target", "1.5"], capsys)
    assert status == 2 and "strictly between 0 and 1" in err and "Traceback" not in err
    status, _, err = _run(["evaluate", scores, "--trials", trials, "--p-target", "a,b"], capsys)
    assert status == 2 and "separated by commas" in err
    # a CI gate on a detection cost
    status, out, err = _run(
        ["evaluate", scores, "--trials", trials, "--p-target", "0.01,0.05",
         "--fail-on", 'dcf["0.05"].min_dcf < 2 and d_prime > -10'],
        capsys,
    )  # fmt: skip
    assert status == 1 and list(json.loads(out)["dcf"]) == ["0.01", "0.05"]
    status, _, err = _run(
        ["evaluate", scores, "--trials", trials, "--fail-on", 'dcf["0.5"].min_dcf < 2'], capsys
    )
    assert status == 2 and "unknown metric 'dcf.0.5'" in err


def test_evaluate_kaldi_embeddings_with_system_filter(demo, tmp_path, capsys):
    es = _xvectors(tmp_path, demo)
    status, out, err = _run(
        ["evaluate", "--embeddings", tmp_path / "xvector.scp", "--metadata",
         tmp_path / "meta.csv", "--system", "original"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    reference = read_embeddings(tmp_path / "xvector.ark", metadata=tmp_path / "meta.csv",
                                system="original")  # fmt: skip
    assert reference.embeddings.shape == es.embeddings.shape
    expected = evaluate(
        reference.score_matrix("eval"),
        dev=reference.score_matrix("dev"),
        name="xvector",
        embeddings=reference,
    ).to_dict()
    expected["attacker"] = AttackerRecipe("cosine").to_dict()  # cosine of the given embeddings
    assert json.loads(out) == expected
    # a metadata listing fewer utterances than the ark: the rest are ignored, said on stderr
    meta = pd.read_csv(tmp_path / "meta.csv", dtype=str)
    keep = meta[(meta.system == "original") & ~meta.speaker.isin(meta.speaker.unique()[:1])]
    keep.to_csv(tmp_path / "sub.csv", index=False)
    status, out, err = _run(
        ["evaluate", "--embeddings", tmp_path / "xvector.ark", "--metadata", tmp_path / "sub.csv"],
        capsys,
    )
    assert status == 0, err
    assert "embeddings have no row in sub.csv" in err and "ignored" in err
    status, _, err = _run(
        ["evaluate", "--embeddings", tmp_path / "xvector.ark", "--metadata",
         tmp_path / "meta.csv", "--system", "b5"],
        capsys,
    )  # fmt: skip
    assert status == 2 and "no row has system 'b5'" in err
    status, _, err = _run(["evaluate", tmp_path / "x.scores", "--system", "b1"], capsys)
    assert status == 2
