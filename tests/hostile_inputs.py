"""Builders of hostile inputs for the hostile-input suite: bombs, lying headers, tampered files.

Everything is generated here, small on disk; the bombs inflate only when a reader trusts them.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Sequence

import numpy as np
import pytest
import soundfile as sf

from voxmetrics.data.studyfile import study_to_bytes
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.synth import demo_study

MiB = 2**20


def npy_header(shape: tuple[int, ...], descr: str = "<f8", fortran: bool = False) -> bytes:
    """The bytes of an NPY v1.0 header declaring ``shape`` (no data)."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": fortran, "shape": shape}
    )
    return buf.getvalue()


def raw_npy_header(text: str, version: bytes = b"\x01\x00") -> bytes:
    """An NPY header with arbitrary dictionary text (for malformed headers)."""
    body = text.encode("latin1")
    pad = (64 - (10 + len(body) + 1) % 64) % 64
    body = body + b" " * pad + b"\n"
    return b"\x93NUMPY" + version + struct.pack("<H", len(body)) + body


def npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


# ---------------------------------------------------------------- zip archives built by hand


def _deflate_zeros(prefix: bytes, n_mib: int) -> tuple[bytes, int, int]:
    """Raw deflate of ``prefix`` + n_mib MiB of zeros, built from one repeated block (fast)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    zeros = b"\0" * MiB
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    data = head + block * n_mib + c.flush()
    crc = zlib.crc32(prefix)
    for _ in range(n_mib):
        crc = zlib.crc32(zeros, crc)
    return data, crc, len(prefix) + n_mib * MiB


def raw_zip(members: Sequence[tuple[str, int, bytes, int, int, int]]) -> bytes:
    """A zip archive from ``(name, method, compressed, crc, declared_size, real_size)``."""
    out = io.BytesIO()
    central = []
    for name, method, data, crc, declared, _ in members:
        offset = out.tell()
        fn = name.encode()
        out.write(
            struct.pack(
                "<4s5H3L2H",
                b"PK\x03\x04",
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                declared,
                len(fn),
                0,
            )
        )
        out.write(fn + data)
        central.append(
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                declared,
                len(fn),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + fn
        )
    start = out.tell()
    for c in central:
        out.write(c)
    size = out.tell() - start
    out.write(
        struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), size, start, 0)
    )
    return out.getvalue()


def deflate_bomb(name: str, n_mib: int, *, declare: int | None = None, npy: bool = True) -> bytes:
    """A zip whose member ``name`` inflates to ``n_mib`` MiB of zeros (an NPY if ``npy``)."""
    prefix = npy_header((n_mib * MiB // 8,)) if npy else b""
    data, crc, size = _deflate_zeros(prefix, n_mib)
    return raw_zip(
        [(name, zipfile.ZIP_DEFLATED, data, crc, size if declare is None else declare, size)]
    )


def compressed_bomb(name: str, method: int, n_mib: int = 32, *, extra: dict | None = None) -> bytes:
    """A zip (bzip2 or lzma member) that inflates about a million times."""
    payload = npy_header((n_mib * MiB // 8,)) + b"\0" * (n_mib * MiB)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, payload, compress_type=method)
        for k, v in (extra or {}).items():
            zf.writestr(k, v)
    return buf.getvalue()


def with_declared_size(archive: bytes, member: str, size: int) -> bytes:
    """``archive`` with ``member``'s uncompressed size in the central directory set to ``size``."""
    data = bytearray(archive)
    fn = member.encode()
    pos = 0
    while (pos := data.find(b"PK\x01\x02", pos)) >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46 : pos + 46 + n]) == fn:
            struct.pack_into("<L", data, pos + 24, size)
        pos += 4
    return bytes(data)


def zip_of(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


def score_npz_of(scores: bytes, method: int = zipfile.ZIP_STORED) -> bytes:
    """A score NPZ whose ``scores.npy`` member is ``scores`` (as given), for trials t1 and t2
    spoken by the enrolled speakers a and b."""
    ids = {"trial_ids": ["t1", "t2"], "trial_speakers": ["a", "b"], "enrol_speakers": ["a", "b"]}
    members = {f"{k}.npy": npy_bytes(np.array(v)) for k, v in ids.items()}
    return zip_of({"scores.npy": scores, **members}, method)


# ---------------------------------------------------------------- Parquet tables


def parquet_bytes(
    names: Sequence[str], columns: Sequence[Sequence[object]], metadata: dict | None = None
) -> bytes:
    """A Parquet file of ``columns`` under ``names`` (which may repeat), with schema metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table([pa.array(list(c)) for c in columns], names=list(names))
    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def parquet_rows(
    names: Sequence[str], rows: Sequence[Sequence[object]], metadata: dict | None = None
) -> bytes:
    """:func:`parquet_bytes` of a table given row by row."""
    return parquet_bytes(names, [[r[k] for r in rows] for k in range(len(names))], metadata)


# ---------------------------------------------------------------- study files

_STUDY: bytes | None = None


def small_study_bytes() -> bytes:
    global _STUDY
    if _STUDY is None:
        _STUDY = study_to_bytes(demo_study(n_speakers=6))
    return _STUDY


def tampered_study(edit: Callable[[dict], object], *, extra: dict | None = None) -> bytes:
    """The small demo study with its manifest edited (``edit`` mutates it or returns a new one)."""
    src = zipfile.ZipFile(io.BytesIO(small_study_bytes()))
    manifest = json.loads(src.read("manifest.json"))
    new = edit(manifest)
    text = new if isinstance(new, str | bytes) else json.dumps(manifest if new is None else new)
    members = {i.filename: src.read(i.filename) for i in src.infolist()}
    members["manifest.json"] = text.encode() if isinstance(text, str) else text
    members.update(extra or {})
    return zip_of(members)


def _study_member(archive: bytes) -> zipfile.ZipInfo:
    """The largest member of ``archive`` (the one a cut or a flipped byte lands in)."""
    return max(zipfile.ZipFile(io.BytesIO(archive)).infolist(), key=lambda i: i.compress_size)


def _cut_member(archive: bytes) -> bytes:
    """``archive`` rebuilt with its largest member's compressed data cut in half."""
    src = zipfile.ZipFile(io.BytesIO(archive))
    big = _study_member(archive).filename
    members = []
    for info in src.infolist():
        raw = src.read(info.filename)
        c = zlib.compressobj(1, zlib.DEFLATED, -15)
        packed = c.compress(raw) + c.flush()
        if info.filename == big:
            packed = packed[: len(packed) // 2]
        members.append((info.filename, zipfile.ZIP_DEFLATED, packed, zlib.crc32(raw), len(raw), 0))
    return raw_zip(members)


def _wrong_crc(archive: bytes) -> bytes:
    """``archive`` with its largest member's CRC-32 changed in both headers (data intact)."""
    info = _study_member(archive)
    data = bytearray(archive)
    struct.pack_into("<L", data, info.header_offset + 14, info.CRC ^ 0xDEADBEEF)
    pos = 0
    while (pos := data.find(b"PK\x01\x02", pos)) >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        if bytes(data[pos + 46 : pos + 46 + n]) == info.filename.encode():
            struct.pack_into("<L", data, pos + 16, info.CRC ^ 0xDEADBEEF)
        pos += 4
    return bytes(data)


def _without_directory(archive: bytes) -> bytes:
    """``archive`` cut where its central directory begins (its members intact)."""
    end = archive.rfind(b"PK\x05\x06")
    return archive[: struct.unpack_from("<L", archive, end + 16)[0]]


def _zeroed_directory(archive: bytes) -> bytes:
    """``archive`` with its central directory overwritten by zeros (its end record kept)."""
    end = archive.rfind(b"PK\x05\x06")
    start = struct.unpack_from("<L", archive, end + 16)[0]
    return archive[:start] + b"\0" * (end - start) + archive[end:]


DAMAGED_STUDIES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    # name: (edit of a good .vxm, what the message says after "damaged or truncated study file: ")
    "cut-in-half": (lambda z: z[: len(z) // 2], r"directory at its end is missing"),
    "last-byte-missing": (lambda z: z[:-1], r"directory at its end is missing"),
    "central-directory-missing": (_without_directory, r"directory at its end is missing"),
    "central-directory-zeroed": (_zeroed_directory, r"directory .* broken"),
    "member-cut-short": (_cut_member, r"member 'arrays/\d+\.npy' is corrupt or cut short"),
    "crc-mismatch": (_wrong_crc, r"member 'arrays/\d+\.npy' is corrupt .*CRC"),
}
"""Study files cut short or corrupt, each with the end of its refusal."""


# ---------------------------------------------------------------- audio


def wav_bytes(rate: int = 16000, seconds: float = 1.0, channels: int = 1) -> bytes:
    n = int(rate * seconds)
    t = np.arange(n) / max(rate, 1)
    wave = 0.3 * np.sin(2 * np.pi * 220 * t)
    buf = io.BytesIO()
    sf.write(buf, np.repeat(wave[:, None], channels, axis=1), max(rate, 1), format="WAV")
    return buf.getvalue()


def wav_with_rate(rate: int, seconds: float = 1.0, *, frames: int | None = None) -> bytes:
    """A valid 16 kHz WAV whose header then claims sample rate ``rate``."""
    data = bytearray(wav_bytes(16000, seconds) if frames is None else b"")
    if frames is not None:  # a 16-bit PCM header declaring `frames` frames, no data
        data = bytearray(
            b"RIFF"
            + struct.pack("<L", 36 + 2 * frames)
            + b"WAVEfmt "
            + struct.pack("<LHHLLHH", 16, 1, 1, 16000, 32000, 2, 16)
            + b"data"
            + struct.pack("<L", 2 * frames)
            + b"\0" * 64
        )
    struct.pack_into("<L", data, 24, rate)  # fmt chunk: sample rate
    struct.pack_into("<L", data, 28, rate * 2)  # byte rate
    return bytes(data)


# ---------------------------------------------------------------- HDF5 files h5py fails on


def _h5(fill: Callable[..., None]) -> bytes:
    """An HDF5 file in memory, written by ``fill(f, h5py)``."""
    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        fill(f, h5py)
    return buf.getvalue()


def _h5_loop(f, h5py) -> None:
    f["a"] = h5py.SoftLink("/b")
    f["b"] = h5py.SoftLink("/a")
    f.create_dataset("u1", data=[1.0, 2.0])


def _h5_self_loop(f, h5py) -> None:
    f["a"] = h5py.SoftLink("/a")


def _h5_soft_to_external(f, h5py) -> None:
    f["e"] = h5py.ExternalLink("/etc/hostname", "/x")
    f["s"] = h5py.SoftLink("/e")  # listed links are checked before any is followed


def _h5_chunked(f, h5py) -> None:
    rng = np.random.default_rng(0)
    f.create_dataset("embeddings", data=rng.random((100, 50)), chunks=(10, 50), compression="gzip")
    f.create_dataset("utt_ids", data=np.array([f"u{i}".encode() for i in range(100)]))


def _h5_cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _h5_flipped(data: bytes) -> bytes:
    """``data`` with bytes flipped in its compressed chunks (a corrupt disk or copy)."""
    out = bytearray(data)
    for i in range(3000, 6000, 7):
        out[i] ^= 0xFF
    return bytes(out)


def _h5_time(f, h5py) -> None:  # an HDF5 time datatype: no NumPy equivalent
    f.create_dataset("u2", data=np.ones(4))
    h5py.h5d.create(f.id, b"u1", h5py.h5t.UNIX_D32LE, h5py.h5s.create_simple((4,)))


def _h5_compound(f, h5py) -> None:
    f.create_dataset("u1", data=np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]))


def _h5_null(f, h5py) -> None:
    f.create_dataset("u1", data=h5py.Empty("f8"))


BROKEN_HDF5: dict[str, tuple[Callable[[], bytes], str]] = {
    "soft-link-loop": (lambda: _h5(_h5_loop), r"the soft link 'a' -> '/b' loops"),
    "soft-link-to-itself": (lambda: _h5(_h5_self_loop), r"the soft link 'a' -> '/a' loops"),
    "soft-link-to-an-external-link": (lambda: _h5(_h5_soft_to_external), r"'e' is an external"),
    "cut-in-half": (
        lambda: _h5_cut(_h5(_h5_chunked)),
        r"cannot be opened as HDF5 .*truncated file.*copy it whole again",
    ),
    "corrupt-chunks": (
        lambda: _h5_flipped(_h5(_h5_chunked)),
        r"(its data cannot be read|cannot be opened as HDF5) \(",
    ),
    "signature-then-junk": (lambda: b"\x89HDF\r\n\x1a\n" + b"\xff" * 5000, r"cannot be opened"),
    "time-datatype": (lambda: _h5(_h5_time), r"dataset 'u1' has an unsupported datatype"),
    "compound-datatype": (
        lambda: _h5(_h5_compound),
        r"no numeric dataset \('u1' holds a compound type \(a, b\)\)",
    ),
    "null-dataspace": (lambda: _h5(_h5_null), r"dataset 'u1' has a null dataspace"),
}
"""HDF5 files h5py fails on: builder, and the message after "damaged or unsupported HDF5 file: "."""


def refused(fn, *args, match: str, **kwargs) -> str:
    """Assert ``fn`` raises one VoxMetricsInputError whose message matches ``match``."""
    with pytest.raises(VoxMetricsInputError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "Traceback" not in message
    assert re.search(match, message, flags=re.S), message
    return message


BAD_NPY = {
    "enormous-1d": (npy_header((10**12,)), r"declares shape \(1000000000000,\).*max_array_bytes"),
    "enormous-2d": (npy_header((10**6, 10**6)), r"max_array_bytes"),
    "overflowing-shape": (npy_header((2**62, 2**62)), r"max_array_bytes"),
    "enormous-text": (npy_header((10**8,), "<U1000"), r"max_array_bytes"),
    "negative-shape": (
        raw_npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-5,), }"),
        r"negative shape|not a valid NPY",
    ),
    "object-dtype": (npy_header((2,), "|O"), r"Python object array; pickled arrays are refused"),
    "garbage-header": (raw_npy_header("{'descr': nonsense"), r"not a valid NPY"),
    "shape-not-tuple": (
        raw_npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': 5, }"),
        r"not a valid NPY",
    ),
    "fortran-not-bool": (
        raw_npy_header("{'descr': '<f8', 'fortran_order': 3, 'shape': (2,), }"),
        r"not a valid NPY",
    ),
    "unknown-version": (
        raw_npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", b"\x09\x00"),
        r"not a valid NPY",
    ),
    "truncated-data": (npy_header((100,)) + b"\0" * 80, r"truncated"),
    "extra-data": (npy_header((2,)) + b"\0" * 64, r"longer than its header|more data"),
    "header-only": (npy_header((10,)), r"truncated"),
    "magic-only": (b"\x93NUMPY", r"not a valid NPY"),
    "huge-header-length": (b"\x93NUMPY\x01\x00\xff\xff" + b" " * 100, r"not a valid NPY"),
}


# Kaldi score files cut short: a complete grid to cut.
GRID_TRIALS, GRID_ENROLLED = 6, 8
GRID_SPEAKERS = [f"s{j}" for j in range(GRID_ENROLLED)]


def kaldi_grid(trial_major: bool = True) -> tuple[list[str], list[str]]:
    """Kaldi score and key lines of a complete 6 x 8 grid (enrolled-major as Kaldi writes).

    Trial ``t{i}`` is spoken by ``s{i % 8}``; mated scores sit 3 above the others.
    """
    rng = np.random.default_rng(7)
    pairs = (
        [(i, e) for i in range(GRID_TRIALS) for e in GRID_SPEAKERS]
        if trial_major
        else [(i, e) for e in GRID_SPEAKERS for i in range(GRID_TRIALS)]
    )
    scores, key = [], []
    for i, e in pairs:
        own = GRID_SPEAKERS[i % GRID_ENROLLED] == e
        scores.append(f"{e} t{i} {rng.normal() + 3 * own:.4f}\n")
        key.append(f"{e} t{i} {'target' if own else 'nontarget'}\n")
    return scores, key
