"""Loudness normalisation before extraction (voxmetrics.embeddings.audio.normalise_loudness and
its use by extract_embeddings): -30 LUFS by default, as the VoicePrivacy 2024 evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmetrics.embeddings import DEFAULT_LOUDNESS, extract_embeddings, normalise_loudness

pyloudnorm = pytest.importorskip("pyloudnorm")
sf = pytest.importorskip("soundfile")


def tone(gain: float, seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (gain * np.sin(2 * np.pi * 220 * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))).astype(
        np.float32
    )


@pytest.mark.parametrize("gain", [0.001, 0.05, 0.9])
@pytest.mark.parametrize("target", [DEFAULT_LOUDNESS, -23.0])
def test_recordings_are_brought_to_the_target_loudness(gain, target):
    out = normalise_loudness(tone(gain), 16000, target=target)
    measured = pyloudnorm.Meter(16000).integrated_loudness(out.astype(np.float64))
    assert measured == pytest.approx(target, abs=1e-3)
    assert out.dtype == np.float32 and out.shape == (16000,)


def test_short_recordings_are_measured_whole_and_silence_is_left_alone():
    short = normalise_loudness(tone(0.01, seconds=0.3), 16000)
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
        sf.write(tmp_path / name, tone(gain), 16000)
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
