"""On-disk embedding cache keyed by the audio's content hash and the model identity."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import load_npy, read_file_bytes

__all__ = ["EmbeddingCache", "audio_hash", "default_cache_dir"]


def audio_hash(data: bytes) -> str:
    """sha256 hex digest of an audio file's bytes."""
    return hashlib.sha256(data).hexdigest()


def default_cache_dir() -> Path:
    """``$VOXMETRICS_CACHE`` or ``~/.cache/voxmetrics``."""
    env = os.environ.get("VOXMETRICS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "voxmetrics"


class EmbeddingCache:
    """Embeddings stored as ``<root>/embeddings/<model>/<audio sha256>.npy``.

    Parameters
    ----------
    root : str or os.PathLike
        Cache folder (created on first write).
    model_id : str
        The extractor's identity (:attr:`Extractor.identity`): a hash of its weights and
        preprocessing, so a different model never reads another's embeddings.

    Examples
    --------
    >>> import tempfile
    >>> c = EmbeddingCache(tempfile.mkdtemp(), "m")
    >>> c.put("ab", np.ones(3)); c.get("ab").tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, root: str | os.PathLike[str], model_id: str) -> None:
        key = hashlib.sha256(model_id.encode()).hexdigest()[:24]
        self.folder = Path(root) / "embeddings" / key

    def _path(self, digest: str) -> Path:
        return self.folder / f"{digest}.npy"

    def get(self, digest: str) -> NDArray[np.float32] | None:
        """The cached embedding of the audio with this hash, or None."""
        p = self._path(digest)
        if not p.is_file():
            return None
        try:  # a damaged or tampered entry is a cache miss (header checked, never unpickled)
            e = load_npy(read_file_bytes(p), str(p))
        except VoxMetricsInputError:
            return None
        return e if e.ndim == 1 and np.isfinite(e).all() else None

    def put(self, digest: str, embedding: NDArray[np.floating]) -> None:
        """Store one embedding (written atomically)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{digest}.{os.getpid()}.tmp.npy"
        np.save(tmp, np.asarray(embedding, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, self._path(digest))
