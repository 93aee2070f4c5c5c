"""Plain pool-adjacent-violators for the tie-order tests (test_pav.py, test_zebra.py)."""

from __future__ import annotations

import numpy as np


def pav_blocks(y):
    """Plain pool-adjacent-violators (mean of each violating block), for the tests."""
    blocks = []  # [sum, count]
    for v in y:
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(c, s / c) for s, c in blocks])
