"""VoicePrivacy's ranking and the auditors' call-out (voxmetrics.analysis.ranking).

Hand-computed rankings and hypothesis invariants of the ranking, the ranking rule (the EER it
bands, as the challenge prints it: rounded to 0.001 %, the mean of its lists' EERs; the band
edges; its two rankings, WER and UAR), the attacker each entry is judged against, the call-out,
and the ranking of a 2024 VoicePrivacy tree. The Pareto front (voxmetrics.analysis.tradeoff) is
in test_tradeoff.py, with the demo's front, ranking and call-outs together.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vpc_tree import write_tree
from voxmetrics.analysis.ranking import (
    EER_BANDS,
    challenge_eer,
    in_band,
    report_ranking,
    utility_callouts,
    voiceprivacy_ranking,
)
from voxmetrics.analysis.strongest import strongest_attackers
from voxmetrics.analysis.tradeoff import ConditionNumbers
from voxmetrics.analysis.vpc import challenge_group_eers
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_study


def _c(name, attacker="semi-informed", chance=None, **values):
    return ConditionNumbers(name, attacker, values, chance_linkability=chance)


# ------------------------------------------------------------------ VoicePrivacy ranking


def test_ranking_by_hand():
    cs = [
        _c("orig", "original", eer=0.01, wer=0.018, uar=0.70),
        _c("s1", eer=0.12, wer=0.04, uar=0.60),
        _c("s2", eer=0.35, wer=0.06, uar=0.55),
        _c("s3", eer=0.41, wer=0.06, uar=0.58),  # same WER as s2: UAR breaks the tie
        _c("s4", eer=0.20, wer=0.05, uar=None),  # exactly on the 20 % band: inside it
        _c("s5", eer=0.08, wer=0.02, uar=0.69),  # below 10 %: unranked
        _c("s6", eer=0.45),  # no WER: unranked
        _c("lazy", "lazy-informed", eer=0.45, wer=0.01),  # another attacker: not a system
    ]
    r = voiceprivacy_ranking(cs)
    assert r.bands == EER_BANDS
    got = [(b, k, c) for b, k, c in ((x.band, x.rank, x.condition) for x in r.rows)]
    assert got == [
        (0.10, 1, "s1"),
        (0.10, 2, "s4"),
        (0.10, 3, "s3"),
        (0.10, 4, "s2"),
        (0.20, 1, "s4"),
        (0.20, 2, "s3"),
        (0.20, 3, "s2"),
        (0.30, 1, "s3"),
        (0.30, 2, "s2"),
        (0.40, 1, "s3"),
    ]
    assert set(r.unranked) == {"s5", "s6"}
    assert "below the lowest band" in r.unranked["s5"]
    assert "WER unknown" in r.unranked["s6"]
    df = r.frame()
    assert list(df.columns) == ["EER band", "Rank", "System", "EER", "WER", "UAR"]
    assert df["EER band"].iloc[0] == "EER >= 10%"
    json.dumps(r.to_dict())


def test_ranking_ties_share_a_rank_and_bands_are_checked():
    cs = [
        _c("a", eer=0.5, wer=0.1, uar=0.5),
        _c("b", eer=0.5, wer=0.1, uar=0.5),
        _c("c", eer=0.5, wer=0.2, uar=0.5),
    ]
    r = voiceprivacy_ranking(cs, bands=[0.4])
    assert [(x.rank, x.condition) for x in r.rows] == [(1, "a"), (1, "b"), (3, "c")]
    with pytest.raises(VoxMetricsInputError, match="fractions"):
        voiceprivacy_ranking(cs, bands=[10, 20])


def test_ranking_attacker_is_chosen():
    cs = [_c("a", "lazy-informed", eer=0.3, wer=0.1), _c("b", eer=0.3, wer=0.05)]
    assert [x.condition for x in voiceprivacy_ranking(cs, attacker="lazy-informed").rows] == [
        "a",
        "a",
        "a",
    ]


# ------------------------------------------------------------------ the auditors' call-out


def test_callout_by_hand():
    cs = [
        # clears 40 %, LIDmax 1.0 exactly (the threshold counts) and linkability 2x chance
        # exactly (not above): one reason
        _c("edge", eer=0.42, chance=0.025, lid_max=1.0, linkability=0.05),
        # clears 30 %, linkability 3x chance: one reason
        _c("link", eer=0.31, chance=0.025, lid_max=0.2, linkability=0.075),
        # private on every count
        _c("fine", eer=0.48, chance=0.025, lid_max=0.3, linkability=0.03),
        # leaks but clears no band: not called out here (the EER already says it leaks)
        _c("low", eer=0.05, chance=0.025, lid_max=4.0, linkability=0.9),
        _c("orig", "original", eer=0.01, chance=0.025, lid_max=5.0, linkability=1.0),
    ]
    out = {c.condition: c for c in utility_callouts(cs)}
    assert set(out) == {"edge", "link"}
    assert out["edge"].band == 0.40 and len(out["edge"].reasons) == 1
    assert "LIDmax 1.00 bits" in out["edge"].reasons[0]
    assert out["link"].band == 0.30 and "3.0x" in out["link"].reasons[0]
    json.dumps([c.to_dict() for c in out.values()])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 0.6, allow_nan=False),
            st.one_of(st.none(), st.floats(0, 1.5, allow_nan=False)),
            st.one_of(st.none(), st.floats(0, 1, allow_nan=False)),
        ),
        max_size=12,
    )
)
def test_ranking_invariants(systems):
    cs = [_c(f"s{k}", eer=e, wer=w, uar=u) for k, (e, w, u) in enumerate(systems)]
    r = voiceprivacy_ranking(cs)
    for band in r.bands:
        rows = r.band(band)
        assert all(x.eer >= band for x in rows)
        keys = [(x.wer, -(x.uar if x.uar is not None else -np.inf)) for x in rows]
        assert keys == sorted(keys)
        assert [x.rank for x in rows] == sorted(x.rank for x in rows)
        if rows:
            assert rows[0].rank == 1
    for k, (e, w, _) in enumerate(systems):
        bands_in = [x.band for x in r.rows if x.condition == f"s{k}"]
        if w is None or not in_band(e, EER_BANDS[0]):
            assert not bands_in and f"s{k}" in r.unranked
        else:  # compared at the challenge's 0.001 %
            assert bands_in == [b for b in EER_BANDS if in_band(e, b)]


def test_a_uar_of_zero_is_known_not_missing():
    cs = [_c("zero", eer=0.5, wer=0.1, uar=0.0), _c("none", eer=0.5, wer=0.1)]
    r = voiceprivacy_ranking(cs, bands=[0.4])
    assert [(x.rank, x.condition) for x in r.rows] == [(1, "zero"), (2, "none")]


# ------------------------------------------------------------------ the ranking rule
# the EER it bands (as the challenge prints it: rounded to 0.001 %, the mean of its lists'
# EERs), the band edges, and its two rankings (WER, UAR)


def _c_eer(name, eer, wer=None, uar=None, attacker="semi-informed"):
    """A condition's numbers, its EER first; WER and UAR None where not known."""
    return ConditionNumbers(name, attacker, {"eer": eer, "wer": wer, "uar": uar})


@pytest.mark.parametrize(
    ("eer", "band", "inside"),
    [
        (0.29999999999999993, 0.30, True),  # 30 % up to binary noise: the challenge prints 30.0
        (0.3, 0.30, True),
        (0.299995, 0.30, True),  # prints 30.0 (29.9995 rounds up at 0.001 %)
        (0.2999949, 0.30, False),  # prints 29.999
        (0.29999, 0.30, False),
        (0.1 + 0.2, 0.30, True),
        (0.09999999999999999, 0.10, True),
        (0.4, 0.40, True),
        (0.39999, 0.40, False),
    ],
)
def test_band_edges_at_the_challenges_precision(eer, band, inside):
    assert in_band(eer, band) is inside
    r = voiceprivacy_ranking([_c_eer("s", eer, wer=0.1)], bands=[band])
    assert [x.condition for x in r.rows] == (["s"] if inside else [])
    assert ("s" in r.unranked) is (not inside)


def test_the_banded_eer_is_the_printed_one():
    r = voiceprivacy_ranking([_c_eer("s", 0.29999999999999993, wer=0.1)])
    assert [x.band for x in r.rows] == [0.1, 0.2, 0.3]
    assert r.rows[-1].eer == 0.3  # the EER as printed (30.000 %), the one it was banded on


def test_per_list_eers_are_averaged_as_printed():
    """2024: the system's EER for the ranking is the mean of its female and male EERs."""
    cs = [_c_eer("a", eer=0.33, wer=0.05, uar=0.5), _c_eer("b", eer=0.25, wer=0.04, uar=0.6)]
    groups = {"a": {"F": 0.28, "M": 0.319994}, "b": {"F": 0.45, "M": 0.36}}
    r = voiceprivacy_ranking(cs, group_eers=groups)
    assert challenge_eer(0.33, [0.28, 0.319994]) == pytest.approx(0.29999)  # 28 + 31.999 -> 29.9995
    banded = {x.condition: x.eer for x in r.rows}
    assert banded == {"a": pytest.approx(0.29999), "b": pytest.approx(0.405)}
    assert [x.condition for x in r.band(0.3)] == ["b"]  # a's pooled 0.33 would have entered
    assert "mean of the EERs of the trial lists" in r.eer_rule
    assert r.to_dict()["eer_rule"] == r.eer_rule
    plain = voiceprivacy_ranking(cs)
    assert [x.condition for x in plain.band(0.3)] == ["a"]
    assert "the EER of the condition's trials" in plain.eer_rule


def test_two_rankings_wer_and_uar():
    cs = [
        _c_eer("a", 0.45, wer=0.05, uar=0.40),
        _c_eer("b", 0.45, wer=0.08, uar=0.60),
        _c_eer("c", 0.45, wer=0.08, uar=0.60),
        _c_eer("d", 0.45, uar=0.70),  # no WER: in the UAR ranking only
        _c_eer("e", 0.45, wer=0.02),  # no UAR: in the WER ranking only
    ]
    r = voiceprivacy_ranking(cs, bands=[0.4])
    assert [(x.rank, x.condition) for x in r.rows] == [(1, "e"), (2, "a"), (3, "b"), (3, "c")]
    assert [(x.rank, x.condition) for x in r.uar_rows] == [(1, "d"), (2, "b"), (2, "c"), (4, "a")]
    assert "d" in r.unranked and "WER unknown" in r.unranked["d"]
    assert list(r.uar_frame()["System"]) == ["d", "b", "c", "a"]
    out = r.to_dict()
    assert [x["condition"] for x in out["uar_rows"]] == ["d", "b", "c", "a"]
    assert "separately, by UAR" in out["rule"]
    json.dumps(out)


def test_report_ranking_of_a_2024_tree_bands_the_mean_of_the_per_gender_eers(tmp_path):
    study = read_vpc_tree(write_tree(tmp_path / "t", {"mcadams": 1.0, "sttts": 0.0})).study
    reports = evaluate_study(study, bootstrap=0)
    groups = challenge_group_eers(study)
    r = report_ranking(reports, group_eers=groups, bands=[0.0])
    for row in r.rows:
        g = groups[row.condition]
        assert row.eer == pytest.approx(challenge_eer(0, [g["F"], g["M"]]))


# ------------------------------------------------------------------ the attacker judged


def test_both_rankings_name_the_attacker_judged_and_leave_p_band_alone():
    """Regression: the UAR ranking passed the attacker's label positionally, into ``p_band``."""
    sm = ScoreMatrix.from_arrays(
        [[0.9, 0.1], [0.2, 0.8]],
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
    )
    recipe = AttackerRecipe(
        "plda", selected_by="eer", dev_value=0.1, candidates=(("cosine", 0.3), ("plda", 0.1))
    )
    attackers = strongest_attackers([Condition("s", eval=sm, recipe=recipe)])
    label = "plda, the strongest of 2 back-ends tried (chosen on dev by eer: 0.1)"
    assert attackers.label("s") == label
    cs = [_c_eer("s", 0.45, wer=0.05, uar=0.6), _c_eer("t", 0.45, uar=0.7)]  # t: no WER
    r = voiceprivacy_ranking(cs, bands=[0.4], attackers=attackers)
    assert [(x.condition, x.judged_attacker, x.p_band) for x in r.rows] == [("s", label, None)]
    assert [(x.condition, x.judged_attacker, x.p_band) for x in r.uar_rows] == [
        ("t", None, None),  # no recipe: the scores' making is unknown
        ("s", label, None),
    ]
    assert [(x.rank, x.eer, x.wer, x.uar) for x in r.uar_rows] == [
        (1, 0.45, None, 0.7),
        (2, 0.45, 0.05, 0.6),
    ]
    assert r.to_dict()["uar_rows"][1]["judged_attacker"] == label
