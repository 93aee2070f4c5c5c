"""Kaldi ark / scp and HDF5 embeddings, shaped like VoicePrivacy's x-vectors (written here)."""

from __future__ import annotations

import io
import os
import re
import struct
from pathlib import Path

import h5py
import kaldiio
import numpy as np
import pandas as pd
import pytest
from hostile_inputs import BROKEN_HDF5, refused
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.cli import main
from voxmetrics.data import read_embeddings
from voxmetrics.data.embedding_files import (
    read_hdf5_embeddings,
    read_kaldi_ark,
    read_kaldi_scp,
    sniff_embeddings,
)
from voxmetrics.errors import (
    IgnoredEmbeddingsWarning,
    VoxMetricsInputError,
)
from voxmetrics.evaluation import evaluate

SPEAKERS = ["1272", "1462", "2035", "2412"]  # LibriSpeech dev-clean style labels


def _vpc(dim: int = 8, seed: int = 0) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Metadata and x-vectors of 4 speakers x 3 utterances (1 enrolment, 2 trials)."""
    rng = np.random.default_rng(seed)
    rows, vecs = [], {}
    for k, spk in enumerate(SPEAKERS):
        centre = rng.normal(size=dim) + 3 * np.eye(dim)[k]
        for j in range(3):
            utt = f"{spk}-128104-{j:04d}"
            rows.append((utt, spk, "enrol" if j == 0 else "trial", "eval"))
            vecs[utt] = centre + 0.3 * rng.normal(size=dim)
    return pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"]), vecs


@pytest.fixture
def vpc(tmp_path: Path):
    meta, vecs = _vpc()
    path = tmp_path / "meta.csv"
    meta.to_csv(path, index=False)
    npz = tmp_path / "xvectors.npz"
    np.savez(npz, embeddings=np.stack(list(vecs.values())), utt_ids=np.array(list(vecs)))
    return tmp_path, path, vecs, npz


def test_binary_ark_float_and_double_and_scp(vpc):
    tmp, meta, vecs, npz = vpc
    reference = read_embeddings(npz, metadata=meta)
    for dtype in (np.float32, np.float64):
        ark, scp = tmp / f"xvector.{dtype.__name__}.ark", tmp / f"xvector.{dtype.__name__}.scp"
        kaldiio.save_ark(str(ark), {k: v.astype(dtype) for k, v in vecs.items()}, scp=str(scp))
        assert ark.read_bytes()[ark.read_bytes().index(b"\0B") + 2 :][:2] == (
            b"FV" if dtype == np.float32 else b"DV"
        )
        assert sniff_embeddings(ark.read_bytes()) == "kaldi-ark"
        assert sniff_embeddings(scp.read_bytes()) == "kaldi-scp"
        for source in (ark, scp, ark.read_bytes()):
            es = read_embeddings(source, metadata=meta)
            expected = reference.embeddings.astype(dtype).astype(np.float64)
            np.testing.assert_array_equal(es.embeddings, expected)
            assert es.meta["utt_id"].tolist() == reference.meta["utt_id"].tolist()
    # the same numbers as the NPZ path (double precision: bit-identical)
    es = read_embeddings(tmp / "xvector.float64.scp", metadata=meta)
    a = evaluate(es.score_matrix("eval"), embeddings=es).to_dict()
    b = evaluate(reference.score_matrix("eval"), embeddings=reference).to_dict()
    assert a == b


def test_scp_with_relative_paths_and_ark_root(vpc):
    tmp, meta, vecs, _ = vpc
    (tmp / "exp" / "xvect").mkdir(parents=True)
    (tmp / "data").mkdir()
    kaldiio.save_ark(
        str(tmp / "exp" / "xvect" / "xvector.1.ark"), vecs, scp=str(tmp / "data" / "x.scp")
    )
    # rewrite the scp as a VoicePrivacy recipe has it: relative to the recipe root
    text = (tmp / "data" / "x.scp").read_text().replace(str(tmp) + os.sep, "")
    (tmp / "data" / "x.scp").write_text(text)
    assert text.startswith("1272-128104-0000 exp/xvect/xvector.1.ark:")
    with pytest.raises(VoxMetricsInputError, match=r"does not exist.*--ark-root"):
        read_embeddings(tmp / "data" / "x.scp", metadata=meta)
    es = read_embeddings(tmp / "data" / "x.scp", metadata=meta, ark_root=tmp)
    assert es.embeddings.shape == (12, 8)
    # a path escaping the root is refused, before anything is read
    (tmp / "data" / "up.scp").write_text("u1 ../exp/xvect/xvector.1.ark:17\n")
    with pytest.raises(VoxMetricsInputError, match="lies outside"):
        read_kaldi_scp(tmp / "data" / "up.scp")
    (tmp / "data" / "abs.scp").write_text(f"u1 {tmp}/exp/xvect/xvector.1.ark:17\n")
    with pytest.raises(VoxMetricsInputError, match="lies outside"):
        read_kaldi_scp(tmp / "data" / "abs.scp")
    (tmp / "data" / "pipe.scp").write_text("u1 copy-vector ark:x.ark ark:- |\n")
    with pytest.raises(VoxMetricsInputError, match="never run"):
        read_kaldi_scp(tmp / "data" / "pipe.scp")
    (tmp / "data" / "off.scp").write_text(text.splitlines()[0].rsplit(":", 1)[0] + ":5\n")
    with pytest.raises(VoxMetricsInputError, match="no Kaldi vector at byte 5"):
        read_kaldi_scp(tmp / "data" / "off.scp", ark_root=tmp)
    with pytest.raises(VoxMetricsInputError, match="upload the ark itself"):
        read_embeddings((tmp / "data" / "x.scp").read_bytes(), metadata=meta)


def test_hand_written_text_ark():
    ark = b"u1  [ 0.5 -1 2e-1 ]\nu2  [\n 1 2 3 ]\n"
    ids, emb = read_kaldi_ark(ark, name="x.ark")
    assert ids.tolist() == ["u1", "u2"]
    assert emb.tolist() == [[0.5, -1.0, 0.2], [1.0, 2.0, 3.0]]
    assert emb.dtype == np.float64
    assert sniff_embeddings(ark) == "kaldi-text-ark"
    # the same vectors through kaldiio's text writer
    buf = io.BytesIO()
    kaldiio.save_ark(buf, {"u1": np.array([0.5, -1.0, 0.2])}, text=True)
    assert read_kaldi_ark(buf.getvalue())[1].tolist() == [[0.5, -1.0, 0.2]]
    with pytest.raises(VoxMetricsInputError, match=r"x\.ark: line 2: not a Kaldi text ark"):
        read_kaldi_ark(b"u1  [ 1 2 ]\nu2 1 2\n", name="x.ark")
    with pytest.raises(VoxMetricsInputError, match="'u2' holds a value that is not a number"):
        read_kaldi_ark(b"u1  [ 1 2 ]\nu2  [ 1 x ]\n")
    with pytest.raises(VoxMetricsInputError, match="'u2' has 3 values but 'u1' has 2"):
        read_kaldi_ark(b"u1  [ 1 2 ]\nu2  [ 1 2 3 ]\n")
    with pytest.raises(VoxMetricsInputError, match=r"2 x 2 matrix"):
        read_kaldi_ark(b"u1  [\n 1 2\n 3 4 ]\n")


def test_binary_ark_problems():
    buf = io.BytesIO()
    kaldiio.save_ark(buf, {"u1": np.ones(4, np.float32), "u2": np.ones(4, np.float32)})
    data = buf.getvalue()
    with pytest.raises(VoxMetricsInputError, match=r"damaged or truncated after 'u1'"):
        read_kaldi_ark(data[:-3], name="x.ark")
    buf = io.BytesIO()
    kaldiio.save_ark(buf, {"u1": np.ones((5, 3), np.float32)})
    with pytest.raises(VoxMetricsInputError, match="per-frame features"):
        read_kaldi_ark(buf.getvalue())


def _h5(**datasets) -> bytes:
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        for k, v in datasets.items():
            f.create_dataset(k, data=v)
    return buf.getvalue()


def test_hdf5_both_layouts_equal_npz(vpc):
    _, meta, vecs, npz = vpc
    reference = read_embeddings(npz, metadata=meta)
    per_utt = _h5(**vecs)
    matrix = _h5(
        embeddings=np.stack(list(vecs.values())),
        utt_ids=np.array(list(vecs), dtype=h5py.string_dtype()),
    )
    for data in (per_utt, matrix):
        assert sniff_embeddings(data) == "hdf5"
        es = read_embeddings(data, metadata=meta)
        np.testing.assert_array_equal(es.embeddings, reference.embeddings)
    # any names when there is one 2-D and one text dataset
    other = _h5(X=np.stack(list(vecs.values())), keys=np.array(list(vecs), dtype="S"))
    assert read_hdf5_embeddings(other)[0].tolist() == list(vecs)


def test_hdf5_problems(tmp_path):
    with pytest.raises(VoxMetricsInputError, match="cannot tell"):
        read_hdf5_embeddings(_h5(a=np.ones((2, 2)), b=np.ones((2, 2))))
    with pytest.raises(VoxMetricsInputError, match="shape mismatch: 'embeddings' has 2 rows"):
        read_hdf5_embeddings(
            _h5(embeddings=np.ones((2, 2)), utt_ids=np.array(["a", "b", "c"], dtype="S"))
        )
    with pytest.raises(VoxMetricsInputError, match="cannot be opened as HDF5"):
        read_hdf5_embeddings(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    target = tmp_path / "other.h5"
    with h5py.File(target, "w") as f:
        f.create_dataset("u1", data=np.ones(3))
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f["u1"] = h5py.ExternalLink(str(target), "u1")
    with pytest.raises(VoxMetricsInputError, match="external link"):
        read_hdf5_embeddings(buf.getvalue())


@pytest.mark.parametrize("case", list(BROKEN_HDF5))
def test_hdf5_files_h5py_fails_on_are_damaged_or_unsupported(case):
    build, match = BROKEN_HDF5[case]
    with pytest.raises(VoxMetricsInputError) as info:
        read_hdf5_embeddings(build(), name="x.h5")
    message = str(info.value)
    assert message.startswith("x.h5: damaged or unsupported HDF5 file: "), message
    assert re.search(match, message), message


@pytest.mark.parametrize("case", ["soft-link-loop", "cut-in-half", "time-datatype"])
def test_cli_refuses_a_broken_hdf5_file_in_one_line(tmp_path, capsys, case):
    (tmp_path / "x.h5").write_bytes(BROKEN_HDF5[case][0]())
    (tmp_path / "m.csv").write_text("utt_id,speaker,role,split\nu1,a,enrol,eval\n")
    argv = [
        "evaluate",
        "--embeddings",
        str(tmp_path / "x.h5"),
        "--metadata",
        str(tmp_path / "m.csv"),
    ]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert (
        captured.err.startswith("voxmetrics: error: ")
        and "x.h5: damaged or unsupported HDF5 file" in captured.err
    )
    assert "SystemError" not in captured.err and "FastRLock" not in captured.err


def test_hdf5_scalar_and_empty_vectors_are_refused_by_name():
    with pytest.raises(VoxMetricsInputError, match=r"'u1' is a single number, not one embedding"):
        read_hdf5_embeddings(_h5(u1=np.float64(1.0)))
    with pytest.raises(VoxMetricsInputError, match=r"'u1' is of shape \(0,\), not one embedding"):
        read_hdf5_embeddings(_h5(u1=np.zeros(0)))


def test_metadata_subset_and_system_filter(vpc):
    tmp, meta_path, _, npz = vpc
    meta = pd.read_csv(meta_path, dtype=str)
    both = pd.concat(
        [meta.assign(system="original"), meta.assign(system="anon", utt_id="a-" + meta.utt_id)]
    )
    both.to_csv(tmp / "both.csv", index=False)
    # the embeddings file holds the original system only; the metadata lists both
    es = read_embeddings(npz, metadata=tmp / "both.csv", system="original")
    assert len(es.meta) == 12 and set(es.meta["system"]) == {"original"}
    with pytest.raises(VoxMetricsInputError, match="no row has system 'b5'; the systems are"):
        read_embeddings(npz, metadata=tmp / "both.csv", system="b5")
    with pytest.raises(VoxMetricsInputError, match="no 'system' column"):
        read_embeddings(npz, metadata=meta_path, system="original")
    # metadata of 2 speakers only: the other 6 embeddings are ignored and counted
    meta[meta.speaker.isin(SPEAKERS[:2])].to_csv(tmp / "half.csv", index=False)
    with pytest.warns(IgnoredEmbeddingsWarning, match="6 of 12 embeddings have no row"):
        es = read_embeddings(tmp / "xvectors.npz", metadata=tmp / "half.csv")
    assert es.embeddings.shape == (6, 8)


def test_score_readers_point_embedding_files_to_the_embeddings_reader():
    from voxmetrics.data import read_scores

    buf = io.BytesIO()
    kaldiio.save_ark(buf, {"u1": np.ones(3, np.float32)})
    with pytest.raises(VoxMetricsInputError, match=r"binary Kaldi ark of vectors.*--embeddings"):
        read_scores(buf.getvalue(), name="x.ark")
    with pytest.raises(VoxMetricsInputError, match="HDF5 is read as embeddings"):
        read_scores(_h5(u1=np.ones(3)), name="x.h5")


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 6),
    d=st.integers(1, 5),
    double=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_kaldiio_written_arks_read_back_exactly(n, d, double, seed):
    rng = np.random.default_rng(seed)
    dtype = np.float64 if double else np.float32
    vecs = {f"spk{k}-utt{k}": rng.normal(size=d).astype(dtype) for k in range(n)}
    for text in (False, True):
        buf = io.BytesIO()
        kaldiio.save_ark(buf, vecs, text=text)
        ids, emb = read_kaldi_ark(buf.getvalue())
        assert ids.tolist() == list(vecs)
        expected = np.stack(list(vecs.values())).astype(np.float64)
        if text:  # kaldiio's text writer prints a limited number of digits
            np.testing.assert_allclose(emb, expected, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(emb, expected)


def _h5_file(build, **kw) -> bytes:
    buf = io.BytesIO()
    with h5py.File(buf, "w", **kw) as f:
        build(f)
    return buf.getvalue()


def test_hdf5_external_storage_is_refused(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"KEY=" + b"x" * 60)
    data = _h5_file(
        lambda f: f.create_dataset("u1", shape=(16,), dtype="f4", external=[(str(secret), 0, 64)])
    )
    refused(read_hdf5_embeddings, data, name="x.h5", match=r"'/u1' keeps its data in external")


def test_hdf5_declaring_a_huge_unwritten_matrix_is_refused_before_reading():
    def build(f):
        f.create_dataset("embeddings", shape=(1_000_000, 1000), dtype="i1")
        f.create_dataset("utt_ids", data=np.array([b"a"]))

    data = _h5_file(build)
    assert len(data) < 10_000
    refused(read_hdf5_embeddings, data, name="x.h5", match=r"1000000 x 1000.*max_array_bytes")


def test_hdf5_unwritten_data_read_as_fill_values_is_refused():
    def build(f):
        f.create_dataset("embeddings", shape=(20_000, 256), dtype="f4")  # 41 MB as float64
        f.create_dataset("utt_ids", data=np.array([b"a"] * 20_000))

    refused(read_hdf5_embeddings, _h5_file(build), name="x.h5", match=r"stores only .*max_ratio")


def test_hdf5_gzip_bomb_is_refused_by_its_ratio():
    def build(f):
        zeros = np.zeros((1000, 1000), "f4")
        d = f.create_dataset(
            "embeddings", shape=(20_000, 1000), dtype="f4", compression="gzip", chunks=(1000, 1000)
        )
        for k in range(20):
            d[k * 1000 : (k + 1) * 1000] = zeros
        f.create_dataset("utt_ids", data=np.array([b"u"] * 20_000))

    refused(
        read_hdf5_embeddings, _h5_file(build), name="x.h5", match=r"decompression bomb.*max_ratio"
    )


def test_hdf5_unwritten_variable_length_ids_are_refused_before_reading():
    def build(f):
        f.create_dataset("embeddings", data=np.zeros((2, 3)))
        f.create_dataset("utt_ids", shape=(100_000_000,), dtype=h5py.string_dtype())

    refused(read_hdf5_embeddings, _h5_file(build), name="x.h5", match=r"'/utt_ids' \(100000000\)")


def test_hdf5_ids_of_another_length_are_refused_from_their_headers():
    def build(f):
        f.create_dataset("embeddings", data=np.ones((2, 3)))
        f.create_dataset("utt_ids", data=np.array([b"a", b"b", b"c"]))

    refused(
        read_hdf5_embeddings, _h5_file(build), name="x.h5", match=r"2 rows but 'utt_ids' holds 3"
    )


def test_hdf5_with_a_user_block_is_recognised():
    def build(f):
        f.create_dataset("embeddings", data=np.eye(3)[[0, 1, 0, 1]])
        f.create_dataset("utt_ids", data=np.array([b"e1", b"e2", b"t1", b"t2"]))

    data = _h5_file(build, userblock_size=512)  # as MATLAB v7.3 writes
    assert data[:8] != b"\x89HDF\r\n\x1a\n" and sniff_embeddings(data) == "hdf5"
    meta = (
        b"utt_id,speaker,role,split\ne1,a,enrol,eval\ne2,b,enrol,eval\n"
        b"t1,a,trial,eval\nt2,b,trial,eval\n"
    )
    assert read_embeddings(data, metadata=meta).embeddings.shape == (4, 3)


def _ark_header(key: bytes, n: int, token: bytes = b"FV ") -> bytes:
    return key + b" \x00B" + token + b"\x04" + struct.pack("<i", n)


def test_ark_header_declaring_2_31_floats_is_refused():
    data = _ark_header(b"u1", 2**31 - 1) + b"\0" * 16
    refused(read_kaldi_ark, data, name="x.ark", match=r"'u1'.*2147483647 values.*only 16 bytes")


def test_scp_pointing_at_a_lying_ark_header_is_refused(tmp_path):
    (tmp_path / "a.ark").write_bytes(_ark_header(b"u1", 2**31 - 1) + b"\0" * 16)
    (tmp_path / "a.scp").write_text("u1 a.ark:3\n")
    refused(read_kaldi_scp, tmp_path / "a.scp", match=r"a.scp: line 1: 'a.ark'.*only 16 bytes")


def test_ark_entry_of_an_unread_type_is_named():
    data = _ark_header(b"u1", 4, token=b"CM ") + b"\0" * 16
    refused(read_kaldi_ark, data, name="x.ark", match=r"'u1' .* of type 'CM'")


def test_a_piped_scp_gets_the_piped_command_message(tmp_path):
    (tmp_path / "p.scp").write_text("u1 copy-vector ark:x.ark ark:- |\n")
    meta = b"utt_id,speaker,role,split\nu1,a,enrol,eval\n"
    refused(read_embeddings, tmp_path / "p.scp", metadata=meta, match=r"line 1: a piped command")


def test_a_text_ark_entry_without_its_bracket_is_named():
    refused(
        read_kaldi_ark,
        b"u1  [ 1 2 \nu2  [ 3 4 ]\n",
        name="x.ark",
        match=r"line 1: the vector of 'u1' has no closing '\]'",
    )
