"""check_summary_eers: a VoicePrivacy tree's summary EERs against its scores, as values; the
CLI's ``study build`` prints the same lines."""

from __future__ import annotations

import pytest

from tests.vpc_tree import summaries_of_the_scores, write_tree, write_tree_2026
from voxmetrics.analysis.vpc import (
    SummaryEERCheck,
    SummaryEERMismatch,
    challenge_group_eers,
    check_summary_eers,
)
from voxmetrics.cli import main
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.metrics.eer import eer


def test_summary_eers_of_the_scores_agree(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0}, results=False, decimals=3)
    summaries_of_the_scores(root, "mcadams")
    check = check_summary_eers(read_vpc_tree(root))
    assert check == SummaryEERCheck(n_agree=8)
    assert check.lines == ("8 per-gender EER(s) of the results summaries agree with the scores",)
    assert check.to_dict() == {"n_agree": 8, "mismatches": []}


def test_a_summary_of_another_run_is_a_mismatch(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0}, results=False, decimals=3)
    summaries_of_the_scores(root, "mcadams", off=1.0)
    tree = read_vpc_tree(root)
    check = check_summary_eers(tree)
    assert check.n_agree == 7 and len(check.mismatches) == 1
    m = check.mismatches[0]
    assert (m.condition, m.split, m.gender, m.system) == (
        "mcadams (semi-informed)",
        "test",
        "m",
        "mcadams",
    )
    sub = tree.study.get("mcadams (semi-informed)").eval.subset_attribute("sex", "M")
    assert m.eer_scores == eer(sub.tar, sub.non)
    assert m.eer_summary == pytest.approx(round(m.eer_scores * 100, 3) / 100 + 0.01)
    assert m.message.startswith("the EER of mcadams (semi-informed) (test, m) is ")
    assert m.message.endswith("; the scores and the summary come from different runs.")
    assert check.lines[1] == f"warning: {m.message}"
    assert check.to_dict()["mismatches"][0]["message"] == m.message


def test_the_cli_prints_the_same_lines(tmp_path, capsys):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0}, results=False, decimals=3)
    summaries_of_the_scores(root, "mcadams", off=1.0)
    assert main(["study", "build", str(tmp_path / "s.vxm"), str(root)]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = check_summary_eers(read_vpc_tree(root)).lines
    assert len(lines) == 2
    assert all(f"voxmetrics: {line}" in err for line in lines)


def test_a_tree_without_summaries_or_with_other_rows_has_nothing_to_check(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0}, results=False)
    check = check_summary_eers(read_vpc_tree(root))
    assert check == SummaryEERCheck() and check.lines == () and check.agreement is None
    with_results = write_tree(tmp_path / "r", {"mcadams": 1.0})  # the fixed EERs of the fixture
    check = check_summary_eers(read_vpc_tree(with_results))
    assert check.n_agree == 0 and len(check.mismatches) == 8
    assert all(isinstance(m, SummaryEERMismatch) for m in check.mismatches)


def test_challenge_group_eers_of_vpc_trees(tmp_path):
    t24 = read_vpc_tree(write_tree(tmp_path / "t24", {"mcadams": 1.0})).study
    groups = challenge_group_eers(t24)
    assert set(groups) == set(t24.names)
    assert set(groups["mcadams (semi-informed)"]) == {"F", "M"}
    t1 = read_vpc_tree(write_tree_2026(tmp_path / "t1", track=1)).study
    assert challenge_group_eers(t1) == {}  # one mixed list: its EER is the condition's
    t2 = read_vpc_tree(write_tree_2026(tmp_path / "t2", track=2)).study
    assert set(challenge_group_eers(t2)["original"]) == {"en", "de"}
