"""A Dask block reads only its rows of a score chunk: the same scores, the same refusals.

``evaluation.sources._npy_rows`` streams an NPZ member as ``load_npy`` does (header, sizes and
CRC checked) but keeps rows ``start:stop`` only, and says whether every value of the member is
finite; ``ChunkedScores`` blocks read their row range of each file
(``evaluation.sources.block_scores``). The reference is the former read: the whole member
(``load_npy``), sliced. No timing is asserted here.

A process keeps a record of the chunk files it verified whole (``sources._VERIFIED``): a later
block of the same file reads its rows at their offset, without streaming the member again; a file
changed in any way (content, size, times) or read under other limits is verified again.

The sources end to end on a local Dask cluster (tiny blocks, ``small_blocks`` in conftest.py):
chunked NPZ, Parquet chunks and a Zarr store give the in-memory report exactly; chunk files that
do not fit together, a bad chunk and a store of Python objects are refused with one message.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import warnings
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import voxmetrics.distributed as dist
from voxmetrics.cli import main
from voxmetrics.data import ScoreMatrix
from voxmetrics.data.writers import write_scores
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate, sources
from voxmetrics.evaluation.sources import _FiniteScan, _npy_rows
from voxmetrics.limits import ArchiveReader, get_limits, use_limits

from .blockwise_cases import comparable


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
            rows, finite, _ = _npy_rows(z, "scores.npy", start, stop, "scores")
        assert rows.dtype == dtype and finite
        np.testing.assert_array_equal(rows, whole[start:stop])
        assert rows.flags.c_contiguous and rows.flags.writeable


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_bad_value_outside_the_rows_is_seen(bad):
    a = np.ones((300, 1000))
    a[290, 999] = bad
    with ArchiveReader(npz_bytes(a), "x.npz") as z:
        rows, finite, _ = _npy_rows(z, "scores.npy", 0, 10)
    assert not finite and np.isfinite(rows).all()


def test_finite_values_whose_sum_overflows_are_finite():
    a = np.full((4, 3), 1e308)
    with ArchiveReader(npz_bytes(a), "x.npz") as z:
        _, finite, _ = _npy_rows(z, "scores.npy", 0, 2)
    assert finite


def test_other_members_are_read_whole():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    for arr in (a, np.arange(12.0), np.arange(12).reshape(3, 4)):
        with ArchiveReader(npz_bytes(arr), "x.npz") as z:
            rows, finite, layout = _npy_rows(z, "scores.npy", 1, 3)
        np.testing.assert_array_equal(rows, np.asarray(arr)[1:3])
        assert finite and layout is None


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


def _chunk(path, a, *, compressed=False):
    (np.savez_compressed if compressed else np.savez)(path, scores=a)
    return str(path)


def _count_streams(monkeypatch):
    calls = []
    real = sources._npy_rows

    def counted(*args, **kwargs):
        calls.append(args[2:4])
        return real(*args, **kwargs)

    monkeypatch.setattr(sources, "_npy_rows", counted)
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_second_block_of_a_verified_file_is_not_streamed_again(tmp_path, monkeypatch, dtype):
    a = np.random.default_rng(2).normal(size=(700, 523)).astype(dtype)
    p = _chunk(tmp_path / "c.npz", a)
    calls = _count_streams(monkeypatch)
    for lo, hi in [(13, 402), (0, 700), (699, 700), (250, 250), (402, 699), (13, 402)]:
        rows, finite = sources._chunk_rows(p, lo, hi)
        np.testing.assert_array_equal(rows, a[lo:hi])
        assert finite and rows.dtype == dtype and rows.flags.c_contiguous and rows.flags.writeable
    assert calls == [(13, 402)]  # verified once, by the first block


def test_the_record_keeps_the_finiteness_of_the_whole_file(tmp_path, monkeypatch):
    a = np.ones((300, 100))
    a[290, 7] = np.nan
    p = _chunk(tmp_path / "c.npz", a)
    calls = _count_streams(monkeypatch)
    assert sources._chunk_rows(p, 0, 10)[1] is False
    rows, finite = sources._chunk_rows(p, 10, 20)
    assert finite is False and np.isfinite(rows).all() and len(calls) == 1
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        sources.block_scores(("files", ((p, 10, 20),), np.arange(10), np.zeros(10), None), None)


def test_a_changed_file_is_verified_again(tmp_path, monkeypatch):
    a = np.random.default_rng(3).normal(size=(200, 50))
    p = _chunk(tmp_path / "c.npz", a)
    calls = _count_streams(monkeypatch)
    sources._chunk_rows(p, 0, 10)
    st0 = os.stat(p)
    b = a.copy()
    b[150, 3] = np.inf  # the same size; the times put back as they were
    _chunk(tmp_path / "c.npz", b)
    os.utime(p, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    rows, finite = sources._chunk_rows(p, 10, 20)
    assert len(calls) == 2 and not finite
    np.testing.assert_array_equal(rows, b[10:20])
    data = bytearray(open(p, "rb").read())  # tampered in place: the stored CRC no longer matches
    at = data.find(a[0, 0].tobytes())
    data[at] ^= 1
    with open(p, "r+b") as f:
        f.write(data)
    os.utime(p, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    with pytest.raises(VoxMetricsInputError, match="corrupt"):
        sources._chunk_rows(p, 20, 30)
    assert len(calls) == 3


def test_other_limits_or_a_compressed_member_are_verified_again(tmp_path, monkeypatch):
    a = np.arange(6000.0).reshape(100, 60)
    p = _chunk(tmp_path / "c.npz", a)
    z = _chunk(tmp_path / "z.npz", a, compressed=True)
    calls = _count_streams(monkeypatch)
    sources._chunk_rows(p, 0, 10)
    with (
        use_limits(replace(get_limits(), max_member_bytes=1000)),
        pytest.raises(VoxMetricsInputError, match="max_member_bytes"),
    ):
        sources._chunk_rows(p, 10, 20)  # refused under the smaller cap, though recorded
    for lo in (0, 10):
        np.testing.assert_array_equal(sources._chunk_rows(z, lo, lo + 10)[0], a[lo : lo + 10])
    assert len(calls) == 4


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


# ------------------------------------------------------------ the sources on a Dask cluster


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chunked_npz_scores_equal_in_memory(client, tmp_path, dtype):
    rng = np.random.default_rng(3)
    t, n = 150, 9
    enrol = np.array([f"s{j}" for j in range(n)])
    spk = enrol[rng.integers(0, n, size=t)]
    scores = (np.round(rng.normal(size=(t, n)) * 4) / 4).astype(dtype)  # many ties
    scores[np.arange(t), np.searchsorted(enrol, spk)] += dtype(0.5)
    sm = ScoreMatrix.from_arrays(
        scores, trial_ids=[f"u{i}" for i in range(t)], trial_speakers=spk, enrol_speakers=enrol
    )
    for k, (a, b) in enumerate([(0, 7), (7, 90), (90, 91), (91, 150)]):
        np.savez(  # in the scores' own dtype (write_scores writes float64)
            tmp_path / f"chunk{k}.npz",
            scores=scores[a:b],
            trial_ids=sm.trial_ids[a:b],
            trial_speakers=spk[a:b],
            enrol_speakers=enrol,
        )
    source = dist.ChunkedScores.from_files(sorted(tmp_path.glob("*.npz")))
    assert source.dtype == dtype
    for ties in ("reference", "attacker"):
        ref = evaluate(sm, ties=ties)
        got = dist.evaluate_blockwise(source, client=client, ties=ties)
        assert comparable(got) == comparable(ref)


@pytest.mark.usefixtures("small_blocks")
def test_chunk_files_that_do_not_fit_together_are_refused(tmp_path):
    a = ScoreMatrix.from_arrays(
        [[1.0, 0.0]], trial_ids=["t1"], trial_speakers=["a"], enrol_speakers=["a", "b"]
    )
    b = ScoreMatrix.from_arrays(
        [[1.0, 0.0]], trial_ids=["t1"], trial_speakers=["b"], enrol_speakers=["b", "c"]
    )
    write_scores(a, tmp_path / "a.npz", format="npz")
    write_scores(b, tmp_path / "b.npz", format="npz")
    with pytest.raises(VoxMetricsInputError, match="enrol_speakers differ"):
        dist.ChunkedScores.from_files([tmp_path / "a.npz", tmp_path / "b.npz"])
    write_scores(a, tmp_path / "c.npz", format="npz")
    with pytest.raises(VoxMetricsInputError, match="unique across the chunks"):
        dist.ChunkedScores.from_files([tmp_path / "a.npz", tmp_path / "c.npz"])


@pytest.mark.usefixtures("small_blocks")
def test_a_bad_chunk_is_bad_input_not_a_traceback(client, tmp_path, capsys):
    scores = np.array([[0.9, 0.1], [0.2, np.nan]])
    np.savez(
        tmp_path / "a.npz",
        scores=scores,
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )
    status = main(["evaluate", str(tmp_path), "--scheduler", client.scheduler.address])
    err = capsys.readouterr().err
    assert status == 2 and "NaN or infinite scores" in err and "Traceback" not in err


@pytest.mark.usefixtures("small_blocks")
def test_parquet_chunks_equal_in_memory(client, tmp_path):
    rng = np.random.default_rng(8)
    t, n = 60, 7
    enrol = np.array([f"s{j}" for j in range(n)])
    spk = enrol[rng.integers(0, n, size=t)]
    scores = np.round(rng.normal(size=(t, n)), 1)
    parts = []
    for k, (a, b) in enumerate([(0, 25), (25, 26), (26, 60)]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            part = ScoreMatrix.from_arrays(
                scores[a:b],
                trial_ids=[f"u{i}" for i in range(a, b)],
                trial_speakers=spk[a:b],
                enrol_speakers=enrol,
            )
        write_scores(part, tmp_path / f"c{k}.parquet", format="parquet")
        parts.append(part)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ScoreMatrix.from_arrays(
            np.concatenate([p.scores for p in parts]),
            trial_ids=np.concatenate([p.trial_ids for p in parts]),
            trial_speakers=np.concatenate([p.trial_speakers for p in parts]),
            enrol_speakers=enrol,
        )
        source = dist.ChunkedScores.from_files(sorted(tmp_path.glob("*.parquet")))
    got = dist.evaluate_blockwise(source, client=client)
    assert comparable(got) == comparable(evaluate(whole))


@pytest.mark.usefixtures("small_blocks")
def test_zarr_store_equals_in_memory_and_objects_are_refused(client, tmp_path, capsys):
    zarr = pytest.importorskip("zarr")
    rng = np.random.default_rng(12)
    t, n = 90, 8
    enrol = np.array([f"s{j}" for j in range(n)])
    spk = enrol[rng.integers(0, n, size=t)]
    spk[3] = "stranger"
    scores = (np.round(rng.normal(size=(t, n)), 1)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(tmp_path / "s.zarr", mode="w")
        g.create_array("scores", data=scores, chunks=(7, n))
        for key, values in (
            ("trial_ids", np.array([f"u{i}" for i in range(t)])),
            ("trial_speakers", spk),
            ("enrol_speakers", enrol),
        ):
            g.create_array(key, data=values)
        sm = ScoreMatrix.from_arrays(
            scores,
            trial_ids=[f"u{i}" for i in range(t)],
            trial_speakers=spk,
            enrol_speakers=enrol,
        )
        source = dist.ZarrScores.open(tmp_path / "s.zarr")
    assert source.n_excluded_trials == 1 and source.dtype == np.float32
    for ties in ("reference", "attacker"):
        got = dist.evaluate_blockwise(source, client=client, ties=ties)
        assert comparable(got) == comparable(evaluate(sm.without_others(), ties=ties))
    # the CLI takes the store as EVAL
    assert (
        main(["evaluate", str(tmp_path / "s.zarr"), "--scheduler", client.scheduler.address]) == 0
    )
    assert json.loads(capsys.readouterr().out)["eer"] == evaluate(sm.without_others()).baseline.eer
    # a store holding Python objects (a pickle codec) is refused before anything is read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g2 = zarr.open_group(tmp_path / "o.zarr", mode="w", zarr_format=2)
        for key in ("scores", "trial_ids", "trial_speakers", "enrol_speakers"):
            g2.create_array(key, data=np.zeros((2, 2)) if key == "scores" else enrol[:2])
    meta_path = tmp_path / "o.zarr" / "scores" / ".zarray"
    meta = json.loads(meta_path.read_text())
    meta.update(dtype="|O", filters=[{"id": "pickle", "protocol": 5}], compressor=None)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(VoxMetricsInputError, match="scores"):
        dist.ZarrScores.open(tmp_path / "o.zarr")
