"""Format detection: magic bytes for binary files, the first lines for text.

The content decides; a file's extension is only a hint for ambiguous text. Empty files,
pickled data and text that is not UTF-8 are refused here, before any parser runs.
"""

from __future__ import annotations

import codecs
import csv
import io
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

from voxmetrics.data.embedding_files import sniff_embeddings
from voxmetrics.data.model import META_COLUMNS
from voxmetrics.data.readers._common import PREFIX, SCORE_COLUMNS
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "binary_kind",
    "check_not_empty",
    "check_utf8",
    "detect_format",
    "detect_kind",
]

_SUPPORTED = (
    "supported formats are: long scores CSV or Parquet (columns trial_id, trial_speaker, "
    "enrol_speaker, score); NumPy NPZ (scores, trial_ids, trial_speakers, enrol_speakers; or "
    "embeddings, utt_ids) or NPY; Kaldi / VoicePrivacy scores (`enrol_id trial_id score`); "
    "Kaldi key (`enrol_id trial_id target|nontarget`); utt2spk (`utt_id speaker`); metadata "
    "CSV (utt_id, speaker, role, split)"
)

_UTF8_PIECE = 1 << 24  # bytes of text checked for UTF-8 at a time


def check_not_empty(data: bytes, name: str) -> None:
    """Refuse an empty file (or one of blank lines only)."""
    if not data or (not data[:PREFIX].strip() and not data.strip()):
        raise VoxMetricsInputError(
            f"{name}: the file is empty; upload the file that holds the data (was it saved "
            "before upload?)."
        )


def _refuse_pickle(data: bytes, name: str) -> None:
    if data[:1] == b"\x80":
        raise VoxMetricsInputError(
            f"{name}: pickled data is refused for safety (loading a pickle can run arbitrary "
            "code); save with numpy.savez / to CSV."
        )


def binary_kind(data: bytes, name: str) -> str | None:
    """Recognise binary formats by their magic bytes; ``None`` when it is not one of them."""
    _refuse_pickle(data, name)
    if data[:4] == b"PAR1":
        if data[-4:] != b"PAR1":
            raise VoxMetricsInputError(
                f"{name}: starts like a Parquet file but has no Parquet footer, so it is "
                "truncated or damaged; export or upload it again."
            )
        return "parquet"
    if data[:6] == b"\x93NUMPY":
        return "npy"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = zf.namelist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
            raise VoxMetricsInputError(
                f"{name}: looks like a zip / NPZ archive but cannot be opened (truncated or "
                "damaged?); save it again with numpy.savez."
            ) from None
        others = [m for m in members if not m.endswith(".npy")]
        if others:
            raise VoxMetricsInputError(
                f"{name}: not a recognised format: a zip archive that is not an NPZ (it "
                f"contains '{others[0]}'); {_SUPPORTED}. Save score or embedding arrays with "
                "numpy.savez."
            )
        return "npz"
    return None


def _looks_binary(prefix: bytes) -> bool:
    if b"\x00" in prefix:
        return True
    a = np.frombuffer(prefix, dtype=np.uint8)
    ctrl = ((a < 32) & ~np.isin(a, (9, 10, 11, 12, 13))) | (a == 127)
    return bool(a.size) and ctrl.mean() > 0.05


def check_utf8(data: bytes, name: str) -> None:
    """Refuse text that is not UTF-8, naming the byte offset and line of the first bad byte."""
    if data.isascii():
        return
    # in pieces: decoding all at once would hold the text besides its bytes (up to 4x them)
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _UTF8_PIECE):
            pending = len(decoder.getstate()[0])  # bytes of a character cut by the last piece
            decoder.decode(view[start : start + _UTF8_PIECE], final=False)
        pending = len(decoder.getstate()[0])
        start = len(data)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        pos = start - pending + exc.start
        line = data.count(b"\n", 0, pos) + 1
        hint = ""
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            hint = " It starts with a UTF-16 byte-order mark, so it was saved as UTF-16."
        raise VoxMetricsInputError(
            f"{name}: not UTF-8 text: byte 0x{data[pos]:02x} at byte offset {pos} (line {line}) "
            f"is not valid UTF-8.{hint} Re-save the file with UTF-8 encoding (e.g. 'CSV UTF-8' "
            "in Excel, or `iconv -t UTF-8`)."
        ) from None


def _unknown(name: str, what: str) -> VoxMetricsInputError:
    return VoxMetricsInputError(
        f"{name}: not a recognised format ({what}); {_SUPPORTED}. Export the data in one of "
        "these formats."
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sniff_text(data: bytes, name: str) -> str:
    prefix = data[:PREFIX].decode("utf-8", errors="ignore").lstrip("\ufeff")
    lines = prefix.splitlines()
    if len(data) > PREFIX and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    lines = [ln for ln in lines if ln.strip()][:50]
    if not lines:
        raise VoxMetricsInputError(
            f"{name}: the file is empty (only a byte-order mark or blank lines); upload the file "
            "that holds the data."
        )
    ext = Path(name).suffix.lower()
    first = lines[0]
    fields = [ln.split() for ln in lines]
    width = Counter(len(f) for f in fields).most_common(1)[0][0]
    if width == 3 and len(fields[0]) == 3:
        # Kaldi lines; labels may contain commas, but a CSV header never ends in a score/label
        third = [f[2] for f in fields if len(f) == 3]
        n_key = sum(t.lower() in ("target", "nontarget") for t in third)
        n_num = sum(_is_number(t) for t in third)
        first_ok = _is_number(fields[0][2]) or fields[0][2].lower() in ("target", "nontarget")
        if "," not in first or first_ok:
            if n_key and n_key >= n_num:
                return "kaldi-key"
            if n_num:
                return "kaldi"
    if "," in first:
        header = {c.strip() for c in next(csv.reader([first]))}
        if set(META_COLUMNS) <= header or (
            {"utt_id", "speaker"} <= header and not header & set(SCORE_COLUMNS)
        ):
            return "metadata"
        return "csv"
    if width == 2:
        return "utt2spk"
    for sep, what in (("\t", "tab"), (";", "semicolon")):
        if sep in first:
            raise _unknown(name, f"{what}-separated text; use commas to separate CSV columns")
    if ext == ".csv":  # e.g. a one-column CSV: let the reader say which columns are missing
        return "csv"
    raise _unknown(name, f"text whose first line is {first[:80]!r}")


def detect_kind(data: bytes, name: str) -> str:
    """The format of ``data`` (one of :data:`FORMATS`), as :func:`detect_format` says it."""
    check_not_empty(data, name)
    kind = binary_kind(data, name)
    if kind is not None:
        return kind
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        check_utf8(data, name)
    head = data[:PREFIX]
    if _looks_binary(head[:8192]):
        hint = "binary content"
        if data[:2] == b"\x1f\x8b":
            hint = "gzip-compressed data; decompress it first"
        elif data[:8] == b"\x89HDF\r\n\x1a\n":
            hint = (
                "an HDF5 file: HDF5 is read as embeddings (read_embeddings, command line "
                "--embeddings); export scores as NPZ or CSV"
            )
        elif sniff_embeddings(data[:256]) == "kaldi-ark":
            hint = (
                "a binary Kaldi ark of vectors: arks are read as embeddings (read_embeddings, "
                "command line --embeddings); Kaldi scores are text `enrol_id trial_id score`"
            )
        elif ext_hint := {".parquet": "Parquet", ".npz": "NPZ", ".npy": "NPY"}.get(
            Path(name).suffix.lower()
        ):
            hint = f"binary content without the {ext_hint} signature; is the file damaged?"
        raise _unknown(name, hint)
    check_utf8(data, name)
    return _sniff_text(data, name)


def detect_format(data: bytes, name: str = "") -> str:
    r"""Recognise the format of a file from its content.

    The content decides (magic bytes of Parquet, NPY, NPZ; sniffing the first lines of text);
    the extension of ``name`` is only a hint for ambiguous text.

    Parameters
    ----------
    data : bytes
        The whole file.
    name : str, optional
        The file name, used as a hint and in messages.

    Returns
    -------
    str
        One of ``"csv"`` (long scores CSV), ``"parquet"``, ``"npz"``, ``"npy"``, ``"kaldi"``
        (``enrol_id trial_id score``), ``"kaldi-key"`` (``enrol_id trial_id
        target|nontarget``), ``"utt2spk"`` (``utt_id speaker``) or ``"metadata"`` (CSV with
        ``utt_id, speaker, role, split`` columns).

    Raises
    ------
    VoxMetricsInputError
        Empty file, pickled data (refused), text that is not UTF-8 (with the byte offset and
        line), or content in none of the formats above.

    Examples
    --------
    >>> detect_format(b"trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.5\n")
    'csv'
    >>> detect_format(b"spk1 utt1 -0.25\nspk2 utt1 1.5\n")
    'kaldi'
    >>> detect_format(b"spk1 utt1 target\nspk2 utt1 nontarget\n")
    'kaldi-key'
    """
    return detect_kind(data if isinstance(data, bytes) else bytes(data), name or "uploaded file")
