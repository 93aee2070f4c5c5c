"""Leftover: utility inputs read, paired and attached to a study (``study build --wer/--uar``).

This file's tests of voxmetrics.metrics.utility now live in tests/metrics/test_utility.py.
What is left here tests voxmetrics.data.transcripts, voxmetrics.analysis.utility and the CLI,
whose test files other modules' owners keep.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import recall_score

from tests.vpc_tree import write_tree
from voxmetrics.cli import main
from voxmetrics.data.studyfile import load_study
from voxmetrics.data.transcripts import paired, read_labels, read_transcripts
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError


def test_readers_and_pairing(tmp_path):
    text = tmp_path / "text"
    text.write_text("u1 HELLO WORLD\nu2 YES\n")
    hyp = tmp_path / "hyp.csv"
    hyp.write_text("utt_id,text\nu1,HELLO WORD\nu2,YES\nu3,EXTRA\n")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"hyp.csv: 1 utterance\(s\) are not in the reference text \(first: 'u3'\)",
    ):
        paired(
            read_transcripts(text),
            read_transcripts(hyp),
            reference_name="text",
            system_name="hyp.csv",
        )
    with pytest.raises(VoxMetricsInputError, match=r"utterance 'u1' is listed twice"):
        read_transcripts(b"u1 A\nu1 B\n", name="text")
    with pytest.raises(
        VoxMetricsInputError, match=r"line 2 is 'u2 a b'; every line must be `utt_id label`"
    ):
        read_labels(b"u1 a\nu2 a b\n", name="utt2emo")
    lacking = read_transcripts(b"u1 HELLO\n")
    with pytest.raises(
        VoxMetricsInputError, match=r"1 utterance\(s\) of the reference text have no output"
    ):
        paired(read_transcripts(text), lacking, reference_name="text", system_name="hyp")


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


def test_uar_utility_reads_a_fold_column_and_says_which():
    from voxmetrics.analysis.utility import uar_utility

    labels = b"utt_id,label,fold\nu1,ang,1\nu2,sad,1\nu3,ang,2\nu4,sad,2\n"
    preds = b"u1 ang\nu2 ang\nu3 ang\nu4 sad\n"
    u = uar_utility(labels, preds, labels_name="lab.csv", predictions_name="pred")
    assert u.uar_method == "fold_mean" and u.uar == pytest.approx((0.5 + 1.0) / 2)
    assert u.source == "UAR of pred (mean of 2 folds)"
    pooled = uar_utility(b"u1 ang\nu2 sad\nu3 ang\nu4 sad\n", preds, predictions_name="pred")
    assert pooled.uar_method == "pooled" and pooled.uar == pytest.approx((1.0 + 0.5) / 2)
    assert Utility.from_dict(u.to_dict()) == u
    with pytest.raises(VoxMetricsInputError, match=r"has no fold"):
        uar_utility(b"utt_id,label,fold\nu1,ang,1\nu2,sad,\n", b"u1 ang\nu2 ang\n")
    with pytest.raises(VoxMetricsInputError, match=r"uar_method 'median' is unknown"):
        Utility(uar=0.5, uar_method="median")
