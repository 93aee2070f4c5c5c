"""Audio decoding, resampling, safe zip extraction and the audio manifest.

Decoding goes through soundfile (libsndfile: wav, flac, ogg, mp3 with libsndfile >= 1.1), mixes
multi-channel audio down to mono and resamples with a polyphase filter to the model's rate.
Every problem with one file raises :class:`AudioDecodeError` (a
:class:`~voxmetrics.errors.VoxMetricsInputError`) whose message is the per-file reason.
"""

from __future__ import annotations

import io
import os
from fractions import Fraction
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from voxmetrics.data.model import META_COLUMNS, SPLIT_VALUES
from voxmetrics.data.readers.tables import csv_header, refuse_duplicate_columns
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import (
    ArchiveReader,
    check_audio,
    check_count,
    check_input_path,
    get_limits,
    read_file_bytes,
)

__all__ = [
    "AUDIO_EXTENSIONS",
    "DEFAULT_LOUDNESS",
    "DEFAULT_MAX_ZIP_BYTES",
    "AudioDecodeError",
    "decode_audio",
    "extract_zip",
    "normalise_loudness",
    "read_manifest",
    "resolve_audio_path",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")
"""File types the decoder accepts."""
DEFAULT_MAX_ZIP_BYTES = 4 * 1024**3
"""Default cap on the expanded size of an uploaded zip (4 GiB)."""
MIN_DURATION = 0.25
"""Shortest recording (seconds) that gives a usable speaker embedding."""
SILENCE_PEAK = 1e-4
"""Recordings whose peak absolute amplitude is below this are treated as silent."""
DEFAULT_LOUDNESS = -30.0
"""Integrated loudness (LUFS, ITU-R BS.1770-4) every recording is brought to before embedding,
as the VoicePrivacy 2024 evaluation does; None turns it off."""


class AudioDecodeError(VoxMetricsInputError):
    """One audio file could not be used; the message is the per-file reason."""


def decode_audio(
    source: str | os.PathLike[str] | bytes,
    *,
    sample_rate: int = 16000,
    name: str | None = None,
    min_duration: float = MIN_DURATION,
) -> NDArray[np.float32]:
    """Decode one recording to a mono float32 waveform at ``sample_rate``.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        The file, or its bytes.
    sample_rate : int
        Target rate in Hz (the extractor's rate, 16000 for ECAPA and GE2E).
    name : str, optional
        File name used in messages (default: the path, or ``"audio"``).
    min_duration : float
        Shortest accepted duration in seconds.

    Returns
    -------
    numpy.ndarray
        Shape (n_samples,), float32 in [-1, 1].

    Raises
    ------
    AudioDecodeError
        Not decodable (corrupt, not audio), empty, too short, silent or not finite, or over
        the input limits (:mod:`voxmetrics.limits`: sample rate outside ``min_sample_rate`` to
        ``max_sample_rate``, longer than ``max_audio_seconds``), checked on the header before
        decoding and resampling.

    Examples
    --------
    >>> import soundfile as sf
    >>> buf = io.BytesIO()
    >>> sf.write(buf, np.sin(np.arange(8000) / 5.0), 8000, format="WAV")
    >>> decode_audio(buf.getvalue(), sample_rate=16000).shape
    (16000,)
    """
    import soundfile as sf

    where = name or (str(source) if not isinstance(source, bytes) else "audio")
    if not isinstance(source, bytes):
        source = read_file_bytes(source, where)  # refuses folders, devices, oversized files
    try:
        info = sf.info(io.BytesIO(source))
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioDecodeError(
            f"{where}: not a readable audio file ({exc}); use wav, flac, ogg or mp3."
        ) from None
    try:  # the header's rate, length and channels are checked before anything is decoded
        check_audio(where, info.samplerate, info.frames, info.channels, sample_rate, len(source))
    except VoxMetricsInputError as exc:
        raise AudioDecodeError(str(exc)) from None
    try:
        wav, rate = sf.read(io.BytesIO(source), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
        raise AudioDecodeError(
            f"{where}: not a readable audio file ({exc}); use wav, flac, ogg or mp3."
        ) from None
    try:  # a header may understate the length (e.g. an mp3 without one): check what came out
        check_audio(where, rate, wav.shape[0], wav.shape[1], sample_rate)
    except VoxMetricsInputError as exc:
        raise AudioDecodeError(str(exc)) from None
    if wav.shape[0] == 0:
        raise AudioDecodeError(f"{where}: the recording is empty (0 samples).")
    mono = wav.mean(axis=1, dtype=np.float64)
    if not np.isfinite(mono).all():
        raise AudioDecodeError(f"{where}: the recording has NaN or infinite samples.")
    duration = mono.size / rate
    if duration < min_duration:
        raise AudioDecodeError(
            f"{where}: the recording is too short ({duration:.2f} s); a speaker embedding needs "
            f"at least {min_duration:g} s."
        )
    if np.abs(mono).max() < SILENCE_PEAK:
        raise AudioDecodeError(f"{where}: the recording is silent (no signal above -80 dBFS).")
    if rate != sample_rate:
        from scipy.signal import resample_poly

        ratio = Fraction(sample_rate, int(rate))
        mono = resample_poly(mono, ratio.numerator, ratio.denominator)
    return np.clip(mono, -1.0, 1.0).astype(np.float32)


def normalise_loudness(
    wave: NDArray[np.floating], sample_rate: int, *, target: float = DEFAULT_LOUDNESS
) -> NDArray[np.float32]:
    """``wave`` scaled to an integrated loudness of ``target`` LUFS (ITU-R BS.1770-4).

    The loudness is measured by ``pyloudnorm`` (its K-weighting and gating; 400 ms blocks, or
    the whole recording when it is shorter) and one gain applied, as the VoicePrivacy 2024
    evaluation does before its speaker encoders (-30 LUFS). The result is not clipped. A
    recording gated out entirely (no block above -70 LUFS) is returned as it is.

    Examples
    --------
    >>> import pyloudnorm
    >>> t = np.arange(16000) / 16000
    >>> quiet = (0.01 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    >>> louder = normalise_loudness(quiet, 16000)
    >>> round(float(pyloudnorm.Meter(16000).integrated_loudness(louder.astype(np.float64))), 3)
    -30.0
    """
    try:
        import pyloudnorm
    except ImportError:  # pragma: no cover - the [audio] extra installs it
        raise VoxMetricsInputError(
            "loudness normalisation needs pyloudnorm: pip install 'voxmetrics[audio]' (or "
            "pyloudnorm), or turn it off (--no-loudness-norm)."
        ) from None
    x = np.asarray(wave, dtype=np.float64)
    meter = pyloudnorm.Meter(sample_rate, block_size=min(0.4, x.size / sample_rate))
    loudness = meter.integrated_loudness(x)
    if not np.isfinite(loudness):
        return np.asarray(wave, dtype=np.float32)
    return (x * 10.0 ** ((target - loudness) / 20.0)).astype(np.float32)


def _safe_relative(name: str) -> PurePosixPath | None:
    """``name`` as a relative POSIX path inside its root, or None when it would escape it."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or (p.parts and ":" in p.parts[0]):
        return None
    return p


def extract_zip(
    source: str | os.PathLike[str] | bytes,
    dest: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_ZIP_BYTES,
    name: str | None = None,
) -> Path:
    """Extract a zip of recordings safely into ``dest``.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        The zip archive or its bytes.
    dest : str or os.PathLike
        Extraction root (created if missing).
    max_bytes : int
        Cap on the expanded size, checked on the declared sizes and while writing.
    name : str, optional
        Archive name used in messages.

    Returns
    -------
    pathlib.Path
        The extraction root.

    Raises
    ------
    VoxMetricsInputError
        Not a zip, a member path outside the extraction root (absolute or with ``..``), an
        expanded size over ``max_bytes`` or over the archive limits of
        :mod:`voxmetrics.limits` (``max_member_bytes``, ``max_archive_bytes``, ``max_ratio``).
    """
    where = name or (str(source) if not isinstance(source, bytes) else "uploaded zip")
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    if not isinstance(source, bytes):
        check_input_path(source, where)  # a folder or a device gets its own message
    with ArchiveReader(source, where) as zf:
        infos = [i for i in zf.infos.values() if not i.is_dir()]
        for info in infos:
            if _safe_relative(info.filename) is None:
                raise VoxMetricsInputError(
                    f"{where}: member '{info.filename}' points outside the extraction folder; "
                    "refusing the archive. Use relative paths without '..'."
                )
        declared = sum(i.file_size for i in infos)
        cap = min(max_bytes, get_limits().max_archive_bytes)
        if declared > cap:
            raise VoxMetricsInputError(
                f"{where}: expands to {declared / 1e6:.1f} MB, over the cap of "
                f"{cap / 1e6:.1f} MB; split the archive or raise the cap (--max-zip-mb, or the "
                "limit max_archive_bytes)."
            )
        written = 0
        for info in infos:
            zf.check_member(info)
            rel = _safe_relative(info.filename)
            assert rel is not None
            target = root.joinpath(*rel.parts)
            if not target.resolve().is_relative_to(root.resolve()):
                raise VoxMetricsInputError(
                    f"{where}: member '{info.filename}' points outside the extraction folder; "
                    "refusing the archive."
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as out:  # the caps are checked on the bytes produced
                for chunk in zf.chunks(info.filename):
                    written += len(chunk)
                    if written > cap:
                        raise VoxMetricsInputError(
                            f"{where}: expands to more than the cap of {cap / 1e6:.1f} MB (its "
                            "declared sizes are wrong); refusing the archive."
                        )
                    out.write(chunk)
    return root


def resolve_audio_path(root: str | os.PathLike[str], audio_path: str) -> Path:
    """Resolve a manifest ``audio_path`` under ``root``, refusing paths that escape it.

    Raises
    ------
    AudioDecodeError
        The path is absolute, contains ``..`` or resolves outside ``root``.
    """
    rel = _safe_relative(audio_path)
    base = Path(root).resolve()
    if rel is not None:
        full = base.joinpath(*rel.parts).resolve()
        if full.is_relative_to(base):
            return full
    raise AudioDecodeError(
        f"{audio_path}: the path points outside the audio folder; give it relative to the folder "
        "or zip root."
    )


def read_manifest(
    source: str | os.PathLike[str] | bytes, *, name: str | None = None
) -> pd.DataFrame:
    """Read and validate the audio manifest CSV.

    Columns ``utt_id, speaker, role, split, audio_path`` are required; ``system`` defaults to
    ``original``; other columns (``sex``, ``age_group``...) are kept as attributes.

    Raises
    ------
    VoxMetricsInputError
        Unreadable CSV, missing or empty required columns, bad role / split values, or repeated
        ``utt_id``.
    """
    where = name or (str(source) if not isinstance(source, bytes) else "manifest")
    data = source if isinstance(source, bytes) else read_file_bytes(source, where)
    check_count(where, "lines", data.count(b"\n"), "max_rows")
    refuse_duplicate_columns(csv_header(data), where)
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise VoxMetricsInputError(f"{where}: not a readable CSV manifest ({exc}).") from None
    df.columns = [str(c).strip() for c in df.columns]
    needed = (*META_COLUMNS, "audio_path")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise VoxMetricsInputError(
            f"{where}: the manifest lacks column(s) {', '.join(missing)}; it needs "
            f"{', '.join(needed)} (and optionally system, sex, age_group)."
        )
    if "system" not in df.columns:
        df["system"] = "original"
    df["system"] = df["system"].fillna("original")
    for c in needed:
        empty = df[c].isna() | (df[c].str.strip() == "")
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0])
            raise VoxMetricsInputError(
                f"{where}: column '{c}' is empty in row {row + 1} (first data row = 1); fill it in."
            )
    for col, allowed in (("role", {"enrol", "trial"}), ("split", set(SPLIT_VALUES))):
        bad = ~df[col].isin(allowed)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise VoxMetricsInputError(
                f"{where}: row {row + 1} (first data row = 1) has {col} '{df[col].iloc[row]}'; "
                f"use one of {', '.join(sorted(allowed))}."
            )
    dup = df["utt_id"].duplicated()
    if dup.any():
        raise VoxMetricsInputError(
            f"{where}: utt_id '{df['utt_id'][dup].iloc[0]}' appears more than once; each "
            "recording (including each anonymised copy) needs its own utt_id, e.g. prefixed with "
            "the system."
        )
    return df.reset_index(drop=True)
