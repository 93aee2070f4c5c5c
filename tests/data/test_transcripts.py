"""voxmetrics.data.transcripts: transcripts, labels, folds and audio lists by utterance id."""

from __future__ import annotations

import io
import zipfile

import pandas as pd
import pytest

from voxmetrics.data.transcripts import (
    fold_column,
    paired,
    read_audio_list,
    read_audio_zip,
    read_labels,
    read_transcripts,
    speakers_of,
)
from voxmetrics.errors import VoxMetricsInputError


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    return buf.getvalue()


def test_read_transcripts_kaldi_and_csv(tmp_path):
    s = read_transcripts(b"\xef\xbb\xbfu1 HELLO  WORLD\n\nu2\nu3 YES \n")  # BOM, blank line
    assert s.to_dict() == {"u1": "HELLO  WORLD", "u2": "", "u3": "YES"}
    p = tmp_path / "hyp.csv"
    p.write_text("utt_id,hypothesis\n u1 ,hello world\nu2,\n")
    assert read_transcripts(p).to_dict() == {"u1": "hello world", "u2": ""}


def test_read_transcripts_errors(tmp_path):
    with pytest.raises(VoxMetricsInputError, match=r"^text: the file is empty; it should hold"):
        read_transcripts(b"\n \n", name="text")
    with pytest.raises(
        VoxMetricsInputError, match=r"^text: utterance 'u1' is listed twice; give each"
    ):
        read_transcripts(b"u1 A\nu2 B\nu1 C\n", name="text")
    with pytest.raises(VoxMetricsInputError, match=r"^uploaded file: is not UTF-8 text\.$"):
        read_transcripts(b"u1 \xff\xfe\n")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^t\.csv: the CSV needs the columns utt_id and one of text, transcript, hypo",
    ):
        read_transcripts(b"utt_id,words\nu1,A\n", name="t.csv")
    with pytest.raises(VoxMetricsInputError, match=r"^nope\.txt: no such file"):
        read_transcripts(tmp_path / "nope.txt")


def test_a_csv_naming_a_column_twice_is_refused_by_name():
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^column 'hypothesis' appears twice in hyp\.csv \(columns 2 and 3\); keep one",
    ):
        read_transcripts(b"utt_id,hypothesis,hypothesis\nu1,a,b\n", name="hyp.csv")


def test_read_labels():
    assert read_labels(b"u1 ang\nu2 SAD\n").to_dict() == {"u1": "ang", "u2": "SAD"}
    assert read_labels(b"utt_id,emotion\nu1,hap\n").to_dict() == {"u1": "hap"}
    for bad in (b"u1 ang\nu2\n", b"u1 ang\nu2 very sad\n"):
        with pytest.raises(
            VoxMetricsInputError, match=r"^utt2emo: line 2 is 'u2.*'; every line must be `utt_id"
        ):
            read_labels(bad, name="utt2emo")


def test_fold_column():
    assert fold_column(b"utt_id,label,fold\nu1,ang, 1\nu2,sad,2\n").to_dict() == {
        "u1": "1",
        "u2": "2",
    }
    assert fold_column(b"utt_id,label\nu1,ang\n") is None
    assert fold_column(b"u1 ang\n") is None
    with pytest.raises(VoxMetricsInputError, match=r"^p\.csv: utterance 'u2' has no fold; give"):
        fold_column(b"utt_id,label,fold\nu1,ang,1\nu2,sad, \n", name="p.csv")


def test_read_audio_list_folder_scp_and_csv(tmp_path):
    audio = tmp_path / "audio"
    audio.mkdir()
    for name in ("b.wav", "a.flac", ".hidden.wav"):
        (audio / name).write_bytes(b"")
    (audio / "sub").mkdir()
    assert read_audio_list(audio).to_dict() == {
        "a": str(audio / "a.flac"),
        "b": str(audio / "b.wav"),
    }
    scp = tmp_path / "wav.scp"
    scp.write_text("u1 audio/b.wav\nu2 /abs/x.wav\n")
    assert read_audio_list(scp).to_dict() == {
        "u1": str(tmp_path / "audio/b.wav"),
        "u2": "/abs/x.wav",
    }
    csv = tmp_path / "list.csv"
    csv.write_text("utt_id,path\nu1,a.flac\n")
    assert read_audio_list(csv).to_dict() == {"u1": str(tmp_path / "a.flac")}


def test_read_audio_list_refuses_commands(tmp_path):
    scp = tmp_path / "wav.scp"
    scp.write_text("u1 a.wav\nu2 sox x.flac -t wav - |\n")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^wav\.scp: the entry of 'u2' is a command \('sox x\.flac -t wav - \|'\), not a "
        r"file path; VoxMetrics runs no commands",
    ):
        read_audio_list(scp)


def test_read_audio_zip():
    data = _zip(
        {
            "anon/u1.WAV": b"1",
            "anon/deep/u2.flac": b"2",
            "anon/readme.txt": b"",
            "__MACOSX/anon/._u3.wav": b"",
            "anon/.u4.wav": b"",
            "anon/sub/": b"",
        }
    )
    got = read_audio_zip(data, suffixes=(".wav", ".flac"), name="a.zip")
    assert got.to_dict() == {"u1": "anon/u1.WAV", "u2": "anon/deep/u2.flac"}


def test_read_audio_zip_errors():
    with pytest.raises(
        VoxMetricsInputError, match=r"^a\.zip: the archive holds no recording \(\.wav\)"
    ):
        read_audio_zip(_zip({"x.txt": b""}), suffixes=(".wav",), name="a.zip")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^a\.zip: utterance 'u1' has two recordings \(x/u1\.wav, y/u1\.wav\)",
    ):
        read_audio_zip(_zip({"x/u1.wav": b"", "y/u1.wav": b""}), suffixes=(".wav",), name="a.zip")
    with pytest.raises(
        VoxMetricsInputError, match=r"^uploaded zip: refusing an unsafe archive: member '\.\./u1"
    ):
        read_audio_zip(_zip({"../u1.wav": b""}), suffixes=(".wav",))
    with pytest.raises(VoxMetricsInputError, match=r"^a\.zip: not a readable zip archive"):
        read_audio_zip(b"not a zip", suffixes=(".wav",), name="a.zip")


def test_paired():
    ref = pd.Series({"u1": "A B", "u2": "C", "u3": ""})
    hyp = pd.Series({"u3": "", "u2": "C", "u1": "A"})
    df = paired(ref, hyp, reference_name="text", system_name="hyp")
    assert df.index.tolist() == ["u1", "u2", "u3"]
    assert df["reference"].tolist() == ["A B", "C", ""] and df["system"].tolist() == ["A", "C", ""]
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^hyp: 1 utterance\(s\) are not in the reference text \(first: 'u9'\)",
    ):
        paired(
            ref, pd.concat([hyp, pd.Series({"u9": "X"})]), reference_name="text", system_name="hyp"
        )
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^hyp: 2 utterance\(s\) of the reference text have no output \(first: 'u1'\)",
    ):
        paired(ref, hyp[["u3"]], reference_name="text", system_name="hyp")


def test_speakers_of():
    ids = ["1272-128104-0000", "84-121123-0001", "solo"]
    assert speakers_of(ids).tolist() == ["1272", "84", "solo"]
    u2s = pd.Series({"1272-128104-0000": "spkA", "84-121123-0001": "spkB", "solo": "spkC"})
    assert speakers_of(pd.Index(ids), u2s).tolist() == ["spkA", "spkB", "spkC"]
    with pytest.raises(
        VoxMetricsInputError, match=r"^utt2spk: 1 utterance\(s\) have no speaker \(first: 'solo'\)"
    ):
        speakers_of(ids, u2s.drop("solo"))
