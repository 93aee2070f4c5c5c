"""Readers and writers: every format round-trips, formats are recognised by content."""

from __future__ import annotations

import io
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
