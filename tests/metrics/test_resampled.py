"""What the replicates share (metrics/_resampled.py): row quantiles, SRD of histograms, sums.

Each helper is checked against a hand-computed case and against the library function it
stands in for row by row: ``weighted_quantile`` (one row at a time), ``srd_stats`` (one
histogram at a time) and a loop over the trials.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from voxmetrics.metrics._resampled import (
    MAXIMA,
    row_weighted_quantile,
    speaker_sums,
    srd_from_hist,
)
from voxmetrics.metrics.bootstrap import weighted_quantile
from voxmetrics.metrics.srd import srd_stats


def test_row_weighted_quantile_hand_computed():
    # row 0: values 1 (w 1), 2 (w 2), 3 (w 1): cumulative shares 1/4, 3/4, 1, so the median is
    # 2 and the 0.8 quantile 3; row 1 carries no weight: NaN; row 2: the weight of 5 alone
    values = np.array([[3.0, 1.0, 2.0], [3.0, 1.0, 2.0], [4.0, 5.0, 6.0]])
    weights = np.array([[1.0, 1.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    median = row_weighted_quantile(values, weights, 0.5)
    assert median[0] == 2.0 and math.isnan(median[1]) and median[2] == 5.0
    assert row_weighted_quantile(values, weights, 0.8)[0] == 3.0
    # the inverted CDF of the repeated values, as numpy computes it
    repeated = np.repeat(values[0], weights[0].astype(int))
    assert median[0] == np.quantile(repeated, 0.5, method="inverted_cdf")


@pytest.mark.parametrize("q", [0.05, 0.5, 0.95, 1.0])
def test_row_weighted_quantile_equals_weighted_quantile_row_by_row(q):
    rng = np.random.default_rng(7)
    values = np.round(rng.normal(size=(30, 11)), 1)  # ties within rows
    weights = rng.integers(0, 4, size=(30, 11)).astype(float)
    weights[3] = 0.0  # a replicate that drew nobody
    got = row_weighted_quantile(values, weights, q)
    want = [weighted_quantile(v, w, q)[0] for v, w in zip(values, weights, strict=True)]
    np.testing.assert_array_equal(got, want)
    assert math.isnan(got[3])


def test_srd_from_hist_hand_computed():
    # ranks 1, 1, 2, 3 of N = 4: p = (1/2, 1/4, 1/4, 0), e_k = log2(N p_k) = (1, 0, 0, -inf):
    # MeanD = 1/2, IdR = 1/2, MaxD = 1; the q-quantile of e under p: the shares up to each
    # sorted e are 0 (rank 4), 1/4, 1/2, 1, so q = 0.5 gives 0 and q = 0.95 gives 1
    h = np.array([[2.0, 1.0, 1.0, 0.0]])
    got = srd_from_hist(h, 0.5)
    assert got["mean_d"].tolist() == [0.5] and got["idr"].tolist() == [0.5]
    assert got["max_d"].tolist() == [1.0] and got["max_d_q95"].tolist() == [0.0]
    assert srd_from_hist(h, 0.95)["max_d_q95"].tolist() == [1.0]
    # all mass at rank 1 discloses log2 N bits; uniform ranks nothing
    flat = srd_from_hist(np.array([[3.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]]), 0.95)
    assert flat["mean_d"].tolist() == [2.0, 0.0] and flat["max_d"].tolist() == [2.0, 0.0]


def test_srd_from_hist_equals_srd_stats_of_each_histogram():
    rng = np.random.default_rng(3)
    h = rng.integers(0, 6, size=(25, 9)).astype(float)
    h[h.sum(axis=1) == 0, 0] = 1.0
    h[4] = 0.0
    h[4, 2] = 5.0  # one rank only
    got = srd_from_hist(h, 0.95)
    for i, row in enumerate(h):
        stats = srd_stats(row)
        assert got["mean_d"][i] == pytest.approx(stats.mean_d, rel=1e-12, abs=1e-15)
        assert got["idr"][i] == pytest.approx(stats.idr, rel=1e-15)
        assert got["max_d"][i] == pytest.approx(stats.max_d, rel=1e-12, abs=1e-15)
        p = row / row.sum()
        with np.errstate(divide="ignore"):
            e = np.log2(row.size * p)  # -inf where p = 0: never the 0.95 quantile
        assert got["max_d_q95"][i] == weighted_quantile(e, p, 0.95)[0]


def test_speaker_sums_of_vectors_and_matrices():
    inv = np.array([2, 0, 2, 2, 0])  # speaker 1 has no trial
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert speaker_sums(values, inv, 3).tolist() == [7.0, 0.0, 8.0]
    both = np.column_stack([values, 10 * values])
    np.testing.assert_array_equal(speaker_sums(both, inv, 3), [[7, 70], [0, 0], [8, 80]])
    rng = np.random.default_rng(5)
    inv = rng.integers(0, 6, size=200)
    many = rng.normal(size=(200, 3))
    loop = np.zeros((7, 3))
    for i, s in enumerate(inv):
        loop[s] += many[i]
    np.testing.assert_allclose(speaker_sums(many, inv, 7), loop, rtol=1e-12)
    np.testing.assert_allclose(speaker_sums(many[:, 0], inv, 7), loop[:, 0], rtol=1e-12)


def test_maxima_are_the_sample_maxima_keys():
    assert set(MAXIMA) == {"lid_max", "max_d", "log10_l"}
