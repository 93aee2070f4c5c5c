"""Bootstrap replicates by family (metrics.uncertainty): each family alone equals every number's."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.uncertainty import REPLICATE_FAMILIES, SpeakerDraws, condition_replicates


def _same_floats(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize(
    "families",
    [("pairwise",), ("zebra",), ("linkability",), ("linkability", "srd"), ("lid",)],
)
def test_replicate_families_equal_those_of_every_number(families):
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=(40, 12)), 1)
    targets = rng.integers(0, 12, size=40)
    speakers = np.array([f"s{v}" for v in rng.integers(0, 9, size=40)])
    lid = rng.normal(size=40)
    draws = SpeakerDraws.draw(speakers, n_boot=30, seed=4)
    every = condition_replicates(scores, targets, speakers, draws, lid=lid)
    ranks = (
        target_ranks(scores, targets, ties="attacker"),
        target_ranks(scores, targets, ties="reference"),
    )
    alone = condition_replicates(
        scores, targets, speakers, draws, lid=lid, ranks=ranks, families=families
    )
    keys = {k for f in families for k in REPLICATE_FAMILIES[f]}
    assert set(alone.estimates) == keys
    for key in keys:
        assert alone.estimates[key] == every.estimates[key]
        _same_floats(alone.reps[key], every.reps[key])
        assert alone.intervals()[key] == every.intervals()[key]
    if "linkability" in families:
        _same_floats(alone.curve_reps, every.curve_reps)
    with pytest.raises(VoxMetricsInputError, match="unknown replicate families"):
        condition_replicates(scores, targets, speakers, draws, families=("nothing",))
