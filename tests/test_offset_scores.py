"""The offset-scores generator (synth.offset_scores) of the threat model's scenarios."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.synth import offset_scores


def test_offset_scores_model():
    sm = offset_scores(n_enrolled=4, n_trials=10, margin=0.5, offset_spread=0.0, noise=0.0)
    assert sm.shape == (10, 4)
    assert sm.targets.tolist() == [k % 4 for k in range(10)]
    # no offset, no noise: the own speaker scores `margin`, everyone else 0
    expected = np.zeros((10, 4))
    expected[np.arange(10), sm.targets] = 0.5
    np.testing.assert_array_equal(sm.scores, expected)
    with pytest.raises(ValueError):
        offset_scores(n_enrolled=1)


def test_offset_scores_is_seeded():
    a, b = offset_scores(seed=5), offset_scores(seed=5)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert not np.array_equal(a.scores, offset_scores(seed=6).scores)
