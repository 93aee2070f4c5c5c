"""Per-utterance inputs of the utility metrics: transcripts, emotion labels, audio lists.

Each reader takes a Kaldi-style text file (``utt_id value...``, as a VoicePrivacy ``data/``
folder holds them: ``text``, ``utt2emo``, ``wav.scp``) or a CSV with a header (``utt_id,text``,
``utt_id,label``, ``utt_id,path``) and returns a :class:`pandas.Series` indexed by utterance id;
:func:`read_audio_zip` lists the recordings of a zip archive (an upload) the same way.
:func:`paired` lines up references and system outputs and refuses utterances of one that the
other lacks.
"""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from voxmetrics.data.readers.tables import csv_header, refuse_duplicate_columns
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    ArchiveReader,
    get_limits,
    read_file_bytes,
    refuse,
    safe_member_name,
)

__all__ = [
    "fold_column",
    "paired",
    "read_audio_list",
    "read_audio_zip",
    "read_labels",
    "read_transcripts",
    "speakers_of",
]

Source = str | os.PathLike[str] | bytes


def _text(source: Source, name: str | None) -> tuple[str, str]:
    if isinstance(source, bytes | bytearray):
        label = name or "uploaded file"
        if len(source) > get_limits().max_file_bytes:
            raise refuse(label, f"the file is {len(source):,} bytes", "max_file_bytes")
        data = bytes(source)
    else:
        label = name or Path(source).name
        data = read_file_bytes(Path(source), label)
    try:
        return data.decode("utf-8-sig"), label
    except UnicodeDecodeError:
        raise VoxMetricsInputError(f"{label}: is not UTF-8 text.") from None


def _csv(text: str, label: str, value: tuple[str, ...]) -> pd.Series | None:
    """The CSV's (utt_id, value) column pair, None when the text is not such a CSV."""
    first = text.lstrip().split("\n", 1)[0]
    if "," not in first or "utt_id" not in [c.strip() for c in first.split(",")]:
        return None
    refuse_duplicate_columns(csv_header(text.encode()), label)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, ValueError) as exc:
        raise VoxMetricsInputError(f"{label}: cannot be read as CSV ({exc}).") from None
    col = next((c for c in value if c in df.columns), None)
    if col is None:
        raise VoxMetricsInputError(
            f"{label}: the CSV needs the columns utt_id and one of {', '.join(value)}; found "
            f"{', '.join(df.columns)}."
        )
    return pd.Series(df[col].to_numpy(), index=df["utt_id"].str.strip().to_numpy())


def _kaldi(text: str, label: str, *, one_field: bool, layout: str) -> pd.Series:
    ids, values = [], []
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.strip().split(maxsplit=1)
        if not parts:
            continue
        rest = parts[1].strip() if len(parts) > 1 else ""
        if one_field and (not rest or len(rest.split()) != 1):
            raise VoxMetricsInputError(
                f"{label}: line {i} is '{line.strip()[:60]}'; every line must be `{layout}`."
            )
        ids.append(parts[0])
        values.append(rest)
    return pd.Series(values, index=ids, dtype=object)


def _finish(series: pd.Series, label: str, layout: str) -> pd.Series:
    if series.empty:
        raise VoxMetricsInputError(f"{label}: the file is empty; it should hold `{layout}` lines.")
    dup = series.index.duplicated()
    if dup.any():
        raise VoxMetricsInputError(
            f"{label}: utterance '{series.index[int(np.argmax(dup))]}' is listed twice; give each "
            "utterance one line."
        )
    series.index = series.index.astype(str)
    return series.astype(str)


def read_transcripts(source: Source, *, name: str | None = None) -> pd.Series:
    r"""Transcripts (references or ASR hypotheses) by utterance id.

    A Kaldi ``text`` file (``utt_id word word ...``; an utterance with no word is an empty
    transcript) or a CSV with the columns ``utt_id`` and ``text``.

    Examples
    --------
    >>> read_transcripts(b"u1 HELLO WORLD\nu2 YES\n").to_dict()
    {'u1': 'HELLO WORLD', 'u2': 'YES'}
    """
    text, label = _text(source, name)
    s = _csv(text, label, ("text", "transcript", "hypothesis"))
    if s is None:
        s = _kaldi(text, label, one_field=False, layout="utt_id word word ...")
    return _finish(s, label, "utt_id word word ...")


def read_labels(source: Source, *, name: str | None = None) -> pd.Series:
    r"""Class labels (emotions, or a classifier's predictions) by utterance id.

    A Kaldi-style file ``utt_id label`` (e.g. ``utt2emo``) or a CSV with the columns ``utt_id``
    and ``label`` (or ``emotion``, ``prediction``).

    Examples
    --------
    >>> read_labels(b"utt_id,label\nu1,ang\nu2,sad\n").to_dict()
    {'u1': 'ang', 'u2': 'sad'}
    """
    text, label = _text(source, name)
    s = _csv(text, label, ("label", "emotion", "prediction"))
    if s is None:
        s = _kaldi(text, label, one_field=True, layout="utt_id label")
    return _finish(s, label, "utt_id label")


def fold_column(source: Source, *, name: str | None = None) -> pd.Series | None:
    r"""The ``fold`` column of a CSV of utterances, by utterance id; None when it has none.

    A labels or predictions CSV (``utt_id,label,fold``) may say each utterance's fold, as
    VoicePrivacy's emotion recognition evaluates IEMOCAP fold by fold (one classifier per
    fold); a Kaldi-style file has no such column.

    Examples
    --------
    >>> fold_column(b"utt_id,label,fold\nu1,ang,1\nu2,sad,2\n").to_dict()
    {'u1': '1', 'u2': '2'}
    >>> fold_column(b"u1 ang\n") is None
    True
    """
    text, label = _text(source, name)
    first = text.lstrip().split("\n", 1)[0]
    if "fold" not in [c.strip() for c in first.split(",")]:
        return None
    s = _csv(text, label, ("fold",))
    if s is None:
        return None
    empty = s.str.strip() == ""
    if empty.any():
        raise VoxMetricsInputError(
            f"{label}: utterance '{s.index[int(np.argmax(empty.to_numpy()))]}' has no fold; give "
            "every utterance its fold, or drop the column."
        )
    return _finish(s.str.strip(), label, "utt_id,label,fold")


def read_audio_list(source: str | os.PathLike[str]) -> pd.Series:
    """Recordings by utterance id.

    A folder of audio files (id = file name without extension), a Kaldi ``wav.scp`` of plain
    paths, or a CSV with the columns ``utt_id`` and ``path``.

    Relative paths are taken from the list's folder. A ``wav.scp`` line that is a command
    (ending in ``|``) is refused: VoxMetrics never runs commands from input files.
    """
    p = Path(source)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        s = pd.Series([str(f) for f in files], index=[f.stem for f in files], dtype=object)
        return _finish(s, str(p), "audio files")
    text, label = _text(p, None)
    s = _csv(text, label, ("path", "audio", "wav"))
    if s is None:
        s = _kaldi(text, label, one_field=False, layout="utt_id path")
    for utt, value in s.items():
        if value.strip().endswith("|"):
            raise VoxMetricsInputError(
                f"{label}: the entry of '{utt}' is a command ('{value[:50]}'), not a file path; "
                "VoxMetrics runs no commands from input files: convert the audio to files "
                "(e.g. with sox) and list their paths."
            )
    s = s.map(lambda v: str(Path(v) if Path(v).is_absolute() else p.parent / v))
    return _finish(s, label, "utt_id path")


def read_audio_zip(data: bytes, *, suffixes: tuple[str, ...], name: str | None = None) -> pd.Series:
    """Recordings of a zip archive by utterance id: the archive's member names.

    Every member whose name ends with one of ``suffixes`` (e.g. ``(".wav", ".flac")``,
    case-insensitive), in any folder of the archive, is a recording; its utterance id is its
    file name without the extension. Folders, hidden files and ``__MACOSX`` entries are
    skipped. The members are not read here: decode them from the archive with
    :class:`~voxmetrics.limits.ArchiveReader`.

    Raises
    ------
    VoxMetricsInputError
        Not a zip archive, a member that points outside the archive, no recording, or two
        recordings with the same utterance id.

    Examples
    --------
    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as zf:
    ...     zf.writestr("anon/u1.wav", b"..."); zf.writestr("anon/readme.txt", b"...")
    >>> read_audio_zip(buf.getvalue(), suffixes=(".wav",), name="anon.zip").to_dict()
    {'u1': 'anon/u1.wav'}
    """
    label = name or "uploaded zip"
    with ArchiveReader(data, label) as ar:
        members = ar.names()
    ids, found = [], []
    for member in members:
        if not safe_member_name(member):
            raise VoxMetricsInputError(
                f"{label}: refusing an unsafe archive: member '{member}' points outside the "
                "archive (absolute path or '..'); zip the recordings again."
            )
        base = PurePosixPath(member)
        if (
            member.endswith("/")
            or "__MACOSX" in base.parts
            or base.name.startswith(".")
            or base.suffix.lower() not in suffixes
        ):
            continue
        ids.append(base.stem)
        found.append(member)
    if not found:
        raise VoxMetricsInputError(
            f"{label}: the archive holds no recording ({', '.join(suffixes)}); zip the folder "
            "of audio files, one file per utterance named after its utterance id."
        )
    s = pd.Series(found, index=ids, dtype=object)
    dup = s.index.duplicated()
    if dup.any():
        utt = s.index[int(np.argmax(dup))]
        raise VoxMetricsInputError(
            f"{label}: utterance '{utt}' has two recordings ({', '.join(s[utt])}); give each "
            "utterance one file."
        )
    return _finish(s, label, "audio files")


def paired(
    reference: pd.Series, system: pd.Series, *, reference_name: str, system_name: str
) -> pd.DataFrame:
    """References and system outputs of the same utterances, in the reference's order.

    Raises
    ------
    VoxMetricsInputError
        An utterance of the system output is not in the reference (the key), or a reference
        utterance has no output.

    Examples
    --------
    >>> ref = pd.Series({"u1": "A B", "u2": "C"}); hyp = pd.Series({"u2": "C", "u1": "A"})
    >>> paired(ref, hyp, reference_name="text", system_name="hyp")["system"].tolist()
    ['A', 'C']
    """
    extra = system.index.difference(reference.index)
    if len(extra):
        raise VoxMetricsInputError(
            f"{system_name}: {len(extra)} utterance(s) are not in the reference {reference_name} "
            f"(first: '{extra[0]}'); give the outputs of the reference's utterances only."
        )
    lacking = reference.index.difference(system.index)
    if len(lacking):
        raise VoxMetricsInputError(
            f"{system_name}: {len(lacking)} utterance(s) of the reference {reference_name} have "
            f"no output (first: '{lacking[0]}'); give one line for every utterance (an empty "
            "transcript is allowed)."
        )
    return pd.DataFrame(
        {"reference": reference.to_numpy(), "system": system.reindex(reference.index).to_numpy()},
        index=reference.index,
    )


def speakers_of(utterances: pd.Index | list[str], utt2spk: pd.Series | None = None) -> np.ndarray:
    """The speaker of each utterance.

    From ``utt2spk``, else the id's prefix before the first ``-`` (the Kaldi and LibriSpeech
    convention), else the utterance itself.

    Examples
    --------
    >>> speakers_of(["1272-128104-0000", "1272-128104-0001", "x"]).tolist()
    ['1272', '1272', 'x']
    """
    ids = pd.Index(utterances).astype(str)
    if utt2spk is not None:
        spk = utt2spk.reindex(ids)
        if spk.isna().any():
            raise VoxMetricsInputError(
                f"utt2spk: {int(spk.isna().sum())} utterance(s) have no speaker (first: "
                f"'{ids[int(np.argmax(spk.isna().to_numpy()))]}'); list every utterance."
            )
        return spk.astype(str).to_numpy()
    return np.asarray([u.split("-", 1)[0] for u in ids], dtype=str)
