"""Hypothesis strategy shared by the pooled-score tests: pairs of target / non-target pools.

Tied integer scores, continuous scores, float32, separable pools and identical pools.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


def _pools(draw, n_max: int = 25):
    kind = draw(st.sampled_from(["int", "float", "float32", "separable", "identical"]))
    nt = draw(st.integers(1, n_max))
    nn = draw(st.integers(1, n_max))
    if kind == "int":
        hi = draw(st.integers(0, 6))
        tar = draw(st.lists(st.integers(0, hi), min_size=nt, max_size=nt))
        non = draw(st.lists(st.integers(0, hi), min_size=nn, max_size=nn))
        return np.array(tar, float), np.array(non, float)
    if kind == "identical":
        tar = draw(st.lists(st.integers(0, 4), min_size=nt, max_size=nt))
        return np.array(tar, float), np.array(tar, float)
    floats = st.floats(-3, 3, allow_nan=False, width=32 if kind == "float32" else 64)
    tar = np.array(draw(st.lists(floats, min_size=nt, max_size=nt)))
    non = np.array(draw(st.lists(floats, min_size=nn, max_size=nn)))
    if kind == "separable":
        tar = np.abs(tar) + 3.5
    if kind == "float32":
        return tar.astype(np.float32), non.astype(np.float32)
    return tar, non


pools = st.composite(_pools)
