"""A Dask block reads only its rows of a score chunk: the same scores, the same refusals.

``evaluation.sources._npy_rows`` streams an NPZ member as ``load_npy`` does (header, sizes and
CRC checked) but keeps rows ``start:stop`` only, and says whether every value of the member is
finite; ``ChunkedScores`` blocks read their row range of each file
(``evaluation.sources.block_scores``). The reference is the former read: the whole member
(``load_npy``), sliced. No timing is asserted here.
"""

from __future__ import annotations

import io
import itertools
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import sources
from voxmetrics.evaluation.sources import _FiniteScan, _npy_rows
from voxmetrics.limits import ArchiveReader


def npz_bytes(a: np.ndarray, *, compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, scores=a)
    return buf.getvalue()


@pytest.mark.parametrize("compressed", [False, True], ids=["stored", "deflated"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_equal_the_whole_member_sliced(dtype, compressed):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(700, 523)).astype(dtype)  # rows cut across the 1 MiB pieces
    data = npz_bytes(a, compressed=compressed)
    with ArchiveReader(data, "x.npz") as z:
        whole = z.load_npy("scores.npy")
    for start, stop in [(0, 700), (0, 1), (699, 700), (13, 402), (400, 401), (250, 250)]:
        with ArchiveReader(data, "x.npz") as z:
            rows, finite = _npy_rows(z, "scores.npy", start, stop, "scores")
        assert rows.dtype == dtype and finite
        np.testing.assert_array_equal(rows, whole[start:stop])
        assert rows.flags.c_contiguous and rows.flags.writeable


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_bad_value_outside_the_rows_is_seen(bad):
    a = np.ones((300, 1000))
    a[290, 999] = bad
    with ArchiveReader(npz_bytes(a), "x.npz") as z:
        rows, finite = _npy_rows(z, "scores.npy", 0, 10)
    assert not finite and np.isfinite(rows).all()


def test_finite_values_whose_sum_overflows_are_finite():
    a = np.full((4, 3), 1e308)
    with ArchiveReader(npz_bytes(a), "x.npz") as z:
        _, finite = _npy_rows(z, "scores.npy", 0, 2)
    assert finite


def test_other_members_are_read_whole():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    for arr in (a, np.arange(12.0), np.arange(12).reshape(3, 4)):
        with ArchiveReader(npz_bytes(arr), "x.npz") as z:
            rows, finite = _npy_rows(z, "scores.npy", 1, 3)
        np.testing.assert_array_equal(rows, np.asarray(arr)[1:3])
        assert finite


def test_a_damaged_member_is_refused_as_by_load_npy():
    a = np.ones((50, 40))
    buf = io.BytesIO()
    np.save(buf, a)
    member = buf.getvalue()
    for body, match in [(member[:-80], "truncated"), (member + b"\0" * 64, "more data")]:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            zf.writestr("scores.npy", body)
        with (
            ArchiveReader(out.getvalue(), "x.npz") as z,
            pytest.raises(VoxMetricsInputError, match=match),
        ):
            _npy_rows(z, "scores.npy", 0, 5)


def test_a_bad_crc_is_refused():
    data = bytearray(npz_bytes(np.ones((100, 100))))
    at = data.find(b"\x00\x00\x00\x00\x00\x00\xf0?")  # the first 1.0
    data[at + 7] = 0x40  # 2.0: the stored CRC no longer matches
    with ArchiveReader(bytes(data), "x.npz") as z, pytest.raises(VoxMetricsInputError):
        _npy_rows(z, "scores.npy", 0, 1)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 300),
    st.sampled_from([np.float32, np.float64]),
    st.lists(st.integers(0, 2400), max_size=12),
    st.sampled_from([None, np.nan, np.inf]),
    st.integers(0, 299),
)
def test_finite_scan_of_any_cut_of_the_bytes(n, dtype, cuts, bad, where):
    a = np.linspace(-3, 3, n).astype(dtype)
    if bad is not None:
        a[where % n] = bad
    raw = a.tobytes()
    scan = _FiniteScan(np.dtype(dtype))
    bounds = sorted({0, len(raw), *(c % (len(raw) + 1) for c in cuts)})
    for lo, hi in itertools.pairwise(bounds):
        scan.add(memoryview(raw)[lo:hi])
    assert scan.ok == bool(np.isfinite(a).all())


def test_block_pieces_read_their_rows_of_each_file(tmp_path):
    rng = np.random.default_rng(1)
    t, n = 90, 6
    enrol = np.array([f"s{j}" for j in range(n)])
    spk = enrol[rng.integers(0, n, size=t)]
    spk[[0, 40, 41, 89]] = "nobody"  # trials of an unenrolled speaker: not kept
    scores = rng.normal(size=(t, n))
    paths = []
    for k, (a, b) in enumerate([(0, 30), (30, 31), (31, 90)]):
        paths.append(tmp_path / f"c{k}.npz")
        np.savez(
            paths[-1],
            scores=scores[a:b],
            trial_ids=[f"u{i}" for i in range(a, b)],
            trial_speakers=spk[a:b],
            enrol_speakers=enrol,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the trials of an unenrolled speaker
        source = sources.ChunkedScores.from_files(paths)
    blocks = [slice(0, 7), slice(7, 60), slice(60, source.rows.size)]
    for b, piece in zip(blocks, source.pieces(blocks), strict=True):
        got, targets = sources.block_scores(piece, None)
        np.testing.assert_array_equal(got, scores[source.rows[b]])
        np.testing.assert_array_equal(targets, source.targets[b])
        for path, lo, hi in piece[1]:  # only the rows between its first and last kept rows
            assert hi - lo <= b.stop - b.start + 2
            assert str(path) in {str(p) for p in paths}


def test_a_bad_value_in_an_unkept_row_of_a_read_file_is_refused(tmp_path):
    enrol = np.array(["a", "b"])
    scores = np.array([[0.9, 0.1], [0.2, 0.8], [np.nan, 0.5]])
    np.savez(
        tmp_path / "c.npz",
        scores=scores,
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["a", "b", "nobody"],
        enrol_speakers=enrol,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the trial of an unenrolled speaker
        source = sources.ChunkedScores.from_files([tmp_path / "c.npz"])
    (piece,) = source.pieces([slice(0, 1)])
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite scores"):
        sources.block_scores(piece, None)
