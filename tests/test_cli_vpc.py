"""VoicePrivacy-style inputs through the command line: Kaldi scores and x-vectors, distances,
standard ASV outputs (DCF, d'), the system filter, similarity with single-utterance speakers and
``study build``. Every file is written here, shaped like the challenge's."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import kaldiio
import numpy as np
import pandas as pd
import pytest

from voxmetrics.cli import main
from voxmetrics.data import load_study, read_embeddings, read_scores
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.studybuild import build_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.dcf import d_prime, dcf
from voxmetrics.report import evaluate, evaluate_condition
from voxmetrics.synth import demo_study


def _run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _kaldi(sm, folder: Path, stem: str, *, negate: bool = False) -> tuple[Path, Path]:
    """A VPC scores file (enrol_id trial_id score) and its key (enrol_id trial_id target)."""
    rows, key = [], []
    for i, tid in enumerate(sm.trial_ids):
        for j, spk in enumerate(sm.enrol_speakers):
            s = -sm.scores[i, j] if negate else sm.scores[i, j]
            rows.append(f"{spk} {tid} {float(s)!r}")
            target = "target" if spk == sm.trial_speakers[i] else "nontarget"
            key.append(f"{spk} {tid} {target}")
    scores, trials = folder / f"{stem}.scores", folder / f"{stem}.trials"
    scores.write_text("\n".join(rows) + "\n")
    trials.write_text("\n".join(key) + "\n")
    return scores, trials


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


def _xvectors(tmp_path: Path, demo):
    """The demo's plain embeddings as a VPC x-vector ark + scp, with a two-system metadata."""
    es = demo.get("plain").embeddings
    ids = es.meta["utt_id"].tolist()
    kaldiio.save_ark(
        str(tmp_path / "xvector.ark"),
        {u: es.embeddings[k].astype(np.float32) for k, u in enumerate(ids)},
        scp=str(tmp_path / "xvector.scp"),
    )
    meta = es.meta[["utt_id", "speaker", "role", "split"]]
    both = pd.concat(
        [meta.assign(system="original"), meta.assign(system="b1", utt_id="b1-" + meta.utt_id)]
    )
    both.to_csv(tmp_path / "meta.csv", index=False)
    return es


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


def test_study_build_from_a_folder_and_a_manifest(demo, tmp_path, capsys):
    root = tmp_path / "vpc"
    for cond in demo.conditions[:3]:
        folder = root / cond.name / "semi-informed"
        folder.mkdir(parents=True)
        _kaldi(cond.eval, folder, "eval", negate=True)
        _kaldi(cond.dev, folder, "dev", negate=True)
    # one system with embeddings only (scored by cosine)
    es = _xvectors(tmp_path, demo)
    folder = root / "xv" / "ignorant"
    folder.mkdir(parents=True)
    kaldiio.save_ark(str(folder / "embeddings.ark"),
                     {u: es.embeddings[k] for k, u in enumerate(es.meta.utt_id)})  # fmt: skip
    es.meta[["utt_id", "speaker", "role", "split"]].to_csv(folder / "metadata.csv", index=False)
    status, out, err = _run(["study", "build", tmp_path / "s.vxm", root, "--distance"], capsys)
    assert status == 2 and "applies to score files only" in err
    (folder / "metadata.csv").unlink()
    (folder / "embeddings.ark").unlink()
    folder.rmdir()
    folder.parent.rmdir()
    status, out, err = _run(["study", "build", tmp_path / "s.vxm", root, "--distance"], capsys)
    assert status == 0, err
    assert out.strip() == str(tmp_path / "s.vxm")
    study = load_study(tmp_path / "s.vxm")
    assert study.names == sorted(c.name for c in demo.conditions[:3])
    for cond in demo.conditions[:3]:
        built = study.get(cond.name)
        assert built.score_kind == "distance"
        np.testing.assert_allclose(built.eval.scores, cond.eval.scores)
        a = evaluate_condition(built).to_dict()
        # the demo's utility numbers are the demo's, not in the score files
        b = evaluate_condition(replace(cond, embeddings=None, utility=None)).to_dict()
        assert a.pop("score_kind") == "distance (negated)"
        b.pop("score_kind")
        assert a == b
    # a manifest: the same, plus a condition from embeddings
    man = tmp_path / "manifest.csv"
    rows = [
        {"condition": c.name, "attacker": "semi-informed",
         "eval": f"vpc/{c.name}/semi-informed/eval.scores",
         "trials": f"vpc/{c.name}/semi-informed/eval.trials",
         "dev": f"vpc/{c.name}/semi-informed/dev.scores",
         "dev_trials": f"vpc/{c.name}/semi-informed/dev.trials", "score_kind": "distance"}
        for c in demo.conditions[:2]
    ]  # fmt: skip
    rows.append({"condition": "xv", "attacker": "ignorant", "embeddings": "xvector.scp",
                 "metadata": "meta.csv"})  # fmt: skip
    pd.DataFrame(rows).to_csv(man, index=False)
    with pytest.raises(VoxMetricsInputError, match=r"condition 'xv': .*have no embedding"):
        build_study(man)
    rows[-1]["system"] = "original"
    pd.DataFrame(rows).to_csv(man, index=False)
    assert len(build_study(man).get("xv").embeddings.meta) == len(es.meta)
    pd.read_csv(tmp_path / "meta.csv").query("system == 'original'").to_csv(
        tmp_path / "meta.csv", index=False
    )
    study = build_study(man)
    assert study.names == [*(c.name for c in demo.conditions[:2]), "xv"]
    assert study.get("xv").attacker == "ignorant" and study.get("xv").dev is not None
    sm = read_scores(root / demo.conditions[0].name / "semi-informed" / "eval.scores",
                     trials=root / demo.conditions[0].name / "semi-informed" / "eval.trials",
                     distance=True)  # fmt: skip
    assert study.get(demo.conditions[0].name).eval.equals(sm)
    pd.DataFrame([{"condition": "x", "attacker": "semi-informed", "eval": "nope.csv"}]).to_csv(
        man, index=False
    )
    status, _, err = _run(["study", "build", tmp_path / "t.vxm", man], capsys)
    assert status == 2 and "line 2: eval file 'nope.csv' does not exist" in err
    (root / "b9" / "hacker").mkdir(parents=True)
    status, _, err = _run(["study", "build", tmp_path / "t.vxm", root], capsys)
    assert status == 2 and "'hacker' is not an attacker" in err


def test_report_of_a_built_study_has_the_verification_section(demo, tmp_path, capsys):
    root = tmp_path / "vpc"
    for cond in demo.conditions[:2]:
        folder = root / cond.name / "semi-informed"
        folder.mkdir(parents=True)
        _kaldi(cond.eval, folder, "eval", negate=True)
    assert _run(["study", "build", tmp_path / "s.vxm", root, "--distance", "--bootstrap", "0"],
                capsys)[0] == 0  # fmt: skip
    status, _, err = _run(
        ["report", tmp_path / "s.vxm", "--html", tmp_path / "r.html", "--json", tmp_path / "r.json",
         "--csv", tmp_path / "csv"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    page = (tmp_path / "r.html").read_text()
    assert 'id="verification"' in page and "distance scores, negated on reading" in page
    assert 'data-figure="det_curves"' in page and 'data-figure="ape_plot"' in page
    data = json.loads((tmp_path / "r.json").read_text())
    name = demo.conditions[0].name
    assert data["conditions"][name]["score_kind"] == "distance (negated)"
    sm = demo.get(name).eval
    assert data["conditions"][name]["dcf"]["0.01"]["min_dcf"] == pytest.approx(
        dcf(sm.tar, sm.non).min_dcf[0]
    )
    table = pd.read_csv(tmp_path / "csv" / "verification.csv")
    assert table["Condition"].tolist() == sorted(c.name for c in demo.conditions[:2])


def test_study_build_reads_the_demo_commands_kaldi_files(tmp_path, capsys):
    """`demo --format kaldi` writes NAME_eval.scores + NAME_eval.scores.key; laid out per system."""
    assert _run(["demo", tmp_path / "d", "--format", "kaldi", "--no-embeddings"], capsys)[0] == 0
    root = tmp_path / "root"
    for name in ("plain", "anon-leaky"):
        folder = root / name / "semi-informed"
        folder.mkdir(parents=True)
        for split in ("eval", "dev"):
            for suffix in (".scores", ".scores.key"):
                src = tmp_path / "d" / f"{name}_{split}{suffix}"
                (folder / f"{split}{suffix}").write_bytes(src.read_bytes())
    study = build_study(root)
    demo = demo_study()
    for name in ("plain", "anon-leaky"):
        for split in ("eval", "dev"):
            built, ref = getattr(study.get(name), split), getattr(demo.get(name), split)
            np.testing.assert_allclose(built.scores, ref.scores, rtol=0, atol=1e-12)
            assert built.trial_ids.tolist() == ref.trial_ids.tolist()
            assert built.enrol_speakers.tolist() == ref.enrol_speakers.tolist()
    (root / "plain" / "semi-informed" / "eval.trials").write_text("x y target\n")
    with pytest.raises(VoxMetricsInputError, match="several eval key files"):
        build_study(root)


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


def test_score_kind_is_checked_and_kept_in_study_files(demo, tmp_path):
    from voxmetrics.data import Condition, Study, save_study

    sm = demo.get("plain").eval
    with pytest.raises(VoxMetricsInputError, match="score kind 'cosine' is unknown"):
        Condition("x", eval=sm, score_kind="cosine")  # type: ignore[arg-type]
    with pytest.raises(VoxMetricsInputError, match="score_kind 'cosine' is unknown"):
        evaluate(sm, score_kind="cosine")  # type: ignore[arg-type]
    study = Study((Condition("x", eval=sm, score_kind="llr"),))
    back = load_study(save_study(study, tmp_path / "s.vxm"))
    assert back.get("x").score_kind == "llr"
    assert back.get("x").content_hash != Condition("x", eval=sm).content_hash
    r = evaluate_condition(back.get("x")).to_dict()
    assert r["score_kind"] == "llr" and r["dcf"]["0.01"]["act_dcf"] is not None
