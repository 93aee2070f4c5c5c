"""voxmetrics.embeddings.audio: decoding, safe zips, the manifest, and loudness normalisation.

Recordings are brought to -30 LUFS before extraction by default, as the VoicePrivacy 2024
evaluation does (``normalise_loudness`` and its use by ``extract_embeddings``).
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from voxmetrics.embeddings import (
    DEFAULT_LOUDNESS,
    AudioDecodeError,
    decode_audio,
    extract_embeddings,
    extract_zip,
    normalise_loudness,
    read_manifest,
    resolve_audio_path,
)
from voxmetrics.errors import VoxMetricsInputError

pyloudnorm = pytest.importorskip("pyloudnorm")


def modulated_tone(gain: float, seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (gain * np.sin(2 * np.pi * 220 * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))).astype(
        np.float32
    )


@pytest.mark.parametrize("gain", [0.001, 0.05, 0.9])
@pytest.mark.parametrize("target", [DEFAULT_LOUDNESS, -23.0])
def test_recordings_are_brought_to_the_target_loudness(gain, target):
    out = normalise_loudness(modulated_tone(gain), 16000, target=target)
    measured = pyloudnorm.Meter(16000).integrated_loudness(out.astype(np.float64))
    assert measured == pytest.approx(target, abs=1e-3)
    assert out.dtype == np.float32 and out.shape == (16000,)


def test_short_recordings_are_measured_whole_and_silence_is_left_alone():
    short = normalise_loudness(modulated_tone(0.01, seconds=0.3), 16000)
    meter = pyloudnorm.Meter(16000, block_size=0.3)
    assert meter.integrated_loudness(short.astype(np.float64)) == pytest.approx(-30.0, abs=1e-3)
    quiet = np.full(16000, 1e-6, dtype=np.float32)  # gated out: below -70 LUFS
    np.testing.assert_array_equal(normalise_loudness(quiet, 16000), quiet)


class LevelExtractor:
    """A fake extractor whose embedding is the recording's level (so gains show)."""

    name, identity, sample_rate, device, padding_invariant = "fake", "fake-v1", 16000, "cpu", True

    def embed(self, waves):
        return np.array([[np.sqrt(np.mean(w**2)), 1.0] for w in waves], dtype=np.float32)


def test_extraction_normalises_by_default_records_it_and_keys_the_cache(tmp_path):
    for name, gain in (("a.wav", 0.01), ("b.wav", 0.5)):
        sf.write(tmp_path / name, modulated_tone(gain), 16000)
    manifest = pd.DataFrame(
        {
            "utt_id": ["a", "b"],
            "speaker": ["s", "s"],
            "role": ["enrol", "trial"],
            "split": ["eval", "eval"],
            "audio_path": ["a.wav", "b.wav"],
        }
    )
    cache = tmp_path / "cache"
    on = extract_embeddings(
        manifest, audio_root=tmp_path, extractor=LevelExtractor(), cache_dir=cache
    )
    e = on.embeddings.embeddings
    assert e[0, 0] == pytest.approx(e[1, 0], rel=1e-4)  # one level after normalisation
    assert on.loudness == -30.0 and on.to_dict()["loudness_lufs"] == -30.0
    assert on.embeddings.source == "embeddings (fake, -30 LUFS)"
    off = extract_embeddings(
        manifest, audio_root=tmp_path, extractor=LevelExtractor(), cache_dir=cache, loudness=None
    )
    assert off.n_cached == 0  # normalised embeddings are never served for raw audio
    assert off.embeddings.embeddings[1, 0] > 10 * off.embeddings.embeddings[0, 0]
    assert off.to_dict()["loudness_lufs"] is None
    assert off.embeddings.source == "embeddings (fake, no loudness normalisation)"


def tone(seconds: float = 0.5, rate: int = 16000, freq: float = 220.0, channels: int = 1):
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    return np.stack([x, 0.5 * x], axis=1)[:, :channels] if channels > 1 else x


def encode(x: np.ndarray, rate: int, fmt: str, subtype: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


MANIFEST = """utt_id,speaker,role,split,audio_path,system,sex
o_e1,a,enrol,eval,orig/a1.wav,original,F
o_t1,a,trial,eval,orig/a2.wav,original,F
o_e2,b,enrol,eval,orig/b1.wav,original,M
o_t2,b,trial,eval,orig/b2.wav,original,M
x_e1,a,enrol,eval,anon/a1.wav,B1,F
x_t1,a,trial,eval,anon/a2.wav,B1,F
x_e2,b,enrol,eval,anon/b1.wav,B1,M
x_t2,b,trial,eval,anon/b2.wav,B1,M
"""


@pytest.mark.parametrize(
    ("fmt", "subtype"),
    [("WAV", "PCM_16"), ("FLAC", None), ("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")],
)
def test_each_format_decodes_to_mono_16k(fmt, subtype):
    if fmt not in sf.available_formats():
        pytest.skip(f"libsndfile {sf.__libsndfile_version__} cannot write {fmt}")
    w = decode_audio(encode(tone(0.5), 16000, fmt, subtype), sample_rate=16000, name=f"x.{fmt}")
    assert w.dtype == np.float32 and w.ndim == 1
    assert abs(w.size - 8000) <= 1200  # mp3 adds encoder delay / padding
    assert 0.1 < np.abs(w).max() <= 1.0


def test_stereo_is_mixed_down():
    w = decode_audio(encode(tone(0.5, channels=2), 16000, "WAV", "FLOAT"), sample_rate=16000)
    np.testing.assert_allclose(w, 0.75 * tone(0.5), atol=1e-6)


@pytest.mark.parametrize("rate", [8000, 44100])
def test_resampling_keeps_duration_and_pitch(rate):
    w = decode_audio(encode(tone(1.0, rate=rate), rate, "WAV", "FLOAT"), sample_rate=16000)
    assert w.size == 16000
    peak_hz = np.argmax(np.abs(np.fft.rfft(w))) * 16000 / w.size
    assert abs(peak_hz - 220) <= 2


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (encode(np.zeros(16000), 16000, "WAV"), "silent"),
        (encode(tone(0.1), 16000, "WAV"), "too short (0.10 s)"),
        (encode(tone(0.5), 16000, "WAV")[:30], "not a readable audio file"),
        (b"name,speaker\nu1,a\n" * 50, "not a readable audio file"),
        (b"", "not a readable audio file"),
    ],
    ids=["silence", "0.1s", "corrupt", "csv-renamed-wav", "empty"],
)
def test_bad_audio_gives_its_reason(data, needle):
    with pytest.raises(AudioDecodeError, match=r"bad\.wav") as info:
        decode_audio(data, name="bad.wav")
    assert needle in str(info.value)
    assert isinstance(info.value, VoxMetricsInputError)


def test_zip_extracts_inside_root(tmp_path):
    root = extract_zip(zip_bytes({"a/b.wav": b"x", "c.wav": b"yz"}), tmp_path / "out")
    assert (root / "a" / "b.wav").read_bytes() == b"x"
    assert (root / "c.wav").read_bytes() == b"yz"


@pytest.mark.parametrize("member", ["../evil.wav", "/etc/evil.wav", "a/../../evil.wav", "C:/x.wav"])
def test_zip_refuses_paths_outside_root(tmp_path, member):
    with pytest.raises(VoxMetricsInputError, match="outside the extraction folder"):
        extract_zip(zip_bytes({"ok.wav": b"x", member: b"y"}), tmp_path / "out", name="up.zip")
    assert not (tmp_path / "evil.wav").exists()


def test_zip_refuses_expanded_size_over_cap(tmp_path):
    data = zip_bytes({"big.wav": b"\0" * 200_000})  # compresses to a few hundred bytes
    assert len(data) < 2000
    with pytest.raises(VoxMetricsInputError, match="over the cap"):
        extract_zip(data, tmp_path / "out", max_bytes=100_000)
    extract_zip(data, tmp_path / "ok", max_bytes=200_000)


def test_zip_lying_about_sizes_is_stopped_while_writing(tmp_path):
    data = bytearray(zip_bytes({"big.wav": b"\0" * 50_000}))
    # shrink the declared uncompressed size in the central directory to 10 bytes
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    with pytest.raises(VoxMetricsInputError, match=r"corrupt|cap"):
        extract_zip(bytes(data), tmp_path / "out", max_bytes=1000)


def test_not_a_zip(tmp_path):
    with pytest.raises(VoxMetricsInputError, match="not a readable zip"):
        extract_zip(b"hello", tmp_path)


def test_resolve_refuses_escape(tmp_path):
    assert resolve_audio_path(tmp_path, "a/b.wav") == (tmp_path / "a" / "b.wav").resolve()
    for bad in ("../x.wav", "/etc/passwd"):
        with pytest.raises(AudioDecodeError, match="outside the audio folder"):
            resolve_audio_path(tmp_path, bad)


def test_manifest_reads_and_defaults_system():
    df = read_manifest(MANIFEST.encode())
    assert len(df) == 8 and set(df["system"]) == {"original", "B1"}
    df2 = read_manifest(b"utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,u.wav\n")
    assert df2["system"].tolist() == ["original"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("utt_id,speaker,role,split\nu,a,enrol,eval\n", "lacks column(s) audio_path"),
        ("utt_id,speaker,role,split,audio_path\nu,a,test,eval,u.wav\n", "role 'test'"),
        ("utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,\n", "'audio_path' is empty"),
        (
            "utt_id,speaker,role,split,audio_path\nu,a,enrol,eval,1.wav\nu,a,trial,eval,2.wav\n",
            "more than once",
        ),
        ("", "not a readable CSV"),
        (
            "utt_id,speaker,role,split,audio_path,speaker\nu,a,enrol,eval,1.wav,b\n",
            "column 'speaker' appears twice in m.csv (columns 2 and 6)",
        ),
    ],
)
def test_bad_manifest(text, needle):
    with pytest.raises(VoxMetricsInputError, match=r"m\.csv") as info:
        read_manifest(text.encode(), name="m.csv")
    assert needle in str(info.value)
