"""The VoicePrivacy ranking rule: the EER it bands (as the challenge prints it: rounded to
0.001 %, the mean of its lists' EERs), the band edges, and its two rankings (WER, UAR)."""

from __future__ import annotations

import json

import pytest

from tests.vpc_tree import write_tree, write_tree_2026
from voxmetrics.analysis.ranking import challenge_eer, in_band, report_ranking, voiceprivacy_ranking
from voxmetrics.analysis.tradeoff import ConditionNumbers
from voxmetrics.analysis.vpc import challenge_group_eers
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.evaluation import evaluate_study


def _c(name, eer, wer=None, uar=None, attacker="semi-informed"):
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
    r = voiceprivacy_ranking([_c("s", eer, wer=0.1)], bands=[band])
    assert [x.condition for x in r.rows] == (["s"] if inside else [])
    assert ("s" in r.unranked) is (not inside)


def test_the_banded_eer_is_the_printed_one():
    r = voiceprivacy_ranking([_c("s", 0.29999999999999993, wer=0.1)])
    assert [x.band for x in r.rows] == [0.1, 0.2, 0.3]
    assert r.rows[-1].eer == 0.3  # the EER as printed (30.000 %), the one it was banded on


def test_per_list_eers_are_averaged_as_printed():
    """2024: the system's EER for the ranking is the mean of its female and male EERs."""
    cs = [_c("a", eer=0.33, wer=0.05, uar=0.5), _c("b", eer=0.25, wer=0.04, uar=0.6)]
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
        _c("a", 0.45, wer=0.05, uar=0.40),
        _c("b", 0.45, wer=0.08, uar=0.60),
        _c("c", 0.45, wer=0.08, uar=0.60),
        _c("d", 0.45, uar=0.70),  # no WER: in the UAR ranking only
        _c("e", 0.45, wer=0.02),  # no UAR: in the WER ranking only
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


def test_challenge_group_eers_of_vpc_trees(tmp_path):
    t24 = read_vpc_tree(write_tree(tmp_path / "t24", {"mcadams": 1.0})).study
    groups = challenge_group_eers(t24)
    assert set(groups) == set(t24.names)
    assert set(groups["mcadams (semi-informed)"]) == {"F", "M"}
    t1 = read_vpc_tree(write_tree_2026(tmp_path / "t1", track=1)).study
    assert challenge_group_eers(t1) == {}  # one mixed list: its EER is the condition's
    t2 = read_vpc_tree(write_tree_2026(tmp_path / "t2", track=2)).study
    assert set(challenge_group_eers(t2)["original"]) == {"en", "de"}


def test_report_ranking_of_a_2024_tree_bands_the_mean_of_the_per_gender_eers(tmp_path):
    study = read_vpc_tree(write_tree(tmp_path / "t", {"mcadams": 1.0, "sttts": 0.0})).study
    reports = evaluate_study(study, bootstrap=0)
    groups = challenge_group_eers(study)
    r = report_ranking(reports, group_eers=groups, bands=[0.0])
    for row in r.rows:
        g = groups[row.condition]
        assert row.eer == pytest.approx(challenge_eer(0, [g["F"], g["M"]]))
