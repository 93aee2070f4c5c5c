"""Input limits: refuse hostile or absurd input before memory or time is spent on it.

Every reader and every command checks its input against one :class:`Limits` object, so a
decompression bomb, an NPY header that declares a terabyte, a WAV that claims a 1 Hz sample
rate or a request for 10^9 bootstrap replicates ends in one
:class:`~voxmetrics.errors.VoxMetricsInputError` that names the limit and how to raise it,
instead of exhausting the machine.

The defaults are sized for real work (a 22,024 x 4,949 score matrix, a few hours of audio per
recording, a study of a hundred conditions) and refuse the rest. Raise a limit

- on the command line: ``--limit NAME=VALUE`` (repeatable, before or after the command);
- in the environment (command line and dashboard): ``VOXMETRICS_LIMITS="NAME=VALUE,NAME=VALUE"``;
- in the dashboard's config: a TOML file named by ``VOXMETRICS_CONFIG`` (default
  ``voxmetrics.toml`` in the working folder) with a ``[limits]`` table, e.g.
  ``[limits]`` / ``max_member_bytes = 4_000_000_000``;
- in code: ``with use_limits(Limits(max_replicates=10**6)): ...``.

Sizes accept suffixes: ``2GiB``, ``500MB``, ``1e9``.

Helpers for readers (new readers should use them too):

- :func:`get_limits` -- the limits in force;
- :func:`read_file_bytes` / :func:`check_input_path` -- read (or check) a path, refusing
  directories, devices, pipes and oversized files;
- :func:`ArchiveReader` -- a zip archive whose members are read in chunks, stopping at the
  per-member / per-archive byte caps and the compression-ratio cap (declared sizes are not
  trusted);
- :func:`check_npy_header` / :func:`load_npy` / :func:`load_npz` -- NPY arrays whose declared
  shape is checked before anything is allocated, never unpickled;
- :func:`check_declared` -- a size a file's metadata declares (an HDF5 dataset, a Zarr array,
  a Kaldi ark vector) against the bytes it stores: unwritten data that would read as fill
  values, and decompression ratios over ``max_ratio``, are refused before anything is read;
- :func:`check_hdf5_dataset` -- one HDF5 dataset: no external storage, only the allowed
  filters (:data:`HDF5_FILTERS`), and its declared size against its stored size;
- :func:`check_count` -- rows, columns, classes, replicates, conditions, cells, ...;
- :func:`refuse` -- the error for any other input over a limit (names the limit and how to
  change it);
- :func:`check_audio` -- sample rate and decoded samples of a recording before decoding.
"""

from __future__ import annotations

import bz2
import contextlib
import contextvars
import copy
import io
import itertools
import lzma
import math
import os
import re
import stat
import zipfile
import zlib
from collections import Counter
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "ENV_CONFIG",
    "ENV_LIMITS",
    "HDF5_FILTERS",
    "ZIP_METHODS",
    "ArchiveReader",
    "DamagedArchiveError",
    "Limits",
    "check_audio",
    "check_count",
    "check_declared",
    "check_hdf5_dataset",
    "check_input_path",
    "check_npy_header",
    "get_limits",
    "limits_from_config",
    "load_npy",
    "load_npz",
    "npy_header",
    "parse_limit",
    "read_file_bytes",
    "refuse",
    "safe_member_name",
    "use_limits",
]

ENV_LIMITS = "VOXMETRICS_LIMITS"
"""Environment variable with ``NAME=VALUE`` pairs separated by commas."""
ENV_CONFIG = "VOXMETRICS_CONFIG"
"""Environment variable naming a TOML file with a ``[limits]`` table."""

_GIB = 2**30
_RATIO_FLOOR = 16 * 2**20  # below this many decompressed bytes the ratio cap is not applied
_CHUNK = 1 << 20

ZIP_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "LZMA",
}
"""Compression methods of zip members that are read (every one with a bounded decompressor)."""

HDF5_FILTERS = {1: "gzip", 2: "shuffle", 3: "fletcher32", 6: "scale-offset", 32000: "lzf"}
"""HDF5 filters (by id) that are read; a dataset with any other filter (a plugin) is refused."""


@dataclass(frozen=True)
class Limits:
    """Caps on the size of inputs and requests; see the module docstring for how to set them.

    Attributes
    ----------
    max_file_bytes : int
        Size of one input file read into memory, and of a Parquet file's unpacked columns
        (default 8 GiB: the 22,024 x 4,949 matrix as a long CSV is about 4.5 GB).
    max_member_bytes : int
        Decompressed size of one member of an archive (NPZ, ``.vxm``, audio zip; default 1 GiB:
        a 22,024 x 4,949 float32 matrix is 0.44 GB, in float64 0.87 GB).
    max_archive_bytes : int
        Decompressed size of all members of one archive together (default 4 GiB).
    max_ratio : float
        Compression ratio (decompressed / compressed) of one member, checked once a member has
        produced 16 MiB (default 100; scores, embeddings and audio compress far less, while a
        decompression bomb inflates 1,000 (deflate) to 10^6 (bzip2) times).
    max_array_bytes : int
        Size an NPY header may declare (shape x item size) before anything is allocated
        (default 1 GiB).
    max_cells : int
        Trials x enrolled identities of one score matrix, utterance pairs of one similarity
        matrix, bootstrap replicates x speakers (default 2 x 10^8; the 22,024 x 4,949 matrix
        has 1.09 x 10^8).
    max_rows : int
        Rows (lines) of one table (default 2.5 x 10^8; the 22,024 x 4,949 matrix in long format
        has 1.09 x 10^8).
    max_columns : int
        Columns of one table (default 10,000).
    max_classes : int
        Distinct values of one soft-biometric attribute (default 256).
    max_replicates : int
        Bootstrap replicates (default 20,000; intervals usually take 1,000 to 2,000).
    max_conditions : int
        Conditions of one study (default 200).
    max_subsets : int
        Subsets of one ``evaluate --by ATTR``, one per value of the attribute (default 1,000:
        each subset is a report of its own, a few milliseconds for a small one, more with a
        bootstrap or a dev set).
    max_sample_rate : int
        Highest sample rate of a recording in Hz (default 384,000).
    min_sample_rate : int
        Lowest sample rate of a recording in Hz (default 1,000).
    max_audio_seconds : float
        Longest recording in seconds (default 10,800: three hours).
    max_audio_bytes : int
        Memory to decode one recording: float32 frames x channels, the float64 mono mix and
        the float64 resampled signal (default 4 GiB: three hours of mono 16 kHz audio take
        3.5 GB).
    max_json_depth : int
        Nesting depth of a study file's manifest (default 32).
    """

    max_file_bytes: int = 8 * _GIB
    max_member_bytes: int = _GIB
    max_archive_bytes: int = 4 * _GIB
    max_ratio: float = 100.0
    max_array_bytes: int = _GIB
    max_cells: int = 200_000_000
    max_rows: int = 250_000_000
    max_columns: int = 10_000
    max_classes: int = 256
    max_replicates: int = 20_000
    max_conditions: int = 200
    max_subsets: int = 1_000
    max_sample_rate: int = 384_000
    min_sample_rate: int = 1_000
    max_audio_seconds: float = 10_800.0
    max_audio_bytes: int = 4 * _GIB
    max_json_depth: int = 32

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise VoxMetricsInputError(
                    f"limit {f.name}={v!r}: limits must be positive numbers."
                )

    def with_overrides(self, pairs: Mapping[str, Any]) -> Limits:
        """A copy with some limits changed; values may be numbers or text such as ``'2GiB'``.

        Examples
        --------
        >>> Limits().with_overrides({"max_member_bytes": "3GiB"}).max_member_bytes
        3221225472
        """
        changes: dict[str, Any] = {}  # field name -> its int or float, as _limit_value checks
        for key, value in pairs.items():
            name = _limit_name(str(key))
            changes[name] = _limit_value(name, value)
        return replace(self, **changes)


def _limit_name(key: str) -> str:
    name = key.strip().lower().replace("-", "_")
    known = [f.name for f in fields(Limits)]
    if name not in known:
        raise VoxMetricsInputError(f"unknown limit '{key}'; the limits are: {', '.join(known)}.")
    return name


_SUFFIX = {
    "": 1,
    "k": 1e3,
    "kb": 1e3,
    "m": 1e6,
    "mb": 1e6,
    "g": 1e9,
    "gb": 1e9,
    "t": 1e12,
    "tb": 1e12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def _limit_value(name: str, value: Any) -> int | float:
    text = str(value).strip().replace("_", "")
    m = re.fullmatch(r"([0-9.eE+]+)\s*([A-Za-z]*)", text)
    number = None
    if m and m.group(2).lower() in _SUFFIX:
        with contextlib.suppress(ValueError):
            number = float(m.group(1)) * _SUFFIX[m.group(2).lower()]
    if number is None or not math.isfinite(number) or number <= 0:
        raise VoxMetricsInputError(
            f"limit {name}={value!r}: give a positive number (sizes may end in KB, MB, GB, KiB, "
            "MiB or GiB)."
        )
    kind = type(getattr(Limits(), name))
    return float(number) if kind is float else int(number)


def parse_limit(text: str) -> tuple[str, int | float]:
    """Parse one ``NAME=VALUE`` setting (the ``--limit`` option).

    Examples
    --------
    >>> parse_limit("max_replicates=1e6")
    ('max_replicates', 1000000)
    """
    if "=" not in text:
        raise VoxMetricsInputError(
            f"--limit '{text}': write NAME=VALUE, e.g. --limit max_member_bytes=4GiB."
        )
    key, value = text.split("=", 1)
    name = _limit_name(key)
    return name, _limit_value(name, value)


def limits_from_config(environ: Mapping[str, str] | None = None) -> Limits:
    """The limits set by ``VOXMETRICS_CONFIG`` (TOML ``[limits]`` table) and ``VOXMETRICS_LIMITS``.

    The environment variable wins over the file; both override the defaults.
    """
    env = os.environ if environ is None else environ
    limits = Limits()
    config = env.get(ENV_CONFIG)
    path = Path(config) if config else Path("voxmetrics.toml")
    if path.is_file():
        import tomllib

        try:
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("limits", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            raise VoxMetricsInputError(
                f"{path}: the VoxMetrics config is not valid TOML ({exc}); fix or remove it."
            ) from None
        if not isinstance(table, dict):
            raise VoxMetricsInputError(f"{path}: [limits] must be a table of NAME = VALUE.")
        limits = limits.with_overrides(table)
    text = env.get(ENV_LIMITS, "").strip()
    if text:
        changes: dict[str, Any] = dict(parse_limit(p) for p in text.split(",") if p.strip())
        limits = replace(limits, **changes)
    return limits


_ACTIVE: contextvars.ContextVar[Limits | None] = contextvars.ContextVar(
    "voxmetrics_limits", default=None
)


def get_limits() -> Limits:
    """The limits in force: those of the innermost :func:`use_limits`, else from the config."""
    active = _ACTIVE.get()
    return active if active is not None else limits_from_config()


@contextlib.contextmanager
def use_limits(limits: Limits) -> Iterator[Limits]:
    """Make ``limits`` the ones in force inside the ``with`` block."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


def _how(name: str) -> str:
    return (
        f"if the input is genuine, change the limit (command line: --limit {name}=VALUE; "
        f"environment: {ENV_LIMITS}={name}=VALUE; dashboard: [limits] {name} in voxmetrics.toml)"
    )


def _size(n: float) -> str:
    if n >= 1e8:
        return f"{n / 1e9:.2f} GB"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,.0f} bytes"


def refuse(where: str, what: str, name: str, limits: Limits | None = None) -> VoxMetricsInputError:
    """The error for an input over limit ``name``: what, the limit's value, and how to raise it."""
    value = getattr(limits or get_limits(), name)
    return VoxMetricsInputError(f"{where}: {what}, over the limit {name}={value:,}; {_how(name)}.")


def check_count(where: str, what: str, count: float, name: str) -> None:
    """Refuse ``count`` items of ``what`` when above limit ``name`` (e.g. ``max_classes``).

    Examples
    --------
    >>> check_count("study", "conditions", 3, "max_conditions")
    >>> try:
    ...     check_count("--bootstrap", "replicates", 10**9, "max_replicates")
    ... except VoxMetricsInputError as exc:
    ...     print(str(exc)[:75])
    --bootstrap: 1,000,000,000 replicates, over the limit max_replicates=20,000
    """
    limits = get_limits()
    if count > getattr(limits, name):
        raise refuse(where, f"{count:,} {what}", name, limits)


# ---------------------------------------------------------------- files


def check_input_path(path: str | os.PathLike[str], label: str | None = None) -> os.stat_result:
    """Refuse a path that is missing, unreadable, a directory, a device, a pipe or a socket.

    Examples
    --------
    >>> try:
    ...     check_input_path("/")
    ... except VoxMetricsInputError as exc:
    ...     print(exc)
    /: is a directory, not a file (/); give the path of the file.
    """
    p = Path(path)
    where = label or str(p)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise VoxMetricsInputError(f"{where}: no such file ({p}); check the path.") from None
    except PermissionError:
        raise VoxMetricsInputError(
            f"{where}: permission denied reading {p}; make the file readable."
        ) from None
    except OSError as exc:
        raise VoxMetricsInputError(f"{where}: cannot be read ({exc.strerror}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise VoxMetricsInputError(
            f"{where}: is a directory, not a file ({p}); give the path of the file."
        )
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            kind = "a device"
        elif stat.S_ISFIFO(st.st_mode):
            kind = "a pipe"
        else:
            kind = "a socket or special file"
        raise VoxMetricsInputError(
            f"{where}: is {kind}, not a regular file ({p}); give the path of a data file."
        )
    return st


def read_file_bytes(path: str | os.PathLike[str], label: str | None = None) -> bytes:
    """The bytes of a regular file, refusing directories, devices, FIFOs and oversized files."""
    p = Path(path)
    where = label or str(p)
    st = check_input_path(p, where)
    limits = get_limits()
    if st.st_size > limits.max_file_bytes:
        raise refuse(where, f"the file is {_size(st.st_size)}", "max_file_bytes", limits)
    try:
        with p.open("rb") as fh:
            if st.st_size:  # read() preallocates its argument: ask for the size and one more
                data = fh.read(st.st_size + 1)
            else:  # size unknown (e.g. under /proc): in chunks, up to the cap
                parts, total = [], 0
                while (chunk := fh.read(_CHUNK)) and total <= limits.max_file_bytes:
                    parts.append(chunk)
                    total += len(chunk)
                data = b"".join(parts)
    except PermissionError:
        raise VoxMetricsInputError(
            f"{where}: permission denied reading {p}; make the file readable."
        ) from None
    except OSError as exc:
        raise VoxMetricsInputError(f"{where}: cannot be read ({exc.strerror}).") from None
    if len(data) > limits.max_file_bytes:
        raise refuse(where, "the file is larger than its size said", "max_file_bytes", limits)
    if st.st_size and len(data) > st.st_size:
        raise VoxMetricsInputError(f"{where}: the file changed while it was read; try again.")
    return data


# ---------------------------------------------------------------- archives


class DamagedArchiveError(VoxMetricsInputError):
    """A zip archive that is cut short or corrupt, as opposed to one that is not a zip at all.

    ``detail`` says what is damaged, without the file's name or advice (for a reader that
    words its own message, as the study-file reader does).
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


def _starts_like_zip(source: Any) -> bool:
    """Whether ``source`` (a path or a seekable binary file) begins with a zip member header."""
    try:
        if isinstance(source, str | os.PathLike):
            with open(source, "rb") as fh:
                return fh.read(4) == b"PK\x03\x04"
        pos = source.tell()
        source.seek(0)
        head = source.read(4)
        source.seek(pos)
        return bool(head == b"PK\x03\x04")
    except (OSError, AttributeError, ValueError):
        return False


class ArchiveReader:
    """A zip archive read safely: every member in chunks, within the byte and ratio caps.

    The sizes a member declares are not trusted; the caps are checked on the bytes actually
    produced while decompressing, so a bomb is stopped after at most the cap (or, for a member
    that inflates more than ``max_ratio`` times, after ``max_ratio`` x its compressed size).

    Examples
    --------
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
    ...     zf.writestr("a.txt", b"hello")
    >>> with ArchiveReader(buf.getvalue(), "x.zip") as ar:
    ...     ar.names(), ar.read("a.txt")
    (['a.txt'], b'hello')
    """

    def __init__(self, source: bytes | str | os.PathLike[str] | IO[bytes], where: str) -> None:
        self.where = where
        self.limits = get_limits()
        self.total = 0
        if isinstance(source, str | os.PathLike):  # a pipe or a device would block the read
            check_input_path(source, where)
        try:
            if isinstance(source, bytes | bytearray | memoryview):
                source = io.BytesIO(bytes(source))
            self.zf = zipfile.ZipFile(source)
            infos = self.zf.infolist()
        except FileNotFoundError:
            raise VoxMetricsInputError(f"{where}: no such file.") from None
        except IsADirectoryError:
            raise VoxMetricsInputError(
                f"{where}: is a directory, not a file; give the path of the archive."
            ) from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            if _starts_like_zip(source):  # a zip cut short, or its directory broken
                raise DamagedArchiveError(
                    f"{where}: not a readable zip archive: it begins like one but is damaged or "
                    f"truncated ({exc}); copy it whole again, or save or export it again.",
                    f"it begins like a zip archive but the directory at its end is missing or "
                    f"broken ({exc})",
                ) from None
            raise VoxMetricsInputError(
                f"{where}: not a readable zip archive ({exc}); save or export it again."
            ) from None
        if len(infos) > self.limits.max_rows:
            raise refuse(where, f"the archive has {len(infos):,} members", "max_rows")
        self.infos = {i.filename: i for i in infos}
        self.duplicates = [n for n, k in Counter(i.filename for i in infos).items() if k > 1]

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.zf.close()

    def close(self) -> None:
        """Close the archive."""
        self.zf.close()

    def names(self) -> list[str]:
        """The member names, in archive order (a name that appears twice is refused)."""
        if self.duplicates:
            self._refuse_duplicate(self.duplicates[0])
        return list(self.infos)

    def _refuse_duplicate(self, name: str) -> None:
        raise VoxMetricsInputError(
            f"{self.where}: member '{name}' appears more than once in the archive, so which "
            "copy is read is ambiguous (a tampered archive?); save or export it again."
        )

    def check_member(self, info: zipfile.ZipInfo, size: int | None = None) -> None:
        """Refuse a member by its headers, before reading: over the byte or the ratio cap.

        ``size`` is what the member's content declares (e.g. an NPY header's data size), when
        it is known; otherwise the zip header's uncompressed size is checked.
        """
        if info.compress_type not in ZIP_METHODS:
            raise VoxMetricsInputError(
                f"{self.where}: member '{info.filename}' uses zip compression method "
                f"{info.compress_type}, which is not read (allowed: "
                f"{', '.join(ZIP_METHODS.values())}); save the archive again with deflate."
            )
        declared = info.file_size if size is None else size
        if declared > self.limits.max_member_bytes:
            raise refuse(
                self.where,
                f"member '{info.filename}' declares {_size(declared)} uncompressed",
                "max_member_bytes",
                self.limits,
            )
        if declared > max(_RATIO_FLOOR, self.limits.max_ratio * max(info.compress_size, 1)):
            raise self._ratio_error(info)

    def _ratio_error(self, info: zipfile.ZipInfo) -> VoxMetricsInputError:
        return refuse(
            self.where,
            f"member '{info.filename}' unpacks more than {self.limits.max_ratio:g} times its "
            f"compressed size ({_size(info.compress_size)}), like a decompression bomb",
            "max_ratio",
            self.limits,
        )

    def chunks(self, name: str, *, cap: int | None = None) -> Generator[bytes, None, None]:
        """The decompressed bytes of member ``name`` in chunks, stopped at the caps."""
        info = self.infos.get(name)
        if info is None:
            raise VoxMetricsInputError(f"{self.where}: no member '{name}' in the archive.")
        if name in self.duplicates:
            self._refuse_duplicate(name)
        self.check_member(info)
        lim = self.limits
        member_cap = min(lim.max_member_bytes, cap if cap is not None else lim.max_member_bytes)
        ratio_cap = max(_RATIO_FLOOR, lim.max_ratio * max(info.compress_size, 1))
        produced = 0
        try:
            for chunk in self._decompressed(info):
                produced += len(chunk)
                self.total += len(chunk)
                if produced > member_cap:
                    if cap is not None and cap < lim.max_member_bytes:
                        raise DamagedArchiveError(
                            f"{self.where}: member '{name}' holds more bytes than it "
                            f"declares ({_size(cap)}); the archive is damaged or tampered "
                            "with. Save it again.",
                            f"member '{name}' holds more bytes than it declares ({_size(cap)})",
                        )
                    raise refuse(
                        self.where,
                        f"member '{name}' unpacks to more than {_size(member_cap)}",
                        "max_member_bytes",
                        lim,
                    )
                if produced > ratio_cap:
                    raise self._ratio_error(info)
                if self.total > lim.max_archive_bytes:
                    raise refuse(
                        self.where,
                        f"the archive unpacks to more than {_size(lim.max_archive_bytes)}",
                        "max_archive_bytes",
                        lim,
                    )
                yield chunk
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            OSError,
            ValueError,
            NotImplementedError,
            RuntimeError,
        ) as exc:
            if isinstance(exc, VoxMetricsInputError):
                raise
            raise DamagedArchiveError(
                f"{self.where}: member '{name}' is corrupt ({exc}); create the archive again.",
                f"member '{name}' is corrupt or cut short ({exc})",
            ) from None

    def _decompressed(self, info: zipfile.ZipInfo) -> Iterator[bytes]:
        """A member's bytes, at most about ``_CHUNK`` per piece whatever its method.

        zipfile bounds only deflate's output; bzip2 and LZMA members are read raw and
        decompressed here with a bounded ``max_length``, so a member whose header lies about
        its size cannot inflate in one call.
        """
        if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with self.zf.open(info) as src:
                while chunk := src.read(_CHUNK):
                    yield chunk
            return
        raw_info = copy.copy(info)
        raw_info.compress_type = zipfile.ZIP_STORED
        raw_info.file_size = info.compress_size
        del raw_info.CRC  # the CRC is of the decompressed bytes: checked below
        crc = 0
        with self.zf.open(raw_info) as raw:
            dec: Any
            if info.compress_type == zipfile.ZIP_BZIP2:
                dec = bz2.BZ2Decompressor()
            else:  # zip's LZMA: version (2 bytes), properties size (2), properties, raw LZMA1
                head = raw.read(4)
                props = raw.read(int.from_bytes(head[2:4], "little")) if len(head) == 4 else b""
                try:
                    # a private CPython function, which typeshed's lzma stub does not declare
                    filt = lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)  # type: ignore[attr-defined]
                except (lzma.LZMAError, ValueError) as exc:
                    raise ValueError(f"bad LZMA header ({exc})") from None
                dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[filt])
            while not dec.eof:
                data = raw.read(_CHUNK) if dec.needs_input else b""
                if dec.needs_input and not data:
                    raise EOFError("the compressed data ends early")
                out = dec.decompress(data, _CHUNK)
                crc = zlib.crc32(out, crc)
                if out:
                    yield out
        if crc != info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 for member '{info.filename}'")

    def read(self, name: str, *, cap: int | None = None) -> bytes:
        """All decompressed bytes of member ``name`` (within the caps)."""
        return b"".join(self.chunks(name, cap=cap))

    def npy_data(
        self, name: str, array: str | None = None
    ) -> tuple[tuple[int, ...], np.dtype, bool, int, int, Iterator[memoryview]]:
        """Member ``name``'s NPY header, checked as :meth:`load_npy` does, and its data.

        ``(shape, dtype, fortran, offset, nbytes, pieces)``: the data's pieces raise when they
        run past the declared ``nbytes`` or stop short of it.
        """
        label = self.where if array is None else f"{self.where}: array '{array}'"
        stream = self.chunks(name)
        head = b""
        for chunk in stream:
            head += chunk
            if len(head) >= 65536 + 16:
                break
        shape, dtype, fortran, offset = npy_header(io.BytesIO(head), label)
        nbytes = check_npy_header(shape, dtype, self.where, array)
        self.check_member(self.infos[name], offset + nbytes)  # before any body is allocated

        def pieces() -> Iterator[memoryview]:
            pos = 0
            for piece in itertools.chain([memoryview(head)[offset:]], map(memoryview, stream)):
                if pos + len(piece) > nbytes:
                    raise VoxMetricsInputError(
                        f"{label}: holds more data than its header declares (shape {shape}); "
                        "the file is damaged or tampered with. Save it again."
                    )
                yield piece
                pos += len(piece)
            if pos < nbytes:
                raise VoxMetricsInputError(
                    f"{label}: the NPY data is truncated ({pos:,} bytes for shape {shape} of "
                    f"{dtype}, which needs {nbytes:,}); save it again with numpy.save."
                )

        return shape, dtype, fortran, offset, nbytes, pieces()

    def load_npy(self, name: str, array: str | None = None) -> np.ndarray:
        """Member ``name`` (array ``array``) as NPY, its header checked before the data is read.

        Decompressed straight into an array of the declared size (capped by ``max_array_bytes``).
        """
        shape, dtype, fortran, _, nbytes, pieces = self.npy_data(name, array)
        body = np.empty(nbytes, dtype=np.uint8)
        pos = 0
        for piece in pieces:  # never past the declared size
            body[pos : pos + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
            pos += len(piece)
        return _shaped(body, shape, dtype, fortran)


def _shaped(body: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, fortran: bool) -> np.ndarray:
    a = body.view(dtype) if body.size else np.empty(0, dtype=dtype)
    return a.reshape(shape[::-1]).T if fortran else a.reshape(shape)


def npy_header(fh: IO[bytes], label: str) -> tuple[tuple[int, ...], np.dtype, bool, int]:
    """Shape, dtype, Fortran order and data offset of the NPY array at ``fh``, never unpickled.

    Reads the header only (at most 64 KiB); a malformed one is a
    :class:`~voxmetrics.errors.VoxMetricsInputError` naming ``label``. Check the result with
    :func:`check_npy_header` before reading the data.

    Examples
    --------
    >>> buf = io.BytesIO(); np.save(buf, np.zeros((2, 3), np.float32)); _ = buf.seek(0)
    >>> npy_header(buf, "x.npy")[:3]
    ((2, 3), dtype('float32'), False)
    """
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh, max_header_size=65536)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh, max_header_size=65536)
        else:
            raise ValueError(f"unsupported NPY version {version}")
    except Exception as exc:  # numpy raises many types on a malformed header (even TokenError)
        raise VoxMetricsInputError(
            f"{label}: not a valid NPY array (bad header: {exc}); save it again with numpy.save."
        ) from None
    return tuple(int(s) for s in shape), np.dtype(dtype), bool(fortran), fh.tell()


def check_npy_header(
    shape: tuple[int, ...], dtype: np.dtype, where: str, array: str | None = None
) -> int:
    """Check an NPY header before allocating; returns the data size in bytes.

    Refuses object (pickled) dtypes, negative dimensions and a declared size over
    ``max_array_bytes``. ``where`` is the file, ``array`` the array's name inside an archive.

    Examples
    --------
    >>> check_npy_header((3, 4), np.dtype("<f4"), "x.npy")
    48
    """
    if dtype.hasobject:
        which = "the array" if array is None else f"array '{array}'"
        raise VoxMetricsInputError(
            f"{where}: {which} is a Python object "
            "array; pickled arrays are refused for safety (loading them can run arbitrary "
            "code). Save plain numeric / string arrays, e.g. numpy.savez(path, "
            "scores=..., trial_ids=np.asarray(ids, dtype=str))."
        )
    if array is not None:
        where = f"{where}: array '{array}'"
    if any(s < 0 for s in shape):
        raise VoxMetricsInputError(f"{where}: the NPY header declares a negative shape {shape}.")
    limits = get_limits()
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > limits.max_array_bytes:
        raise refuse(
            where,
            f"the NPY header declares shape {shape} of {dtype} ({_size(nbytes)})",
            "max_array_bytes",
            limits,
        )
    return nbytes


def _npy_from(
    data: bytes,
    shape: tuple[int, ...],
    dtype: np.dtype,
    fortran: bool,
    offset: int,
    nbytes: int,
    label: str,
) -> np.ndarray:
    body = memoryview(data)[offset:]
    if len(body) != nbytes:
        state = "truncated" if len(body) < nbytes else "longer than its header says"
        raise VoxMetricsInputError(
            f"{label}: the NPY data is {state} ({len(body):,} bytes for shape {shape} of "
            f"{dtype}, which needs {nbytes:,}); save it again with numpy.save."
        )
    return _shaped(np.frombuffer(body, dtype=np.uint8).copy(), shape, dtype, fortran)


def load_npy(data: bytes, where: str) -> np.ndarray:
    """Parse NPY bytes: header checked first (:func:`check_npy_header`), never unpickled.

    Examples
    --------
    >>> buf = io.BytesIO(); np.save(buf, np.arange(3.0))
    >>> load_npy(buf.getvalue(), "x.npy").tolist()
    [0.0, 1.0, 2.0]
    """
    shape, dtype, fortran, offset = npy_header(io.BytesIO(data), where)
    nbytes = check_npy_header(shape, dtype, where)
    return _npy_from(data, shape, dtype, fortran, offset, nbytes, where)


def safe_member_name(name: str) -> bool:
    """Whether an archive member name stays inside the archive (not absolute, no ``..``).

    Examples
    --------
    >>> safe_member_name("arrays/0.npy"), safe_member_name("../x"), safe_member_name("C:/x")
    (True, False, False)
    """
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts)


def load_npz(data: bytes | str | os.PathLike[str], where: str) -> dict[str, np.ndarray]:
    """Parse NPZ bytes (or the NPZ file at a path) into ``{name: array}`` within every limit.

    Examples
    --------
    >>> buf = io.BytesIO(); np.savez_compressed(buf, a=np.ones(2), b=np.array(["x"]))
    >>> sorted((k, v.tolist()) for k, v in load_npz(buf.getvalue(), "x.npz").items())
    [('a', [1.0, 1.0]), ('b', ['x'])]
    """
    out: dict[str, np.ndarray] = {}
    with ArchiveReader(data, where) as ar:
        for member in ar.names():
            if not safe_member_name(member):
                raise VoxMetricsInputError(
                    f"{where}: refusing an unsafe archive: member '{member}' points outside the "
                    "archive (absolute path or '..'); save the arrays again with numpy.savez."
                )
            if member.endswith("/"):
                continue
            key = member[: -len(".npy")] if member.endswith(".npy") else member
            out[key] = ar.load_npy(member, key)
    return out


# ---------------------------------------------------------------- declared sizes


def check_declared(
    where: str,
    what: str,
    declared: float,
    stored: float,
    *,
    file_bytes: float | None = None,
    in_memory: bool = True,
) -> None:
    """Refuse data whose declared size does not match what the file stores, before reading it.

    ``declared`` is the memory the data takes once read (e.g. rows x columns x 8 for float64),
    ``stored`` the bytes the file holds for it (compressed or not). Refused: a declared size
    over ``max_array_bytes``; a declared size more than ``max_ratio`` times the stored bytes
    (above 16 MiB): unwritten data that would read as fill values, or a decompression bomb;
    with ``file_bytes``, stored bytes beyond the file's end (a header that lies). With
    ``in_memory=False`` (data read block by block, e.g. a Zarr score matrix on Dask) the
    declared size is not held at once, so only the ratio and the file size are checked.

    Examples
    --------
    >>> check_declared("x.h5", "dataset 'e'", 8_000, 1_000)
    >>> try:
    ...     check_declared("x.h5", "dataset 'e'", 8e9, 0)
    ... except VoxMetricsInputError as exc:
    ...     print(str(exc)[:62])
    x.h5: dataset 'e' declares 8.00 GB once read, over the limit m
    """
    limits = get_limits()
    if file_bytes is not None and stored > file_bytes:
        raise VoxMetricsInputError(
            f"{where}: {what} declares {_size(stored)} of data but the file has only "
            f"{_size(max(file_bytes, 0))} there; the file is truncated or its header is wrong. "
            "Write it again."
        )
    if in_memory and declared > limits.max_array_bytes:
        raise refuse(
            where, f"{what} declares {_size(declared)} once read", "max_array_bytes", limits
        )
    if declared > max(_RATIO_FLOOR, limits.max_ratio * stored):
        raise refuse(
            where,
            f"{what} declares {_size(declared)} once read but the file stores only "
            f"{_size(stored)} for it (unwritten data read as fill values, or more than "
            f"{limits.max_ratio:g} times compressed, like a decompression bomb)",
            "max_ratio",
            limits,
        )


def check_hdf5_dataset(
    where: str, dataset: Any, *, as_float64: bool = True, file_bytes: int | None = None
) -> None:
    """Refuse one HDF5 (h5py) dataset before reading it.

    Refused: external storage (raw data in other files, which could be any file the server
    can read, or a pipe); filters other than :data:`HDF5_FILTERS`; a declared size (as float64
    when ``as_float64``, else its own item size) against its stored bytes and the file's size
    ``file_bytes`` (:func:`check_declared`). External links and virtual datasets are refused
    by the reader.
    """
    path = dataset.name
    plist = dataset.id.get_create_plist()
    if plist.get_external_count() > 0:
        raise VoxMetricsInputError(
            f"{where}: dataset '{path}' keeps its data in external files, which could be any "
            "file of the server; this is refused. Copy the data into the file (h5repack)."
        )
    for i in range(plist.get_nfilters()):
        code, _, _, fname = plist.get_filter(i)
        if code not in HDF5_FILTERS:
            name = fname.decode("utf-8", "replace") if isinstance(fname, bytes) else fname
            raise VoxMetricsInputError(
                f"{where}: dataset '{path}' uses HDF5 filter {code} ({name}), which is not "
                f"read (allowed: {', '.join(HDF5_FILTERS.values())}); save it again with gzip."
            )
    size = math.prod(int(s) for s in dataset.shape)
    itemsize = 8 if as_float64 else max(int(dataset.dtype.itemsize), 1)
    stored = int(dataset.id.get_storage_size())
    shape = " x ".join(map(str, dataset.shape))
    check_declared(
        where, f"dataset '{path}' ({shape})", size * itemsize, stored, file_bytes=file_bytes
    )


# ---------------------------------------------------------------- audio


def check_audio(
    where: str,
    sample_rate: float,
    frames: float,
    channels: int = 1,
    target_rate: float | None = None,
    file_bytes: int | None = None,
) -> None:
    """Refuse a recording by its header, before decoding or resampling it.

    Refuses a sample rate outside ``min_sample_rate`` .. ``max_sample_rate`` (a WAV declaring
    1 Hz would be resampled into gigabytes), a duration over ``max_audio_seconds``, and a
    recording whose decoding (float32 frames x channels, the float64 mono mix and, with
    ``target_rate``, the float64 resampled signal) needs more than ``max_audio_bytes``. With
    ``file_bytes`` (the size of the encoded file), a recording whose float32 samples would be
    more than ``max_ratio`` times the file (e.g. hours of near-silence in a tiny FLAC) is
    refused as a decompression bomb.

    Examples
    --------
    >>> check_audio("a.wav", 16000, 16000 * 60)
    >>> try:
    ...     check_audio("a.wav", 1, 100)
    ... except VoxMetricsInputError as exc:
    ...     print(str(exc)[:55])
    a.wav: the header declares a sample rate of 1 Hz, outsi
    """
    limits = get_limits()
    if not limits.min_sample_rate <= sample_rate <= limits.max_sample_rate:
        name = "min_sample_rate" if sample_rate < limits.min_sample_rate else "max_sample_rate"
        raise VoxMetricsInputError(
            f"{where}: the header declares a sample rate of {sample_rate:,.0f} Hz, outside "
            f"{limits.min_sample_rate:,}-{limits.max_sample_rate:,} Hz (limits min_sample_rate "
            "and max_sample_rate), so the header is wrong or this is not speech audio; "
            f"{_how(name)}."
        )
    seconds = frames / sample_rate
    if seconds > limits.max_audio_seconds:
        raise refuse(where, f"the recording lasts {seconds:,.0f} s", "max_audio_seconds", limits)
    decoded = 4.0 * float(frames) * max(int(channels), 1)
    if file_bytes is not None and decoded > max(_RATIO_FLOOR, limits.max_ratio * file_bytes):
        raise refuse(
            where,
            f"the {_size(file_bytes)} file decodes to {_size(decoded)} of samples, more than "
            f"{limits.max_ratio:g} times its size, like a decompression bomb",
            "max_ratio",
            limits,
        )
    nbytes = float(frames) * (4 * max(int(channels), 1) + 8)
    if target_rate:
        nbytes += 8 * float(frames) * target_rate / sample_rate
    if nbytes > limits.max_audio_bytes:
        raise refuse(
            where,
            f"decoding the recording needs {_size(nbytes)} ({channels} channels)",
            "max_audio_bytes",
            limits,
        )
