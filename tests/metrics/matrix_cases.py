"""Score matrices for the kernel tests (test_pools.py, test_ranks.py): ties, signed zeros,
scores of mixed magnitudes, float32 and float64, one row or one column."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


def matrix(seed: int, t: int, n: int, dtype: str, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "ties":  # few distinct values, -0.0 and +0.0 among them
        s = rng.integers(-3, 4, size=(t, n)).astype(dtype) * dtype_type(dtype)(0.5)
        s[rng.random((t, n)) < 0.3] *= -1
    elif kind == "zeros":
        s = np.where(rng.random((t, n)) < 0.5, -0.0, 0.0).astype(dtype)
    else:
        s = (rng.standard_normal((t, n)) * rng.choice([1e-3, 1.0, 1e3], (t, n))).astype(dtype)
    return s


def dtype_type(dtype: str):
    return np.dtype(dtype).type


shapes = st.sampled_from([(1, 1), (1, 7), (9, 1), (30, 4), (3, 200), (700, 500)])
