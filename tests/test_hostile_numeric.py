"""Extreme values: LID, SRD, ZEBRA and EER are invariant to any finite rescaling of the scores.

Scores around 1e200 (a pure rescaling of ordinary scores) must give the same numbers as the
originals, for scales from 1e-300 to 1e300, and an offset so large that the spread is below
float64 resolution must be reported as "no evidence", not as a wrong number.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.eer import eer
from voxmetrics.metrics.lid import calibrate_lid, lid, row_znorm
from voxmetrics.metrics.srd import srd
from voxmetrics.metrics.zebra import zebra

T, N = 120, 12


def _scores(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, N, T)
    s = rng.normal(size=(T, N))
    s[np.arange(T), t] += 1.5
    return s, t


def _quiet(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(w.message) for w in caught]


BASE_EVAL = _scores(1)
BASE_DEV = _scores(2)
BASE_CAL, _ = _quiet(calibrate_lid, *BASE_DEV)
BASE_LID, _ = _quiet(lid, *BASE_EVAL, BASE_CAL)

exponents = st.integers(min_value=-300, max_value=300)
mantissas = st.floats(min_value=1.0, max_value=9.99)


@settings(max_examples=40, deadline=None)
@given(mantissa=mantissas, exponent=exponents)
def test_lid_is_invariant_to_any_finite_scale(mantissa, exponent):
    a = mantissa * 10.0**exponent
    (s, t), (d, td) = BASE_EVAL, BASE_DEV
    cal, cal_warnings = _quiet(calibrate_lid, d * a, td)
    r, lid_warnings = _quiet(lid, s * a, t, cal)
    assert cal_warnings == [] and lid_warnings == []
    assert cal.w == pytest.approx(BASE_CAL.w, rel=1e-9)
    assert r.alid == pytest.approx(BASE_LID.alid, rel=1e-9)
    assert r.lid_max == pytest.approx(BASE_LID.lid_max, rel=1e-12)
    np.testing.assert_allclose(r.lid, BASE_LID.lid, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("peak", [1e200, 1e300, 1e-300, 1e-290, 1.7e308])
def test_row_znorm_has_no_overflow_at_the_edges_of_float64(peak):
    s, _ = BASE_EVAL
    z0, _ = row_znorm(s)
    x = s / np.abs(s).max() * peak  # largest magnitude: peak
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        z, deg = row_znorm(x)
    assert not deg.any()
    np.testing.assert_allclose(z, z0, rtol=1e-9, atol=1e-9)


def test_power_of_two_rescaling_gives_bit_identical_z():
    s, _ = BASE_EVAL
    z0, _ = row_znorm(s)
    for e in (-1000, -500, 0, 500, 1000):
        z, _ = row_znorm(np.ldexp(s, e))
        assert np.array_equal(z, z0)


def test_offset_beyond_float_resolution_is_no_evidence_not_a_number():
    s, t = BASE_EVAL
    shifted = s + 1e300  # float64 cannot hold the differences: every row collapses
    assert (shifted == 1e300).all()
    r, messages = _quiet(lid, shifted, t, BASE_CAL)
    assert r.n_degenerate == T and np.all(r.lid == 0.0)
    assert any("identical scores (to float64 precision)" in m for m in messages)


def test_offset_within_float_resolution_keeps_the_numbers():
    s, t = BASE_EVAL
    r, messages = _quiet(lid, s + 1e6, t, BASE_CAL)  # spread ~1 at 1e6: 10 digits left
    assert messages == []
    np.testing.assert_allclose(r.lid, BASE_LID.lid, rtol=1e-6, atol=1e-6)


def test_row_with_spread_below_resolution_is_degenerate():
    z, deg = row_znorm([[1e300, 1e300 * (1 + 1e-15), 1e300], [1.0, 2.0, 3.0]])
    assert deg.tolist() == [True, False]
    assert np.all(z[0] == 0.0)


@settings(max_examples=30, deadline=None)
@given(mantissa=mantissas, exponent=exponents)
def test_srd_zebra_eer_are_invariant_to_any_finite_scale(mantissa, exponent):
    a = mantissa * 10.0**exponent
    s, t = BASE_EVAL
    mated = np.zeros_like(s, dtype=bool)
    mated[np.arange(T), t] = True
    x = s * a
    with np.errstate(over="raise", invalid="raise"):
        r0, r1 = srd(s, t), srd(x, t)
        z0, z1 = zebra(s[mated], s[~mated]), zebra(x[mated], x[~mated])
        e0, e1 = eer(s[mated], s[~mated]), eer(x[mated], x[~mated])
    assert r1.to_dict() == pytest.approx(r0.to_dict())
    assert z1.d_ece == pytest.approx(z0.d_ece, rel=1e-9)
    assert z1.log10_l == pytest.approx(z0.log10_l, rel=1e-9)
    assert e1 == pytest.approx(e0)


@pytest.mark.parametrize("offset", [-1e6, 1e3, 0.5])
def test_srd_zebra_are_invariant_to_an_offset_within_resolution(offset):
    s, t = BASE_EVAL
    mated = np.zeros_like(s, dtype=bool)
    mated[np.arange(T), t] = True
    x = s + offset
    assert srd(x, t).to_dict() == pytest.approx(srd(s, t).to_dict())
    assert zebra(x[mated], x[~mated]).d_ece == pytest.approx(
        zebra(s[mated], s[~mated]).d_ece, rel=1e-9
    )


def test_degenerate_warning_class_is_used():
    with pytest.warns(DegenerateDataWarning, match="float64 precision"):
        lid(np.full((3, 4), 1e300), [0, 1, 2], BASE_CAL)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_cosine_scores_are_invariant_to_rescaled_embeddings(scale):
    import pandas as pd

    from voxmetrics.data.arrays import unit_rows
    from voxmetrics.data.model import EmbeddingSet

    rng = np.random.default_rng(3)
    e = rng.normal(size=(12, 5))
    meta = pd.DataFrame(
        {
            "utt_id": [f"u{i}" for i in range(12)],
            "speaker": [f"s{i % 3}" for i in range(12)],
            "role": ["enrol"] * 3 + ["trial"] * 9,
            "split": ["eval"] * 12,
        }
    )
    base = EmbeddingSet.from_arrays(e, meta).score_matrix("eval").scores
    scaled = EmbeddingSet.from_arrays(e * scale, meta).score_matrix("eval").scores
    np.testing.assert_allclose(scaled, base, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(unit_rows(e * scale), unit_rows(e), rtol=1e-12)
    assert np.array_equal(unit_rows(e), e / np.linalg.norm(e, axis=1, keepdims=True))
