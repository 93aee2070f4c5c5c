"""voxmetrics.analysis.utility: a condition's utility from per-utterance files, the same
numbers as the metric functions, from paths or uploaded bytes (zips of recordings), put on
the conditions of a study as ``study build --wer/--uar/--rho-f0`` does."""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from tests.vpc_tree import write_tree
from voxmetrics.analysis.utility import (
    rho_f0_utility,
    study_with_utility,
    target_conditions,
    uar_utility,
    utility_targets,
    wer_utility,
)
from voxmetrics.data.transcripts import read_audio_zip, read_labels, speakers_of
from voxmetrics.data.utility import Utility
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.utility import (
    combine_utility,
    unweighted_average_recall,
    word_error_rate,
)

REF = b"1000-0 A B C D\n1000-1 E F\n1001-0 G H\n1002-0 I J K\n"
HYP = b"1000-0 A B X D\n1000-1 E F\n1001-0 G\n1002-0 I J K L\n"
LABELS = b"1000-0 ang\n1000-1 sad\n1001-0 sad\n1002-0 neu\n"
PREDS = b"utt_id,label\n1000-0,ang\n1000-1,ang\n1001-0,sad\n1002-0,neu\n"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("vpc") / "tree", {"mcadams": 1.0, "sttts": 0.3})
    return read_vpc_tree(root).study


def test_wer_utility_is_word_error_rate_of_the_paired_files(tmp_path):
    ref, hyp = tmp_path / "text", tmp_path / "hyp"
    ref.write_bytes(REF)
    hyp.write_bytes(HYP)
    ids = ["1000-0", "1000-1", "1001-0", "1002-0"]
    expected = word_error_rate(
        ["A B C D", "E F", "G H", "I J K"],
        ["A B X D", "E F", "G", "I J K L"],
        speakers=speakers_of(ids),
        n_boot=50,
        seed=4,
    )
    from_paths = wer_utility(ref, hyp, n_boot=50, seed=4)
    from_bytes = wer_utility(REF, HYP, n_boot=50, seed=4, hypotheses_name="hyp")
    assert from_paths == from_bytes
    assert from_paths.wer == expected.wer == 3 / 11
    assert from_paths.intervals["wer"] == (expected.interval.low, expected.interval.high)
    assert from_paths.source == "WER of hyp" and from_paths.uar is None
    assert wer_utility(REF, HYP).intervals == {}  # n_boot 0: no interval


def test_uar_utility_with_utt2spk():
    utt2spk = read_labels(b"1000-0 a\n1000-1 b\n1001-0 a\n1002-0 b\n", name="utt2spk")
    u = uar_utility(LABELS, PREDS, utt2spk=utt2spk, n_boot=40, seed=1, predictions_name="p.csv")
    r = unweighted_average_recall(
        ["ang", "sad", "sad", "neu"],
        ["ang", "ang", "sad", "neu"],
        speakers=["a", "b", "a", "b"],
        n_boot=40,
        seed=1,
    )
    assert u.uar == r.uar and dict(u.per_class) == dict(r.per_class)
    assert u.intervals["uar"] == (r.interval.low, r.interval.high)
    assert u.source == "UAR of p.csv"


def test_uploads_are_named_in_messages():
    with pytest.raises(
        VoxMetricsInputError, match=r"hyp.txt: 1 utterance\(s\) of the reference ref.txt"
    ):
        wer_utility(
            REF,
            b"".join(HYP.splitlines(keepends=True)[:3]),
            reference_name="ref.txt",
            hypotheses_name="hyp.txt",
        )
    with pytest.raises(VoxMetricsInputError, match=r"^pred.txt: line 1 is 'u1 a b'"):
        uar_utility(LABELS, b"u1 a b\n", predictions_name="pred.txt")
    with pytest.raises(VoxMetricsInputError, match=r"utt2spk: 2 utterance\(s\) have no speaker"):
        wer_utility(REF, HYP, utt2spk=read_labels(b"1000-0 a\n1000-1 a\n"), n_boot=10)


def _recordings(folder, shifts):
    """Two-second sweeps of a rising and falling pitch, one per utterance id."""
    import soundfile as sf

    sr = 16000
    t = np.arange(sr) / sr
    contour = 140 + 30 * np.sin(2 * np.pi * 1.5 * t)
    folder.mkdir()
    for utt, shift in shifts.items():
        sf.write(
            folder / f"{utt}.wav", 0.4 * np.sin(2 * np.pi * np.cumsum(shift * contour) / sr), sr
        )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for f in sorted(folder.iterdir()):
            zf.write(f, f"{folder.name}/sub/{f.name}")
        zf.writestr("__MACOSX/._x.wav", b"junk")
        zf.writestr(f"{folder.name}/README.txt", b"not audio")
    return buf.getvalue()


def test_rho_f0_from_folders_equals_from_zips(tmp_path):
    ids = ["1000-0000", "1000-0001", "1001-0000"]
    orig_zip = _recordings(tmp_path / "orig", dict.fromkeys(ids, 1.0))
    anon_zip = _recordings(tmp_path / "anon", dict(zip(ids, (1.4, 1.2, 0.8), strict=True)))
    seen = []
    from_zips = rho_f0_utility(
        orig_zip,
        anon_zip,
        n_boot=30,
        seed=2,
        original_name="orig.zip",
        anonymised_name="anon.zip",
        progress=lambda f, m: seen.append((f, m)),
    )
    from_folders = rho_f0_utility(
        tmp_path / "orig", tmp_path / "anon", n_boot=30, seed=2, anonymised_name="anon.zip"
    )
    assert from_zips == from_folders
    assert from_zips.rho_f0 > 0.9 and "rho_f0" in from_zips.intervals
    assert from_zips.source == "rho_F0 of anon.zip"
    assert len(seen) == 6 and seen[-1][0] == 1.0 and seen[0][1] == "pitch of 1000-0000"
    with pytest.raises(VoxMetricsInputError, match=r"anon.zip: 1 utterance\(s\) of the reference"):
        rho_f0_utility(orig_zip, _one_member(anon_zip), anonymised_name="anon.zip")


def _one_member(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        wavs = [n for n in src.namelist() if n.endswith(".wav") and "MACOSX" not in n]
        for n in wavs[:2]:
            dst.writestr(n, src.read(n))
    return out.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_read_audio_zip_refuses_bad_archives():
    wav = (".wav", ".flac")
    with pytest.raises(VoxMetricsInputError, match=r"x.zip: not a readable zip archive"):
        read_audio_zip(b"not a zip", suffixes=wav, name="x.zip")
    with pytest.raises(VoxMetricsInputError, match=r"x.zip: the archive holds no recording"):
        read_audio_zip(_zip({"a.txt": b"."}), suffixes=wav, name="x.zip")
    with pytest.raises(VoxMetricsInputError, match=r"utterance 'u1' has two recordings"):
        read_audio_zip(_zip({"a/u1.wav": b".", "b/u1.flac": b"."}), suffixes=wav, name="x.zip")
    with pytest.raises(VoxMetricsInputError, match=r"member '../u1.wav' points outside"):
        read_audio_zip(_zip({"../u1.wav": b"."}), suffixes=wav, name="x.zip")
    listed = read_audio_zip(_zip({"a/U1.WAV": b".", "a/.u2.wav": b"."}), suffixes=wav)
    assert listed.to_dict() == {"U1": "a/U1.WAV"}


def test_targets_are_conditions_or_systems(study):
    assert utility_targets(study)[:2] == ["mcadams", "sttts"]
    assert utility_targets(study)[2:] == study.names
    assert target_conditions(study, "mcadams (ignorant)") == ["mcadams (ignorant)"]
    assert target_conditions(study, "sttts") == [
        "sttts (ignorant)",
        "sttts (lazy-informed)",
        "sttts (semi-informed)",
    ]
    with pytest.raises(VoxMetricsInputError, match=r"^--wer nope: no condition or system"):
        target_conditions(study, "nope", where="--wer nope")


def test_study_with_utility_is_combine_utility_of_the_results(study):
    study = replace(study, settings=replace(study.settings, bootstrap=30))
    wer = wer_utility(REF, HYP, n_boot=30, hypotheses_name="hyp")
    uar = uar_utility(LABELS, PREDS, n_boot=30, predictions_name="pred")
    other = wer_utility(REF, REF, hypotheses_name="ref")
    attached = study_with_utility(
        study, {"mcadams (ignorant)": [other, wer, uar], "original": [uar]}
    )
    cond = study.get("mcadams (ignorant)")
    spk = speakers_of(["1000-0", "1000-1", "1001-0", "1002-0"])
    expected = combine_utility(
        cond.utility,
        wer=word_error_rate(
            ["A B C D", "E F", "G H", "I J K"],
            ["A B X D", "E F", "G", "I J K L"],
            speakers=spk,
            n_boot=30,
        ),
        uar=unweighted_average_recall(
            ["ang", "sad", "sad", "neu"], ["ang", "ang", "sad", "neu"], speakers=spk, n_boot=30
        ),
        source="WER of hyp; UAR of pred",
    )
    assert attached.study.get("mcadams (ignorant)").utility == expected
    assert attached.sources == {
        "mcadams (ignorant)": "WER of hyp; UAR of pred",
        "original": "UAR of pred",
    }
    assert attached.lines[1] == "original: utility from UAR of pred"
    assert attached.study.names == study.names
    assert attached.study.get("sttts (ignorant)") is study.get("sttts (ignorant)")
    fresh = study_with_utility(
        replace(study, conditions=(replace(cond, utility=None),)), {cond.name: [wer]}
    )
    assert fresh.study.get(cond.name).utility == Utility(
        wer=wer.wer, intervals=wer.intervals, source="WER of hyp"
    )
