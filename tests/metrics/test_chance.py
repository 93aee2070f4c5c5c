"""Chance levels: what each number would be if the scores carried no identity (chance.py).

Checked against random scores, exact expectations over the columns, a rankdata reference
(``reference_pooled.chance_levels_reference``), row blocks as on Dask workers, threads, and
``lid()`` for the one pass that computes LID and its chance levels together.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_pooled import chance_levels_reference

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.chance import chance_levels
from voxmetrics.metrics.ranks import row_blocks
from voxmetrics.metrics.srd import srd


def test_chance_levels_of_random_scores_match_what_random_scores_give():
    """35 trials x 131 identities: random scores give MeanD ~ 2.15 bits; chance says so."""
    rng = np.random.default_rng(0)
    values = []
    for _ in range(20):
        s = rng.normal(size=(35, 131))
        t = rng.integers(0, 131, size=35)
        values.append(srd(s, t).stats.mean_d)
    c = chance_levels(rng.normal(size=(35, 131)), n_draws=400)
    assert c.values["mean_d"] == pytest.approx(np.mean(values), abs=0.08)
    assert 2.0 < c.values["mean_d"] < 2.3
    assert c.values["linkability"] == pytest.approx(1 / 131)
    np.testing.assert_allclose(c.curve, 1.0 / c.curve_n)


def test_chance_linkability_gives_tied_top_scores_to_the_true_speaker():
    s = np.array([[1.0, 1.0, 0.0], [3.0, 2.0, 1.0]])
    # as linkability: a tie at the top links; row 0 has two such columns, row 1 one
    assert chance_levels(s, n_draws=5).values["linkability"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_chance_alid_and_pdr_are_exact_expectations_over_the_column():
    from voxmetrics.metrics.lid import LIDCalibration, lid

    rng = np.random.default_rng(4)
    s = rng.normal(size=(7, 5))
    cal = LIDCalibration(w=2.0, b=0.0, prior_log_odds=math.log(1 / 4), n_pairs=0)
    every = np.array([lid(s, np.full(7, j), cal).lid for j in range(5)])
    c = chance_levels(s, calibration=cal, n_draws=10)
    assert c.values["alid"] == pytest.approx(every.mean())
    assert c.values["pdr"] == pytest.approx((every > 0).mean())


@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chance_levels_equal_the_rankdata_reference(ties, dtype, monkeypatch):
    from voxmetrics.metrics import chance, ranks
    from voxmetrics.metrics.lid import LIDCalibration

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 40)  # several row blocks
    monkeypatch.setattr(chance, "CHUNK_ELEMENTS", 20)  # and several chunks in each
    rng = np.random.default_rng(9)
    s = np.round(rng.normal(size=(23, 11)), 1).astype(dtype)  # ties inside rows
    assert len(row_blocks(23, 11)) > 3
    cal = LIDCalibration(w=1.7, b=0.0, prior_log_odds=math.log(1 / 10), n_pairs=0)
    got = chance_levels(s, calibration=cal, n_draws=30, seed=3, ties=ties)
    ref, grid = chance_levels_reference(s, calibration=cal, n_draws=30, seed=3, ties=ties)
    for k, v in ref.items():
        assert got.values[k] == pytest.approx(v, rel=1e-12, abs=1e-15), k
    for k in ("linkability", "mean_d", "idr", "max_d", "max_d_q95", "pdr"):
        assert got.values[k] == ref[k], k  # counts and ranks: exactly
    np.testing.assert_array_equal(got.curve_n, grid)


@pytest.mark.parametrize("ties", ["reference", "attacker"])
def test_chance_levels_from_row_blocks_equal_the_whole_matrix(monkeypatch, ties):
    """Blocks of rows (as on Dask workers) give the same chance levels: ALID up to the order
    of its float sum, everything else exactly; on the same blocks, ALID exactly too."""
    import voxmetrics.metrics.ranks as ranks_mod
    from voxmetrics.metrics.chance import chance_block, chance_columns, chance_levels_from_blocks
    from voxmetrics.metrics.lid import LIDCalibration

    rng = np.random.default_rng(11)
    s = np.round(rng.normal(size=(40, 6)), 1)  # ties within rows
    cal = LIDCalibration(w=1.5, b=0.0, prior_log_odds=math.log(1 / 5), n_pairs=0)
    whole = chance_levels(s, calibration=cal, n_draws=30, seed=2, ties=ties)
    cols = chance_columns(40, 6, n_draws=30, seed=2)
    cuts = [(0, 1), (1, 7), (7, 8), (8, 25), (25, 40)]
    parts = [chance_block(s[a:b], cols[:, a:b], calibration=cal, ties=ties) for a, b in cuts]
    got = chance_levels_from_blocks(parts, 6)
    assert got.n_draws == whole.n_draws == 30
    for key, value in whole.values.items():
        if key == "alid":
            assert got.values[key] == pytest.approx(value, rel=1e-12)
        else:
            assert got.values[key] == value, key
    np.testing.assert_array_equal(got.curve, whole.curve)
    monkeypatch.setattr(ranks_mod, "BLOCK_ELEMENTS", 6 * 8)  # chance_levels' own blocks: 8 rows
    blocked = chance_levels(s, calibration=cal, n_draws=30, seed=2, ties=ties)
    same = [
        chance_block(s[a : a + 8], cols[:, a : a + 8], calibration=cal, ties=ties)
        for a in range(0, 40, 8)
    ]
    assert chance_levels_from_blocks(same, 6).values == blocked.values
    # the draws shrink on large matrices, to at least 20
    assert chance_columns(1_000_000, 3, n_draws=200).shape == (20, 1_000_000)
    with pytest.raises(VoxMetricsInputError, match="n_draws"):
        chance_columns(5, 3, n_draws=0)


@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("ties", ["reference", "attacker"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lid_with_chance_equals_lid_and_the_chance_levels_bit_for_bit(
    threads, ties, dtype, monkeypatch
):
    """One pass for LID and its chance levels gives lid()'s and chance_levels()' numbers
    exactly, on several row blocks and chunks, serial or on threads, a constant row included."""
    from voxmetrics.errors import DegenerateDataWarning
    from voxmetrics.metrics import chance, ranks
    from voxmetrics.metrics.chance import lid_with_chance
    from voxmetrics.metrics.lid import LIDCalibration, lid

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 50)  # several row blocks
    monkeypatch.setattr(chance, "CHUNK_ELEMENTS", 20)  # several chunks in each
    monkeypatch.setenv("VOXMETRICS_THREADS", threads)
    rng = np.random.default_rng(21)
    s = np.round(rng.normal(size=(37, 9)), 1).astype(dtype)  # ties inside rows
    s[5] = 0.25  # no evidence: LID 0, one warning
    t = rng.integers(0, 9, size=37)
    cal = LIDCalibration(w=1.9, b=-0.7, prior_log_odds=math.log(1 / 8), n_pairs=0)
    with pytest.warns(DegenerateDataWarning, match="1 eval trial"):
        ref = lid(s, t, cal)
    with pytest.warns(DegenerateDataWarning, match="1 eval trial"):
        got, chance = lid_with_chance(s, t, cal, n_draws=25, seed=4, ties=ties)
    np.testing.assert_array_equal(got.lid, ref.lid)
    np.testing.assert_array_equal(got.p_target, ref.p_target)
    np.testing.assert_array_equal(got.rank, ref.rank)
    assert got.n_degenerate == ref.n_degenerate == 1
    assert got.lid[5] == 0.0
    alone = chance_levels(s, calibration=cal, n_draws=25, seed=4, ties=ties)
    assert chance.values == alone.values
    assert chance.n_draws == alone.n_draws == 25


def test_chance_levels_on_threads_equal_the_serial_loop(monkeypatch):
    from voxmetrics.metrics import ranks
    from voxmetrics.metrics.lid import LIDCalibration

    monkeypatch.setattr(ranks, "BLOCK_ELEMENTS", 30)
    rng = np.random.default_rng(3)
    s = rng.normal(size=(60, 7))
    cal = LIDCalibration(w=1.2, b=0.3, prior_log_odds=math.log(1 / 6), n_pairs=0)
    assert len(row_blocks(60, 7)) == 15
    got = {}
    for n in ("1", "2", "5"):
        monkeypatch.setenv("VOXMETRICS_THREADS", n)
        got[n] = chance_levels(s, calibration=cal, n_draws=40, seed=1).values
    assert got["1"] == got["2"] == got["5"]
