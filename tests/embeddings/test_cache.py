"""``voxmetrics.embeddings.cache``: embeddings kept on disk by audio hash and model identity.

An entry is read back exactly (as float32), is private to its model, is written atomically,
and a damaged, tampered or unusable entry is a cache miss, never an error or an unpickling.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from hostile_inputs import npy_header

from voxmetrics.embeddings.cache import EmbeddingCache, audio_hash, default_cache_dir


def test_audio_hash_is_the_sha256_of_the_bytes():
    assert audio_hash(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert audio_hash(b"RIFF") == hashlib.sha256(b"RIFF").hexdigest() != audio_hash(b"RIFX")


def test_default_cache_dir_is_the_environment_s_else_the_home_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("VOXMETRICS_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("VOXMETRICS_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == Path(tmp_path) / ".cache" / "voxmetrics"


def test_entries_round_trip_as_float32_and_are_private_to_their_model(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-a")
    assert cache.get("ab") is None  # nothing cached yet (and no folder made by reading)
    assert not cache.folder.exists()
    cache.put("ab", np.array([0.1, -2.0, 3.5]))
    got = cache.get("ab")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([0.1, -2.0, 3.5], dtype=np.float32))
    key = hashlib.sha256(b"model-a").hexdigest()[:24]
    assert sorted(p.name for p in (tmp_path / "embeddings" / key).iterdir()) == ["ab.npy"]
    assert EmbeddingCache(tmp_path, "model-b").get("ab") is None  # another model's: a miss
    cache.put("ab", np.zeros(2))  # a new value replaces the old one
    assert cache.get("ab").tolist() == [0.0, 0.0]


def test_entries_that_are_not_one_finite_vector_are_misses(tmp_path):
    cache = EmbeddingCache(tmp_path, "m")
    cache.put("nan", np.array([1.0, np.nan]))
    cache.put("matrix", np.ones((2, 2)))
    cache._path("text").write_bytes(b"not an npy file")
    assert cache.get("nan") is None and cache.get("matrix") is None and cache.get("text") is None


def test_tampered_embedding_cache_entry_is_a_miss(tmp_path):
    from voxmetrics.embeddings.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, "m")
    cache.put("ab", np.ones(3))
    cache._path("ab").write_bytes(npy_header((10**12,)))  # declares 8 TB
    assert cache.get("ab") is None
    cache._path("ab").write_bytes(npy_header((1,), "|O") + b"\x80\x04N.")  # object array
    assert cache.get("ab") is None
    cache.put("ab", np.ones(3))
    assert cache.get("ab").tolist() == [1.0, 1.0, 1.0]
