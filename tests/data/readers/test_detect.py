"""Which format a file is (voxmetrics.data.readers.detect): by content, the extension a hint."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from hostile_inputs import (
    npy_bytes,
    npy_header,
    zip_of,
)

import voxmetrics.data.readers.detect as detect_module
from voxmetrics.data import (
    FORMATS,
    ScoreMatrix,
    detect_format,
    read_scores,
    write_scores,
)
from voxmetrics.data.readers import read_embeddings
from voxmetrics.errors import VoxMetricsInputError


def test_detection_by_content_not_extension(small_sm, small_es, tmp_path):
    cases = {}
    for fmt, name in [("csv", "s.txt"), ("csv", "s"), ("npz", "s.bin"), ("parquet", "s.dat")]:
        write_scores(small_sm, tmp_path / name, format=fmt)
        cases[name] = fmt
    write_scores(small_sm, tmp_path / "k.csv", format="kaldi")  # misleading extension
    cases["k.csv"], cases["k.csv.key"] = "kaldi", "kaldi-key"
    np.save(tmp_path / "e.npy", small_es.embeddings)
    (tmp_path / "e_npy.data").write_bytes((tmp_path / "e.npy").read_bytes())
    cases["e_npy.data"] = "npy"
    small_es.meta.to_csv(tmp_path / "meta.txt", index=False)
    cases["meta.txt"] = "metadata"
    (tmp_path / "utt2spk").write_text("u1 a\nu2 b\n")
    cases["utt2spk"] = "utt2spk"
    for name, fmt in cases.items():
        assert detect_format((tmp_path / name).read_bytes(), name) == fmt, name
        assert fmt in FORMATS
    # the readers use the same detection
    _same(read_scores(tmp_path / "s.bin"), small_sm)
    _same(read_scores(tmp_path / "s.dat"), small_sm)
    _same(read_scores(tmp_path / "s"), small_sm)
    _same(
        read_scores(tmp_path / "k.csv", trials=tmp_path / "k.csv.key"),
        _without_attributes(small_sm),
    )


def test_extension_is_a_hint_for_ambiguous_text():
    assert detect_format(b"score\n1\n", "x.csv") == "csv"


def test_detection_of_text_variants():
    assert detect_format(b"e1\tt1\t-1.5e-3\ne2\tt1\t2\n") == "kaldi"
    assert detect_format(b"utt_id,speaker,role,split\nu,a,enrol,dev\n") == "metadata"
    assert detect_format(b"\xef\xbb\xbftrial_id,score\n") == "csv"
    assert detect_format("trial_id,trial_speaker\nt1,Zoë\n".encode()) == "csv"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 1 << 24])
def test_utf8_is_checked_in_pieces_at_the_same_byte(monkeypatch, size):
    # a large non-ASCII file is decoded a piece at a time (not held as text besides its bytes)
    monkeypatch.setattr(detect_module, "_UTF8_PIECE", size)
    for data in (
        b"abc\n\xff",
        "é€😀".encode() + b"\x80z",
        b"a\ne\xe2\x82",
        "😀".encode()[:3] + b"A\n",
        "t1 \u00e9 target\n".encode() * 3 + b"\xc3",
    ):
        start = None
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            start = exc.start
        line = data.count(b"\n", 0, start) + 1
        with pytest.raises(VoxMetricsInputError, match=f"at byte offset {start} \\(line {line}\\)"):
            detect_module.check_utf8(data, "f")
    detect_module.check_utf8("é€😀 ok\n".encode() * 5, "f")


def _without_attributes(sm: ScoreMatrix) -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
    )


def _same(a: ScoreMatrix, b: ScoreMatrix) -> None:
    assert a.equals(b)
    # the readers keep the order of first appearance, and scores are written exactly
    np.testing.assert_array_equal(a.trial_ids, b.trial_ids)
    np.testing.assert_array_equal(a.enrol_speakers, b.enrol_speakers)
    np.testing.assert_array_equal(a.scores, b.scores)


META = b"utt_id,speaker,role,split\n" + b"".join(
    f"u{i},s{i % 3},{'enrol' if i < 3 else 'trial'},eval\n".encode() for i in range(6)
)


def _npz(**arrays: bytes) -> bytes:
    return zip_of({f"{k}.npy": v for k, v in arrays.items()}, zipfile.ZIP_STORED)


def _score_npz(scores: bytes) -> bytes:
    return _npz(
        scores=scores,
        trial_ids=npy_bytes(np.array(["t1", "t2"])),
        trial_speakers=npy_bytes(np.array(["a", "b"])),
        enrol_speakers=npy_bytes(np.array(["a", "b"])),
    )


def test_pickle_is_never_loaded(tmp_path):
    import pickle

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (marker.write_text, ("x",))

    payload = pickle.dumps(Evil())
    cases = [
        payload,  # a bare pickle
        _score_npz(npy_header((1,), "|O") + payload),  # an object array inside an NPZ
        npy_header((1,), "|O") + payload,  # an object NPY
    ]
    for data in cases:
        with pytest.raises(VoxMetricsInputError, match=r"pickle|NPY file holds one bare array"):
            read_scores(data, name="x")
        with pytest.raises(VoxMetricsInputError, match=r"pickle|NPY"):
            read_embeddings(data, metadata=META, name="x")
    assert not marker.exists()
