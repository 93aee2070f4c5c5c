"""Utility from files at ``study build`` (voxmetrics/cli/_utility.py): ``--wer``, ``--uar``,
``--rho-f0`` and ``--utt2spk``, computed by the library and put on their target conditions.

The computing itself is tested in tests/analysis/test_utility.py and tests/metrics/test_utility.py.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from sklearn.metrics import recall_score

from tests.vpc_tree import write_tree
from voxmetrics.cli import main
from voxmetrics.cli._utility import UTILITY_HELP, add_utility_options, attach_utility
from voxmetrics.data.studyfile import load_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.synth import demo_study


def test_study_build_attaches_computed_utility(tmp_path, capsys):
    root = write_tree(tmp_path / "tree", {"mcadams": 1.0}, results=False)
    ref, hyp = tmp_path / "text", tmp_path / "hyp"
    ref.write_text("1000-0000 A B C D\n1001-0000 E F\n1100-0000 G H\n")
    hyp.write_text("1000-0000 A B X D\n1001-0000 E F\n1100-0000 G\n")
    labels, preds = tmp_path / "utt2emo", tmp_path / "pred.csv"
    labels.write_text("1000-0000 ang\n1001-0000 sad\n1100-0000 sad\n")
    preds.write_text("utt_id,label\n1000-0000,ang\n1001-0000,ang\n1100-0000,sad\n")
    out = tmp_path / "s.vxm"
    argv = [
        "study",
        "build",
        str(out),
        str(root),
        "--bootstrap",
        "50",
        "--wer",
        "mcadams",
        str(ref),
        str(hyp),
        "--uar",
        "mcadams",
        str(labels),
        str(preds),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    study = load_study(out)
    for name in ("mcadams (ignorant)", "mcadams (lazy-informed)", "mcadams (semi-informed)"):
        u = study.get(name).utility
        assert u.wer == pytest.approx(2 / 8)  # 1 substitution + 1 deletion in 8 words
        assert u.uar == pytest.approx(
            recall_score(["ang", "sad", "sad"], ["ang", "ang", "sad"], average="macro")
        )
        assert set(u.intervals) == {"wer", "uar"}
    assert study.get("original").utility is None
    status = main(
        ["study", "build", str(tmp_path / "x.vxm"), str(root), "--wer", "nope", str(ref), str(hyp)]
    )
    assert status != 0
    assert "--wer nope: no condition or system of that name" in capsys.readouterr().err


def test_study_build_rho_f0_from_recordings(tmp_path, capsys):
    import soundfile as sf

    root = write_tree(tmp_path / "tree", {"mcadams": 1.0}, results=False)
    sr = 16000
    t = np.arange(sr) / sr
    contour = 140 + 30 * np.sin(2 * np.pi * 1.5 * t)  # a rising and falling pitch
    orig, anon = tmp_path / "orig", tmp_path / "anon"
    orig.mkdir()
    anon.mkdir()
    for k, shift in enumerate((1.4, 1.2)):
        utt = f"1000-{k:04d}"
        sf.write(orig / f"{utt}.wav", 0.4 * np.sin(2 * np.pi * np.cumsum(contour) / sr), sr)
        sf.write(anon / f"{utt}.wav", 0.4 * np.sin(2 * np.pi * np.cumsum(shift * contour) / sr), sr)
    out = tmp_path / "s.vxm"
    argv = [
        "study",
        "build",
        str(out),
        str(root),
        "--rho-f0",
        "mcadams (ignorant)",
        str(orig),
        str(anon),
    ]
    assert main(argv) == 0, capsys.readouterr().err
    u = load_study(out).get("mcadams (ignorant)").utility
    assert u.rho_f0 > 0.9  # the anonymised pitch follows the original's contour
    assert u.wer is None and "rho_F0 of" in u.source


# ---------------------------------------------------------------- the options


def test_utility_options_are_repeatable_triples_in_their_own_group():
    p = argparse.ArgumentParser()
    add_utility_options(p)
    group = next(g for g in p._action_groups if g.title == "utility")
    assert group.description == UTILITY_HELP
    wer = ["--wer", "a", "r", "h", "--wer", "b (ignorant)", "r2", "h2"]
    args = p.parse_args([*wer, "--uar", "a", "l", "p", "--utt2spk", "u2s"])
    assert args.wer == [["a", "r", "h"], ["b (ignorant)", "r2", "h2"]]
    assert args.uar == [["a", "l", "p"]] and args.rho_f0 is None and args.utt2spk == "u2s"
    with pytest.raises(SystemExit):
        p.parse_args(["--wer", "a", "r"])  # TARGET REF HYP: three values


# ---------------------------------------------------------------- attach_utility


def _args(**given):
    none = {"wer": None, "uar": None, "rho_f0": None, "utt2spk": None}
    return argparse.Namespace(**(none | given))


@pytest.fixture(scope="module")
def study():
    return demo_study(n_speakers=4)


@pytest.fixture
def transcripts(tmp_path):
    ref, hyp = tmp_path / "text", tmp_path / "asr.txt"
    ref.write_text("s1-u1 A B C D\ns2-u1 E F\ns2-u2 G H\n")
    hyp.write_text("s1-u1 A B C\ns2-u1 E X\ns2-u2 G H\n")  # 1 deletion, 1 substitution
    return str(ref), str(hyp)


def test_attach_utility_puts_the_wer_on_its_target_only_and_says_so(study, transcripts, capsys):
    ref, hyp = transcripts
    got = attach_utility(study, _args(wer=[["anon-mild", ref, hyp]]))
    u = got.get("anon-mild").utility
    assert u.wer == pytest.approx(2 / 8)
    assert u.uar == study.get("anon-mild").utility.uar  # the other numbers are kept
    assert u.source.endswith("WER of asr.txt")
    for name in study.names:
        if name != "anon-mild":
            assert got.get(name).utility == study.get(name).utility
    assert "voxmetrics: anon-mild: utility from WER of asr.txt" in capsys.readouterr().err


def test_attach_utility_bootstraps_with_the_studys_settings_and_utt2spk(
    study, transcripts, tmp_path
):
    from voxmetrics.analysis.utility import wer_utility
    from voxmetrics.data.transcripts import read_labels

    ref, hyp = transcripts
    utt2spk = tmp_path / "utt2spk"
    utt2spk.write_text("s1-u1 x\ns2-u1 y\ns2-u2 z\n")  # three speakers, not the two prefixes
    got = attach_utility(study, _args(wer=[["anon-mild", ref, hyp]], utt2spk=str(utt2spk)))
    expected = wer_utility(
        ref,
        hyp,
        utt2spk=read_labels(str(utt2spk)),
        n_boot=study.settings.bootstrap,
        seed=study.settings.seed,
    )
    assert study.settings.bootstrap > 0
    assert got.get("anon-mild").utility.intervals["wer"] == expected.intervals["wer"]
    by_prefix = attach_utility(study, _args(wer=[["anon-mild", ref, hyp]]))
    assert by_prefix.get("anon-mild").utility.intervals["wer"] != expected.intervals["wer"]


def test_attach_utility_without_options_changes_nothing(study, capsys):
    assert attach_utility(study, _args()) == study
    assert capsys.readouterr().err == ""


def test_attach_utility_names_the_option_of_an_unknown_target(study, transcripts):
    ref, hyp = transcripts
    with pytest.raises(VoxMetricsInputError, match=r"^--wer nope: no condition or system"):
        attach_utility(study, _args(wer=[["nope", ref, hyp]]))
