"""Readers and writers: every format round-trips, formats are recognised by content."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import voxmetrics.data.readers.detect as detect_module
import voxmetrics.data.readers.kaldi as kaldi_reader
from voxmetrics.cli import main
from voxmetrics.data import (
    FORMATS,
    ScoreMatrix,
    detect_format,
    read_embeddings,
    read_scores,
    read_table,
    write_embeddings,
    write_scores,
)
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError

SUFFIX = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


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


# ------------------------------------------------------------------ scores round trip


@pytest.mark.parametrize("fmt", ["csv", "parquet", "npz"])
def test_scores_round_trip(small_sm, tmp_path, fmt):
    path = tmp_path / f"study{SUFFIX[fmt]}"
    assert write_scores(small_sm, path, format=fmt) == [path]
    data = path.read_bytes()
    for got in (
        read_scores(path),
        read_scores(path, format=fmt),
        read_scores(str(path)),
        read_scores(data),
        read_scores(data, format=fmt, name="upload"),
    ):
        _same(got, small_sm)
        assert set(got.attributes) == {"sex", "age_group"}
        assert got.n_excluded_trials == 0
    assert read_scores(path).source == path.name
    assert read_scores(data).source == "uploaded file"
    assert read_scores(data, name="x.bin").source == "x.bin"


def test_kaldi_round_trip_with_key(small_sm, tmp_path):
    path = tmp_path / "study.scores"
    written = write_scores(small_sm, path, format="kaldi")
    assert written == [path, tmp_path / "study.scores.key"]
    expected = _without_attributes(small_sm)  # Kaldi files cannot hold attributes
    for got in (
        read_scores(path, trials=written[1]),
        read_scores(path, trials=written[1], format="kaldi"),
        read_scores(path.read_bytes(), trials=written[1].read_bytes()),
    ):
        _same(got, expected)
        assert got.attributes == {}
    lines = written[1].read_text().splitlines()
    assert len(lines) == small_sm.n_trials * small_sm.n_enrolled
    assert sum(ln.endswith(" target") for ln in lines) == small_sm.n_trials


def test_kaldi_round_trip_with_utt2spk(small_sm, tmp_path):
    path = tmp_path / "study.scores"
    write_scores(small_sm, path, format="kaldi")
    u2s = tmp_path / "utt2spk"
    u2s.write_text(
        "".join(
            f"{u} {s}\n" for u, s in zip(small_sm.trial_ids, small_sm.trial_speakers, strict=True)
        )
        + "enrol_only_utt spk0\n"  # utterances that are not trials are ignored
    )
    _same(read_scores(path, trials=u2s), _without_attributes(small_sm))
    _same(
        read_scores(path.read_bytes(), trials=u2s.read_bytes(), format="kaldi"),
        _without_attributes(small_sm),
    )


def test_kaldi_trial_without_target_line_counts_its_pairs_not_in_1_to_n(tmp_path):
    scores = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\na t3 0.4\nb t3 0.3\n"
    key = b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\na t3 nontarget\n"
    with pytest.warns(ExcludedTrialsWarning, match="1 of 3 trials"):
        sm = read_scores(scores, trials=key)
    assert sm.n_excluded_trials == 0
    assert sm.trial_ids.tolist() == ["t1", "t2"]  # the 1-to-N trials
    assert sm.trial_speakers.tolist() == ["a", "b"]
    # every key line counts for the pairwise metrics, as the VoicePrivacy scripts count them
    assert sm.others.trial_ids.tolist() == ["t3"]
    view = sm.pairwise_view()
    assert view.n_pairs == 6 and sorted(view.non.tolist()) == [0.1, 0.2, 0.3, 0.4]


def test_kaldi_key_may_be_uppercase_and_crlf():
    scores = b"a t1 0.9\r\nb t1 0.1\r\na t2 0.2\r\nb t2 0.8\r\n"
    key = b"a t1 TARGET\r\nb t1 nontarget\r\n\r\nb t2 Target\r\n"
    sm = read_scores(scores, trials=key)
    assert sm.trial_speakers.tolist() == ["a", "b"]


def test_long_csv_keeps_order_of_first_appearance():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score\n"
        "t2,b,b,0.8\nt1,a,b,0.1\nt2,b,a,0.2\nt1,a,a,0.9\n"
    )
    sm = read_scores(csv.encode())
    assert sm.trial_ids.tolist() == ["t2", "t1"]
    assert sm.enrol_speakers.tolist() == ["b", "a"]
    assert sm.scores.tolist() == [[0.8, 0.2], [0.1, 0.9]]
    assert sm.targets.tolist() == [0, 1]


def test_labels_stay_text_and_attributes_keep_numbers():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score,age,note\n"
        "007,NA,NA,1,34,x\n007,NA,null,0,34,x\n008,null,NA,0.5,51,\n008,null,null,0.25,51,\n"
    )
    sm = read_scores(csv.encode())
    assert sm.trial_ids.tolist() == ["007", "008"]
    assert sm.enrol_speakers.tolist() == ["NA", "null"]
    assert sm.attributes["age"].tolist() == [34, 51]
    assert sm.attributes["note"].tolist() == ["x", ""]  # text attributes are str; missing = ""


def test_blank_lines_and_bom_are_tolerated():
    csv = (
        "\ufefftrial_id,trial_speaker,enrol_speaker,score\n"
        "t1,a,a,0.9\n\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n\n"
    )
    assert read_scores(csv.encode()).shape == (2, 2)


def test_long_csv_with_unenrolled_trial_keeps_its_pairs_with_warning():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score\n"
        "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\nt3,zed,a,0.3\nt3,zed,b,0.4\n"
    )
    with pytest.warns(ExcludedTrialsWarning, match="not enrolled"):
        sm = read_scores(csv.encode(), name="scores.csv")
    assert sm.n_excluded_trials == 0
    assert sm.trial_ids.tolist() == ["t1", "t2"]
    assert sm.others.trial_speakers.tolist() == ["zed"] and sm.pairwise_view().n_pairs == 6


# ------------------------------------------------------------------ embeddings round trip


def _same_embeddings(a, b) -> None:
    np.testing.assert_array_equal(a.embeddings, b.embeddings)
    pd.testing.assert_frame_equal(a.meta, b.meta, check_dtype=False)
    assert a.score_matrix("eval").equals(b.score_matrix("eval"))
    assert a.score_matrix("dev").equals(b.score_matrix("dev"))


def test_embeddings_npz_round_trip(small_es, tmp_path):
    npz, meta = write_embeddings(small_es, tmp_path / "emb.npz", format="npz")
    assert (npz.name, meta.name) == ("emb.npz", "emb.csv")
    _same_embeddings(read_embeddings(npz, metadata=meta), small_es)
    _same_embeddings(read_embeddings(npz.read_bytes(), metadata=meta.read_bytes()), small_es)


def test_embeddings_npz_rows_are_matched_by_utt_id(small_es, tmp_path):
    npz, meta = write_embeddings(small_es, tmp_path / "emb", format="npz")
    shuffled = pd.read_csv(meta, dtype=str).sample(frac=1.0, random_state=3)
    shuffled.to_csv(meta, index=False)
    es = read_embeddings(npz, metadata=meta)
    assert es.meta["utt_id"].tolist() == shuffled["utt_id"].tolist()
    order = pd.Index(small_es.meta["utt_id"]).get_indexer(shuffled["utt_id"])
    np.testing.assert_array_equal(es.embeddings, small_es.embeddings[order])
    assert es.score_matrix("eval").equals(small_es.score_matrix("eval"))


def test_embeddings_npy_round_trip(small_es, tmp_path):
    npy = tmp_path / "emb.npy"
    np.save(npy, small_es.embeddings)
    meta = tmp_path / "meta.csv"
    small_es.meta.to_csv(meta, index=False)
    _same_embeddings(read_embeddings(npy, metadata=meta), small_es)
    _same_embeddings(read_embeddings(npy.read_bytes(), metadata=meta.read_bytes()), small_es)


def test_embeddings_parquet_round_trip(small_es, tmp_path):
    (path,) = write_embeddings(small_es, tmp_path / "emb.parquet", format="parquet")
    _same_embeddings(read_embeddings(path), small_es)
    _same_embeddings(read_embeddings(path.read_bytes()), small_es)


def test_embeddings_parquet_with_variable_list_column(small_es, tmp_path):
    df = small_es.meta.copy()
    df["embedding"] = list(small_es.embeddings)  # a plain list<double> column
    path = tmp_path / "emb.parquet"
    df.to_parquet(path)
    _same_embeddings(read_embeddings(path), small_es)


# ------------------------------------------------------------------ detection


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


# ------------------------------------------------------------------ read_table


def test_read_table_csv_and_parquet(tmp_path):
    df = pd.DataFrame({"utt_id": ["001", "002"], "speaker": ["a", "b"], "x": [1.5, 2.0]})
    df.to_parquet(tmp_path / "t.parquet")
    df.to_csv(tmp_path / "t.csv", index=False)
    for p in (tmp_path / "t.parquet", tmp_path / "t.csv"):
        got = read_table(p)
        assert got["utt_id"].tolist() == ["001", "002"]
        assert got["x"].tolist() == [1.5, 2.0]
    assert read_table(io.BytesIO(b"a,b\n1,2\n").getvalue()).shape == (1, 2)


def test_writers_never_pickle(small_sm, tmp_path):
    obj = ScoreMatrix.from_arrays(
        small_sm.scores,
        trial_ids=small_sm.trial_ids,
        trial_speakers=small_sm.trial_speakers,
        enrol_speakers=small_sm.enrol_speakers,
        attributes={"note": np.array(["x", None] * 6, dtype=object)},
    )
    (path,) = write_scores(obj, tmp_path / "o.npz", format="npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = read_scores(path)
    assert got.attributes["note"].tolist() == ["x", ""] * 6


# ------------------------------------------------------------------ exact labels, any format

_LABEL = st.text(alphabet='ab7 0.,"é-+eNA', min_size=1, max_size=5)


@st.composite
def _studies(draw, *, whitespace: bool = True):
    label = _LABEL if whitespace else _LABEL.map(lambda s: s.replace(" ", "_").replace('"', "q"))
    enrol = draw(st.lists(label, min_size=2, max_size=4, unique=True))
    tids = draw(st.lists(label, min_size=1, max_size=5, unique=True))
    spk = draw(st.lists(st.sampled_from(enrol), min_size=len(tids), max_size=len(tids)))
    scores = draw(
        st.lists(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            min_size=len(tids) * len(enrol),
            max_size=len(tids) * len(enrol),
        )
    )
    attrs = {} if not whitespace else {"group": np.array([f"g{len(t)}" for t in tids])}
    return ScoreMatrix.from_arrays(
        np.reshape(scores, (len(tids), len(enrol))),
        trial_ids=tids,
        trial_speakers=spk,
        enrol_speakers=enrol,
        attributes=attrs,
    )


@settings(max_examples=40, deadline=None)
@given(sm=_studies())
def test_any_labels_and_scores_round_trip_exactly(sm):
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("csv", "parquet", "npz"):
            (path,) = write_scores(sm, Path(tmp) / f"s.{fmt}", format=fmt)
            _same(read_scores(path.read_bytes()), sm)


@settings(max_examples=25, deadline=None)
@given(sm=_studies(whitespace=False))
def test_any_kaldi_labels_round_trip_exactly(sm):
    with tempfile.TemporaryDirectory() as tmp:
        scores, key = write_scores(sm, Path(tmp) / "s", format="kaldi")
        _same(read_scores(scores.read_bytes(), trials=key.read_bytes()), sm)


def test_numeric_looking_labels_stay_text():
    scores = b"007 1.0 0.9\n008 1.0 0.1\n007 2 0.2\n008 2 0.8\n"
    key = b"007 1.0 target\n008 2 target\n"
    sm = read_scores(scores, trials=key)
    assert sm.enrol_speakers.tolist() == ["007", "008"]
    assert sm.trial_ids.tolist() == ["1.0", "2"]
    assert sm.trial_speakers.tolist() == ["007", "008"]


def test_fast_csv_path_equals_the_reference_path(small_sm, tmp_path):
    """The categorical parse (fast path) gives the same frame values as the plain str parse."""
    from voxmetrics.data.readers.long import scores_from_long
    from voxmetrics.data.readers.tables import read_csv_rows

    (path,) = write_scores(small_sm, tmp_path / "s.csv", format="csv")
    data = path.read_bytes().replace(b"utt001", b"0012")  # a numeric-looking trial id
    fast = scores_from_long(*read_csv_rows(data, "s.csv", categorical=True))
    ref = scores_from_long(*read_csv_rows(data, "s.csv", categorical=False))
    _same(fast, ref)
    assert "0012" in fast.trial_ids
    for k in ref.attributes:
        assert fast.attributes[k].tolist() == ref.attributes[k].tolist()


def test_parquet_text_attributes_stay_text(tmp_path):
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["1", "1", "2", "2"],
            "enrol_speaker": ["1", "2", "1", "2"],
            "score": [0.9, 0.1, 0.2, 0.8],
            "code": ["007", "007", "010", "010"],
            "age": [34, 34, 51, 51],
        }
    )
    df.to_parquet(tmp_path / "s.parquet")
    sm = read_scores(tmp_path / "s.parquet")
    assert sm.attributes["code"].tolist() == ["007", "010"]
    assert sm.attributes["age"].tolist() == [34, 51]
    assert sm.enrol_speakers.tolist() == ["1", "2"]


def test_float32_npz_is_read_as_float32_without_a_writeable_copy(tmp_path):
    # a large float32 matrix stays float32 (half the memory) and is frozen, not copied
    scores = np.array([[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], dtype=np.float32)
    path = tmp_path / "s.npz"
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"]),
        enrol_speakers=np.array(["a", "b", "c"]),
    )
    from_path = read_scores(path)
    from_bytes = read_scores(path.read_bytes(), name="s.npz")
    for sm in (from_path, from_bytes):
        assert sm.scores.dtype == np.float32
        assert np.array_equal(sm.scores, scores)
        assert not sm.scores.flags.writeable
        base = sm.scores.base
        while isinstance(base, np.ndarray):  # nothing can write through a base either
            assert not base.flags.writeable
            base = base.base
    assert from_path.content_hash == from_bytes.content_hash
    assert from_path.source == "s.npz"
    # a compressed NPZ and a Fortran-ordered matrix read the same
    arrays = {
        "trial_ids": np.array(["t1", "t2"]),
        "trial_speakers": np.array(["a", "b"]),
        "enrol_speakers": np.array(["a", "b", "c"]),
    }
    np.savez_compressed(tmp_path / "c.npz", scores=scores, **arrays)
    np.savez(tmp_path / "f.npz", scores=np.asfortranarray(scores), **arrays)
    for other in ("c.npz", "f.npz"):
        sm = read_scores(tmp_path / other)
        assert sm.scores.dtype == np.float32 and np.array_equal(sm.scores, scores)
    with pytest.raises(VoxMetricsInputError, match="missing"):
        np.savez(path, scores=scores)
        read_scores(path)


# ------------------------------------------------------------------ a Kaldi key read in pieces
# A master key of 10^7 lines is parsed piece by piece (kaldi._PIECE_BYTES); whatever the size
# of the pieces, the result, the warnings and every message are those of one piece (the key
# parsed whole, as before).

_S = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"
_K = "a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"
# a master key: 40 more trials listed enrolled by enrolled, so each recurs in several pieces
_MASTER = _K + "".join(
    f"{e} x{i} {'target' if e == 'a' else 'nontarget'}\n" for e in "ab" for i in range(40)
)
_OK = "".join(f"a x{i} nontarget\n" for i in range(30))
KEY_PIECE_CASES = {
    "master-key": (_S, _MASTER, True),
    "master-key-refused": (_S, _MASTER, False),
    "master-key-first": (_S, _MASTER[len(_K) :] + _K, True),
    "short-then-long": (_S, _K + "a x1\n" + _OK + "a x2 nontarget extra\n" + _OK, True),
    "short-only": (_S, _K + _OK + "a x1\n" + _OK + "b x3\n", True),
    "long-only": (_S, _OK + _K + "a x2 nontarget extra\n" + _OK, True),
    "wide-first-line": (_S, "\n \n" + "a t1 target extra\n" + _K + _OK, True),
    "wide-first-line-then-wider": (
        _S,
        "\n\n" + "a t1 target e\n" + _OK + "a x1 nontarget e f\n",
        True,
    ),
    "narrow-first-line": (_S, "\n" + "a t1\n" + _OK + _K, True),
    "one-field-line": (_S, _K + _OK + "lonely\n", True),
    "bom-crlf-cr-blank": (
        _S,
        "\ufeff\r\n\n" + _K.replace("\n", "\r\n", 2) + "\n  \n\t\n" + _OK.replace("\n", "\r") + _K,
        True,
    ),
    "first-line-ends-in-cr": (_S, "a t1 target\r" + "\n" * 5 + _OK + _K[12:], True),
    "blank-middle": (_S, _K + "\n" * 200 + " \t \n" * 50 + _OK, True),
    "tabs-and-spaces": (_S, _K.replace(" ", " \t  ") + "  " + _OK.replace(" ", "\t"), True),
    "numeric-ids": (
        b"007 1.0 0.9\n7 1.0 0.1\n007 12 0.2\n7 12 0.8\n",
        "".join(f"{e} {t} nontarget\n" for t in range(40) for e in ("007", "7"))
        + "007 1.0 target\n7 1.0 nontarget\n7 12 target\n007 12 nontarget\n",
        True,
    ),
    "bad-label-late": (_S, _MASTER + "a t1 maybe\n", True),
    "target-clash-across-pieces": (_S, _K + _OK + "b t1 target\n", True),
    "duplicate-lines": (_S, _K + _OK + _K + _OK, True),
    "unscored-pair": (_S, _K + "c t1 nontarget\n" + _K, True),
    "unscored-pair-refused": (_S, _K + "c t1 nontarget\n" + _K, False),
    "no-trial-matches": (_S, _OK, True),
    "no-target-line-matches": (_S, _K.replace("target", "nontarget") + _OK, True),
    "unknown-speaker": (_S, _K.replace("a t1 target", "a t1 nontarget") + _OK, True),
}


def _key_outcome(scores: bytes, key: str, allow: bool) -> tuple:
    """What reading ``scores`` with ``key`` gives: the matrix or the message, and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sm = read_scores(
                scores, trials=key.encode(), allow_incomplete=allow, name="s", trials_name="k"
            )
            got: tuple = (
                np.nan_to_num(sm.scores, nan=-9.0).tolist(),
                None if sm.mask is None else sm.mask.tolist(),
                sm.trial_ids.tolist(),
                sm.trial_speakers.tolist(),
                sm.enrol_speakers.tolist(),
            )
        except VoxMetricsInputError as exc:
            got = ("refused", str(exc))
    return (*got, [f"{type(w.message).__name__}: {w.message}" for w in caught])


@pytest.mark.parametrize("case", list(KEY_PIECE_CASES))
def test_a_key_read_in_pieces_reads_as_one_piece(monkeypatch, case):
    scores, key, allow = KEY_PIECE_CASES[case]
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 1 << 30)
    whole = _key_outcome(scores, key, allow)
    for size in (1, 5, 64, 300):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        assert _key_outcome(scores, key, allow) == whole, size


def _random_key(seed: int) -> tuple[bytes, str, bool]:
    """A small scores file and a key with odd ids, blank lines, line ends and bad lines."""
    r = random.Random(seed)
    trials = r.sample(
        ["t1", "t2", "007", "7", "1.0", "x", "12", "abc", "0", "nan"], r.randint(1, 6)
    )
    enrol = r.sample(["a", "b", "007", "7", "d", "NA"], r.randint(2, 4))
    lines = []
    for t in trials + r.sample(["z1", "z2", "5", "05"], r.randint(0, 3)):
        own = r.choice([*enrol, "other"])
        for e in enrol:
            if r.random() > 0.1:
                label = "target" if e == own else "nontarget"
                lines.append(
                    [e, t, r.choice([label, "TARGET", "bogus"]) if r.random() < 0.05 else label]
                )
            if r.random() < 0.05:
                lines.append(lines[-1] if lines else [e, t, "target"])
    if r.random() < 0.3:
        r.shuffle(lines)
    bad = r.choice([0, 0, 0.03, 0.06])
    text = []
    for f in lines:
        x = r.random()
        f = f[:2] if x < bad else [*f, "extra"] if x < 2 * bad else f
        end = r.choice(["\n", "\n", "\n", "\r\n", "\r"]) if r.random() < 0.2 else "\n"
        text.append(r.choice([" ", "\t", "  ", " \t "]).join(f) + end)
        if r.random() < 0.07:
            text.append(r.choice(["\n", "  \n", "\r\n"]))
    key = r.choice(["", "", "\ufeff", "\n\n", " \n"]) + "".join(text)
    scored = trials if r.random() < 0.5 else trials[: max(1, len(trials) // 2)]
    scores = "".join(f"{e} {t} {r.random():.3f}\n" for t in scored for e in enrol)
    return scores.encode(), key, r.random() < 0.5


@pytest.mark.parametrize("seed", range(40))
def test_random_keys_read_in_pieces_read_as_one_piece(monkeypatch, seed):
    scores, key, allow = _random_key(seed)
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 1 << 30)
    whole = _key_outcome(scores, key, allow)
    for size in (1, 16):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        assert _key_outcome(scores, key, allow) == whole, size


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("short-then-long", r"k: line 36 has 4 fields; every line must be `enrol_id trial_id"),
        ("short-only", r"k: line 35 has 2 fields"),
        ("one-field-line", r"k: line 35 has 1 field;"),
        ("bad-label-late", r"k: line 85: label 'maybe' is neither 'target' nor 'nontarget'"),
        (
            "target-clash-across-pieces",
            r"k: line 35: trial 't1' is marked target for enrolled 'b' but line 1",
        ),
        (
            "unscored-pair-refused",
            r"1 of the 9 pairs listed in the key have no score in s \(first: line 5,",
        ),
        (
            "master-key-refused",
            r"40 of the 42 trials listed in the key \(80 of its 84 lines\).*line 5, trial 'x0'",
        ),
        ("no-trial-matches", r"none of its trial ids appears in the scores"),
    ],
)
def test_a_key_read_in_pieces_keeps_its_messages(monkeypatch, case, message):
    scores, key, allow = KEY_PIECE_CASES[case]
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 7)
    with pytest.raises(VoxMetricsInputError, match=message):
        read_scores(scores, trials=key.encode(), allow_incomplete=allow, name="s", trials_name="k")


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("wide-first-line", "k: line 3 has 4 fields"),  # counted after the blank lines
        ("wide-first-line-then-wider", "k: line 1 has 4 fields"),  # as the parser says it
        ("narrow-first-line", "k: line 1 has 2 fields"),
    ],
)
def test_a_first_line_of_the_wrong_width_is_named_as_in_one_piece(monkeypatch, case, message):
    # detect_format refuses such a key before; the parser still says the same in pieces
    key = KEY_PIECE_CASES[case][1].encode()
    layout = "enrol_id trial_id target|nontarget"
    with pytest.raises(VoxMetricsInputError, match=message) as whole:
        kaldi_reader._read_fields(key, "k", 3, layout, numeric_last=False)
    for size in (1, 7, 1 << 30):
        monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", size)
        with pytest.raises(VoxMetricsInputError) as pieces:
            kaldi_reader._scan_key(key, "k", np.array(["t1"]))
        assert str(pieces.value) == str(whole.value)


def test_a_master_key_in_pieces_through_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(kaldi_reader, "_PIECE_BYTES", 64)
    (tmp_path / "scores").write_bytes(_S)
    (tmp_path / "key").write_text(_MASTER)
    argv = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "key")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "key: 40 of the 42 trials listed in the key (80 of its 84 lines)" in err
    assert "first: line 5, trial 'x0'" in err and "Traceback" not in err
    assert main([*argv, "--allow-incomplete", "--json", str(tmp_path / "out.json")]) == 0
    assert "40 of the 42 trials" in capsys.readouterr().err


_MEMORY_CHILD = textwrap.dedent(
    """
    import sys, warnings
    import voxmetrics.data.readers.kaldi as kaldi
    from voxmetrics.data.readers import read_scores
    kaldi._PIECE_BYTES = 1 << 16  # the 1 MiB pieces of a 230 MB key, scaled to this one
    warnings.simplefilter("ignore")  # the unscored trials, counted (asked for)
    # the same path on a tiny key first: imports and first allocations are not the key's
    read_scores(b"a t1 0.9\\nb t1 0.1\\n", trials=b"a t1 target\\nb t1 nontarget\\nb t2 target\\n",
                allow_incomplete=True)
    def kib(field):  # VmHWM: this process's peak (ru_maxrss may hold the parent's, at fork)
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field))
    rss = kib("VmRSS")
    sm = read_scores(sys.argv[1], trials=sys.argv[2], allow_incomplete=True)
    print(kib("VmHWM") - rss, sm.n_pairs)
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_master_key_is_read_within_three_times_its_size(tmp_path):
    # the 10^7-line master key (2 lines per trial, 288 pairs scored) scaled to 2 x 10^5
    rng = np.random.default_rng(0)
    own = rng.integers(0, 10_000, 100_000)
    other = (own + 5_000) % 10_000
    key = "".join(
        f"spk{a} utt{i} target\nspk{b} utt{i} nontarget\n"
        for i, (a, b) in enumerate(zip(own, other, strict=True))
    )
    scores = "".join(f"spk{own[i]} utt{i} 0.9\nspk{other[i]} utt{i} 0.1\n" for i in range(144))
    (tmp_path / "key").write_text(key)
    (tmp_path / "scores").write_text(scores)
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(tmp_path / "scores"), str(tmp_path / "key")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    peak_kib, pairs = map(int, out.stdout.split())
    assert pairs == 288
    size = (tmp_path / "key").stat().st_size
    assert peak_kib * 1024 <= 3 * size, (
        f"{peak_kib / 1024:.1f} MiB for a {size / 2**20:.1f} MiB key"
    )


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


# ------------------------------------------------------------------ columns named twice
# A column named twice is named as such, as the file writes it (pandas would have renamed the
# second 'score.1' and the message would talk about 'score.1'), for every table.

_LONG = (
    ["t1", "a", "a", "0.9"],
    ["t1", "a", "b", "0.1"],
    ["t2", "b", "a", "0.2"],
    ["t2", "b", "b", "0.8"],
)


def _parquet(names: list[str], rows: list[list[Any]], metadata: dict | None = None) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table([pa.array([r[k] for r in rows]) for k in range(len(names))], names=names)
    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _csv(names: list[str], rows: list[list[Any]]) -> bytes:
    return "".join(",".join(map(str, r)) + "\n" for r in [names, *rows]).encode()


def _twice(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Command lines whose input names a column twice, and what the message must say."""
    files = {}
    names = ["trial_id", "trial_speaker", "score", "enrol_speaker", "score"]
    rows = [[t, s, float(v), e, float(v)] for t, s, e, v in _LONG]
    (tmp_path / "s.csv").write_bytes(_csv(names, rows))
    files["long-csv"] = (
        ["evaluate", "s.csv"],
        "column 'score' appears twice in s.csv (columns 3 and 5)",
    )
    (tmp_path / "s.parquet").write_bytes(_parquet(names, rows))
    files["long-parquet"] = (
        ["evaluate", "s.parquet"],
        "column 'score' appears twice in s.parquet (columns 3 and 5)",
    )
    spaced = ["trial_id", " trial_speaker", "enrol_speaker", "score", "trial_speaker "]
    (tmp_path / "sp.csv").write_bytes(_csv(spaced, [[t, s, e, v, s] for t, s, e, v in _LONG]))
    files["long-csv-spaces"] = (
        ["evaluate", "sp.csv"],
        "column 'trial_speaker' appears twice in sp.csv (columns 2 and 5)",
    )
    ok = _csv(["trial_id", "trial_speaker", "enrol_speaker", "score"], list(_LONG))
    (tmp_path / "ok.csv").write_bytes(ok)
    (tmp_path / "attrs.csv").write_bytes(
        _csv(["trial_id", "sex", "age", "sex"], [["t1", "F", 30, "F"], ["t2", "M", 40, "M"]])
    )
    files["trial-attributes"] = (
        ["evaluate", "ok.csv", "--by", "sex", "--trial-attributes", "attrs.csv"],
        "column 'sex' appears twice in attrs.csv (columns 2 and 4)",
    )
    meta = ["utt_id", "speaker", "role", "split", "speaker", "speaker"]
    utts = [
        ["e1", "a", "enrol", "eval"],
        ["e2", "b", "enrol", "eval"],
        ["u1", "a", "trial", "eval"],
    ]
    (tmp_path / "meta.csv").write_bytes(_csv(meta, [[*u, u[1], u[1]] for u in utts]))
    np.savez(tmp_path / "emb.npz", embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "u1"]))
    files["metadata-csv"] = (
        ["evaluate", "--embeddings", "emb.npz", "--metadata", "meta.csv"],
        "column 'speaker' appears 3 times in meta.csv (columns 2, 5 and 6)",
    )
    emb_rows = [[*u, [1.0, 0.0]] for u in utts]
    (tmp_path / "emb.parquet").write_bytes(
        _parquet(
            ["utt_id", "speaker", "role", "utt_id", "embedding"],
            [[u[0], u[1], u[2], u[0], e] for *u, e in emb_rows],
        )
    )
    files["embeddings-parquet"] = (
        ["evaluate", "--embeddings", "emb.parquet"],
        "column 'utt_id' appears twice in emb.parquet (columns 1 and 4)",
    )
    (tmp_path / "labels.csv").write_bytes(_csv(["utt_id", "speaker", "sex"], [["u1", "a", "F"]]))
    (tmp_path / "pred.csv").write_bytes(
        _csv(["utt_id", "attribute", "class", "score", "score"], [["u1", "sex", "F", 0.9, 0.9]])
    )
    files["predictions-csv"] = (
        ["sbls", "--metadata", "labels.csv", "--predictions", "pred.csv"],
        "column 'score' appears twice in pred.csv (columns 4 and 5)",
    )
    return files


@pytest.mark.parametrize(
    "case",
    [
        "long-csv",
        "long-parquet",
        "long-csv-spaces",
        "trial-attributes",
        "metadata-csv",
        "embeddings-parquet",
        "predictions-csv",
    ],
)
def test_a_column_named_twice_is_named_on_the_command_line(tmp_path, monkeypatch, capsys, case):
    argv, message = _twice(tmp_path)[case]
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "; keep one" in err, err
    assert ".1" not in err and "Traceback" not in err and err.count("\n") == 1


def test_a_column_named_twice_through_python_m_voxmetrics(tmp_path):
    files = _twice(tmp_path)
    for case in ("long-csv", "long-parquet"):
        argv, message = files[case]
        out = subprocess.run(
            [sys.executable, "-m", "voxmetrics", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        assert out.returncode == 2, out.stderr
        assert message in out.stderr and "Traceback" not in out.stderr
        assert out.stderr.count("\n") == 1, out.stderr  # one line, no Arrow internals


def test_read_table_and_the_readers_name_a_column_named_twice():
    data = _csv(["utt_id", "speaker", "utt_id"], [["u1", "a", "u1"]])
    with pytest.raises(
        VoxMetricsInputError, match=r"column 'utt_id' appears twice in t\.csv \(columns 1 and 3\)"
    ):
        read_table(data, name="t.csv")
    names = ["trial_id", "trial_speaker", "enrol_speaker", "score", "score", "score"]
    with pytest.raises(
        VoxMetricsInputError, match=r"'score' appears 3 times in s\.parquet \(columns 4, 5 and 6\)"
    ):
        read_scores(_parquet(names, [[*r, 1.0, 1.0] for r in _LONG]), name="s.parquet")
    # columns without a name (trailing commas) are not named twice
    sm = read_scores(
        _csv(
            ["trial_id", "trial_speaker", "enrol_speaker", "score", "", ""],
            [[*r, "", ""] for r in _LONG],
        )
    )
    assert sm.shape == (2, 2)


def _damaged_parquet() -> dict[str, bytes]:
    import json

    names = ["trial_id", "trial_speaker", "enrol_speaker", "score"]
    rows = [[t, s, e, float(v)] for t, s, e, v in _LONG]
    good = bytearray(_parquet(names, rows))
    for i in range(40, 120):  # the data pages, not the footer
        good[i] ^= 0x5A
    odd_index = {"index_columns": [{"kind": "range", "start": "x", "stop": 2, "step": 1}]}
    return {
        "flipped-pages": bytes(good),
        "pandas-metadata-not-json": _parquet(names, rows, {b"pandas": b"{not json"}),
        "pandas-metadata-odd-index": _parquet(
            names, rows, {b"pandas": json.dumps({**odd_index, "columns": []}).encode()}
        ),
    }


@pytest.mark.parametrize(
    "case", ["flipped-pages", "pandas-metadata-not-json", "pandas-metadata-odd-index"]
)
def test_a_damaged_parquet_file_is_one_line_naming_the_file(tmp_path, capsys, case):
    (tmp_path / "s.parquet").write_bytes(_damaged_parquet()[case])
    assert main(["evaluate", str(tmp_path / "s.parquet")]) == 2
    err = capsys.readouterr().err
    assert "s.parquet: damaged or unsupported Parquet file: it cannot be read as Parquet (" in err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    with pytest.raises(VoxMetricsInputError, match="damaged or unsupported Parquet file"):
        read_table(_damaged_parquet()[case], name="s.parquet")


@pytest.mark.parametrize("metadata", [b"{not json", b'{"index_columns": [{"kind": "range"}]}'])
def test_an_embeddings_parquet_with_damaged_metadata_is_one_line(tmp_path, capsys, metadata):
    rows = [["e1", "a", "enrol", "eval", [1.0, 0.0]], ["u1", "a", "trial", "eval", [1.0, 0.1]]]
    names = ["utt_id", "speaker", "role", "split", "embedding"]
    (tmp_path / "emb.parquet").write_bytes(_parquet(names, rows, {b"pandas": metadata}))
    assert main(["evaluate", "--embeddings", str(tmp_path / "emb.parquet")]) == 2
    err = capsys.readouterr().err
    assert "emb.parquet: damaged or unsupported Parquet file" in err
    assert err.count("\n") == 1 and "Traceback" not in err, err
