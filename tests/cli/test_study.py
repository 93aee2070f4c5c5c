"""``python -m voxmetrics study build``: a study file from a folder of score files or a
manifest, VoicePrivacy-style (Kaldi scores and keys, shaped like the challenge's), the score
kind kept, and the fingerprints of the inputs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import kaldiio
import numpy as np
import pandas as pd
import pytest

from voxmetrics.data import load_study, read_scores
from voxmetrics.data.studybuild import build_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report import evaluate, evaluate_condition
from voxmetrics.synth import demo_study

from .cli_cases import kaldi_files as _kaldi
from .cli_cases import run as _run
from .cli_cases import vpc_xvectors as _xvectors


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=8, seed=3)


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


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_study_build_fingerprints_its_inputs(tmp_path, capsys):
    demo = demo_study(n_speakers=6)
    root = tmp_path / "root"
    for cond in demo.conditions[:2]:
        folder = root / cond.name / "semi-informed"
        folder.mkdir(parents=True)
        sm = cond.eval
        with (folder / "eval.csv").open("w") as fh:
            fh.write("trial_id,trial_speaker,enrol_speaker,score\n")
            for i, t in enumerate(sm.trial_ids):
                for j, e in enumerate(sm.enrol_speakers):
                    fh.write(f"{t},{sm.trial_speakers[i]},{e},{float(sm.scores[i, j])!r}\n")
    status, _, err = _run(["study", "build", tmp_path / "s.vxm", root], capsys)
    assert status == 0, err
    study = load_study(tmp_path / "s.vxm")
    assert sorted(Path(f.path).parent.parent.name for f in study.inputs) == sorted(demo.names[:2])
    assert all(f.role == "study source" and len(f.sha256) == 64 for f in study.inputs)
    assert study.saved_by["numpy"] == np.__version__
