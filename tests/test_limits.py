"""``voxmetrics.limits``: the caps on inputs, how they are set, and the safe readers under them.

Limits come from the defaults, a ``[limits]`` table of the TOML config and the
``VOXMETRICS_LIMITS`` variable (which wins), or a :func:`use_limits` block; an input over a limit
gets one :class:`VoxMetricsInputError` naming the limit and how to raise it. The readers here
(:func:`read_file_bytes`, :class:`ArchiveReader`, :func:`load_npz`) check paths, sizes and
archive members before reading them. The hostile inputs of every reader are in
``tests/test_hostile.py``.
"""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest
from hostile_inputs import refused

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    ArchiveReader,
    DamagedArchiveError,
    Limits,
    check_audio,
    check_count,
    check_declared,
    check_input_path,
    get_limits,
    limits_from_config,
    load_npz,
    parse_limit,
    read_file_bytes,
    refuse,
    safe_member_name,
    use_limits,
)


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, body in members:
            zf.writestr(name, body)
    return buf.getvalue()


# ------------------------------------------------------------------ setting the limits


@pytest.mark.parametrize("value", [0, -1, True, "5", float("nan")])
def test_limits_must_be_positive_numbers(value):
    refused(Limits, max_rows=value, match=r"^limit max_rows=.*: limits must be positive numbers")


def test_overrides_read_sizes_and_keep_each_limits_type():
    limits = Limits().with_overrides(
        {"Max-Rows": "1.5k", "max_member_bytes": "2GiB", "max_ratio": "50", "max_cells": "1_000"}
    )
    assert limits.max_rows == 1500 and isinstance(limits.max_rows, int)
    assert limits.max_member_bytes == 2 * 2**30
    assert limits.max_ratio == 50.0 and isinstance(limits.max_ratio, float)
    assert limits.max_cells == 1000
    assert limits.max_columns == Limits().max_columns  # the others keep their defaults


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("max_rows", r"write NAME=VALUE"),
        ("nope=1", r"unknown limit 'nope'; the limits are: max_file_bytes, "),
        ("max_rows=0", r"positive number"),
        ("max_rows=1e400", r"positive number"),
        ("max_member_bytes=2XB", r"positive number \(sizes may end in KB"),
    ],
)
def test_parse_limit_refuses_bad_settings(text, match):
    refused(parse_limit, text, match=match)


def test_parse_limit_reads_suffixes():
    assert parse_limit(" max_file_bytes = 3 MB") == ("max_file_bytes", 3_000_000)
    assert parse_limit("max_audio_seconds=90") == ("max_audio_seconds", 90.0)


def test_limits_from_environment_and_config(tmp_path, monkeypatch):
    cfg = tmp_path / "vm.toml"
    cfg.write_text("[limits]\nmax_rows = 5\nmax_member_bytes = '2GiB'\n")
    limits = limits_from_config({"VOXMETRICS_CONFIG": str(cfg), "VOXMETRICS_LIMITS": "max_rows=7"})
    assert limits.max_rows == 7 and limits.max_member_bytes == 2 * 2**30
    cfg.write_text("[limits\n")
    refused(limits_from_config, {"VOXMETRICS_CONFIG": str(cfg)}, match=r"not valid TOML")
    assert parse_limit("max_ratio=50") == ("max_ratio", 50.0)


def test_config_limits_must_be_a_table_and_a_missing_config_gives_the_defaults(tmp_path):
    cfg = tmp_path / "vm.toml"
    cfg.write_text("limits = 3\n")
    refused(limits_from_config, {"VOXMETRICS_CONFIG": str(cfg)}, match=r"\[limits\] must be")
    missing = {"VOXMETRICS_CONFIG": str(tmp_path / "none.toml")}
    assert limits_from_config(missing) == Limits()


def test_use_limits_nests_and_restores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no voxmetrics.toml here
    monkeypatch.delenv("VOXMETRICS_CONFIG", raising=False)
    monkeypatch.delenv("VOXMETRICS_LIMITS", raising=False)
    assert get_limits() == Limits()
    with use_limits(Limits(max_rows=10)) as outer:
        assert get_limits() is outer
        with use_limits(Limits(max_rows=3)):
            assert get_limits().max_rows == 3
        assert get_limits().max_rows == 10
    assert get_limits() == Limits()
    monkeypatch.setenv("VOXMETRICS_LIMITS", "max_classes=4")
    assert get_limits().max_classes == 4


def test_refuse_names_the_limit_its_value_and_how_to_raise_it():
    exc = refuse("x.csv", "12 rows", "max_rows", Limits(max_rows=10))
    assert str(exc) == (
        "x.csv: 12 rows, over the limit max_rows=10; if the input is genuine, change the limit "
        "(command line: --limit max_rows=VALUE; environment: VOXMETRICS_LIMITS=max_rows=VALUE; "
        "dashboard: [limits] max_rows in voxmetrics.toml)."
    )


def test_check_count_is_silent_within_the_limit():
    check_count("x", "rows", 10, "max_rows")
    with pytest.raises(VoxMetricsInputError, match="11 rows"):
        with use_limits(Limits(max_rows=10)):
            check_count("x", "rows", 11, "max_rows")


# ------------------------------------------------------------------ files


def test_check_input_path_names_what_the_path_is(tmp_path):
    refused(check_input_path, tmp_path / "none.csv", match=r"none.csv: no such file")
    refused(check_input_path, tmp_path, "scores", match=r"^scores: is a directory, not a file")
    refused(check_input_path, "/dev/null", match=r"is a device, not a regular file")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(check_input_path, fifo, match=r"is a pipe, not a regular file")
    (tmp_path / "ok.csv").write_text("a")
    assert check_input_path(tmp_path / "ok.csv").st_size == 1


def test_read_file_bytes_within_and_over_the_file_limit(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"0123456789A")
    assert read_file_bytes(path) == b"0123456789A"
    (tmp_path / "empty").write_bytes(b"")
    assert read_file_bytes(tmp_path / "empty") == b""
    with use_limits(Limits(max_file_bytes=10)):
        refused(
            read_file_bytes,
            path,
            "my file",
            match=r"^my file: the file is 11 bytes, over the "
            r"limit max_file_bytes=10;",
        )


# ------------------------------------------------------------------ archives


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("arrays/0.npy", True),
        ("a/b..c.npy", True),
        ("../x", False),
        ("a/../../x", False),
        ("a\\..\\x", False),
        ("/abs", False),
        ("\\abs", False),
        ("C:/x", False),
    ],
)
def test_safe_member_name(name, safe):
    assert safe_member_name(name) is safe


def test_load_npz_reads_every_array_and_refuses_an_unsafe_member():
    buf = io.BytesIO()
    np.savez(buf, a=np.arange(3.0), b=np.array([["x", "yz"]]))
    got = load_npz(buf.getvalue(), "x.npz")
    assert sorted(got) == ["a", "b"]
    np.testing.assert_array_equal(got["a"], [0.0, 1.0, 2.0])
    assert got["b"].tolist() == [["x", "yz"]]
    one = io.BytesIO()
    np.save(one, np.ones(2))
    bad = _zip([("../a.npy", one.getvalue())])
    refused(load_npz, bad, "x.npz", match=r"member '\.\./a\.npy' points outside the archive")


def test_archive_reader_reads_members_and_refuses_missing_and_duplicate_ones():
    data = _zip([("a.txt", b"hello"), ("b.txt", b"world")], zipfile.ZIP_DEFLATED)
    with ArchiveReader(data, "x.zip") as z:
        assert z.names() == ["a.txt", "b.txt"]
        assert z.read("b.txt") == b"world"
        refused(z.read, "c.txt", match=r"^x.zip: no member 'c.txt' in the archive")
    with pytest.warns(UserWarning, match="Duplicate name"):
        twice = _zip([("a.txt", b"1"), ("a.txt", b"2")])
    with ArchiveReader(twice, "t.zip") as z:
        refused(z.names, match=r"member 'a.txt' appears more than once")
        refused(z.read, "a.txt", match=r"appears more than once")


def test_archive_reader_tells_a_damaged_zip_from_something_else():
    with pytest.raises(VoxMetricsInputError, match="not a readable zip archive") as info:
        ArchiveReader(b"hello, not a zip", "x.zip")
    assert not isinstance(info.value, DamagedArchiveError)
    cut = _zip([("a.txt", b"hello" * 100)])[:-30]  # the central directory cut off
    with pytest.raises(DamagedArchiveError, match="begins like one but is damaged") as info:
        ArchiveReader(cut, "x.zip")
    assert "directory at its end" in info.value.detail and "x.zip" not in info.value.detail


def test_archive_members_over_the_byte_and_ratio_caps_are_refused():
    data = _zip([("a.bin", b"\0" * 1000)])
    with use_limits(Limits(max_member_bytes=100)), ArchiveReader(data, "x.zip") as z:
        refused(
            z.read,
            "a.bin",
            match=r"member 'a.bin' declares 1,000 bytes uncompressed, over the "
            r"limit max_member_bytes=100;",
        )
    zeros = _zip([("z.bin", b"\0" * (17 * 2**20))], zipfile.ZIP_DEFLATED)  # 17 MiB in ~17 kB
    with ArchiveReader(zeros, "x.zip") as z:
        refused(z.read, "z.bin", match=r"unpacks more than 100 times.*max_ratio=100\.0")
    with use_limits(Limits(max_ratio=10_000)), ArchiveReader(zeros, "x.zip") as z:
        assert len(z.read("z.bin")) == 17 * 2**20


# ------------------------------------------------------------------ declared sizes, audio


def test_check_declared_refuses_lies_and_sizes_over_the_limits():
    check_declared("x.h5", "d", 8_000, 1_000, file_bytes=2_000)
    refused(
        check_declared,
        "x.h5",
        "d",
        8_000,
        3_000,
        file_bytes=2_000,
        match=r"d declares 3,000 bytes of data but the file has only 2,000 bytes there",
    )
    big = 2 * 2**30
    refused(check_declared, "x.h5", "d", big, 2**30, match=r"2.15 GB once read.*max_array_bytes")
    check_declared("x.zarr", "d", big, 2**30, in_memory=False)  # read block by block: fine
    refused(
        check_declared,
        "x.zarr",
        "d",
        big,
        2**20,
        in_memory=False,
        match=r"more than 100 times compressed.*max_ratio",
    )


def test_check_audio_refuses_by_the_header():
    check_audio("a.wav", 16_000, 16_000 * 60, channels=2, target_rate=8_000)
    refused(check_audio, "a.wav", 500, 100, match=r"sample rate of 500 Hz.*min_sample_rate=VALUE")
    with use_limits(Limits(max_audio_seconds=2.0)):
        refused(
            check_audio,
            "a.wav",
            16_000,
            48_000,
            match=r"^a.wav: the recording lasts 3 s, over the limit max_audio_seconds=2.0;",
        )
    refused(
        check_audio,
        "a.flac",
        16_000,
        16_000 * 3600,
        file_bytes=1_000,
        match=r"the 1,000 bytes file decodes to 0.23 GB of samples.*decompression bomb",
    )
