"""NPZ score files (voxmetrics.data.readers.npz): float32 kept, arrays frozen, layouts."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hostile_inputs import (
    BAD_NPY,
    npy_bytes,
    refused,
    score_npz_of,
    zip_of,
)

from tests.data.readers.input_error_cases import input_error, npz_score_file, savez_bytes
from voxmetrics.data import read_embeddings, read_scores
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError


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


@pytest.mark.parametrize("case", list(BAD_NPY), ids=list(BAD_NPY))
def test_npz_scores_with_a_lying_array_header_are_refused(case):
    data, match = BAD_NPY[case]
    refused(read_scores, score_npz_of(data), name="s.npz", match=r"s\.npz.*" + match)


def test_fortran_order_and_big_endian_arrays_still_read_right():
    a = np.asfortranarray(np.array([[0.9, 0.1], [0.2, 0.8]], dtype=">f8"))
    sm = read_scores(score_npz_of(npy_bytes(a)), name="s.npz")
    assert sm.scores.tolist() == [[0.9, 0.1], [0.2, 0.8]]


def test_structured_dtype_is_refused_as_not_numbers():
    a = np.zeros(2, dtype=[("x", "<f8"), ("y", "<i4")])
    refused(read_scores, score_npz_of(npy_bytes(a)), name="s.npz", match=r"must hold numbers")


def test_encrypted_member_is_refused_with_a_message():
    z = bytearray(zip_of({"scores.npy": npy_bytes(np.zeros(2))}))
    z[6] |= 1  # local header: encrypted
    cd = z.rfind(b"PK\x01\x02")
    z[cd + 8] |= 1
    refused(
        read_scores, bytes(z), name="x.npz", match=r"x\.npz.*(encrypted|password|corrupt|damaged)"
    )


def test_npz_with_a_non_npy_member_is_refused():
    data = zip_of({"scores.npy": npy_bytes(np.zeros((2, 2))), "evil.pkl": b"\x80\x04."})
    refused(read_scores, data, name="x.npz", match=r"not an NPZ.*evil\.pkl")


def test_nested_zip_inside_npz_is_refused():
    data = zip_of({"scores.npy": zip_of({"inner.npy": b"x"})})
    refused(read_scores, data, name="x.npz", match=r"x\.npz.*not a valid NPY")


def test_nan_in_an_npz_without_mask_is_refused_again():
    s = np.eye(3) + 0.1
    s[1, 2] = np.nan
    buf = io.BytesIO()
    labels = np.array(["a", "b", "c"])
    np.savez(buf, scores=s, trial_ids=labels, trial_speakers=labels, enrol_speakers=labels)
    refused(
        read_scores,
        buf.getvalue(),
        name="s.npz",
        match=r"1 NaN value\(s\) of T x N = 3 x 3 = 9 \(first: row 2, column 3\) and no 'mask'",
    )
    with pytest.warns(IncompleteScoresWarning):
        assert read_scores(buf.getvalue(), allow_incomplete=True).n_pairs == 8


# ----------------------------------------------------------------------------------------------
# Bad score NPZ: object arrays, missing arrays, inconsistent lengths, non-numeric and
# non-finite scores
# ----------------------------------------------------------------------------------------------


def test_pickled_arrays_are_refused(tmp_path):
    obj = np.array([{"a": 1}, None], dtype=object)
    np.save(tmp_path / "emb.npy", obj, allow_pickle=True)
    meta = b"utt_id,speaker,role,split\nu1,a,enrol,eval\nu2,b,trial,eval\n"
    with input_error(
        r"emb\.npy: the array is a Python object array; pickled arrays are refused "
        r"for safety.*Save plain numeric / string arrays"
    ):
        read_embeddings(tmp_path / "emb.npy", metadata=meta)
    np.savez(
        tmp_path / "s.npz",
        scores=np.eye(2),
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"], dtype=object),
        enrol_speakers=np.array(["a", "b"]),
    )
    with input_error(
        r"s\.npz: array 'trial_speakers' is a Python object array; pickled arrays "
        "are refused"
    ):
        read_scores(tmp_path / "s.npz")
    with input_error("pickled arrays are refused"):
        read_embeddings(
            savez_bytes(embeddings=np.eye(2), utt_ids=np.array(["u1", "u2"], dtype=object)),
            metadata=meta,
        )


def test_npz_missing_arrays():
    with input_error(
        r"s\.npz: missing array\(s\) trial_speakers, enrol_speakers; a score NPZ needs "
        r"arrays scores, trial_ids, trial_speakers, enrol_speakers\. Found: scores, "
        "trial_ids"
    ):
        read_scores(savez_bytes(scores=np.eye(2), trial_ids=np.array(["t1", "t2"])), name="s.npz")


def test_npz_inconsistent_lengths():
    data = savez_bytes(
        scores=np.eye(3)[:, :2],
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b", "a"]),
        enrol_speakers=np.array(["a", "b"]),
        attr_sex=np.array(["F", "M"]),
    )
    with input_error(
        r"s\.npz: shape mismatch: NPZ arrays of inconsistent lengths: 'scores' is 3 x 2 "
        r"\(trials x enrolled\) but 'trial_ids' has shape \(2,\); 'attr_sex' has shape "
        r"\(2,\); give trial_ids, trial_speakers and every attr_<name> one entry per "
        r"row \(3\)"
    ):
        read_scores(data, name="s.npz")


def test_npz_non_numeric_scores():
    data = savez_bytes(
        scores=np.array([["a", "b"], ["c", "d"]]),
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"]),
        enrol_speakers=np.array(["a", "b"]),
    )
    with input_error(r"s\.npz: array 'scores' has dtype <U1; it must hold numbers"):
        read_scores(data, name="s.npz")


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_npz_gives_the_same_message(tmp_path, bad):
    from voxmetrics.data import read_scores

    s = np.zeros((4, 3), dtype=np.float32)
    s[2, 1] = bad
    with pytest.raises(VoxMetricsInputError) as exc:
        read_scores(npz_score_file(tmp_path / "x.npz", s))
    if np.isnan(bad):
        assert str(exc.value).startswith(
            "x.npz: array 'scores' holds 1 NaN value(s) of T x N = 4 x 3 = 12 (first: row 3, "
            "column 2) and no 'mask'"
        ), exc.value
    else:
        assert str(exc.value) == (
            f"x.npz: 1 score(s) are NaN or infinite (first: trial 'u2', enrolled 's1' = {bad}); "
            "every score must be a finite number."
        )
