"""NPZ score files (voxmetrics.data.readers.npz): float32 kept, arrays frozen, layouts."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.data import (
    read_scores,
)
from voxmetrics.errors import VoxMetricsInputError


def test_float32_npz_is_read_as_float32_without_a_writeable_copy(tmp_path):
    # a large float32 matrix stays float32 (half the memory) and is frozen, not copied
    scores = np.array([[0.9, 0.1, 0.2], [0.3, 0.8, 0.1]], dtype=np.float32)
    path = tmp_path / "s.npz"
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array(["t1", "t2"]),
        trial_speakers=np.array(["a", "b"]),
        enrol_speakers=np.array(["a", "b", "c"]),
    )
    from_path = read_scores(path)
    from_bytes = read_scores(path.read_bytes(), name="s.npz")
    for sm in (from_path, from_bytes):
        assert sm.scores.dtype == np.float32
        assert np.array_equal(sm.scores, scores)
        assert not sm.scores.flags.writeable
        base = sm.scores.base
        while isinstance(base, np.ndarray):  # nothing can write through a base either
            assert not base.flags.writeable
            base = base.base
    assert from_path.content_hash == from_bytes.content_hash
    assert from_path.source == "s.npz"
    # a compressed NPZ and a Fortran-ordered matrix read the same
    arrays = {
        "trial_ids": np.array(["t1", "t2"]),
        "trial_speakers": np.array(["a", "b"]),
        "enrol_speakers": np.array(["a", "b", "c"]),
    }
    np.savez_compressed(tmp_path / "c.npz", scores=scores, **arrays)
    np.savez(tmp_path / "f.npz", scores=np.asfortranarray(scores), **arrays)
    for other in ("c.npz", "f.npz"):
        sm = read_scores(tmp_path / other)
        assert sm.scores.dtype == np.float32 and np.array_equal(sm.scores, scores)
    with pytest.raises(VoxMetricsInputError, match="missing"):
        np.savez(path, scores=scores)
        read_scores(path)
