"""A VoicePrivacy tree whose test set has trial speakers who are not enrolled, as the challenge's.

In the challenge's LibriSpeech test set 29 of the 40 trial speakers are enrolled; the others
appear in the per-gender keys only as non-target lines against every enrolled speaker of their
gender, and the challenge's ``asv.py`` computes SpeechBrain's EER on every line of the key. The
pairwise numbers count every line (per gender, per subset, per single list); the 1-to-N numbers
rank each trial of an enrolled speaker within its gender's complete list and pool the genders.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from speechbrain.utils.metric_stats import EER as speechbrain_eer

from tests.vpc_tree import read_pairs, write_tree
from voxmetrics.cli import main
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.evaluation.card import report_card
from voxmetrics.evaluation.threat import threat_callouts

SCENARIOS = {  # condition -> (model folder, enrolment suffix, trial suffix)
    "original": ("asv_orig", "", ""),
    "mcadams (lazy-informed)": ("asv_orig", "_mcadams", "_mcadams"),
    "mcadams (semi-informed)": ("asv_anon_mcadams", "_mcadams", "_mcadams"),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return write_tree(
        tmp_path_factory.mktemp("vpc") / "tree",
        {"mcadams": 1.0},
        n_speakers=5,
        n_utts=3,
        n_unenrolled=2,
        seed=4,
    )


@pytest.fixture(scope="module")
def study(tree):
    return read_vpc_tree(tree).study


def _challenge_eer(tree: Path, name: str, split: str, sex: str) -> tuple[float, int]:
    model, es, ts = SCENARIOS[name]
    folder = tree / "exp" / model / f"libri_{split}_enrolls{es}-libri_{split}_trials_{sex}{ts}"
    pos, neg = read_pairs(
        folder / "scores", tree / "data" / f"libri_{split}_trials_{sex}" / "trials"
    )
    value, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
    return float(value), len(pos) + len(neg)


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("split", ["dev", "test"])
@pytest.mark.parametrize("sex", ["f", "m"])
def test_per_gender_eers_count_every_key_line(study, tree, name, split, sex):
    expected, n_lines = _challenge_eer(tree, name, split, sex)
    cond = study.get(name).subset("sex", sex.upper())
    sm = cond.eval if split == "test" else cond.dev
    assert sm.n_other_trials == 2 * 3  # 2 unenrolled speakers x 3 utterances
    report = evaluate(sm, parts=("pairwise",))
    assert report.trials_used.n_pairs == n_lines
    assert report.baseline.eer == pytest.approx(expected, abs=1e-6)
    assert report.trials_used.one_to_n_left_out["speaker_not_enrolled"] == 6


def test_a_single_per_gender_key_counts_every_line(tree, tmp_path, capsys):
    for sex in ("f", "m"):
        folder = tree / "exp" / "asv_orig" / f"libri_test_enrolls-libri_test_trials_{sex}"
        key = tree / "data" / f"libri_test_trials_{sex}" / "trials"
        out = tmp_path / f"{sex}.json"
        argv = ["evaluate", str(folder / "scores"), "--trials", str(key), "--json", str(out)]
        assert main(argv) == 0, capsys.readouterr().err
        r = json.loads(out.read_text())
        expected, n_lines = _challenge_eer(tree, "original", "test", sex)
        assert r["n_pairs"] == n_lines
        assert r["eer"] == pytest.approx(expected, abs=1e-6)
        assert r["trials_used"]["one_to_n"]["left_out"]["speaker_not_enrolled"] == 6
        assert r["linkability"] is not None  # the enrolled speakers' trials are complete


def test_report_by_sex_equals_the_challenge_and_the_summary_check_is_silent(tree, tmp_path):
    from tests.vpc_tree import summaries_of_the_scores

    summaries_of_the_scores(tree, "mcadams")  # the results files as the challenge writes them
    out = tmp_path / "s.vxm"
    assert main(["study", "build", str(out), str(tree)]) == 0
    js = tmp_path / "by.json"
    assert main(["report", str(out), "--json", str(js), "--by", "sex", "--bootstrap", "0"]) == 0
    report = json.loads(js.read_text())
    for name in ("original", "mcadams (semi-informed)"):
        for sex in ("f", "m"):
            expected, n_lines = _challenge_eer(tree, name, "test", sex)
            got = report["conditions"][name]["by"]["sex"][sex.upper()]
            assert got["eer"] == pytest.approx(expected, abs=1e-6)
            assert got["n_pairs"] == n_lines


def test_the_default_report_has_1_to_n_numbers_pooled_over_the_genders(study):
    cond = study.get("mcadams (semi-informed)")
    report = evaluate_condition(cond, bootstrap=30, seed=1)
    one = report.trials_used
    assert one.reason is None and one.groups["by"] == "sex"
    groups = one.groups["groups"]
    assert set(groups) == {"F", "M"} and all(g["n_enrolled"] == 5 for g in groups.values())
    per_sex = {v: evaluate_condition(cond.subset("sex", v)) for v in ("F", "M")}
    n = {v: groups[v]["n_trials"] for v in groups}
    total = sum(n.values())
    weighted = lambda f: sum(n[v] * f(per_sex[v]) for v in n) / total  # noqa: E731
    assert report.baseline.linkability == pytest.approx(weighted(lambda r: r.baseline.linkability))
    assert report.srd.stats.mean_d == pytest.approx(weighted(lambda r: r.srd.stats.mean_d))
    # LID: each group calibrated on its own dev trials, pooled over trials
    assert report.lid is not None and report.lid.n_trials == total
    assert report.lid.alid == pytest.approx(weighted(lambda r: r.lid.alid))
    assert report.lid.lid_max == max(r.lid.lid_max for r in per_sex.values())
    assert sorted(report.lid.fold_w) == sorted(r.lid.w for r in per_sex.values())
    assert report.chance_linkability == pytest.approx(1 / 5)
    # the bootstrap resamples every trial speaker: the 1-to-N intervals exist too
    for key in ("linkability", "alid", "mean_d", "eer"):
        iv = report.intervals[key]
        assert iv.low is not None and iv.low <= iv.estimate <= iv.high, key
    # the card and the call-outs read them: no "not computed" where numbers exist
    card = report_card([report]).frame("text")
    assert card.iloc[0]["LIDmax (bits)"] not in ("", None)
    threat_callouts(read_study_of(cond), [report])  # no error: every identity number is there


def read_study_of(cond):
    from voxmetrics.data.study import Study

    return Study(conditions=(cond,), name="one")


def test_pooled_curve_is_the_mean_of_each_trials_expectation(study):
    cond = study.get("original")
    report = evaluate(cond.eval, parts=("linkability",))
    per_sex = [evaluate(cond.eval.subset_attribute("sex", v), parts=("linkability",)) for v in "FM"]
    sizes = np.array([r.trials_used.one_to_n_trials for r in per_sex], dtype=float)
    for k, m in enumerate(report.linkability_curve.n):
        values = [
            dict(zip(r.linkability_curve.n, r.linkability_curve.expected, strict=True))[m]
            for r in per_sex
        ]
        assert report.linkability_curve.expected[k] == pytest.approx(
            float((sizes * values).sum() / sizes.sum())
        )
