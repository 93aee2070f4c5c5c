"""Speaker-level bootstrap of the LID aggregates (shared/docs/metrics.md section 7).

The vectorised replicates of ``lid_bootstrap`` (one matrix product over per-speaker sums) are
checked against a slow reference that builds every resampled LID vector explicitly
(style.md item 8).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import voxmetrics.metrics.bootstrap as bootstrap_module
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import (
    BootstrapInterval,
    lid_bootstrap,
    speaker_resample_counts,
    weighted_quantile,
)

KEYS = ("alid", "pdr", "lid_plus", "lid_max")


def make_lids(seed=0, n_speakers=12, all_negative=False):
    """Per-trial LIDs of n_speakers speakers with 1..6 trials each, speaker-dependent level."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=n_speakers)
    level = rng.normal(0.0, 0.8, size=n_speakers)
    speakers = np.repeat([f"spk{k:02d}" for k in range(n_speakers)], sizes)
    values = np.repeat(level, sizes) + rng.normal(0.0, 0.5, size=sizes.sum())
    if all_negative:
        values = -np.abs(values) - 0.01
    # shuffle the trials so the speakers' trials are not contiguous
    order = rng.permutation(values.size)
    return values[order], speakers[order]


def reference_replicates(values, speakers, n_boot, seed):
    """Slow reference: each replicate's LID vector built explicitly, speaker by speaker."""
    rng = np.random.default_rng(seed)
    counts, inverse, n_speakers = speaker_resample_counts(speakers, n_boot=n_boot, rng=rng)
    reps = {k: np.empty(n_boot) for k in KEYS}
    for b in range(n_boot):
        # speaker j's trials appear counts[b, j] times (all of a speaker's trials move together)
        resampled = np.concatenate(
            [np.repeat(values[inverse == j], counts[b, j]) for j in range(n_speakers)]
        )
        pos = resampled[resampled > 0]
        reps["alid"][b] = resampled.mean()
        reps["pdr"][b] = (resampled > 0).mean()
        reps["lid_plus"][b] = pos.mean() if pos.size else np.nan
        reps["lid_max"][b] = resampled.max()
    return reps


@pytest.fixture
def spy_replicates(monkeypatch):
    """Record the replicate arrays lid_bootstrap hands to its percentile step."""
    seen: dict[int, np.ndarray] = {}
    original = bootstrap_module.percentile_interval

    def spy(estimate, reps, confidence, n_boot):
        seen[len(seen)] = reps.copy()
        return original(estimate, reps, confidence, n_boot)

    monkeypatch.setattr(bootstrap_module, "percentile_interval", spy)
    return seen


@pytest.mark.parametrize("seed", [0, 7])
def test_replicates_match_slow_reference(spy_replicates, seed):
    values, speakers = make_lids(seed=seed)
    n_boot = 200
    ci = lid_bootstrap(values, speakers, n_boot=n_boot, seed=seed)
    ref = reference_replicates(values, speakers, n_boot, seed)
    # percentile_interval is called once per key, in the order of KEYS
    got = dict(zip(KEYS, spy_replicates.values(), strict=True))
    for k in KEYS:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-12, atol=1e-12, equal_nan=True)
        ok = ref[k][np.isfinite(ref[k])]
        low, high = np.quantile(ok, [0.025, 0.975])
        assert ci[k].low == pytest.approx(low, rel=1e-12, abs=1e-12), k
        assert ci[k].high == pytest.approx(high, rel=1e-12, abs=1e-12), k
        assert (ci[k].n_boot, ci[k].n_valid, ci[k].confidence) == (n_boot, ok.size, 0.95)
    # the estimates are the metrics on the full data
    assert ci["alid"].estimate == pytest.approx(values.mean(), rel=1e-12)
    assert ci["pdr"].estimate == pytest.approx((values > 0).mean())
    assert ci["lid_plus"].estimate == pytest.approx(values[values > 0].mean(), rel=1e-12)
    assert ci["lid_max"].estimate == values.max()


def test_reference_without_the_spy_gives_the_same_intervals():
    # the same comparison through the public result only (no spy)
    values, speakers = make_lids(seed=3, n_speakers=20)
    ci = lid_bootstrap(values, speakers, n_boot=200, seed=11, confidence=0.9)
    ref = reference_replicates(values, speakers, 200, 11)
    for k in KEYS:
        ok = ref[k][np.isfinite(ref[k])]
        low, high = np.quantile(ok, [0.05, 0.95])
        assert (ci[k].low, ci[k].high) == pytest.approx((low, high), rel=1e-12, abs=1e-12)
        assert ci[k].confidence == 0.9


def test_resample_counts_draw_whole_speakers():
    speakers = np.array(["b", "a", "c", "a", "b", "b"])
    counts, inverse, n_speakers = speaker_resample_counts(
        speakers, n_boot=50, rng=np.random.default_rng(0)
    )
    assert n_speakers == 3 and counts.shape == (50, 3)
    assert (counts.sum(axis=1) == 3).all() and (counts >= 0).all()
    assert inverse.tolist() == [1, 0, 2, 0, 1, 1]  # speakers in sorted order a, b, c


def test_same_seed_same_intervals_different_seed_different():
    values, speakers = make_lids(seed=1)
    a = lid_bootstrap(values, speakers, n_boot=300, seed=5)
    b = lid_bootstrap(values, speakers, n_boot=300, seed=5)
    c = lid_bootstrap(values, speakers, n_boot=300, seed=6)
    assert {k: v.to_dict() for k, v in a.items()} == {k: v.to_dict() for k, v in b.items()}
    assert any((a[k].low, a[k].high) != (c[k].low, c[k].high) for k in KEYS)
    assert (a["alid"].low, a["alid"].high) != (c["alid"].low, c["alid"].high)


def test_single_speaker_gives_a_degenerate_interval():
    # one speaker: every replicate draws that speaker once, so every replicate is the data
    values = np.array([0.5, -0.2, 1.0, 0.3])
    ci = lid_bootstrap(values, ["only"] * 4, n_boot=200, seed=0)
    for k in KEYS:
        assert ci[k].low == pytest.approx(ci[k].estimate, rel=1e-12)
        assert ci[k].high == pytest.approx(ci[k].estimate, rel=1e-12)
        assert ci[k].n_valid == 200
    assert ci["alid"].estimate == pytest.approx(0.4)
    assert ci["pdr"].estimate == 0.75
    assert ci["lid_plus"].estimate == pytest.approx(0.6)
    assert ci["lid_max"].estimate == 1.0


def test_all_negative_lids_have_no_lid_plus():
    values, speakers = make_lids(seed=2, all_negative=True)
    ci = lid_bootstrap(values, speakers, n_boot=200, seed=0)
    assert ci["lid_plus"].estimate is None
    assert (ci["lid_plus"].low, ci["lid_plus"].high) == (None, None)
    assert ci["lid_plus"].n_valid == 0
    assert ci["lid_plus"].to_dict()["low"] is None
    assert ci["pdr"].estimate == 0.0 and (ci["pdr"].low, ci["pdr"].high) == (0.0, 0.0)
    assert ci["lid_max"].high <= 0 and ci["alid"].high < 0


def test_lid_plus_interval_when_positives_are_rare():
    # positive LIDs from one speaker out of 20: lid_plus is undefined in the replicates that
    # miss that speaker, (19/20)^20 ~ 36 % of them, so fewer than B are valid but the interval
    # still exists (at least half are valid)
    values = np.full(40, -0.5)
    speakers = np.repeat([f"s{k}" for k in range(20)], 2)
    values[:2] = [0.8, 1.2]
    ci = lid_bootstrap(values, speakers, n_boot=1000, seed=0)
    assert 500 <= ci["lid_plus"].n_valid < 1000
    assert ci["lid_plus"].low == pytest.approx(1.0) and ci["lid_plus"].high == pytest.approx(1.0)


def test_lid_plus_interval_is_none_when_undefined_in_most_replicates():
    # docstring: low / high are None when the metric is undefined in too many replicates (more
    # than half). Three replicates, only one of which draws the one speaker with positive
    # LIDs: find a seed for which the shared resampling does that.
    values = np.array([1.0, -0.5, -0.5, -0.5])
    speakers = np.array(["pos", "n1", "n2", "n3"])
    for seed in range(200):
        counts, inverse, _ = speaker_resample_counts(
            speakers, n_boot=3, rng=np.random.default_rng(seed)
        )
        if (counts[:, inverse[0]] > 0).sum() == 1:
            break
    else:  # pragma: no cover - about 3 x 0.68 x 0.32^2 ~ 20 % of seeds qualify
        pytest.fail("no seed draws the positive speaker in exactly one replicate")
    ci = lid_bootstrap(values, speakers, n_boot=3, seed=seed)
    assert ci["lid_plus"].estimate == 1.0 and ci["lid_plus"].n_valid == 1
    assert (ci["lid_plus"].low, ci["lid_plus"].high) == (None, None)
    assert ci["alid"].n_valid == 3 and ci["alid"].low is not None


def test_progress_fractions_increase_to_one():
    values, speakers = make_lids(seed=4)
    calls = []
    lid_bootstrap(values, speakers, n_boot=250, seed=0, progress=lambda f, m: calls.append((f, m)))
    fractions = [f for f, _ in calls]
    assert len(fractions) >= 2
    assert all(a < b for a, b in pairwise(fractions))
    assert all(0 < f <= 1 for f in fractions) and fractions[-1] == 1.0
    assert all(isinstance(m, str) and m for _, m in calls)


def test_intervals_are_json_safe():
    values, speakers = make_lids(seed=5)
    ci = lid_bootstrap(values, speakers, n_boot=100, seed=0)
    for v in ci.values():
        assert isinstance(v, BootstrapInterval)
        d = v.to_dict()
        assert set(d) == {"estimate", "low", "high", "confidence", "n_boot", "n_valid"}
        assert all(x is None or type(x) in (int, float) for x in d.values())


@pytest.mark.parametrize(
    ("lid", "speakers", "options"),
    [
        ([], [], {}),
        ([0.1, 0.2], ["a"], {}),
        ([0.1, 0.2], ["a", "b"], {"n_boot": 0}),
        ([0.1, 0.2], ["a", "b"], {"confidence": 1.0}),
        ([0.1, 0.2], ["a", "b"], {"confidence": 0.0}),
    ],
)
def test_bad_input_raises(lid, speakers, options):
    with pytest.raises(VoxMetricsInputError):
        lid_bootstrap(lid, speakers, **options)


# ---------------------------------------------------------------- weighted quantiles


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=30),
    st.floats(0.01, 1.0),
)
def test_weighted_quantile_with_unit_weights_is_numpys_inverted_cdf(values, q):
    got = weighted_quantile(values, np.ones(len(values)), q)[0]
    assert got == np.quantile(values, q, method="inverted_cdf")


def test_weighted_quantile_equals_the_quantile_of_repeated_values():
    v = np.array([4.0, 1.0, 3.0, 2.0])
    w = np.array([[2, 0, 1, 3], [0, 1, 0, 0]])
    got = weighted_quantile(v, w, 0.5)
    assert got.tolist() == [np.quantile(np.repeat(v, w[0]), 0.5, method="inverted_cdf"), 1.0]
