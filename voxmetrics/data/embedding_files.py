r"""Embedding files of the VoicePrivacy / Kaldi world: ark, scp and HDF5.

Each reader returns the utterance ids and a U x d float64 matrix; :func:`read_embeddings
<voxmetrics.data.readers.read_embeddings>` then matches them to the metadata. Formats are
recognised by content (:func:`sniff_embeddings`):

- **Kaldi binary ark** (``key \0B`` then ``FV`` / ``DV`` vectors, as Kaldi's
  ``copy-vector`` and the VoicePrivacy 2020 / 2022 x-vector recipes write them; float or
  double; one-row matrices are accepted as vectors). Read with ``kaldiio``.
- **Kaldi text ark** (``key  [ 0.1 0.2 ... ]``), parsed here in float64.
- **Kaldi scp** (``key path.ark:offset``), which points into arks by byte offset. Relative
  paths are resolved against ``ark_root`` (default: the scp file's own folder), and a path
  that leads outside that folder (``..``, an absolute path elsewhere, a symlink out) is
  **refused**, as are piped commands (``cmd |``), which are never run. VoicePrivacy recipes
  write paths relative to the recipe folder: pass that folder as ``ark_root`` (command line:
  ``--ark-root``). An scp needs its arks on disk, so it must be given as a path.
- **HDF5** (``h5py``), either one 1-D dataset per utterance (the dataset's path is the utt_id)
  or one 2-D matrix plus its ids (datasets ``embeddings`` and ``utt_ids``, or the only 2-D
  numeric and the only 1-D text dataset). External links and virtual datasets, which read
  other files, are refused, and so are soft links that loop; every other failure of h5py
  (a file cut short or corrupt, a datatype with no NumPy equivalent) is one "damaged or
  unsupported HDF5 file" message naming the file.
"""

from __future__ import annotations

import io
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count, check_declared, check_hdf5_dataset, read_file_bytes

__all__ = [
    "EMBEDDING_FILE_KINDS",
    "read_hdf5_embeddings",
    "read_kaldi_ark",
    "read_kaldi_scp",
    "sniff_embeddings",
]

EMBEDDING_FILE_KINDS = ("kaldi-ark", "kaldi-text-ark", "kaldi-scp", "hdf5")
"""The values :func:`sniff_embeddings` returns."""

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_BINARY_ARK = re.compile(rb"\A[^\s\x00]+ \x00B")
_TEXT_ARK = re.compile(rb"\A\s*[^\s\[\]]+[ \t]+\[")
_SCP_LINE = re.compile(r"^(\S+)\s+(.+):(\d+)$")
_PIPED = re.compile(r"^\S+\s+.+\|$")

Vectors = tuple[NDArray[np.str_], NDArray[np.float64]]


def sniff_embeddings(data: bytes) -> str | None:
    r"""Recognise a Kaldi ark / scp or HDF5 embeddings file by content; None if it is not one.

    Examples
    --------
    >>> sniff_embeddings(b"utt1  [ 0.5 1.0 ]\n")
    'kaldi-text-ark'
    >>> sniff_embeddings(b"utt1 /data/xvector.1.ark:6\nutt2 /data/xvector.1.ark:42\n")
    'kaldi-scp'
    >>> sniff_embeddings(b"utt1 spk1\n") is None
    True
    """
    if _hdf5_offset(data) is not None:
        return "hdf5"
    if _BINARY_ARK.match(data[:256]):
        return "kaldi-ark"
    if _TEXT_ARK.match(data[:256]):
        return "kaldi-text-ark"
    head = data[:4096].decode("utf-8", errors="replace").splitlines()
    lines = [ln.strip() for ln in head[:-1] or head if ln.strip()]
    if lines and all(_SCP_LINE.match(ln) or _PIPED.match(ln) for ln in lines[:20]):
        return "kaldi-scp"  # piped lines too: the scp reader refuses them by name
    return None


def _hdf5_offset(data: bytes) -> int | None:
    """Where the HDF5 signature is; None when the data is not HDF5.

    At 0, or after a user block of 512, 1024, 2048, ... bytes (as MATLAB v7.3 files have).
    """
    offset = 0
    while offset + 8 <= len(data) and offset <= 1 << 24:
        if data[offset : offset + 8] == _HDF5_MAGIC:
            return offset
        offset = 512 if offset == 0 else offset * 2
    return None


def _vectors(keys: list[str], rows: list[NDArray[Any]], name: str) -> Vectors:
    if not keys:
        raise VoxMetricsInputError(f"{name}: holds no embedding; give a file with vectors.")
    dims = np.array([r.size for r in rows])
    if (dims != dims[0]).any():
        i = int(np.argmax(dims != dims[0]))
        raise VoxMetricsInputError(
            f"{name}: shape mismatch: '{keys[i]}' has {dims[i]} values but '{keys[0]}' has "
            f"{dims[0]}; all embeddings must have the same dimension."
        )
    ids = np.array(keys, dtype=str)
    return ids, np.vstack([r.astype(np.float64, copy=False).ravel() for r in rows])


def _as_vector(key: str, a: Any, name: str) -> NDArray[Any]:
    if isinstance(a, tuple):  # kaldiio returns (rate, wave) for audio entries
        raise VoxMetricsInputError(
            f"{name}: '{key}' holds audio, not an embedding; give the x-vector ark."
        )
    a = np.asarray(a)
    if a.dtype.kind not in "fiu":
        raise VoxMetricsInputError(f"{name}: '{key}' is not numeric ({a.dtype}).")
    if a.ndim == 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim == 2:
        raise VoxMetricsInputError(
            f"{name}: '{key}' is a {a.shape[0]} x {a.shape[1]} matrix (per-frame features?), "
            "not one embedding vector per utterance; give the utterance-level x-vectors."
        )
    if a.ndim != 1 or a.size == 0:
        what = "a single number" if a.ndim == 0 else f"of shape {a.shape}"
        raise VoxMetricsInputError(
            f"{name}: '{key}' is {what}, not one embedding vector per utterance; give each "
            "utterance's vector (1-D, at least one value)."
        )
    return a


def _parse_text_ark(text: str, name: str) -> Vectors:
    keys: list[str] = []
    rows: list[NDArray[Any]] = []
    pos = 0
    entry = re.compile(r"\s*(\S+)\s+\[([^\]]*)\]")
    while pos < len(text.rstrip()):
        m = entry.match(text, pos)
        if m is None:
            start = len(text) - len(text[pos:].lstrip())
            line = text.count("\n", 0, start) + 1
            raise VoxMetricsInputError(
                f"{name}: line {line}: not a Kaldi text ark entry (`utt_id  [ v1 v2 ... ]`); "
                "check the brackets."
            )
        body = m.group(2)
        if "[" in body:  # the entry's ']' is missing: it would swallow the entries after it
            line = text.count("\n", 0, m.start(2)) + 1
            raise VoxMetricsInputError(
                f"{name}: line {line}: the vector of '{m.group(1)}' has no closing ']' before "
                "the next entry; the ark is damaged. Write it again (copy-vector)."
            )
        lines = [ln for ln in body.splitlines() if ln.strip()]
        try:
            vec = np.array(body.split(), dtype=np.float64)
        except ValueError:
            line = text.count("\n", 0, m.start(2)) + 1
            raise VoxMetricsInputError(
                f"{name}: line {line}: the vector of '{m.group(1)}' holds a value that is not a "
                "number."
            ) from None
        if len(lines) > 1:
            vec = vec.reshape(len(lines), -1) if vec.size % len(lines) == 0 else vec
        keys.append(m.group(1))
        rows.append(_as_vector(m.group(1), vec, name))
        pos = m.end()
    return _vectors(keys, rows, name)


_ARK_TYPES = {b"FV ": (4, 1), b"DV ": (8, 1), b"FM ": (4, 2), b"DM ": (8, 2)}
"""Binary Kaldi ark entry types that are read: token -> (bytes per value, size fields)."""


def _ark_entry(
    head: bytes, pos: int, end: int, key: str, name: str, prev: str | None = None
) -> int:
    r"""Check one binary ark entry whose ``\0B`` starts at ``pos``; returns where it ends.

    The header's declared size is checked against the bytes left in the file (``end``)
    before anything is read, so a header declaring 2^31 - 1 values is refused at once.
    """
    token = head[pos + 2 : pos + 5]
    if token not in _ARK_TYPES:
        shown = token.decode("ascii", "replace").strip() or repr(token)
        raise VoxMetricsInputError(
            f"{name}: the ark entry '{key}' (byte {pos}) is of type '{shown}', not a float or "
            "double vector (FV / DV); the ark header is damaged, or the entry is compressed or "
            "audio. Write the x-vectors with copy-vector ark:in.ark ark:out.ark."
        )
    itemsize, n_sizes = _ARK_TYPES[token]
    sizes, p = [], pos + 5
    for _ in range(n_sizes):
        field = head[p : p + 5]
        if len(field) < 5 or field[0] != 4:
            raise VoxMetricsInputError(
                f"{name}: the ark entry '{key}' (byte {pos}) has a damaged size field; the ark "
                "is truncated or not a Kaldi ark. Write it again."
            )
        sizes.append(int.from_bytes(field[1:5], "little", signed=True))
        p += 5
    if any(n < 0 for n in sizes):
        raise VoxMetricsInputError(
            f"{name}: the ark entry '{key}' (byte {pos}) declares a negative size {sizes}; the "
            "ark header is damaged. Write it again."
        )
    declared = itemsize * math.prod(sizes)
    if declared > end - p:
        after = f" after '{prev}'" if prev else ""
        raise VoxMetricsInputError(
            f"{name}: the Kaldi ark is damaged or truncated{after}: entry '{key}' (byte {pos}) "
            f"declares {' x '.join(map(str, sizes))} values ({declared:,} bytes) but only "
            f"{max(end - p, 0):,} bytes follow; write it again (e.g. copy-vector ark:in.ark "
            "ark:out.ark)."
        )
    check_declared(
        name,
        f"the ark entry '{key}' (byte {pos}, {' x '.join(map(str, sizes))} values)",
        declared,
        declared,
        file_bytes=end - p,
    )
    return p + declared


def _check_binary_ark(data: bytes, name: str) -> None:
    """Walk a binary ark's entry headers, checking each declared size against the file."""
    pos, prev = 0, None
    while pos < len(data):
        sep = data.find(b" ", pos, pos + 65536)
        if sep < 0 or data[sep + 1 : sep + 3] != b"\x00B":
            raise VoxMetricsInputError(
                f"{name}: byte {pos}: not a binary Kaldi ark entry (`utt_id \\0B...`); the ark "
                "is damaged or mixes text and binary entries. Write it again."
            )
        key = data[pos:sep].decode("utf-8", "replace").lstrip("\n")
        pos = _ark_entry(data, sep + 1, len(data), key, name, prev)
        prev = key
        while pos < len(data) and data[pos : pos + 1] in (b"\n", b" "):
            pos += 1


def read_kaldi_ark(data: bytes, *, name: str = "uploaded file") -> Vectors:
    r"""Utterance ids and embeddings of a Kaldi ark (binary ``FV`` / ``DV`` or text).

    Parameters
    ----------
    data : bytes
        The whole ark.
    name : str
        File name for messages.

    Returns
    -------
    utt_ids : ndarray of str, shape (U,)
    embeddings : ndarray of float64, shape (U, d)

    Examples
    --------
    >>> ids, emb = read_kaldi_ark(b"u1  [ 1 2 ]\nu2  [ 3 4.5 ]\n")
    >>> ids.tolist(), emb.tolist()
    (['u1', 'u2'], [[1.0, 2.0], [3.0, 4.5]])
    """
    if _BINARY_ARK.match(data[:256]) is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise VoxMetricsInputError(
                f"{name}: neither a binary Kaldi ark (`utt_id \\0B...`) nor UTF-8 text."
            ) from None
        return _parse_text_ark(text, name)
    import kaldiio

    _check_binary_ark(data, name)
    keys: list[str] = []
    rows: list[NDArray[Any]] = []
    try:
        for key, value in kaldiio.load_ark(io.BytesIO(data)):
            keys.append(str(key))
            rows.append(_as_vector(str(key), value, name))
    except VoxMetricsInputError:
        raise
    except Exception as exc:  # kaldiio raises ValueError, struct.error, EOFError, ...
        after = f" after '{keys[-1]}'" if keys else ""
        raise VoxMetricsInputError(
            f"{name}: the Kaldi ark is damaged or truncated{after} ({type(exc).__name__}: "
            f"{exc}); write it again (e.g. copy-vector ark:in.ark ark:out.ark)."
        ) from None
    return _vectors(keys, rows, name)


def _check_scp_entry(ark: Path, offset: int, key: str, where: str) -> None:
    """Check the ark header an scp line points at, before kaldiio reads (and allocates) it."""
    size = ark.stat().st_size
    with ark.open("rb") as fh:
        fh.seek(offset)
        head = fh.read(32)
    if head[:2] != b"\x00B":
        raise VoxMetricsInputError(
            f"{where}: no Kaldi vector at byte {offset} (no `\\0B` there); is the scp from "
            "another version of the ark?"
        )
    _ark_entry(head, 0, size - offset, key, where)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def read_kaldi_scp(
    path: str | os.PathLike[str], *, ark_root: str | os.PathLike[str] | None = None
) -> Vectors:
    """Utterance ids and embeddings of a Kaldi scp (``utt_id path.ark:offset`` lines).

    Parameters
    ----------
    path : str or os.PathLike
        The scp file (a path: its arks are read from disk).
    ark_root : str or os.PathLike, optional
        Folder the relative ark paths are resolved against, and outside which no ark may lie
        (default: the scp's folder).

    Returns
    -------
    utt_ids, embeddings
        As :func:`read_kaldi_ark`, in the scp's order.

    Raises
    ------
    VoxMetricsInputError
        Malformed lines, piped commands, arks outside ``ark_root`` or missing, offsets that do
        not point at a vector.
    """
    import kaldiio

    scp = Path(path)
    name = scp.name
    root = Path(ark_root) if ark_root is not None else scp.parent
    root = root.resolve()
    try:
        text = read_file_bytes(scp, name).decode("utf-8")
    except UnicodeDecodeError:
        raise VoxMetricsInputError(f"{name}: not UTF-8 text, so not a Kaldi scp.") from None
    check_count(name, "lines", text.count("\n"), "max_rows")
    keys: list[str] = []
    rows: list[NDArray[Any]] = []
    fds: dict[str, Any] = {}
    try:
        for i, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line:
                continue
            if line.endswith("|") or " | " in line:
                raise VoxMetricsInputError(
                    f"{name}: line {i}: a piped command; commands in an scp are never run. "
                    "Write the vectors to an ark first (copy-vector) and point the scp there."
                )
            m = _SCP_LINE.match(line)
            if m is None:
                raise VoxMetricsInputError(
                    f"{name}: line {i}: expected `utt_id path.ark:offset`, got {line[:80]!r}."
                )
            key, ark, offset = m.group(1), m.group(2), m.group(3)
            target = Path(ark) if Path(ark).is_absolute() else root / ark
            target = target.resolve()
            if not _inside(target, root):
                raise VoxMetricsInputError(
                    f"{name}: line {i}: '{ark}' lies outside {root}, which is refused; put the "
                    "arks under the scp's folder or name their common folder as the ark root "
                    "(ark_root=..., command line --ark-root)."
                )
            if not target.is_file():
                raise VoxMetricsInputError(
                    f"{name}: line {i}: the ark '{ark}' does not exist (looked for {target}); "
                    "relative paths are resolved against the ark root (default: the scp's "
                    "folder; command line --ark-root)."
                )
            _check_scp_entry(target, int(offset), key, f"{name}: line {i}: '{ark}'")
            try:
                value = kaldiio.load_mat(f"{target}:{offset}", fd_dict=fds)
            except Exception as exc:
                raise VoxMetricsInputError(
                    f"{name}: line {i}: no Kaldi vector at byte {offset} of '{ark}' "
                    f"({type(exc).__name__}: {exc}); is the scp from another version of the ark?"
                ) from None
            keys.append(key)
            rows.append(_as_vector(key, value, name))
    finally:
        for fd in fds.values():
            fd.close()
    return _vectors(keys, rows, name)


def _h5_text(a: NDArray[Any]) -> NDArray[np.str_] | None:
    if a.dtype.kind == "S" or a.dtype.kind == "O":
        try:
            return np.array(
                [x.decode("utf-8") if isinstance(x, bytes) else str(x) for x in a.tolist()]
            )
        except UnicodeDecodeError:
            return None
    if a.dtype.kind == "U":
        return a.astype(str)
    return None


def _h5_type(d: Any) -> str:
    """What an HDF5 dataset holds, in words (for a refusal)."""
    kind = d.dtype.kind
    if d.dtype.names:
        return f"a compound type ({', '.join(d.dtype.names[:4])})"
    if d.dtype.subdtype is not None or d.ndim > 2:
        return f"arrays of shape {d.shape} ({d.dtype})"
    words = {"b": "true / false", "c": "complex numbers", "V": "opaque bytes", "O": "objects"}
    return words.get(kind, "text" if kind in "SU" else str(d.dtype))


def read_hdf5_embeddings(data: bytes, *, name: str = "uploaded file") -> Vectors:
    """Utterance ids and embeddings of an HDF5 file (either layout of the module docstring).

    Examples
    --------
    >>> import io, h5py, numpy as np
    >>> buf = io.BytesIO()
    >>> with h5py.File(buf, "w") as f:
    ...     _ = f.create_dataset("u1", data=[1.0, 2.0])
    ...     _ = f.create_dataset("u2", data=[3.0, 4.0])
    >>> ids, emb = read_hdf5_embeddings(buf.getvalue())
    >>> ids.tolist(), emb.tolist()
    (['u1', 'u2'], [[1.0, 2.0], [3.0, 4.0]])
    """
    import h5py

    try:
        f = h5py.File(io.BytesIO(data), "r")
    except Exception as exc:
        raise _damaged_hdf5(name, "cannot be opened as HDF5", exc) from None
    try:
        with f:
            datasets = _hdf5_datasets(f, name)
            for d in datasets.values():  # external storage, filters, declared vs stored sizes
                check_hdf5_dataset(name, d, as_float64=d.dtype.kind in "fiu", file_bytes=len(data))
            total = sum(int(d.size) * 8 for d in datasets.values())
            check_count(name, "bytes of datasets (read as float64)", total, "max_array_bytes")
            return _hdf5_vectors(datasets, name)
    except VoxMetricsInputError:
        raise
    except Exception as exc:  # h5py raises OSError, RuntimeError, TypeError, SystemError, ...
        raise _damaged_hdf5(name, "its data cannot be read", exc) from None


def _damaged_hdf5(name: str, what: str, exc: BaseException) -> VoxMetricsInputError:
    """The one message of an HDF5 file h5py fails on (cut short, corrupt, or unsupported)."""
    # a failure inside h5py's link visitor comes out as a SystemError whose cause is the error
    cause = (exc.__cause__ or exc.__context__ or exc) if isinstance(exc, SystemError) else exc
    detail = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    return VoxMetricsInputError(
        f"{name}: damaged or unsupported HDF5 file: {what} ({detail}). If it was cut short "
        "(a partial download or copy), copy it whole again; otherwise write it again with h5py: "
        "numeric datasets, ids as strings, no external or looping links."
    )


def _hdf5_datasets(f: Any, name: str) -> dict[str, Any]:
    """The file's datasets by path; external links, virtual datasets and link loops refused.

    Every link is listed first (without following any), so that an external link is refused
    before a soft link could lead into the file it names; soft links are then followed inside
    this file only, and a loop of them is refused.
    """
    import h5py

    links: dict[str, Any] = {}

    def visit(path: str, link: Any) -> None:
        links[path] = link

    f.visititems_links(visit)
    refused = [p for p, link in links.items() if isinstance(link, h5py.ExternalLink)]
    datasets: dict[str, Any] = {}
    for path, link in links.items():
        if refused:
            break
        try:
            obj = f.get(path)
        except Exception as exc:
            if not isinstance(link, h5py.SoftLink):
                raise
            raise _damaged_hdf5(
                name, f"the soft link '{path}' -> '{link.path}' loops or cannot be followed", exc
            ) from None
        if isinstance(obj, h5py.Dataset):
            if obj.is_virtual:
                refused.append(path)
            else:
                datasets[path] = _checked_hdf5_type(obj, path, name)
    if refused:
        raise VoxMetricsInputError(
            f"{name}: damaged or unsupported HDF5 file: '{refused[0]}' is an external link or "
            "virtual dataset, which reads other files; this is refused. Copy the data into the "
            "file (h5repack)."
        )
    if not datasets:
        raise VoxMetricsInputError(f"{name}: the HDF5 file holds no dataset.")
    check_count(name, "datasets", len(datasets), "max_rows")
    return datasets


def _checked_hdf5_type(d: Any, path: str, name: str) -> Any:
    """``d``, refused when its datatype or dataspace has no NumPy equivalent."""
    try:
        d.dtype  # noqa: B018 (h5py raises TypeError for e.g. HDF5 time datatypes)
    except TypeError as exc:
        raise _damaged_hdf5(name, f"dataset '{path}' has an unsupported datatype", exc) from None
    if d.shape is None:
        raise VoxMetricsInputError(
            f"{name}: damaged or unsupported HDF5 file: dataset '{path}' has a null dataspace "
            "(it holds no value at all); remove it or write its values."
        )
    return d


def _hdf5_vectors(datasets: dict[str, Any], name: str) -> Vectors:
    """Ids and vectors of checked datasets (either layout); shapes checked before reading."""
    two_d = {k: d for k, d in datasets.items() if d.ndim == 2 and d.dtype.kind in "fiu"}
    texts = {k: d for k, d in datasets.items() if d.ndim == 1 and d.dtype.kind in "SOU"}
    if two_d:
        mk: str | None = "embeddings" if "embeddings" in two_d else None
        ik: str | None = next((k for k in ("utt_ids", "ids", "keys") if k in texts), None)
        if mk is None and len(two_d) == 1:
            mk = next(iter(two_d))
        if ik is None and len(texts) == 1:
            ik = next(iter(texts))
        if mk is None or ik is None:
            raise VoxMetricsInputError(
                f"{name}: found 2-D dataset(s) {', '.join(sorted(two_d))} but cannot tell "
                "which holds the embeddings and which the ids; name them 'embeddings' "
                "(U x d) and 'utt_ids' (U strings)."
            )
        rows, n_ids = two_d[mk].shape[0], texts[ik].shape[0]
        if n_ids != rows:  # from the headers, before reading either
            raise VoxMetricsInputError(
                f"{name}: shape mismatch: '{mk}' has {rows:,} rows but '{ik}' holds {n_ids:,} "
                "ids; give one id per row."
            )
        emb = np.asarray(two_d[mk][()], dtype=np.float64)
        ids = _h5_text(np.asarray(texts[ik][()]))
        if ids is None or ids.shape != (emb.shape[0],):
            raise VoxMetricsInputError(
                f"{name}: the ids in '{ik}' are not UTF-8 text; store them as strings."
            )
        return ids, emb
    vectors = {k: d for k, d in datasets.items() if d.dtype.kind in "fiu"}
    if not vectors:
        k, d = next(iter(datasets.items()))
        raise VoxMetricsInputError(
            f"{name}: damaged or unsupported HDF5 file: it holds no numeric dataset ('{k}' "
            f"holds {_h5_type(d)}); "
            "store each embedding as float32 or float64 (or one 'embeddings' matrix with its "
            "'utt_ids')."
        )
    keys = list(vectors)
    rows_ = [_as_vector(k, np.asarray(vectors[k][()]), name) for k in keys]
    return _vectors(keys, rows_, name)
