"""Shared data of the back-end tests: speaker clusters of embeddings."""

from __future__ import annotations

import numpy as np


def clusters(seed: int, n_spk: int = 15, d: int = 8, spread: float = 0.5):
    """``n_spk`` speakers' Gaussian clusters in ``d`` dimensions, 2 to 5 rows each, and labels."""
    rng = np.random.default_rng(seed)
    spk = np.repeat(np.arange(n_spk), rng.integers(2, 6, n_spk))
    x = rng.normal(size=(n_spk, d))[spk] + spread * rng.normal(size=(spk.size, d))
    return x, np.array([f"s{i:02d}" for i in spk])
