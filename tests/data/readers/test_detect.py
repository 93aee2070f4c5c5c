"""Which format a file is (voxmetrics.data.readers.detect): by content, the extension a hint."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
from hostile_inputs import (
    npy_header,
    score_npz_of,
)

import voxmetrics.data.readers.detect as detect_module
from tests.data.readers.input_error_cases import input_error, long_csv, savez_bytes
from voxmetrics.data import (
    FORMATS,
    detect_format,
    read_scores,
    read_table,
    write_scores,
)
from voxmetrics.data.readers import read_embeddings
from voxmetrics.errors import VoxMetricsInputError

from .round_trip_cases import assert_same_matrix, without_attributes


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
    assert_same_matrix(read_scores(tmp_path / "s.bin"), small_sm)
    assert_same_matrix(read_scores(tmp_path / "s.dat"), small_sm)
    assert_same_matrix(read_scores(tmp_path / "s"), small_sm)
    assert_same_matrix(
        read_scores(tmp_path / "k.csv", trials=tmp_path / "k.csv.key"),
        without_attributes(small_sm),
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


META = b"utt_id,speaker,role,split\n" + b"".join(
    f"u{i},s{i % 3},{'enrol' if i < 3 else 'trial'},eval\n".encode() for i in range(6)
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
        score_npz_of(npy_header((1,), "|O") + payload),  # an object array inside an NPZ
        npy_header((1,), "|O") + payload,  # an object NPY
    ]
    for data in cases:
        with pytest.raises(VoxMetricsInputError, match=r"pickle|NPY file holds one bare array"):
            read_scores(data, name="x")
        with pytest.raises(VoxMetricsInputError, match=r"pickle|NPY"):
            read_embeddings(data, metadata=META, name="x")
    assert not marker.exists()


# ----------------------------------------------------------------------------------------------
# Bad input found by sniffing: empty files, text that is not UTF-8, binary garbage, a zip
# that is not an NPZ, pickles, a cut Parquet, other separators
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"  \n\n\t\n"])
def test_empty_file(data, tmp_path):
    with input_error(r"scores\.csv: the file is empty; upload the file that holds the data"):
        read_scores(data, name="scores.csv")
    (tmp_path / "empty.csv").write_bytes(data)
    with input_error(r"empty\.csv: the file is empty"):
        read_scores(tmp_path / "empty.csv")
    with input_error("the file is empty"):
        detect_format(data)
    with input_error(r"meta\.csv: the file is empty"):
        read_embeddings(
            savez_bytes(embeddings=np.eye(2), utt_ids=np.array(["a", "b"])),
            metadata=data,
            metadata_name="meta.csv",
        )


def test_non_utf8_text_says_offset_line_and_fix():
    with input_error(
        r"upload\.csv: not UTF-8 text: byte 0xff at byte offset 0 \(line 1\).*UTF-16"
        r".*Re-save the file with UTF-8 encoding"
    ):
        read_scores(b"\xff\xfe garbage", name="upload.csv")
    latin1 = long_csv("t1,a,a,0.9\nt1,a,b,0.1\nt2,Jos\xe9,a,0.2\n".replace("\xe9", "é"))
    latin1 = latin1.replace("é".encode(), b"\xe9")
    offset = latin1.index(b"\xe9")
    with input_error(rf"byte 0xe9 at byte offset {offset} \(line 4\)"):
        read_scores(latin1, name="s.csv")
    with input_error(r"line 4"):
        detect_format(latin1)
    with input_error("not UTF-8"):
        read_scores(latin1, format="csv")
    with input_error(r"meta\.csv: not UTF-8"):
        read_table(b"utt_id,speaker\nu1,\xe9\n", name="meta.csv")


def test_garbage_binary_is_not_a_recognised_format():
    garbage = bytes(range(256)) * 8
    msg = (
        r"junk\.bin: not a recognised format \(binary content\); supported formats are: long "
        r"scores CSV or Parquet .*NPZ.*Kaldi.*utt2spk"
    )
    with input_error(msg):
        read_scores(garbage, name="junk.bin")
    with input_error("not a recognised format"):
        detect_format(garbage)
    with input_error("not a recognised format"):
        read_embeddings(garbage, metadata=b"x")
    with input_error(r"gzip-compressed data; decompress it first"):
        detect_format(b"\x1f\x8b\x08\x00" + bytes(200))
    with input_error(r"not a recognised format \(text whose first line is 'hello'\)"):
        detect_format(b"hello\nworld and more words here\n")


def test_zip_that_is_not_npz():

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("audio/a.wav", b"RIFF")
    with input_error(r"a zip archive that is not an NPZ \(it contains 'audio/a\.wav'\)"):
        read_scores(buf.getvalue())


def test_pickled_data_is_refused(tmp_path):
    with input_error(
        r"x\.pkl: pickled data is refused for safety.*save with numpy\.savez / to CSV"
    ):
        read_scores(pickle.dumps({"scores": [1, 2]}), name="x.pkl")
    with input_error("pickled data is refused for safety"):
        detect_format(pickle.dumps([1]))


def test_truncated_parquet(tmp_path, small_sm):
    (path,) = write_scores(small_sm, tmp_path / "s.parquet", format="parquet")
    with input_error(r"s\.parquet: starts like a Parquet file but has no Parquet footer"):
        read_scores(path.read_bytes()[:200], name="s.parquet")


def test_bom_only_and_other_separators():
    with input_error(r"s\.csv: the file is empty \(only a byte-order mark or blank lines\)"):
        read_scores(b"\xef\xbb\xbf\n", name="s.csv")
    with input_error(r"s\.csv: not a recognised format \(semicolon-separated text; use commas"):
        read_scores(b"trial_id;trial_speaker;enrol_speaker;score\nt1;a;a;0,5\n", name="s.csv")
    with input_error(r"s\.tsv: not a recognised format \(tab-separated text; use commas"):
        read_scores(b"trial_id\ttrial_speaker\tenrol_speaker\tscore\n", name="s.tsv")
