"""SRD analysis: fits per loss, per-speaker SRD in groups and the SRD tables."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import srd_cases
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.srd import (
    CHANCE_COLUMNS,
    CHANCE_KEYS,
    against_chance_table,
    condition_fits,
    mean_d_summary,
    merge_speaker_srd,
    speaker_groups,
    speaker_srd,
    srd_table,
    zero_rank_counts,
)
from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics.srd import fit_beta_binomial, srd, srd_per_speaker
from voxmetrics.report.frames import intervals_frame
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def two_conditions():
    """Two conditions, N = 8: ranks spread out, and concentrated at rank 1."""
    return srd_cases.two_conditions()


rank_scores = srd_cases.rank_scores


@pytest.fixture(scope="module")
def report():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate_condition(demo_study(n_speakers=6).get("anon-mild"), bootstrap=20)


# ---------------------------------------------------------------- statistics table


def test_table_has_a_data_row_and_a_row_per_model(two_conditions):
    results, fits = two_conditions
    df = srd_table(results, fits)
    assert list(df["Condition"]) == ["spread"] * 3 + ["sharp"] * 3
    assert list(df["Source"]) == ["data", "LL model", "CLL model"] * 2
    data = df[df["Source"] == "data"].set_index("Condition")
    for name, r in results.items():
        s = r.stats
        row = data.loc[name]
        assert (row["MeanD (bits)"], row["IdR"], row["StDD (bits)"], row["MaxD (bits)"],
                row["Spread"]) == (s.mean_d, s.idr, s.std_d, s.max_d, s.spread)  # fmt: skip
        assert math.isnan(row["α"]) and row["Fit"] == "–"
    models = df[df["Source"] != "data"]
    for (_, row), fit in zip(
        models.iterrows(), [f for fs in fits.values() for f in fs], strict=True
    ):
        assert row["Source"] == f"{fit.loss} model"
        assert (row["α"], row["β"], row["KL (bits)"], row["Rank-1 match (bits)"]) == (
            fit.alpha, fit.beta, fit.kl_bits, fit.rank1_match,
        )  # fmt: skip
        assert row["MeanD (bits)"] == fit.stats.mean_d
        assert row["Fit"] == ("converged" if fit.converged else "did not converge")


def test_table_lists_a_fit_that_did_not_converge():
    r = srd(*rank_scores([1, 1, 1, 1], 5))
    with pytest.warns(DegenerateDataWarning):
        fit = fit_beta_binomial(r.histogram, loss="LL")
    df = srd_table({"x": r}, {"x": [fit]})
    assert list(df["Fit"]) == ["–", "did not converge"]


def test_table_by_hand():
    # ranks 1, 1, 2, 2 of N = 4: p = [1/2, 1/2, 0, 0]; each seen rank discloses log2(4/2) = 1
    df = srd_table({"a": srd(*rank_scores([1, 1, 2, 2], 4))})
    row = df.iloc[0]
    assert (row["MeanD (bits)"], row["IdR"], row["StDD (bits)"], row["MaxD (bits)"]) == (
        pytest.approx(1.0),
        0.5,
        pytest.approx(0.0),
        pytest.approx(1.0),
    )
    assert row["Spread"] == 0.5  # 2 of 4 ranks above 1/N
    assert list(df.columns[-5:]) == ["α", "β", "KL (bits)", "Rank-1 match (bits)", "Fit"]


def test_zero_rank_counts_by_hand(two_conditions):
    results, _ = two_conditions
    assert zero_rank_counts(results) == {"spread": 1, "sharp": 5}
    assert zero_rank_counts({"full": srd(*rank_scores([1, 2, 3], 3))}) == {"full": 0}
    assert zero_rank_counts({}) == {}


def test_mean_d_summary_of_nothing():
    s = mean_d_summary([math.nan, math.nan])
    assert (s.n, s.n_missing) == (0, 2) and math.isnan(s.mean)


def test_mean_d_summary_by_hand():
    s = mean_d_summary([0.0, 1.0, 2.0, math.nan])
    assert (s.n, s.n_missing, s.max, s.mean) == (3, 1, 2.0, 1.0)
    assert s.std == pytest.approx(math.sqrt(2 / 3))  # population sd


def test_against_chance_table_renames_the_intervals_frame(report):
    intervals = intervals_frame([report], keys=CHANCE_KEYS)
    table = against_chance_table(intervals)
    assert list(table.columns) == list(CHANCE_COLUMNS.values())
    assert len(table) == len(intervals) == 4
    assert list(table["Value"]) == list(intervals["value"])
    mean_d = table.set_index("Statistic").iloc[0]
    assert mean_d["Value"] == report.srd.stats.mean_d
    assert mean_d["Excess over chance"] == pytest.approx(
        report.srd.stats.mean_d - report.chance.values["mean_d"]
    )


# ---------------------------------------------------------------- fits per loss


def test_condition_fits_take_the_reports_cll_and_fit_the_others(report):
    calls = []

    def fit(histogram, loss):
        calls.append(loss)
        return fit_beta_binomial(histogram, loss=loss)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        fits = condition_fits(report, ["LL", "CLL", "MS"], fit=fit)
        default = condition_fits(report, ["LL"])
    assert calls == ["LL", "MS"]  # the CLL model is the report's, not refitted
    assert fits[1] is report.srd_model
    assert [f.loss for f in fits] == ["LL", "CLL", "MS"]
    assert (fits[0].alpha, fits[0].beta) == (default[0].alpha, default[0].beta)
    assert condition_fits(report, []) == ()
    steps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        again = condition_fits(report, ["LL", "CLL"], progress=lambda f, m: steps.append((f, m)))
    assert steps == [(0.0, "LL fit"), (0.5, "CLL fit")]
    assert (again[0].alpha, again[0].beta) == (default[0].alpha, default[0].beta)


# ---------------------------------------------------------------- per speaker


def test_speaker_groups_by_hand():
    groups = speaker_groups([1, 2, 3, 1, 4], ["b", "a", "c", "a", "c"], n_groups=2)
    assert [(r.tolist(), s.tolist()) for r, s in groups] == [
        ([1, 2, 1], ["b", "a", "a"]),  # a and b: trials in their input order
        ([3, 4], ["c", "c"]),
    ]
    assert speaker_groups([], [], n_groups=3) == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.sampled_from("abcdefgh")), max_size=40),
    st.integers(1, 12),
)
def test_speaker_groups_partition_the_trials_by_whole_speakers(trials, n_groups):
    ranks = [r for r, _ in trials]
    who = [s for _, s in trials]
    groups = speaker_groups(ranks, who, n_groups=n_groups)
    unique = sorted(set(who))
    assert len(groups) <= max(1, n_groups) or not unique
    seen = [sorted(set(s.tolist())) for _, s in groups]
    assert [x for g in seen for x in g] == unique  # whole speakers, sorted order, each once
    assert sum(r.size for r, _ in groups) == len(trials)
    for r, s in groups:  # every trial keeps its rank
        for rank, spk in zip(r.tolist(), s.tolist(), strict=True):
            assert (rank, spk) in trials


def test_speaker_srd_in_groups_equals_one_call():
    rng = np.random.default_rng(3)
    who = np.array([f"s{k}" for k in rng.integers(0, 7, 60)])
    ranks = rng.integers(1, 6, 60)
    result = srd(*rank_scores(ranks.tolist(), 5))
    steps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        grouped = speaker_srd(result, who, n_groups=3, progress=lambda f, m: steps.append((f, m)))
        whole = srd_per_speaker(ranks, who, 5)
    assert grouped.speakers.tolist() == whole.speakers.tolist()
    np.testing.assert_array_equal(grouped.histograms, whole.histograms)
    np.testing.assert_array_equal(grouped.empirical_mean_d, whole.empirical_mean_d)
    np.testing.assert_array_equal(grouped.model_mean_d, whole.model_mean_d)
    assert [(f.alpha, f.beta) for f in grouped.fits] == [(f.alpha, f.beta) for f in whole.fits]
    assert not grouped.histograms.flags.writeable
    assert steps == [
        (1 / 3, "Fitted 3 of 7 speakers…"),
        (2 / 3, "Fitted 6 of 7 speakers…"),
        (1.0, "Fitted 7 of 7 speakers…"),
    ]


def test_speaker_srd_calls_the_group_function_it_is_given():
    result = srd(*rank_scores([1, 2, 1, 3], 3))
    seen = []

    def group_srd(ranks, speakers, n_enrolled, loss):
        seen.append((ranks.tolist(), speakers.tolist(), n_enrolled, loss))
        return srd_per_speaker(ranks, speakers, n_enrolled, loss=loss)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        out = speaker_srd(result, ["x", "y", "x", "y"], loss="MS", group_srd=group_srd)
    assert seen == [([1, 1], ["x", "x"], 3, "MS"), ([2, 3], ["y", "y"], 3, "MS")]
    assert out.histograms.tolist() == [[2, 0, 0], [0, 1, 1]]


def test_merge_of_one_part_is_that_part():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        part = srd_per_speaker([1, 2], ["a", "a"], 3)
    assert merge_speaker_srd([part]) is part


def test_speaker_srd_of_mismatched_input_is_the_librarys_error():
    from voxmetrics.errors import VoxMetricsInputError

    result = srd(*rank_scores([1, 2], 3))
    with pytest.raises(VoxMetricsInputError, match="same length"):
        speaker_srd(result, ["a"])


# ----------------------------------------------------------------------------------------------
# speaker_srd in one batch: its progress, and the numbers of the grouped fit
# ----------------------------------------------------------------------------------------------


def test_speaker_srd_in_one_batch_reports_progress_and_equals_the_groups():
    from voxmetrics.analysis.srd import speaker_srd
    from voxmetrics.metrics.srd import srd_from_ranks

    rng = np.random.default_rng(2)
    who = np.array([f"s{k}" for k in rng.integers(0, 9, 70)])
    ranks = np.minimum(rng.geometric(0.2, 70), 12)
    result = srd_from_ranks(ranks, 12)
    steps = []
    one = speaker_srd(result, who, progress=lambda f, m: steps.append((f, m)))
    grouped = speaker_srd(result, who, n_groups=4)
    assert [(f.alpha, f.beta, f.loss_value) for f in one.fits] == [
        (f.alpha, f.beta, f.loss_value) for f in grouped.fits
    ]
    np.testing.assert_array_equal(one.model_mean_d, grouped.model_mean_d)
    assert steps[-1] == (1.0, "Fitted 9 of 9 speakers…")
    assert [f for f, _ in steps] == sorted(f for f, _ in steps)
