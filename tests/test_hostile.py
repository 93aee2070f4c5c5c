"""Hostile-input suite: malformed, degenerate and malicious inputs through every reader and command.

Every case is generated here and asserts the exact class of outcome: one
:class:`VoxMetricsInputError` whose message names the problem (and, for a limit, the limit), or
the right numbers. Decompression bombs run in a child process capped at 2 GiB of address space
(``RLIMIT_AS``) and 60 s, so a reader that trusted a bomb would fail with MemoryError there.

What is here crosses modules: damaged archives of every kind, bombs (bzip2 / LZMA members with
lying sizes, Zarr stores and Dask chunks too), audio, the command line, limits, the library's
pathological sizes. The hostile inputs of one reader are in that reader's tests
(``tests/data/readers/test_<reader>.py``, ``tests/data/test_embedding_files.py``,
``tests/data/test_studyfile.py``, ``tests/data/test_predictions.py``), built with the same
``hostile_inputs`` helpers.
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hostile_inputs import (
    GRID_ENROLLED,
    MiB,
    compressed_bomb,
    deflate_bomb,
    kaldi_grid,
    npy_bytes,
    refused,
    small_study_bytes,
    tampered_study,
    wav_bytes,
    wav_with_rate,
    with_declared_size,
    zip_of,
)

from tests.cli.cli_cases import run as _run
from voxmetrics.cli import fail_on_holds, main
from voxmetrics.data.readers import read_scores
from voxmetrics.data.studyfile import study_from_bytes
from voxmetrics.embeddings.audio import decode_audio, extract_zip, read_manifest
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    ArchiveReader,
    Limits,
    load_npz,
    use_limits,
)
from voxmetrics.metrics.bootstrap import lid_bootstrap, speaker_bootstrap
from voxmetrics.metrics.sbls import builtin_attacker, sbls
from voxmetrics.metrics.similarity import similarity_matrix
from voxmetrics.report.study import build_study_report

SLOW_LIMIT_S = 60

META = b"utt_id,speaker,role,split\n" + b"".join(
    f"u{i},s{i % 3},{'enrol' if i < 3 else 'trial'},eval\n".encode() for i in range(6)
)


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


# ============================================================ study reports: tampered settings


def test_study_settings_asking_for_1e9_replicates_are_refused_before_work():
    study = study_from_bytes(tampered_study(lambda m: m.update(settings={"bootstrap": 10**9})))
    refused(build_study_report, study, match=r"1,000,000,000 replicates.*max_replicates")


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


# ============================================================ smaller


def test_manifest_of_audio_that_is_a_directory(tmp_path):
    refused(read_manifest, tmp_path, match=r"is a directory")


def test_sbls_attacker_dimension_mismatch_is_a_message():
    x = np.random.default_rng(0).normal(size=(40, 6))
    refused(
        builtin_attacker,
        x,
        {"sex": _labels(2, 40)},
        x[:, :4],
        match=r"dimension mismatch.*\(40, 6\).*\(40, 4\)",
    )


def test_bootstrap_counts_matrix_is_capped():
    speakers = [f"s{i}" for i in range(1000)]
    with use_limits(Limits(max_cells=10**6)):
        refused(
            lid_bootstrap, np.zeros(1000), speakers, n_boot=2000, match=r"2,000 x 1,000.*max_cells"
        )


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


# ============================================================ score files cut short: the CLI


def test_cli_refuses_a_cut_kaldi_file_and_reports_it_when_asked(tmp_path, capsys):
    scores, key = kaldi_grid(trial_major=False)
    (tmp_path / "scores").write_text("".join(scores[:29]))
    (tmp_path / "trials").write_text("".join(key))
    args = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "trials")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "have no score" in err and "Traceback" not in err
    assert main([*args, "--allow-incomplete"]) == 0
    out = capsys.readouterr()
    r = json.loads(out.out)
    assert any("19 pair(s) are left out" in w for w in r["input_warnings"])
    assert "left out" in out.err


# ============================================================ Zarr and Dask chunks


@pytest.mark.parametrize(
    ("n", "match"),
    [(300_000_000, r"300,000,000 'trial_ids' labels.*max_rows"), (10_000_000, r"stores only")],
)
def test_zarr_store_declaring_1e8s_of_labels_is_refused(tmp_path, n, match):
    zarr = pytest.importorskip("zarr")
    from voxmetrics.evaluation.sources import ZarrScores

    path = tmp_path / "s.zarr"
    g = zarr.open_group(str(path), mode="w")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr: fixed-length strings have no v3 spec yet
        g.create_array("scores", shape=(3, 3), dtype="f8")[:] = np.eye(3)
        g.create_array("trial_ids", shape=(n,), dtype="<U4", chunks=(10**6,))
        for key in ("trial_speakers", "enrol_speakers"):
            g.create_array(key, shape=(3,), dtype="<U4")[:] = np.array(["a", "b", "c"])
    refused(ZarrScores.open, path, match=match)


def _chunk_npz(scores: bytes, labels: np.ndarray | None = None) -> bytes:
    lab = np.array(["a", "b"]) if labels is None else labels
    buf = io.BytesIO()
    np.save(buf, lab, allow_pickle=True)
    members = {"scores.npy": scores, "trial_ids.npy": buf.getvalue()}
    for key in ("trial_speakers", "enrol_speakers"):
        b = io.BytesIO()
        np.save(b, np.array(["a", "b"]))
        members[f"{key}.npy"] = b.getvalue()
    return zip_of(members)


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_dask_chunk_bomb_is_read_through_the_archive_limits(tmp_path):
    from voxmetrics.evaluation.sources import _chunk_scores

    path = tmp_path / "c.npz"
    path.write_bytes(_chunk_npz(_npy(np.zeros((2, 2_500_000)))))  # 40 MB of zeros in 40 KB
    refused(_chunk_scores, str(path), match=r"scores.*max_ratio")


def test_dask_chunk_with_pickled_labels_is_a_message(tmp_path):
    from voxmetrics.evaluation.sources import ChunkedScores

    path = tmp_path / "c.npz"
    path.write_bytes(_chunk_npz(_npy(np.eye(2)), np.array(["a", 1], dtype=object)))
    refused(ChunkedScores.from_files, [path], match=r"pickled arrays are refused")


# ============================================================ bzip2 / LZMA with lying sizes


@functools.cache
def _lying_member(method: int, n_mib: int = 48) -> bytes:
    """A zip whose ``a.npy`` inflates to n_mib MiB of zeros but declares 1,000 bytes."""
    info = zipfile.ZipInfo("a.npy")
    info.compress_type = method
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, zf.open(info, "w") as f:
        zeros = b"\0" * MiB
        for _ in range(n_mib):
            f.write(zeros)
    return with_declared_size(buf.getvalue(), "a.npy", 1000)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_members_inflate_in_bounded_pieces(method):
    data = _lying_member(method)
    with use_limits(Limits(max_ratio=1e9)), ArchiveReader(data, "x.zip") as ar:
        tracemalloc.start()
        try:
            first = next(ar.chunks("a.npy"))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(first) <= MiB
    assert peak < 16 * MiB  # zipfile alone inflates the whole 48 MiB member in one call


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_bombs_with_lying_sizes_are_refused(method):
    refused(load_npz, _lying_member(method), "x.npz", match=r"max_ratio|declares|NPY")


def test_genuine_bzip2_and_lzma_members_still_read():
    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        data = zip_of({"x.npy": _npy(np.arange(1000.0))}, method)
        assert load_npz(data, "x.npz")["x"].sum() == 499500.0


# ============================================================ --by and --fail-on


def _by_csv(path, sex_of_d: str) -> None:
    rng = np.random.default_rng(1)
    spk, sex = ["a", "b", "c", "d"], {"a": "F", "b": "F", "c": "M", "d": sex_of_d}
    lines = ["trial_id,trial_speaker,enrol_speaker,score,sex"]
    for i in range(8):
        s = spk[i % 4]
        for e in spk:
            lines.append(f"t{i},{s},{e},{rng.normal() + 2 * (e == s):.3f},{sex[s]}")
    path.write_text("\n".join(lines) + "\n")


def test_by_with_a_missing_value_is_refused_and_says_so(tmp_path, capsys):
    _by_csv(tmp_path / "s.csv", "")
    assert main(["evaluate", str(tmp_path / "s.csv"), "--by", "sex"]) == 2
    err = capsys.readouterr().err
    assert "the value of 'sex' is missing" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("eer < '0.45'", "cannot compare eer (a number) with '0.45' (text)"),
        ("dcf < 1", "cannot compare dcf (a block of metrics) with 1 (a number)"),
        ("eer", "eer is a number, not a condition"),
    ],
)
def test_fail_on_type_mistakes_exit_2(tmp_path, capsys, expr, message):
    _by_csv(tmp_path / "s.csv", "M")
    assert main(["evaluate", str(tmp_path / "s.csv"), "--fail-on", expr]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # nothing printed before the refusal


# ============================================================ smaller, the command line


def test_negative_seed_and_counts_are_refused(capsys):
    from voxmetrics.cli.legal import _int_list

    with pytest.raises(SystemExit) as info:
        main(["demo", "--seed", "-1"])
    assert info.value.code == 2
    assert "give a whole number >= 0" in capsys.readouterr().err
    refused(_int_list, "0,-5", "--n", match=r"--n '0,-5': 0 is not a count")


def test_extract_without_the_audio_extra_names_what_is_missing(tmp_path, monkeypatch, capsys):
    import sys

    for module in ("torch", "speechbrain"):
        monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    (tmp_path / "m.csv").write_text("utt_id,speaker,role,split,audio_path\n")
    args = ["extract", "--manifest", str(tmp_path / "m.csv"), "--audio-root", str(tmp_path)]
    code = main([*args, "--out", str(tmp_path / "e"), "--model", "ecapa"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--model ecapa needs torch, speechbrain, which are not installed" in err
    assert "pip install 'voxmetrics[audio]'" in err and "huggingface" not in err


def test_exported_csv_cells_are_never_live_formulas():
    import pandas as pd

    from voxmetrics.report.export import _csv_bytes

    frame = pd.DataFrame(
        {"condition": ['=HYPERLINK("http://x","y")', "+1", "@SUM(A1)", "-x", "ok"], "eer": 0.1}
    )
    frame["eer"] = [0.1, -0.2, 0.3, 0.4, 0.5]
    text = _csv_bytes(frame).decode()
    for cell in ('"\'=HYPERLINK(""http://x"",""y"")"', "'+1", "'@SUM(A1)", "'-x"):
        assert cell in text, text
    assert ",-0.2" in text and "\nok," in text  # numbers and plain names unchanged


def test_memory_limit_that_is_not_a_size_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "x.npz", "--scheduler", "local", "--memory-limit", "lots"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'lots': give a size such as 300MB" in err and "Traceback" not in err


def test_a_trial_boundary_cut_is_refused_on_the_command_line(tmp_path, capsys):
    scores, key = kaldi_grid()
    (tmp_path / "s.txt").write_text("".join(scores[: 3 * GRID_ENROLLED]))
    (tmp_path / "k.txt").write_text("".join(key))
    code = main(["evaluate", str(tmp_path / "s.txt"), "--trials", str(tmp_path / "k.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "no score at all" in err and "Traceback" not in err
    out = tmp_path / "out.json"
    code = main(
        [
            "evaluate",
            str(tmp_path / "s.txt"),
            "--trials",
            str(tmp_path / "k.txt"),
            "--allow-incomplete",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert "no score at all" in json.dumps(report["input_warnings"])


def test_sbls_with_hundreds_of_classes_visits_only_the_subgroups_that_occur():
    from voxmetrics.metrics.sbls import _groups

    rng = np.random.default_rng(0)
    ys = {a: rng.integers(0, 200, 300).astype(str) for a in ("a", "b")}
    groups = _groups(ys, ["a", "b"])  # not the 40,000 of the full product
    assert len(groups) <= 300 and sum(rows.size for _, rows in groups) == 300
    assert [g for g, _ in groups] == sorted(g for g, _ in groups)


# ============================================================ Dask extraction: bad input


def test_dask_extraction_with_bad_input_stops_once_with_its_message(tmp_path, monkeypatch, caplog):
    pytest.importorskip("distributed")
    import pandas as pd
    from distributed import Client, LocalCluster

    import voxmetrics.embeddings as emb
    from voxmetrics.distributed import extract_embeddings_blockwise

    calls = []
    real = emb.load_extractor

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(emb, "load_extractor", counted)  # in-process workers see it
    (tmp_path / "model").mkdir()  # a model folder without its files
    manifest = pd.DataFrame(
        {"utt_id": ["u1", "u2"], "speaker": ["a", "b"], "audio_path": ["u1.wav", "u2.wav"]}
    )
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
        caplog.at_level("ERROR"),
    ):
        with pytest.raises(VoxMetricsInputError, match=r"hyperparams.yaml is missing"):
            extract_embeddings_blockwise(
                manifest,
                audio_root=tmp_path,
                model=str(tmp_path / "model"),
                client=client,
                device="cpu",
                files_per_task=1,
                cache_dir=tmp_path / "cache",
                retries=3,
            )
    assert 1 <= len(calls) <= 2  # not retried: at most the two tasks, once each
    assert not [r for r in caplog.records if "Compute Failed" in r.getMessage()]
