"""Embeddings with their metadata (voxmetrics.data.readers.embeddings): NPZ, NPY, Parquet."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    BAD_NPY,
    parquet_rows,
    refused,
)

from tests.data.readers.input_error_cases import EMBEDDING_META, input_error, savez_bytes
from voxmetrics.cli import main
from voxmetrics.data import (
    read_embeddings,
    write_embeddings,
)
from voxmetrics.errors import IgnoredEmbeddingsWarning


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


@pytest.mark.parametrize("metadata", [b"{not json", b'{"index_columns": [{"kind": "range"}]}'])
def test_an_embeddings_parquet_with_damaged_metadata_is_one_line(tmp_path, capsys, metadata):
    rows = [["e1", "a", "enrol", "eval", [1.0, 0.0]], ["u1", "a", "trial", "eval", [1.0, 0.1]]]
    names = ["utt_id", "speaker", "role", "split", "embedding"]
    (tmp_path / "emb.parquet").write_bytes(parquet_rows(names, rows, {b"pandas": metadata}))
    assert main(["evaluate", "--embeddings", str(tmp_path / "emb.parquet")]) == 2
    err = capsys.readouterr().err
    assert "emb.parquet: damaged or unsupported Parquet file" in err
    assert err.count("\n") == 1 and "Traceback" not in err, err


META = b"utt_id,speaker,role,split\n" + b"".join(
    f"u{i},s{i % 3},{'enrol' if i < 3 else 'trial'},eval\n".encode() for i in range(6)
)


@pytest.mark.parametrize("case", list(BAD_NPY), ids=list(BAD_NPY))
def test_npy_embeddings_with_a_lying_header_are_refused(case):
    data, match = BAD_NPY[case]
    refused(read_embeddings, data, metadata=META, name="emb.npy", match=r"emb\.npy.*" + match)


# ----------------------------------------------------------------------------------------------
# Bad embeddings and metadata: each message names the file, the row and the fix
# ----------------------------------------------------------------------------------------------


def test_embeddings_need_metadata():
    with input_error(r"e\.npz: NPZ embeddings need a metadata file .*pass it with metadata=\.\.\."):
        read_embeddings(
            savez_bytes(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t1"])), name="e.npz"
        )


def test_npy_rows_vs_metadata_rows():
    buf = io.BytesIO()
    np.save(buf, np.eye(4))
    with input_error(
        r"e\.npy: shape mismatch: the NPY has 4 rows but meta\.csv has 3 utterance rows; "
        "the NPY's rows must follow the metadata's rows one to one"
    ):
        read_embeddings(
            buf.getvalue(), metadata=EMBEDDING_META, name="e.npy", metadata_name="meta.csv"
        )


def test_npz_utt_ids_missing_or_extra():
    npz = savez_bytes(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t9"]))
    with input_error(
        r"meta\.csv: 1 of 3 utt_ids have no embedding in e\.npz, e\.g\. 't1'; remove "
        "those rows or add their embeddings"
    ):
        read_embeddings(npz, metadata=EMBEDDING_META, name="e.npz", metadata_name="meta.csv")
    # metadata listing a subset of the embeddings: the rest are ignored and counted
    npz = savez_bytes(embeddings=np.eye(4), utt_ids=np.array(["e1", "x1", "e2", "t1"]))
    with pytest.warns(
        IgnoredEmbeddingsWarning,
        match=r"e\.npz: 1 of 4 embeddings have no row in meta\.csv, e\.g\. 'x1'",
    ):
        es = read_embeddings(npz, metadata=EMBEDDING_META, name="e.npz", metadata_name="meta.csv")
    assert es.meta["utt_id"].tolist() == ["e1", "e2", "t1"]
    np.testing.assert_array_equal(es.embeddings, np.eye(4)[[0, 2, 3]])


def test_npz_embeddings_inconsistent_lengths():
    npz = savez_bytes(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2"]))
    with input_error(
        r"e\.npz: shape mismatch: 'embeddings' has shape \(3, 3\) and 'utt_ids' \(2,\)"
    ):
        read_embeddings(npz, metadata=EMBEDDING_META, name="e.npz")


def test_metadata_problems_name_the_line():
    npz = savez_bytes(embeddings=np.eye(3), utt_ids=np.array(["e1", "e2", "t1"]))
    with input_error(
        r"meta\.csv: missing column\(s\) split in the header \(line 1\); embeddings "
        "metadata needs columns utt_id, speaker, role, split"
    ):
        read_embeddings(
            npz, metadata=b"utt_id,speaker,role\ne1,a,enrol\n", metadata_name="meta.csv"
        )
    bad_role = EMBEDDING_META.replace(b"t1,a,trial", b"t1,a,probe")
    with input_error(r"meta\.csv: line 4: role 'probe' is not allowed; use one of enrol, trial"):
        read_embeddings(npz, metadata=bad_role, metadata_name="meta.csv")
    dup = EMBEDDING_META + b"e2,b,enrol,eval\n"
    with input_error(r"meta\.csv: line 5: utt_id 'e2' already appears on line 3"):
        read_embeddings(npz, metadata=dup, metadata_name="meta.csv")


def test_metadata_given_as_the_embeddings():
    with input_error(
        r"m\.csv: not an embeddings file: this is the metadata; pass the embeddings "
        "file"
    ):
        read_embeddings(EMBEDDING_META, name="m.csv")


def test_parquet_embeddings_problems():
    buf = io.BytesIO()
    pd.DataFrame(
        {"utt_id": ["e1"], "speaker": ["a"], "role": ["enrol"], "split": ["eval"]}
    ).to_parquet(buf)
    with input_error(r"e\.parquet: no 'embedding' column; an embeddings Parquet needs columns"):
        read_embeddings(buf.getvalue(), name="e.parquet")
    buf = io.BytesIO()
    pd.DataFrame(
        {
            "utt_id": ["e1", "e2"],
            "speaker": ["a", "b"],
            "role": ["enrol"] * 2,
            "split": ["eval"] * 2,
            "embedding": [[1.0, 0.0], [0.0, 1.0, 0.0]],
        }
    ).to_parquet(buf)
    with input_error(
        r"e\.parquet: shape mismatch: row 2 has an embedding of length 3 but row 1 has "
        "2; all embeddings must have the same dimension"
    ):
        read_embeddings(buf.getvalue(), name="e.parquet")
    with input_error(r"e\.parquet: an embeddings Parquet file carries its own metadata"):
        read_embeddings(buf.getvalue(), name="e.parquet", metadata=EMBEDDING_META)
