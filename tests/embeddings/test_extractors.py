"""Extractors: a tiny random-weight ECAPA-TDNN through the real loader, and GE2E (resemblyzer).

The ECAPA fixture is SpeechBrain's own ECAPA_TDNN class with small random weights, saved as a
model folder (hyperparams.yaml + embedding_model.ckpt) in the layout of
speechbrain/spkrec-ecapa-voxceleb, and loaded by EcapaExtractor exactly like a downloaded model.
Nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import torch
from extractor_cases import HPARAMS, voice, write_tiny_ecapa
from metric_registry import forget_unimportable_modules

from voxmetrics.embeddings import (
    EcapaExtractor,
    Ge2eExtractor,
    extract_embeddings,
    load_extractor,
    read_manifest,
    select_device,
)
from voxmetrics.errors import VoxMetricsInputError

HAS_RESEMBLYZER = importlib.util.find_spec("resemblyzer") is not None


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # SpeechBrain's lazy modules break hypothesis' module scan in later tests of the run
    forget_unimportable_modules()


@pytest.fixture(scope="module")
def tiny_ecapa_dir(tmp_path_factory):
    return write_tiny_ecapa(tmp_path_factory.mktemp("tiny_ecapa"), seed=0)


@pytest.fixture(scope="module")
def ecapa(tiny_ecapa_dir):
    ex = load_extractor(str(tiny_ecapa_dir), device="cpu")
    forget_unimportable_modules()
    return ex


@pytest.fixture(scope="module")
def ge2e():
    if not HAS_RESEMBLYZER:
        pytest.skip("resemblyzer (the GE2E weights) is not installed")
    return Ge2eExtractor(device="cpu")


WAVES = [voice(1.0, 0), voice(1.3, 1, 150.0), voice(0.7, 2, 200.0), voice(2.1, 3, 95.0)]


def test_ecapa_shape_norm_determinism(ecapa):
    assert ecapa.name == "ecapa" and ecapa.device == "cpu"
    e = ecapa.embed(WAVES[:2])
    assert e.shape == (2, 16) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(e, ecapa.embed(WAVES[:2]))


def test_ecapa_batch_equals_single_for_equal_lengths(ecapa):
    same = [voice(1.0, s, f) for s, f in ((0, 110.0), (1, 160.0), (2, 210.0))]
    batch = ecapa.embed(same)
    single = np.concatenate([ecapa.embed([w]) for w in same])
    np.testing.assert_allclose(batch, single, atol=1e-5)


def write_study(root, waves):
    rows = []
    for i, w in enumerate(waves):
        sf.write(root / f"u{i}.flac", w, 16000)
        rows.append((f"u{i}", f"s{i % 2}", "enrol" if i < 2 else "trial", "eval", f"u{i}.flac"))
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split", "audio_path"])
    return meta.assign(system="original")


def test_ecapa_pipeline_batched_equals_one_at_a_time(ecapa, tmp_path):
    # unequal lengths: exact mode never lets padding reach the (padding-sensitive) model
    waves = [*WAVES, WAVES[0].copy() * 0.5]
    meta = write_study(tmp_path, waves)
    batched = extract_embeddings(
        meta, audio_root=tmp_path, extractor=ecapa, batch_size=8, cache_dir=False
    )
    single = extract_embeddings(
        meta, audio_root=tmp_path, extractor=ecapa, batch_size=1, cache_dir=False
    )
    assert batched.failures.empty
    np.testing.assert_allclose(
        batched.embeddings.embeddings, single.embeddings.embeddings, atol=1e-5
    )
    padded = extract_embeddings(
        meta, audio_root=tmp_path, extractor=ecapa, batch_size=8, cache_dir=False, exact=False
    )
    np.testing.assert_allclose(np.linalg.norm(padded.embeddings.embeddings, axis=1), 1, atol=1e-6)


def test_ecapa_cache_rerun_is_instant(ecapa, tmp_path):
    audio = tmp_path / "audio"
    audio.mkdir()
    meta = write_study(audio, WAVES)
    first = extract_embeddings(meta, audio_root=audio, extractor=ecapa, cache_dir=tmp_path / "c")
    t0 = time.perf_counter()
    again = extract_embeddings(meta, audio_root=audio, extractor=ecapa, cache_dir=tmp_path / "c")
    assert again.n_cached == 4 and time.perf_counter() - t0 < 1.0
    np.testing.assert_allclose(again.embeddings.embeddings, first.embeddings.embeddings, atol=1e-6)


def test_ecapa_identity_follows_the_weights(tiny_ecapa_dir, ecapa, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "hyperparams.yaml").write_text(HPARAMS)
    state = torch.load(tiny_ecapa_dir / "embedding_model.ckpt", weights_only=True)
    torch.save(
        {k: v + 0.01 if v.is_floating_point() else v for k, v in state.items()},
        other / "embedding_model.ckpt",
    )
    assert EcapaExtractor(other, device="cpu").identity != ecapa.identity
    assert EcapaExtractor(tiny_ecapa_dir, device="cpu").identity == ecapa.identity


class NotAWeight:
    """Unpicklable-by-weights_only object planted in a checkpoint."""


def test_ecapa_refuses_pickled_code_in_checkpoint(tiny_ecapa_dir, tmp_path):
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "hyperparams.yaml").write_text(HPARAMS)
    state = torch.load(tiny_ecapa_dir / "embedding_model.ckpt", weights_only=True)
    state["payload"] = NotAWeight()
    torch.save(state, evil / "embedding_model.ckpt")
    with pytest.raises(VoxMetricsInputError, match="could not load the ECAPA model"):
        EcapaExtractor(evil, device="cpu")


def test_ecapa_bad_local_dir(tmp_path):
    with pytest.raises(VoxMetricsInputError, match=r"hyperparams\.yaml"):
        EcapaExtractor(tmp_path, device="cpu")
    with pytest.raises(VoxMetricsInputError, match="no such directory"):
        EcapaExtractor(tmp_path / "nope" / "deeper", device="cpu")


def test_hub_id_offline_fails_fast_with_local_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    t0 = time.perf_counter()
    with pytest.raises(VoxMetricsInputError, match="--model DIR") as info:
        load_extractor("ecapa", device="cpu")
    assert time.perf_counter() - t0 < 5
    assert "speechbrain/spkrec-ecapa-voxceleb" in str(info.value)


def test_device_selection():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert select_device("auto") == expected
    assert select_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(VoxMetricsInputError, match="no CUDA GPU"):
            select_device("cuda")
    with pytest.raises(VoxMetricsInputError, match="unknown"):
        select_device("tpu")


def test_ge2e_shape_norm_determinism(ge2e):
    assert ge2e.name == "ge2e"
    e = ge2e.embed(WAVES)
    assert e.shape == (4, 256)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(e, ge2e.embed(WAVES))
    single = np.concatenate([ge2e.embed([w]) for w in WAVES])
    np.testing.assert_allclose(e, single, atol=1e-5)


def test_ge2e_tells_voices_apart(ge2e):
    a1, a2 = voice(2.0, 10, 110.0), voice(2.0, 11, 110.0)
    b = voice(2.0, 12, 230.0)
    e = ge2e.embed([a1, a2, b])
    assert e[0] @ e[1] > e[0] @ e[2]


def test_ge2e_equals_resemblyzer_reference(ge2e):
    # our LSTM + torchaudio mel re-implementation against Resemblyzer's own (librosa) code, on
    # volume-normalised audio (Resemblyzer's webrtcvad trimming is not part of embed_utterance)
    pytest.importorskip("librosa")
    from resemblyzer import VoiceEncoder
    from resemblyzer.audio import normalize_volume

    forget_unimportable_modules()
    reference = VoiceEncoder("cpu", verbose=False)
    for seconds in (0.7, 2.1):
        w = voice(seconds, 3, 130.0)
        expected = reference.embed_utterance(normalize_volume(w, -30, increase_only=True))
        np.testing.assert_allclose(ge2e.embed([w])[0], expected, atol=1e-5)


def tone(seconds: float = 0.5, rate: int = 16000, freq: float = 220.0, channels: int = 1):
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    return np.stack([x, 0.5 * x], axis=1)[:, :channels] if channels > 1 else x


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


class FakeExtractor:
    """Embeds a wave as (rms, peak, length): deterministic and torch-free."""

    name = "fake"
    identity = "fake-v1"
    sample_rate = 16000
    device = "cpu"
    padding_invariant = False

    def __init__(self) -> None:
        self.batches: list[int] = []

    def embed(self, waves):
        self.batches.append(len(waves))
        e = np.array([[np.sqrt(np.mean(w**2)), np.abs(w).max(), w.size / 1e4] for w in waves])
        return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def study_folder(tmp_path):
    for i, rel in enumerate(read_manifest(MANIFEST.encode())["audio_path"]):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, tone(0.5 + 0.1 * (i % 2), freq=150 + 40 * i), 16000)
    return tmp_path


def test_pipeline_failures_are_per_file_and_the_rest_proceeds(tmp_path):
    root = study_folder(tmp_path)
    (root / "orig" / "b1.wav").write_bytes(b"not audio at all")  # renamed text
    sf.write(root / "anon" / "b2.wav", np.zeros(16000), 16000)  # silence
    (root / "anon" / "a1.wav").unlink()  # missing
    df = read_manifest(MANIFEST.encode())
    df.loc[7, "audio_path"] = "../outside.wav"
    calls = []
    res = extract_embeddings(
        df,
        audio_root=root,
        extractor=FakeExtractor(),
        cache_dir=False,
        progress=lambda f, m: calls.append((f, m)),
    )
    reasons = dict(zip(res.failures["utt_id"], res.failures["reason"], strict=True))
    assert set(reasons) == {"o_e2", "x_e1", "x_t2"}
    assert "not a readable audio file" in reasons["o_e2"]
    assert "not found" in reasons["x_e1"]
    assert "outside the audio folder" in reasons["x_t2"]
    assert res.embeddings is not None
    assert res.embeddings.meta["utt_id"].tolist() == ["o_e1", "o_t1", "o_t2", "x_t1", "x_e2"]
    assert calls[-1][0] == 1.0 and calls[-1][1].startswith("8/8")
    assert all(0 <= f <= 1 for f, _ in calls)


def test_pipeline_cache_makes_rerun_free(tmp_path):
    root = study_folder(tmp_path / "audio")
    df = read_manifest(MANIFEST.encode())
    first = FakeExtractor()
    a = extract_embeddings(df, audio_root=root, extractor=first, cache_dir=tmp_path / "c")
    second = FakeExtractor()
    b = extract_embeddings(df, audio_root=root, extractor=second, cache_dir=tmp_path / "c")
    assert a.n_cached == 0 and b.n_cached == 8 and second.batches == []
    np.testing.assert_allclose(a.embeddings.embeddings, b.embeddings.embeddings, atol=1e-7)
    other = FakeExtractor()
    other.identity = "fake-v2"  # another model never reads these entries
    c = extract_embeddings(df, audio_root=root, extractor=other, cache_dir=tmp_path / "c")
    assert c.n_cached == 0


def test_exact_batches_by_equal_length_padded_by_similar_length(tmp_path):
    root = study_folder(tmp_path / "audio")  # lengths alternate 0.5 s / 0.6 s
    df = read_manifest(MANIFEST.encode())
    exact, padded = FakeExtractor(), FakeExtractor()
    extract_embeddings(df, audio_root=root, extractor=exact, cache_dir=False, batch_size=8)
    extract_embeddings(
        df, audio_root=root, extractor=padded, cache_dir=False, batch_size=8, exact=False
    )
    assert sorted(exact.batches) == [4, 4] and padded.batches == [8]


def test_all_files_failing_gives_no_embeddings(tmp_path):
    df = read_manifest(MANIFEST.encode())
    res = extract_embeddings(df, audio_root=tmp_path, extractor=FakeExtractor(), cache_dir=False)
    assert res.embeddings is None and len(res.failures) == 8
    assert res.to_dict()["n_failed"] == 8
