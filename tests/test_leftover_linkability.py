"""Linkability by hand: ties count against the attacker (voxmetrics.metrics.legal).

Leftover of the metrics test reorganisation (from the former ``test_metrics_reference.py``):
the owner of ``voxmetrics.metrics.legal`` folds it into its tests.
"""

from __future__ import annotations

import pytest

from voxmetrics import linkability


@pytest.mark.parametrize(
    ("scores", "targets", "expected"),
    [
        # the mated score ties a non-mated one: linked (the authors' code, >=)
        ([[0.5, 0.5]], [0], 1.0),
        ([[0.5, 0.5]], [1], 1.0),
        # ties among non-mated scores do not matter
        ([[0.9, 0.3, 0.3]], [0], 1.0),
        # rows: tie (yes), 0.9 > 0.2, 0.4 (yes), 0.7 < 0.8 (no), 0.3 > 0.1, 0.2 (yes) -> 3/4
        (
            [[0.5, 0.5, 0.1], [0.2, 0.9, 0.4], [0.7, 0.6, 0.8], [0.1, 0.2, 0.3]],
            [0, 1, 0, 2],
            0.75,
        ),
    ],
)
def test_linkability_hand_values(scores, targets, expected):
    assert linkability(scores, targets) == expected
