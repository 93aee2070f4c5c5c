"""Hostile-input suite: malformed, degenerate and malicious inputs through every reader and command.

Every case is generated here and asserts the exact class of outcome: one
:class:`VoxMetricsInputError` whose message names the problem (and, for a limit, the limit), or
the right numbers. Decompression bombs run in a child process capped at 2 GiB of address space
(``RLIMIT_AS``) and 60 s, so a reader that trusted a bomb would fail with MemoryError there.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    MiB,
    compressed_bomb,
    deflate_bomb,
    npy_bytes,
    npy_header,
    parquet_bytes,
    raw_npy_header,
    small_study_bytes,
    tampered_study,
    wav_bytes,
    wav_with_rate,
    with_declared_size,
    zip_of,
)

from voxmetrics.cli import fail_on_holds, main
from voxmetrics.data.predictions import join_predictions
from voxmetrics.data.readers import read_embeddings, read_scores
from voxmetrics.data.studyfile import load_study, study_from_bytes
from voxmetrics.embeddings.audio import decode_audio, extract_zip, read_manifest
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import Limits, use_limits
from voxmetrics.metrics.bootstrap import lid_bootstrap, speaker_bootstrap
from voxmetrics.metrics.sbls import builtin_attacker, sbls
from voxmetrics.metrics.similarity import similarity_matrix
from voxmetrics.report.study import build_study_report

SLOW_LIMIT_S = 60

META = b"utt_id,speaker,role,split\n" + b"".join(
    f"u{i},s{i % 3},{'enrol' if i < 3 else 'trial'},eval\n".encode() for i in range(6)
)


def refused(fn, *args, match: str, **kwargs) -> str:
    """Assert ``fn`` raises one VoxMetricsInputError whose message matches ``match``."""
    with pytest.raises(VoxMetricsInputError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "Traceback" not in message
    import re

    assert re.search(match, message, flags=re.S), message
    return message


# ============================================================ NPY headers that lie (in-process)


def _npz(**arrays: bytes) -> bytes:
    return zip_of({f"{k}.npy": v for k, v in arrays.items()}, zipfile.ZIP_STORED)


def _score_npz(scores: bytes) -> bytes:
    return _npz(
        scores=scores,
        trial_ids=npy_bytes(np.array(["t1", "t2"])),
        trial_speakers=npy_bytes(np.array(["a", "b"])),
        enrol_speakers=npy_bytes(np.array(["a", "b"])),
    )


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


@pytest.mark.parametrize("case", list(BAD_NPY), ids=list(BAD_NPY))
def test_npy_embeddings_with_a_lying_header_are_refused(case):
    data, match = BAD_NPY[case]
    refused(read_embeddings, data, metadata=META, name="emb.npy", match=r"emb\.npy.*" + match)


@pytest.mark.parametrize("case", list(BAD_NPY), ids=list(BAD_NPY))
def test_npz_scores_with_a_lying_array_header_are_refused(case):
    data, match = BAD_NPY[case]
    refused(read_scores, _score_npz(data), name="s.npz", match=r"s\.npz.*" + match)


def test_fortran_order_and_big_endian_arrays_still_read_right():
    a = np.asfortranarray(np.array([[0.9, 0.1], [0.2, 0.8]], dtype=">f8"))
    sm = read_scores(_score_npz(npy_bytes(a)), name="s.npz")
    assert sm.scores.tolist() == [[0.9, 0.1], [0.2, 0.8]]


def test_structured_dtype_is_refused_as_not_numbers():
    a = np.zeros(2, dtype=[("x", "<f8"), ("y", "<i4")])
    refused(read_scores, _score_npz(npy_bytes(a)), name="s.npz", match=r"must hold numbers")


# ============================================================ archives: structure (in-process)


ARCHIVE_CASES = {
    "truncated": (lambda z: z[: len(z) // 2], r"not a (readable )?zip|cannot be opened|damaged"),
    "central-directory-garbage": (
        lambda z: z[:-22] + b"PK\x05\x06" + b"\xff" * 18,
        r"not a (readable )?zip|cannot be opened|damaged|corrupt",
    ),
    "crc-flipped": (lambda z: _flip_data_byte(z), r"corrupt|damaged|not a valid NPY"),
    "size-understated": (
        lambda z: with_declared_size(z, _first_member(z), 10),
        r"corrupt|damaged|truncated|not a valid",
    ),
}


def _first_member(z: bytes) -> str:
    return zipfile.ZipFile(io.BytesIO(z)).namelist()[0]


def _flip_data_byte(z: bytes) -> bytes:
    data = bytearray(z)
    info = zipfile.ZipFile(io.BytesIO(z)).infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + 140
    data[start] ^= 0xFF
    return bytes(data)


def _containers() -> dict[str, tuple[bytes, object]]:
    scores = npy_bytes(np.array([[0.9, 0.1], [0.2, 0.8]]))
    npz = zip_of(
        {
            "scores.npy": scores,
            "trial_ids.npy": npy_bytes(np.array(["t1", "t2"])),
            "trial_speakers.npy": npy_bytes(np.array(["a", "b"])),
            "enrol_speakers.npy": npy_bytes(np.array(["a", "b"])),
        }
    )
    return {
        "npz": (npz, lambda d: read_scores(d, name="x.npz")),
        "vxm": (small_study_bytes(), lambda d: study_from_bytes(d, name="x.vxm")),
        "audio-zip": (
            zip_of({"a.wav": wav_bytes(seconds=0.5)}),
            lambda d: extract_zip(d, _TMP[0], name="x.zip"),
        ),
    }


_TMP: list[Path] = []


@pytest.fixture(autouse=True)
def _tmp_dest(tmp_path):
    _TMP[:] = [tmp_path / "out"]
    yield


@pytest.mark.parametrize("container", ["npz", "vxm", "audio-zip"])
@pytest.mark.parametrize("case", list(ARCHIVE_CASES))
def test_damaged_archives_get_one_message(container, case):
    good, read = _containers()[container]
    edit, match = ARCHIVE_CASES[case]
    refused(read, edit(good), match=r"x\.(npz|vxm|zip).*(" + match + ")")


@pytest.mark.parametrize("container", ["npz", "vxm", "audio-zip"])
@pytest.mark.parametrize("member", ["../evil.npy", "/abs/evil.npy", "C:/evil.npy", "a/../../e.npy"])
def test_members_escaping_the_archive_are_refused(container, member):
    good, read = _containers()[container]
    src = zipfile.ZipFile(io.BytesIO(good))
    members = {i.filename: src.read(i.filename) for i in src.infolist()}
    members[member] = npy_bytes(np.zeros(2))
    message = refused(read, zip_of(members), match=r"outside|not a recognised|unsafe")
    assert not (Path(_TMP[0]).parent / "evil.npy").exists()
    assert member in message or "zip archive that is not an NPZ" in message


def test_zip_members_never_land_outside_the_output_folder(tmp_path):
    dest = tmp_path / "dest"
    extract_zip(zip_of({"sub/a.wav": b"x", "b.wav": b"y"}), dest)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["dest/b.wav", "dest/sub/a.wav"]


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


# ============================================================ bombs, under a 2 GiB memory cap

BOMB_RUNNER = textwrap.dedent(
    """
    import json, resource, sys, tempfile
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))
    from voxmetrics.data.readers import read_embeddings, read_scores
    from voxmetrics.data.studyfile import load_study
    from voxmetrics.embeddings.audio import decode_audio, extract_zip
    from voxmetrics.errors import VoxMetricsInputError
    cases = json.loads(sys.argv[1])
    out = {}
    for case_id, kind, path, meta in cases:
        try:
            if kind == "scores":
                read_scores(path)
            elif kind == "embeddings":
                read_embeddings(path, metadata=meta)
            elif kind == "study":
                load_study(path)
            elif kind == "zip":
                with tempfile.TemporaryDirectory() as tmp:
                    extract_zip(path, tmp)
            elif kind == "audio":
                decode_audio(path)
            out[case_id] = ["ok", ""]
        except VoxMetricsInputError as exc:
            out[case_id] = ["error", str(exc)]
        except BaseException as exc:  # MemoryError: a reader trusted the bomb
            out[case_id] = ["crash", f"{type(exc).__name__}: {exc}"]
    print(json.dumps(out))
    """
)

BZ2, LZMA, DEFLATE = zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, zipfile.ZIP_DEFLATED


def _bomb_vxm(bomb: bytes, name: str = "arrays/0.npy") -> bytes:
    """The small study whose member ``name`` is replaced by the (raw) bomb member."""
    src = zipfile.ZipFile(io.BytesIO(small_study_bytes()))
    bomb_zf = zipfile.ZipFile(io.BytesIO(bomb))
    info = bomb_zf.infolist()[0]
    raw_start = info.header_offset + 30 + len(info.filename.encode())
    raw = bomb[raw_start : raw_start + info.compress_size]
    from hostile_inputs import raw_zip

    members = []
    for i in src.infolist():
        if i.filename == name:
            members.append((name, info.compress_type, raw, info.CRC, info.file_size, 0))
        else:
            data = src.read(i.filename)
            members.append(
                (
                    i.filename,
                    zipfile.ZIP_STORED,
                    data,
                    zipfile.crc32(data) & 0xFFFFFFFF,
                    len(data),
                    len(data),
                )
            )
    return raw_zip(members)


BOMBS = {
    # archive bombs: (kind, builder, expected message)
    "npz-deflate-declares-1.1GB": (
        "scores",
        lambda: deflate_bomb("scores.npy", 1100),
        r"declares 1\.15 GB uncompressed.*max_member_bytes",
    ),
    "npz-deflate-ratio": (
        "scores",
        lambda: deflate_bomb("scores.npy", 900),
        r"more than 100 times its compressed size.*max_ratio",
    ),
    "npz-deflate-lies-small": (
        "scores",
        lambda: deflate_bomb("scores.npy", 900, declare=1000),
        r"corrupt|damaged|truncated",
    ),
    "npz-deflate-lies-zero": (
        "scores",
        lambda: deflate_bomb("scores.npy", 900, declare=0),
        r"corrupt|damaged|not a valid NPY",
    ),
    "npz-bzip2-1KB": ("scores", lambda: compressed_bomb("scores.npy", BZ2), r"max_ratio"),
    "npz-lzma": ("scores", lambda: compressed_bomb("scores.npy", LZMA), r"max_ratio"),
    "emb-npz-deflate-ratio": (
        "embeddings",
        lambda: deflate_bomb("embeddings.npy", 600),
        r"max_ratio",
    ),
    "emb-npz-bzip2": ("embeddings", lambda: compressed_bomb("embeddings.npy", BZ2), r"max_ratio"),
    "vxm-deflate-declares-1.1GB": (
        "study",
        lambda: _bomb_vxm(deflate_bomb("x.npy", 1100)),
        r"above the cap|max_member_bytes",
    ),
    "vxm-deflate-ratio": ("study", lambda: _bomb_vxm(deflate_bomb("x.npy", 900)), r"max_ratio"),
    "vxm-deflate-lies": (
        "study",
        lambda: _bomb_vxm(deflate_bomb("x.npy", 900, declare=500)),
        r"corrupt|damaged",
    ),
    "vxm-bzip2": ("study", lambda: _bomb_vxm(compressed_bomb("x.npy", BZ2)), r"max_ratio"),
    "vxm-manifest-bzip2": (
        "study",
        lambda: _bomb_vxm(compressed_bomb("x", BZ2), "manifest.json"),
        r"above the cap|max_ratio",
    ),
    "zip-deflate-declares-1.1GB": (
        "zip",
        lambda: deflate_bomb("a.wav", 1100, npy=False),
        r"max_member_bytes|over the cap",
    ),
    "zip-deflate-ratio": ("zip", lambda: deflate_bomb("a.wav", 900, npy=False), r"max_ratio"),
    "zip-deflate-lies": (
        "zip",
        lambda: deflate_bomb("a.wav", 900, declare=100, npy=False),
        r"corrupt",
    ),
    "zip-bzip2": ("zip", lambda: compressed_bomb("a.wav", BZ2), r"max_ratio"),
    "zip-lzma": ("zip", lambda: compressed_bomb("a.wav", LZMA), r"max_ratio"),
    # audio whose header makes the decoder or the resampler allocate gigabytes
    "wav-1Hz": ("audio", lambda: wav_with_rate(1), r"sample rate of 1 Hz.*min_sample_rate"),
    "wav-2Hz-long": ("audio", lambda: wav_with_rate(2, seconds=4.0), r"min_sample_rate"),
    "wav-2GHz": ("audio", lambda: wav_with_rate(2_000_000_000), r"max_sample_rate"),
    # a small sparse long CSV that implies a 10^10-cell matrix
    "csv-sparse": ("scores", lambda: _sparse_csv(100_000), r"score cells.*listed.*max_cells"),
    "kaldi-sparse": ("scores", lambda: _sparse_kaldi(100_000), r"score cells|trials"),
}


def _sparse_csv(n: int) -> bytes:
    rows = "".join(f"t{i},e{i},e{i},0.5\n" for i in range(n))
    return ("trial_id,trial_speaker,enrol_speaker,score\n" + rows).encode()


def _sparse_kaldi(n: int) -> bytes:
    return "".join(f"e{i} t{i} 0.5\n" for i in range(n)).encode()


@pytest.fixture(scope="module")
def bomb_outcomes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bombs")
    meta = folder / "meta.csv"
    meta.write_bytes(META)
    cases = []
    for case_id, (kind, build, _) in BOMBS.items():
        path = folder / case_id
        path.write_bytes(build())
        cases.append([case_id, kind, str(path), str(meta)])
    # the kaldi case needs its key; give the scores reader a file it can detect on its own
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    run = subprocess.run(
        [sys.executable, "-c", BOMB_RUNNER, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=SLOW_LIMIT_S * 3,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case_id", list(BOMBS))
def test_bombs_are_refused_within_2_gib(bomb_outcomes, case_id):
    kind, match = bomb_outcomes[case_id][0], BOMBS[case_id][2]
    message = bomb_outcomes[case_id][1]
    assert kind == "error", f"{case_id}: {kind}: {message}"
    import re

    assert re.search(match, message, flags=re.S), message


def test_a_genuine_large_npz_member_is_not_mistaken_for_a_bomb():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(600, 500)).astype(np.float32)  # 1.2 MB of real numbers
    data = zip_of(
        {
            "scores.npy": npy_bytes(scores),
            "trial_ids.npy": npy_bytes(np.array([f"t{i}" for i in range(600)])),
            "trial_speakers.npy": npy_bytes(np.array([f"s{i % 500}" for i in range(600)])),
            "enrol_speakers.npy": npy_bytes(np.array([f"s{i}" for i in range(500)])),
        }
    )
    sm = read_scores(data, name="big.npz")
    assert np.array_equal(sm.scores, scores.astype(np.float64))


def test_ratio_limit_can_be_raised_for_a_genuinely_compressible_member():
    zeros = np.zeros((2000, 1100))  # 17.6 MB of zeros: compresses ~1000 times
    data = zip_of(
        {
            "scores.npy": npy_bytes(zeros),
            "trial_ids.npy": npy_bytes(np.array([f"t{i}" for i in range(2000)])),
            "trial_speakers.npy": npy_bytes(np.array([f"s{i % 1100}" for i in range(2000)])),
            "enrol_speakers.npy": npy_bytes(np.array([f"s{i}" for i in range(1100)])),
        }
    )
    refused(read_scores, data, name="z.npz", match=r"max_ratio=100.*--limit max_ratio=VALUE")
    with use_limits(Limits(max_ratio=1e6)):
        assert read_scores(data, name="z.npz").shape == (2000, 1100)


# ============================================================ text score files

CSV_HEADER = "trial_id,trial_speaker,enrol_speaker,score\n"
GOOD = CSV_HEADER + "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n"

CSV_CASES = {
    "wide-header": (
        (CSV_HEADER.strip() + "," + ",".join(f"c{i}" for i in range(20_000)) + "\n"),
        r"20,004 columns.*max_columns",
    ),
    "nan-score": (GOOD.replace("0.9", "nan"), r"line 2.*score"),
    "inf-score": (GOOD.replace("0.9", "inf"), r"line 2.*(infinite|score)"),
    "overflowing-score": (GOOD.replace("0.9", "1e400"), r"line 2.*(infinite|score)"),
    "text-score": (GOOD.replace("0.9", "high"), r"line 2.*score"),
    "nul-bytes": (GOOD.replace("t1", "t\x001"), r"not a recognised format|binary|NUL|not UTF-8"),
    "utf16": (GOOD.encode("utf-16").decode("latin1"), r"UTF-16|not UTF-8|not a recognised"),
    "header-only": (CSV_HEADER, r"no data rows"),
    "ragged": (GOOD + "t3,c,a\n", r"line 6"),
    "duplicate-pair": (GOOD + "t1,a,b,0.3\n", r"duplicate \(trial, enrolled\) pair"),
    "missing-target-pair": (
        GOOD.rsplit("t2,b,b", 1)[0].replace("t1,a,a,0.9\n", ""),
        r"no mated \(target\) pair is listed",
    ),
    "one-enrolled": (CSV_HEADER + "t1,a,a,0.9\nt2,a,a,0.8\n", r"enrolled|two"),
    "no-enrolled-trial": (CSV_HEADER + "t1,z,a,0.9\nt1,z,b,0.1\n", r"enrolled"),
    "empty-labels": (GOOD.replace("t1,a,a", ",a,a"), r"line 2.*trial_id"),
    "missing-columns": ("a,b,c\n1,2,3\n", r"not a recognised format|lacks|missing"),
    "very-long-line": (CSV_HEADER + "t1,a,a," + "9" * 2_000_000 + "\n", r"score|line 2"),
    "trial-speaker-varies": (GOOD.replace("t1,a,b", "t1,b,b"), r"trial 't1' has trial_speaker"),
    "score-column-twice": (
        CSV_HEADER.replace("score", "score,score")
        + GOOD[len(CSV_HEADER) :].replace("\n", ",0.5\n"),
        r" \(columns 4 and 5\); keep one",  # column 'score' appears twice in s.csv (...)
    ),
}


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_malformed_csv_gets_one_message(case):
    text, match = CSV_CASES[case]
    data = text.encode("latin1") if case == "utf16" else text.encode()
    refused(read_scores, data, name="s.csv", match=r"s\.csv.*" + match)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e200, 1e300])
def test_extreme_but_finite_scores_are_read_exactly(scale):
    text = CSV_HEADER + "".join(
        f"t{i},{s},{e},{v!r}\n"
        for i, s in enumerate("ab")
        for e, v in zip(
            "ab",
            [0.9 * scale, 0.1 * scale] if s == "a" else [0.2 * scale, 0.8 * scale],
            strict=True,
        )
    )
    sm = read_scores(text.encode(), name="s.csv")
    assert sm.scores.tolist() == [[0.9 * scale, 0.1 * scale], [0.2 * scale, 0.8 * scale]]


def test_row_limit_names_the_limit_and_how_to_raise_it():
    with use_limits(Limits(max_rows=3)):
        message = refused(read_scores, GOOD.encode(), name="s.csv", match=r"max_rows=3")
    assert "--limit max_rows=VALUE" in message and "VOXMETRICS_LIMITS" in message
    assert "voxmetrics.toml" in message


def test_cell_limit_applies_to_the_pivoted_matrix():
    with use_limits(Limits(max_cells=3)):
        refused(read_scores, GOOD.encode(), name="s.csv", match=r"2 trials x 2 enrolled.*max_cells")


KALDI_CASES = {
    "text-score": (b"a t1 high\nb t1 0.1\n", r"line 1"),
    "ragged": (b"a t1 0.9\nb t1\n", r"line 2"),
    "nul": (b"a t1 0.9\x00\n", r"not a recognised|binary"),
}


@pytest.mark.parametrize("case", list(KALDI_CASES))
def test_malformed_kaldi_gets_one_message(case):
    data, match = KALDI_CASES[case]
    key = b"a t1 target\nb t1 nontarget\n"
    refused(read_scores, data, trials=key, name="s.scores", match=r"s\.scores.*" + match)


_PQ_NAMES = ["trial_id", "trial_speaker", "enrol_speaker", "score"]
_PQ_COLUMNS = [
    ["t1", "t1", "t2", "t2"],
    ["a", "a", "b", "b"],
    ["a", "b", "a", "b"],
    [0.9, 0.1, 0.2, 0.8],
]
PARQUET_CASES = {
    "score-column-twice": (
        lambda: parquet_bytes([*_PQ_NAMES, "score"], [*_PQ_COLUMNS, _PQ_COLUMNS[3]]),
        r"column 'score' appears twice in s\.parquet \(columns 4 and 5\); keep one",
    ),
    "pandas-metadata-not-json": (
        lambda: parquet_bytes(_PQ_NAMES, _PQ_COLUMNS, {b"pandas": b"{not json"}),
        r"s\.parquet: damaged or unsupported Parquet file",
    ),
    "pandas-metadata-odd-index": (  # pandas raised a TypeError (a traceback) here
        lambda: parquet_bytes(
            _PQ_NAMES,
            _PQ_COLUMNS,
            {b"pandas": b'{"index_columns": [{"kind": "range", "start": "x"}], "columns": []}'},
        ),
        r"s\.parquet: damaged or unsupported Parquet file",
    ),
}


@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_malformed_parquet_gets_one_message(case):
    build, match = PARQUET_CASES[case]
    message = refused(read_scores, build(), name="s.parquet", match=match)
    assert "\n" not in message  # one line: no Arrow internals


def test_parquet_lookalike_is_refused():
    refused(
        read_scores,
        b"PAR1" + b"\0" * 100 + b"PAR1",
        name="s.parquet",
        match=r"s\.parquet.*cannot be read as Parquet",
    )
    refused(read_scores, b"PAR1" + b"\0" * 100, name="s.parquet", match=r"truncated or damaged")


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


# ============================================================ study files: tampered manifests


def _cond(m):
    return m["conditions"][0]


def _drop(d: dict, key: str) -> None:
    del d[key]


MANIFEST_EDITS = {
    "conditions-null": (lambda m: m.update(conditions=None), r"no list of conditions"),
    "conditions-object": (lambda m: m.update(conditions={"a": 1}), r"no list of conditions"),
    "conditions-text": (lambda m: m.update(conditions="x"), r"no list of conditions"),
    "condition-null": (
        lambda m: m["conditions"].__setitem__(0, None),
        r"conditions\[0\] must be an object, not null",
    ),
    "condition-list": (
        lambda m: m["conditions"].__setitem__(0, [1, 2]),
        r"conditions\[0\] must be an object, not a list",
    ),
    "name-null": (lambda m: _cond(m).update(name=None), r"conditions\[0\]\.name must be non-empty"),
    "name-number": (lambda m: _cond(m).update(name=5), r"conditions\[0\]\.name must be non-empty"),
    "name-empty": (lambda m: _cond(m).update(name=" "), r"name must be non-empty"),
    "name-missing": (lambda m: _drop(_cond(m), "name"), r"conditions\[0\]\.name is missing"),
    "eval-null": (lambda m: _cond(m).update(eval=None), r"conditions\[0\]\.eval is missing"),
    "eval-list": (lambda m: _cond(m).update(eval=[]), r"eval must be an object, not a list"),
    "eval-text": (lambda m: _cond(m).update(eval="arrays/0.npy"), r"eval must be an object"),
    "scores-null": (
        lambda m: _cond(m)["eval"].update(scores=None),
        r"eval\.scores must name an array member.*not null",
    ),
    "scores-number": (lambda m: _cond(m)["eval"].update(scores=3), r"not a number"),
    "scores-list": (lambda m: _cond(m)["eval"].update(scores=["arrays/0.npy"]), r"not a list"),
    "scores-climbs-out": (
        lambda m: _cond(m)["eval"].update(scores="../arrays/0.npy"),
        r"must name an array member",
    ),
    "scores-absent-member": (
        lambda m: _cond(m)["eval"].update(scores="arrays/999.npy"),
        r"refers to 'arrays/999\.npy', which is not in the archive",
    ),
    "scores-missing": (lambda m: _drop(_cond(m)["eval"], "scores"), r"eval\.scores is missing"),
    "trial-ids-dict": (lambda m: _cond(m)["eval"].update(trial_ids={}), r"not an object"),
    "attributes-dict": (
        lambda m: _cond(m)["eval"].update(attributes={"sex": "arrays/1.npy"}),
        r"attributes must be a list of \[name, member\] pairs",
    ),
    "attributes-strings": (
        lambda m: _cond(m)["eval"].update(attributes=["sex"]),
        r"attributes\[0\] must be a \[name, member\] pair",
    ),
    "attributes-triple": (
        lambda m: _cond(m)["eval"].update(attributes=[["a", "arrays/1.npy", 3]]),
        r"attributes\[0\] must be a \[name, member\] pair",
    ),
    "attributes-number-name": (
        lambda m: _cond(m)["eval"].update(attributes=[[1, "arrays/1.npy"]]),
        r"attributes\[0\] must be",
    ),
    "attributes-null-member": (
        lambda m: _cond(m)["eval"].update(attributes=[["a", None]]),
        r"attributes\[0\]\[1\] must name an array member",
    ),
    "attributes-duplicate": (
        lambda m: _cond(m)["eval"].update(
            attributes=[["a", "arrays/1.npy"], ["a", "arrays/1.npy"]]
        ),
        r"names the same column twice",
    ),
    "n-excluded-text": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials="3"),
        r"n_excluded_trials must be a whole number",
    ),
    "n-excluded-negative": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=-1),
        r"n_excluded_trials must be a whole number",
    ),
    "n-excluded-bool": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=True),
        r"n_excluded_trials",
    ),
    "n-excluded-float": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=1.5),
        r"n_excluded_trials",
    ),
    "source-number": (lambda m: _cond(m)["eval"].update(source=5), r"eval\.source must be text"),
    "unknown-field": (lambda m: _cond(m)["eval"].update(evil=1), r"unknown field\(s\) evil"),
    "attacker-number": (lambda m: _cond(m).update(attacker=5), r"attacker must be text"),
    "attacker-unknown": (lambda m: _cond(m).update(attacker="godlike"), r"attacker 'godlike'"),
    "description-list": (lambda m: _cond(m).update(description=[1]), r"description must be text"),
    "dev-text": (lambda m: _cond(m).update(dev="x"), r"dev must be an object"),
    "embeddings-text": (lambda m: _cond(m).update(embeddings="x"), r"embeddings must be an object"),
    "embeddings-no-meta": (
        lambda m: _cond(m).update(embeddings={"embeddings": "arrays/0.npy"}),
        r"embeddings\.meta must be a list",
    ),
    "settings-list": (lambda m: m.update(settings=[1]), r"settings must be an object"),
    "settings-bad-value": (
        lambda m: m.update(settings={"bootstrap": "many"}),
        r"setting 'bootstrap' is 'many'",
    ),
    "settings-unknown": (lambda m: m.update(settings={"evil": 1}), r"unknown setting"),
    "version-text": (lambda m: m.update(version="1"), r"version '1' is not supported"),
    "version-bool": (lambda m: m.update(version=True), r"version True is not supported"),
    "version-newer": (lambda m: m.update(version=99), r"Upgrade VoxMetrics"),
    "format-wrong": (lambda m: m.update(format="zip"), r"does not describe a VoxMetrics study"),
    "name-of-study-number": (lambda m: m.update(name=7), r"name must be text"),
    "manifest-array": (lambda m: [m], r"does not describe a VoxMetrics study"),
    "manifest-not-json": (lambda m: "{not json", r"not valid JSON"),
    "manifest-not-utf8": (lambda m: b"\xff\xfe{}", r"not valid JSON"),
    "deeply-nested": (lambda m: "[" * 100_000 + "]" * 100_000, r"nested too deeply"),
    "nested-past-limit": (
        lambda m: m.update(settings={"x": json.loads("[" * 40 + "]" * 40)}),
        r"nested too deeply.*max_json_depth",
    ),
    "duplicate-names": (
        lambda m: m["conditions"].append(json.loads(json.dumps(_cond(m)))),
        r"same name",
    ),
    "thousand-conditions": (
        lambda m: m.update(conditions=[_cond(m)] * 1000),
        r"1,000 conditions.*max_conditions",
    ),
    "scores-are-text": (
        lambda m: _cond(m)["eval"].update(scores=_cond(m)["eval"]["trial_ids"]),
        r"scores \(arrays/\d+\.npy\) has dtype <U\d+, expected floating-point",
    ),
    "trial-ids-are-numbers": (
        lambda m: _cond(m)["eval"].update(trial_ids=_cond(m)["eval"]["scores"]),
        r"trial ids .* expected text",
    ),
    "enrolled-mismatch": (
        lambda m: _cond(m)["eval"].update(enrol_speakers=_cond(m)["eval"]["trial_ids"]),
        r"eval|enrol|shape|length",
    ),
}


@pytest.mark.parametrize("case", list(MANIFEST_EDITS))
def test_tampered_manifest_gets_one_message(case):
    edit, match = MANIFEST_EDITS[case]
    refused(study_from_bytes, tampered_study(edit), name="t.vxm", match=r"t\.vxm.*" + match)


def test_every_schema_problem_is_listed_in_one_message():
    def edit(m):
        _cond(m)["eval"].update(scores=None, source=3)
        _cond(m).update(attacker=1)

    message = refused(study_from_bytes, tampered_study(edit), name="t.vxm", match=r"schema")
    assert message.count("must") == 3


def test_oversized_manifest_is_refused():
    refused(
        study_from_bytes,
        tampered_study(lambda m: " " * (17 * MiB)),
        name="t.vxm",
        match=r"manifest\.json.*above the cap",
    )


def test_study_settings_asking_for_1e9_replicates_are_refused_before_work():
    study = study_from_bytes(tampered_study(lambda m: m.update(settings={"bootstrap": 10**9})))
    refused(build_study_report, study, match=r"1,000,000,000 replicates.*max_replicates")


def test_conditions_limit_can_be_raised():
    data = tampered_study(
        lambda m: m.update(conditions=[{**_cond(m), "name": f"c{i}"} for i in range(5)])
    )
    with use_limits(Limits(max_conditions=4)):
        refused(study_from_bytes, data, match=r"5 conditions.*max_conditions=4")
    assert len(study_from_bytes(data)) == 5


# ============================================================ audio


AUDIO_CASES = {
    "garbage": (b"RIFF\x00\x00\x00\x00WAVEgarbage", r"not a readable audio file"),
    "empty": (b"", r"not a readable audio file"),
    "text": (b"hello, this is not audio\n" * 10, r"not a readable audio file"),
    "too-short": (wav_bytes(seconds=0.05), r"too short"),
    "silent": (None, r"silent"),
    "rate-zero": (None, r"sample rate|not a readable"),
    "rate-500": (wav_with_rate(500), r"500 Hz.*min_sample_rate"),
    "rate-10MHz": (wav_with_rate(10_000_000), r"10,000,000 Hz.*max_sample_rate"),
}


def _silent() -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros(16000), 16000, format="WAV")
    return buf.getvalue()


@pytest.mark.parametrize("case", list(AUDIO_CASES))
def test_hostile_audio_gets_one_message(case):
    data, match = AUDIO_CASES[case]
    if case == "silent":
        data = _silent()
    if case == "rate-zero":
        data = wav_with_rate(0)
    refused(decode_audio, data, name="a.wav", match=r"a\.wav.*" + match)


def test_audio_longer_than_the_limit_is_refused_before_decoding():
    with use_limits(Limits(max_audio_seconds=0.5)):
        refused(decode_audio, wav_bytes(seconds=1.0), name="a.wav", match=r"max_audio_seconds=0\.5")


def test_audio_with_many_channels_counts_its_decoded_size():
    with use_limits(Limits(max_audio_bytes=100_000)):
        refused(
            decode_audio,
            wav_bytes(seconds=0.5, channels=8),
            name="a.wav",
            match=r"8 channels.*max_audio_bytes",
        )


def test_ordinary_audio_at_odd_rates_still_decodes():
    assert decode_audio(wav_bytes(rate=8000, seconds=0.5), sample_rate=16000).shape == (8000,)
    assert decode_audio(wav_bytes(rate=44100, seconds=0.5), sample_rate=16000).shape == (8000,)


@pytest.mark.parametrize("path", ["dir", "/dev/null", "missing.wav"])
def test_audio_paths_that_are_not_files(tmp_path, path):
    target = tmp_path if path == "dir" else Path(path) if path.startswith("/") else tmp_path / path
    refused(decode_audio, target, match=r"directory|device|no such file")


# ============================================================ command line: odd paths, limits


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "all"]) == 0
    return out


def _run(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


ODD_PATHS = ["DIR", "/dev/null", "/dev/zero", "MISSING"]


def _commands(demo_dir, odd):
    emb, meta = str(demo_dir / "plain_embeddings.npz"), str(demo_dir / "plain_embeddings.csv")
    return {
        "evaluate": ["evaluate", odd],
        "evaluate-dev": ["evaluate", str(demo_dir / "plain_eval.csv"), "--dev", odd],
        "evaluate-embeddings": ["evaluate", "--embeddings", odd, "--metadata", meta],
        "similarity": ["similarity", "--original", odd, "--anonymised", emb, "--metadata", meta],
        "legal": ["legal", "--embeddings", odd, "--metadata", meta],
        "sbls-predictions": ["sbls", "--metadata", meta, "--predictions", odd],
        "sbls-metadata": ["sbls", "--metadata", odd, "--embeddings", emb],
        "report": ["report", odd, "--json", str(demo_dir / "r.json")],
        "extract": [
            "extract",
            "--manifest",
            odd,
            "--audio-root",
            str(demo_dir),
            "--out",
            str(demo_dir / "x.npz"),
        ],
    }


@pytest.mark.parametrize("odd", ODD_PATHS)
@pytest.mark.parametrize(
    "command",
    [
        "evaluate",
        "evaluate-dev",
        "evaluate-embeddings",
        "similarity",
        "legal",
        "sbls-predictions",
        "sbls-metadata",
        "report",
        "extract",
    ],
)
def test_commands_name_directories_and_devices(demo_dir, tmp_path, capsys, command, odd):
    path = {"DIR": str(tmp_path), "MISSING": str(tmp_path / "nope.csv")}.get(odd, odd)
    status, _, err = _run(_commands(demo_dir, path)[command], capsys)
    assert status == 2, err
    expected = {"DIR": "is a directory", "MISSING": "no such file"}.get(odd, "is a device")
    assert expected in err and path in err, err
    assert len(err.strip().splitlines()) == 1


def test_bootstrap_of_1e9_replicates_is_refused_at_once(demo_dir, capsys):
    status, out, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.csv"), "--bootstrap", "1000000000"], capsys
    )
    assert status == 2 and out == ""
    assert "1,000,000,000 replicates, over the limit max_replicates=20,000" in err


def test_limit_option_raises_a_limit(demo_dir, capsys):
    argv = ["evaluate", str(demo_dir / "plain_eval.csv"), "--limit", "max_rows=10"]
    status, _, err = _run(argv, capsys)
    assert status == 2 and "max_rows=10" in err
    status, out, err = _run([*argv, "--limit", "max_rows=1e9"], capsys)
    assert status == 0 and json.loads(out)["n_trials"] > 0


def test_limit_option_before_the_command(demo_dir, capsys):
    status, _, err = _run(
        ["--limit", "max_rows=10", "evaluate", str(demo_dir / "plain_eval.csv")], capsys
    )
    assert status == 2 and "max_rows=10" in err


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("max_rows", r"write NAME=VALUE"),
        ("nope=1", r"unknown limit 'nope'"),
        ("max_rows=-1", r"positive number"),
        ("max_rows=abc", r"positive number"),
        ("max_rows=1e400", r"positive number"),
        ("max_member_bytes=2XB", r"positive number"),
        ("max_rows=0", r"positive number"),
    ],
)
def test_bad_limit_settings_get_one_message(demo_dir, capsys, text, match):
    status, _, err = _run(["evaluate", str(demo_dir / "plain_eval.csv"), "--limit", text], capsys)
    assert status == 2
    import re

    assert re.search(match, err), err


FAIL_ON = {
    "too-long": ("eer < 0.5 or " * 300 + "eer < 0.5", r"characters long, over the limit"),
    "deep-not": ("not " * 450 + "eer < 1", r"nested more than 50 levels"),
    "deep-parens": ("(" * 900 + "eer" + ")" * 900, r"not a valid expression|nested"),
    "deep-minus": ("-" * 1000 + "eer < 1", r"nested more than 50 levels"),
    "call": ("__import__('os').system('true')", r"only metric names|unsupported"),
    "lambda": ("(lambda: 1)()", r"unsupported|only metric names"),
    "dunder": ("eer.__class__ > 1", r"unknown metric"),
    # a quoted key is a plain lookup (dcf["0.01"]); any computed index is refused
    "subscript": ("lid[eer] > 1", r"unsupported"),
    "subscript-call": ("lid[__import__('os')] > 1", r"unsupported"),
    "subscript-slice": ("lid['a':'b'] > 1", r"unsupported"),
    "subscript-dunder": ("lid['__class__'] > 1", r"unknown metric"),
    "syntax": ("eer <", r"not a valid expression"),
    # type errors: an operator applied to what it cannot take, named with its kind
    "negated-text": ('-"x" > 0', r"cannot apply - to 'x' \(text\)"),
    "negated-block": ("-lid > 0", r"cannot apply - to lid \(a block of metrics\)"),
    "negated-bool": ("-(eer < 1) < 0", r"cannot apply - to eer < 1 \(true / false\)"),
    "not-block": ("not lid", r"cannot apply 'not' to lid \(a block of metrics\)"),
    "or-number": ("eer or eer < 1", r"cannot apply 'or' to eer \(a number\)"),
    "text-vs-number": ("'a' < eer", r"cannot compare 'a' \(text\) with eer \(a number\)"),
}


@pytest.mark.parametrize("case", list(FAIL_ON))
def test_hostile_fail_on_expressions_are_refused(case):
    expr, match = FAIL_ON[case]
    refused(fail_on_holds, expr, {"eer": 0.3, "lid": {"alid": 1.0}}, match=match)


def test_long_flat_fail_on_expressions_still_work():
    assert fail_on_holds("eer < 1 and " * 150 + "eer < 1", {"eer": 0.3}) is True


def test_hostile_fail_on_is_refused_before_any_work(demo_dir, capsys):
    status, out, err = _run(
        ["evaluate", str(demo_dir / "plain_eval.csv"), "--fail-on", "not " * 450 + "eer < 1"],
        capsys,
    )
    assert status == 2 and out == "" and "nested more than 50 levels" in err


# ============================================================ pathological sizes in the library


def test_bootstrap_replicates_are_capped_before_allocation():
    refused(lid_bootstrap, [1.0, -1.0], ["a", "b"], n_boot=10**9, match=r"max_replicates")
    refused(
        speaker_bootstrap, lambda idx: {"x": 0.0}, ["a", "b"], n_boot=10**9, match=r"max_replicates"
    )


def _labels(n_classes: int, n: int = 4000) -> np.ndarray:
    return np.array([f"c{i % n_classes}" for i in range(n)])


def test_attribute_with_thousands_of_classes_is_refused_before_training():
    x = np.random.default_rng(0).normal(size=(4000, 8))
    refused(
        builtin_attacker,
        x,
        {"accent": _labels(3000)},
        x,
        match=r"attribute 'accent': 3,000 classes.*max_classes",
    )


def test_sbls_with_thousands_of_classes_is_refused():
    from voxmetrics.data.predictions import AttributePrediction

    y = _labels(3000)
    refused(
        sbls,
        {"a": y},
        {"a": AttributePrediction(classes=tuple(sorted(set(y))), predicted=y)},
        match=r"3,000 classes.*max_classes",
    )


def test_similarity_dimension_mismatch_is_a_message():
    a, b = np.ones((4, 3)), np.ones((4, 5))
    spk, utt = ["a", "a", "b", "b"], ["1", "2", "3", "4"]
    refused(
        similarity_matrix, a, spk, utt, b, spk, utt, match=r"dimension mismatch.*\(4, 3\).*\(4, 5\)"
    )


def test_similarity_pairs_are_capped():
    a = np.random.default_rng(0).normal(size=(40, 3))
    spk, utt = [f"s{i % 4}" for i in range(40)], [str(i) for i in range(40)]
    with use_limits(Limits(max_cells=1000)):
        refused(similarity_matrix, a, spk, utt, a, spk, utt, match=r"1,600 utterance pairs")


# ============================================================ SBLS predictions


PRED_META_IDS = np.array([f"u{i}" for i in range(4)])

PREDICTION_CASES = {
    "hard-missing-prediction": (
        "utt_id,attribute,predicted\nu0,sex,F\nu1,sex,\nu2,sex,M\nu3,sex,F\n",
        r"utterance 'u1' has an empty 'sex' prediction",
    ),
    "soft-missing-class": ("utt_id,attribute,class,score\nu0,sex,,0.5\n", r"score without a class"),
    "blank-utt": ("utt_id,attribute,predicted\n,sex,F\n", r"data row 1 has an empty utt_id"),
    "blank-attribute": ("utt_id,attribute,predicted\nu0,,F\n", r"empty attribute"),
    "nan-score": ("utt_id,attribute,class,score\nu0,sex,F,nan\n", r"non-numeric or infinite"),
    "unknown-utt": ("utt_id,attribute,predicted\nzz,sex,F\n", r"not in the metadata"),
    "missing-utt": ("utt_id,attribute,predicted\nu0,sex,F\n", r"3 utterance\(s\) have no"),
    "no-columns": ("a,b\n1,2\n", r"needs columns utt_id, attribute"),
}


@pytest.mark.parametrize("case", list(PREDICTION_CASES))
def test_bad_predictions_get_one_message(case):
    text, match = PREDICTION_CASES[case]
    refused(
        join_predictions,
        text.encode(),
        PRED_META_IDS,
        ["sex"],
        name="p.csv",
        match=r"p\.csv.*" + match,
    )


def test_manifest_of_audio_that_is_a_directory(tmp_path):
    refused(read_manifest, tmp_path, match=r"is a directory")


def test_frames_are_kept_exact_for_a_valid_pivot():
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["b", "a", "a", "b"],
            "score": [0.1, 0.9, 0.2, 0.8],
        }
    )
    sm = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    assert sm.enrol_speakers.tolist() == ["b", "a"]
    assert sm.scores.tolist() == [[0.1, 0.9], [0.8, 0.2]]


def test_valid_study_still_loads():
    study = study_from_bytes(small_study_bytes())
    assert len(study) == 5
    assert load_study(io.BytesIO(small_study_bytes())).names == study.names


def test_parquet_is_refused_by_its_footer_before_decompressing():
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["a", "b", "a", "b"],
            "score": [0.9, 0.1, 0.2, 0.8],
        }
    )
    data = df.to_parquet()
    assert read_scores(data, name="s.parquet").shape == (2, 2)
    with use_limits(Limits(max_rows=3)):
        refused(read_scores, data, name="s.parquet", match=r"4 rows.*max_rows=3")
    with use_limits(Limits(max_file_bytes=10)):
        refused(read_scores, data, name="s.parquet", match=r"max_file_bytes=10")
    wide = pd.DataFrame({f"c{i}": [0.0] for i in range(10_001)}).to_parquet()
    refused(read_scores, wide, name="w.parquet", match=r"10,001 columns.*max_columns")


def test_sbls_attacker_dimension_mismatch_is_a_message():
    x = np.random.default_rng(0).normal(size=(40, 6))
    refused(
        builtin_attacker,
        x,
        {"sex": _labels(2, 40)},
        x[:, :4],
        match=r"dimension mismatch.*\(40, 6\).*\(40, 4\)",
    )


def test_sparse_soft_predictions_are_refused_before_the_pivot():
    rows = "".join(f"u{i % 4},sex,class{i},0.5\n" for i in range(5000))
    refused(
        join_predictions,
        ("utt_id,attribute,class,score\n" + rows).encode(),
        PRED_META_IDS,
        ["sex"],
        name="p.csv",
        match=r"p\.csv: attribute 'sex': 5,000 classes.*max_classes",
    )


def test_bootstrap_counts_matrix_is_capped():
    speakers = [f"s{i}" for i in range(1000)]
    with use_limits(Limits(max_cells=10**6)):
        refused(
            lid_bootstrap, np.zeros(1000), speakers, n_boot=2000, match=r"2,000 x 1,000.*max_cells"
        )


def test_embedding_score_matrix_is_capped_before_allocation():
    from voxmetrics.synth import demo_study

    es = demo_study(n_speakers=6).conditions[0].embeddings
    with use_limits(Limits(max_cells=10)):
        refused(es.score_matrix, "eval", match=r"\(48 trials x 6 enrolled\).*max_cells=10")


def _flac(signal: np.ndarray) -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, signal, 16000, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def test_an_hour_of_silence_in_a_tiny_flac_is_refused_as_a_bomb():
    data = _flac(np.zeros(16000 * 3600, dtype=np.int16))  # ~0.2 MB for 0.23 GB of samples
    refused(decode_audio, data, name="s.flac", match=r"more than 100 times its size.*max_ratio")


def test_ordinary_flac_speech_length_audio_is_not_mistaken_for_a_bomb():
    rng = np.random.default_rng(0)
    t = np.arange(16000 * 20) / 16000
    signal = 0.3 * np.sin(2 * np.pi * 180 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    signal = signal + 0.01 * rng.normal(size=t.size)
    assert decode_audio(_flac(signal), sample_rate=16000).shape == (t.size,)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "/dev/null"], "exists and is not a folder"),
        (["evaluate", "EVAL", "--json", "TMP"], "is a directory; give the path of a file"),
        (["evaluate", "EVAL", "--html", "/dev/null"], "is not a regular file"),
        (["report", "VXM", "--csv", "EVAL"], "exists and is not a folder"),
        (["report", "VXM", "--json", "TMP"], "is a directory"),
        (
            [
                "similarity",
                "--original",
                "EMB",
                "--anonymised",
                "EMB",
                "--metadata",
                "META",
                "--json",
                "TMP",
            ],
            "is a directory",
        ),
        (["legal", "--embeddings", "EMB", "--metadata", "META", "--html", "TMP"], "is a directory"),
        (
            ["legal", "--embeddings", "EMB", "--metadata", "META", "--draws", "1000000000"],
            "over the limit max_replicates",
        ),
    ],
)
def test_unwritable_outputs_are_refused_before_any_work(demo_dir, tmp_path, capsys, argv, message):
    subst = {
        "EVAL": str(demo_dir / "plain_eval.csv"),
        "TMP": str(tmp_path),
        "VXM": str(demo_dir / "demo.vxm"),
        "EMB": str(demo_dir / "plain_embeddings.npz"),
        "META": str(demo_dir / "plain_embeddings.csv"),
    }
    status, out, err = _run([subst.get(a, a) for a in argv], capsys)
    assert status == 2 and out == "" and message in err, err
