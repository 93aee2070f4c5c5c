"""A VoicePrivacy 2024 evaluation tree as a study: the challenge's layout, its per-gender EERs
(SpeechBrain's EER on the same scores), utility from the results summaries, missing pieces and
input errors, and a tree with trial speakers who are not enrolled. Every tree is written by the
tests (tests/vpc_tree.py), shaped like the challenge's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from speechbrain.utils.metric_stats import EER as speechbrain_eer

from tests.vpc_tree import RESULTS_ANON, RESULTS_ORIG, read_pairs, write_tree, zip_tree
from voxmetrics.cli import main
from voxmetrics.data.studybuild import build_study
from voxmetrics.data.studyfile import load_study, study_from_bytes, study_to_bytes
from voxmetrics.data.vpc import (
    is_vpc_tree,
    read_results_summary,
    read_vpc_tree,
    read_vpc_zip,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.evaluation.card import report_card
from voxmetrics.evaluation.threat import threat_callouts
from voxmetrics.metrics.eer import eer

SCENARIOS = {  # condition -> (model folder, enrolment suffix, trial suffix)
    "original": ("asv_orig", "", ""),
    "mcadams (ignorant)": ("asv_orig", "", "_mcadams"),
    "mcadams (lazy-informed)": ("asv_orig", "_mcadams", "_mcadams"),
    "mcadams (semi-informed)": ("asv_anon_mcadams", "_mcadams", "_mcadams"),
    "sttts (semi-informed)": ("asv_anon_sttts", "_sttts", "_sttts"),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return write_tree(tmp_path_factory.mktemp("vpc") / "tree", n_speakers=4, n_utts=4, seed=1)


@pytest.fixture(scope="module")
def imported(tree):
    return read_vpc_tree(tree)


def test_conditions_attackers_and_splits(imported):
    study = imported.study
    assert study.names == [
        "original",
        "mcadams (ignorant)",
        "mcadams (lazy-informed)",
        "mcadams (semi-informed)",
        "sttts (ignorant)",
        "sttts (lazy-informed)",
        "sttts (semi-informed)",
    ]
    attackers = {c.name: c.attacker for c in study.conditions}
    assert attackers["original"] == "original"
    assert attackers["mcadams (ignorant)"] == "ignorant"
    assert attackers["sttts (lazy-informed)"] == "lazy-informed"
    assert attackers["sttts (semi-informed)"] == "semi-informed"
    c = study.get("mcadams (semi-informed)")
    # test -> eval, dev -> dev: the speaker ids of the tree say which split they come from
    assert {s[0] for s in c.eval.trial_speakers} == {"2"}
    assert {s[0] for s in c.dev.trial_speakers} == {"1"}
    # f and m lists joined as one sparse list: each listed pair once, with sex per trial
    assert c.eval.mask is not None
    assert c.eval.n_pairs == 2 * 16 * 4  # 2 lists x 16 trials x 4 enrolled of the same sex
    assert sorted(set(c.eval.attributes["sex"].tolist())) == ["F", "M"]
    assert study.subset_options() == {"sex": ["F", "M"]}


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("split", ["dev", "test"])
@pytest.mark.parametrize("sex", ["f", "m"])
def test_per_gender_eer_is_speechbrains(imported, tree, name, split, sex):
    """The EER of the subset sex = F / M is the challenge's EER of trials_f / trials_m."""
    model, es, ts = SCENARIOS[name]
    folder = tree / "exp" / model / f"libri_{split}_enrolls{es}-libri_{split}_trials_{sex}{ts}"
    key = tree / "data" / f"libri_{split}_trials_{sex}" / "trials"
    pos, neg = read_pairs(folder / "scores", key)
    expected, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
    cond = imported.study.get(name).subset("sex", sex.upper())
    sm = cond.eval if split == "test" else cond.dev
    assert sm.n_pairs == len(pos) + len(neg)  # every listed pair, none dropped
    assert sorted(sm.tar.tolist()) == sorted(pos)
    assert eer(sm.tar, sm.non) == pytest.approx(float(expected), abs=1e-6)


def test_utility_from_the_results_summaries(imported):
    study = imported.study
    u = study.get("mcadams (lazy-informed)").utility
    assert u.wer == pytest.approx(0.029) and u.uar == pytest.approx(0.425)
    assert u.per_class["sad"] == pytest.approx(0.027756)
    assert set(u.per_class) == {"sad", "neu", "ang", "hap"}
    assert study.get("sttts (semi-informed)").utility.wer == pytest.approx(0.039)
    orig = study.get("original").utility
    assert orig.wer == pytest.approx(0.01844) and orig.uar == pytest.approx(0.710618)
    eers = imported.summary_eers
    row = eers[(eers["split"] == "test") & (eers["gender"] == "m") & (eers["model"] == "original")]
    assert row["EER"].iloc[0] == pytest.approx(0.00418)


def test_published_result_for_rank_file(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0}, results=False)
    (root / "results").mkdir()
    text = RESULTS_ORIG.format(uar="55.6146", uar_dev="1", wer="9.954") + "\n" + RESULTS_ANON
    (root / "results" / "result_for_rank_mcadams").write_text(text)
    imp = read_vpc_tree(root)
    u = imp.study.get("mcadams (ignorant)").utility
    assert u.wer == pytest.approx(0.09954) and u.uar == pytest.approx(0.556146)
    tables = read_results_summary(root / "results" / "result_for_rank_mcadams")
    assert set(tables) == {"ser", "asv", "asr", "asv_anon"}
    assert len(tables["asv_anon"]) == 4


def test_study_file_keeps_utility(imported, tmp_path):
    back = study_from_bytes(study_to_bytes(imported.study))
    for c in imported.study.conditions:
        assert back.get(c.name).utility == c.utility
        assert back.get(c.name).eval.equals(c.eval)


def test_build_study_and_cli_recognise_the_tree(tree, tmp_path, capsys):
    assert is_vpc_tree(tree) and is_vpc_tree(tree.parent)  # a folder wrapping the tree too
    assert build_study(tree).names == read_vpc_tree(tree).study.names
    out = tmp_path / "vpc.vxm"
    assert main(["study", "build", str(out), str(tree)]) == 0
    err = capsys.readouterr().err
    assert "found original test: 32 trials x 8 enrolled, 128 listed pairs" in err
    assert "mcadams (semi-informed): eval 32 x 8, dev 32 x 8, WER 2.90%, UAR 42.50%" in err
    study = load_study(out)
    assert study.get("sttts (ignorant)").utility.uar == pytest.approx(0.435)


def test_missing_pieces_load_what_is_there(tmp_path):
    root = write_tree(tmp_path / "t")
    shutil.rmtree(root / "exp" / "asv_anon_sttts")
    shutil.rmtree(
        root / "exp" / "asv_orig" / "libri_dev_enrolls_mcadams-libri_dev_trials_m_mcadams"
    )
    shutil.rmtree(root / "exp" / "results_summary" / "eval_orig_sttts")
    imp = read_vpc_tree(root)
    assert "sttts (semi-informed)" not in imp.study.names
    assert "sttts (lazy-informed)" in imp.study.names
    missing = "\n".join(imp.missing)
    assert "sttts (semi-informed): no scores" in missing
    assert "mcadams (lazy-informed): no dev trials_m scores" in missing
    assert "system 'sttts': its results summary has no ASR or SER rows" in missing
    lazy = imp.study.get("mcadams (lazy-informed)")
    assert set(lazy.dev.attributes["sex"].tolist()) == {"F"}
    assert imp.study.get("sttts (ignorant)").utility is None


def test_missing_score_of_a_listed_pair_is_an_error(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    scores = root / "exp" / "asv_orig" / "libri_test_enrolls-libri_test_trials_f" / "scores"
    lines = scores.read_text().splitlines()
    scores.write_text("\n".join(lines[:-2]) + "\n")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"2 of the 27 pairs of the trial key .* have no score \(first: 2001 2002-0002\)",
    ):
        read_vpc_tree(root)


def test_scored_pair_outside_the_key_is_an_error(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    scores = root / "exp" / "asv_orig" / "libri_dev_enrolls-libri_dev_trials_m" / "scores"
    text = scores.read_text()
    scores.write_text(text + "1100 9999-0000 0.1\n")
    with pytest.raises(VoxMetricsInputError, match=r"1 scored pair\(s\) are not in the trial key"):
        read_vpc_tree(root)
    scores.write_text(text + "1100 1101-0000 0.5\n")
    with pytest.raises(VoxMetricsInputError, match=r"the pair \(1100, 1101-0000\) is scored twice"):
        read_vpc_tree(root)


def test_key_disagreeing_with_utt2spk_is_an_error(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    u2s = root / "data" / "libri_dev_trials_f" / "utt2spk"
    u2s.write_text(u2s.read_text().replace("1000-0000 1000", "1000-0000 1001"))
    with pytest.raises(
        VoxMetricsInputError, match=r"the key marks .* as target but the trial's speaker is '1001'"
    ):
        read_vpc_tree(root)


def test_not_a_tree(tmp_path):
    with pytest.raises(VoxMetricsInputError, match="not a VoicePrivacy 2024 evaluation tree"):
        read_vpc_tree(tmp_path)


def test_zip_upload_equals_the_folder(tree, imported):
    imp = read_vpc_zip(zip_tree(tree), "my_vpc.zip")
    assert imp.study.names == imported.study.names
    for c in imported.study.conditions:
        z = imp.study.get(c.name)
        assert z.eval.equals(c.eval) and z.dev.equals(c.dev) and z.utility == c.utility
    assert not any("/tmp" in line for line in imp.found + imp.missing)


def test_zip_error_names_the_member_not_a_temporary_folder(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    scores = root / "exp" / "asv_orig" / "libri_test_enrolls-libri_test_trials_f" / "scores"
    scores.write_text(scores.read_text().replace("\n", "\n", 3)[:-20] + "\n")
    with pytest.raises(VoxMetricsInputError) as info:
        read_vpc_zip(zip_tree(root), "x.zip")
    text = str(info.value)
    assert text.startswith("x.zip: ") and "voxmetrics-vpc-" not in text
    assert np.all(True)


def _speechbrain_summary(root: Path, system: str) -> None:
    """results_orig.txt / results_anon.txt with the EERs the challenge's scripts compute
    (``round(EER * 100, 3)`` of SpeechBrain's EER on each trial list)."""
    rows = {"orig": [], "anon": []}
    for which, model, suffix in (
        ("orig", "asv_orig", ""),
        ("anon", f"asv_anon_{system}", f"_{system}"),
    ):
        for split in ("dev", "test"):
            for sex in ("f", "m"):
                folder = (
                    root
                    / "exp"
                    / model
                    / f"libri_{split}_enrolls{suffix}-libri_{split}_trials_{sex}{suffix}"
                )
                pos, neg = read_pairs(
                    folder / "scores", root / "data" / f"libri_{split}_trials_{sex}" / "trials"
                )
                value, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
                kind = "original" if which == "orig" else "anon"
                rows[which].append(
                    f"0 libri {split} {sex} {kind} {kind} {round(float(value) * 100, 3)}"
                )
    for which, title in (("orig", "ASV_eval results"), ("anon", "ASV_eval^anon results")):
        folder = root / "exp" / "results_summary" / f"eval_{which}_{system}"
        folder.mkdir(parents=True, exist_ok=True)
        text = (
            f"---- Time: 1 ----\n\n---- {title} ----\n  dataset split gender enrollment trial EER\n"
        )
        (folder / f"results_{which}.txt").write_text(text + "\n".join(rows[which]) + "\n")


def test_summary_eers_agree_with_the_scores(tmp_path, capsys):
    root = write_tree(
        tmp_path / "t", {"mcadams": 1.0}, n_speakers=4, n_utts=5, results=False, decimals=3
    )
    _speechbrain_summary(root, "mcadams")
    assert main(["study", "build", str(tmp_path / "s.vxm"), str(root)]) == 0
    err = capsys.readouterr().err
    assert "8 per-gender EER(s) of the results summaries agree with the scores" in err
    assert "warning: the EER" not in err


def test_report_subset_gives_the_per_gender_eers(tree, imported, tmp_path):
    out = tmp_path / "s.vxm"
    assert main(["study", "build", str(out), str(tree)]) == 0
    for sex in ("f", "m"):
        js = tmp_path / f"{sex}.json"
        argv = [
            "report",
            str(out),
            "--json",
            str(js),
            "--subset",
            f"sex={sex.upper()}",
            "--bootstrap",
            "0",
        ]
        assert main(argv) == 0
        report = json.loads(js.read_text())
        for name, (model, es, ts) in SCENARIOS.items():
            folder = tree / "exp" / model / f"libri_test_enrolls{es}-libri_test_trials_{sex}{ts}"
            pos, neg = read_pairs(
                folder / "scores", tree / "data" / f"libri_test_trials_{sex}" / "trials"
            )
            expected, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
            assert report["conditions"][name]["eer"] == pytest.approx(float(expected), abs=1e-6)
            assert report["conditions"][name]["n_pairs"] == len(pos) + len(neg)


def test_notes_on_gender_lists_and_unenrolled_speakers(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    s2g = root / "data" / "libri_dev_trials_f" / "spk2gender"
    s2g.write_text(s2g.read_text().replace("1000 f", "1000 m"))
    # a trial of a speaker who is not enrolled, listed against the enrolled women
    key = root / "data" / "libri_test_trials_f" / "trials"
    key.write_text(
        key.read_text() + "".join(f"{e} 1999-0000 nontarget\n" for e in ("2000", "2001", "2002"))
    )
    u2s = root / "data" / "libri_test_trials_f" / "utt2spk"
    u2s.write_text(u2s.read_text() + "1999-0000 1999\n")
    for scores in root.glob("exp/*/libri_test_enrolls*-libri_test_trials_f*/scores"):
        scores.write_text(
            scores.read_text() + "".join(f"{e} 1999-0000 0.0\n" for e in ("2000", "2001", "2002"))
        )
    imp = read_vpc_tree(root)
    assert not imp.missing  # nothing is missing: these are notes on what was read
    missing = "\n".join(imp.notes)
    assert (
        "original dev: libri_dev_trials_f/spk2gender gives 1 speaker(s) of the trials_f list "
        "another gender (first: '1000')" in missing
    )
    assert (
        "original test: 1 trial(s) have a speaker who is not enrolled; their listed pairs count "
        "as non-mated" in missing
    )
    # the subset keeps the unenrolled trial's pairs (non-mated): every pair of its list
    assert "the subset sex = F holds" not in missing


def test_malformed_utility_in_a_study_file_is_refused(imported):
    import io
    import zipfile

    data = study_to_bytes(imported.study)
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "manifest.json":
                manifest = json.loads(body)
                manifest["conditions"][1]["utility"]["uar"] = 42.5
                body = json.dumps(manifest).encode()
            out.writestr(info.filename, body)
    with pytest.raises(
        VoxMetricsInputError, match=r"uar is 42.5; it must be a fraction in \[0, 1\]"
    ):
        study_from_bytes(buf.getvalue(), name="bad.vxm")


def test_condition_facts_show_the_utility(imported):
    from voxmetrics.data.summary import condition_facts

    facts = condition_facts(imported.study.get("mcadams (ignorant)"))
    assert (
        facts[-1]
        == "utility: WER 2.9%, UAR 42.5% (results of mcadams (WER: test, UAR: test split))"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "1000 1000-0000 0.5 7\n",
            r"line 28 has 4 fields; every line must be `enroll_id trial_id score`",
        ),
        (
            "\n1000 1000-0009\n",
            r"line 29 has 2 field\(s\); every line must be `enroll_id trial_id score`",
        ),
        ("1000 1000-0009 nan\n", r"the score 'nan' of \(1000, 1000-0009\) is not a finite number"),
    ],
)
def test_malformed_score_lines(tmp_path, extra, message):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    scores = root / "exp" / "asv_orig" / "libri_dev_enrolls-libri_dev_trials_f" / "scores"
    scores.write_text(scores.read_text() + extra)
    with pytest.raises(VoxMetricsInputError, match=message):
        read_vpc_tree(root)


def _report_by_sex(tree, tmp_path) -> dict:
    """The JSON report ``--by sex`` (no bootstrap) of the study built from ``tree``."""
    out, js = tmp_path / "s.vxm", tmp_path / "by.json"
    assert main(["study", "build", str(out), str(tree)]) == 0
    assert main(["report", str(out), "--json", str(js), "--by", "sex", "--bootstrap", "0"]) == 0
    return json.loads(js.read_text())


def test_report_by_sex_holds_every_per_gender_eer_in_one_json(tree, tmp_path):
    report = _report_by_sex(tree, tmp_path)
    for sex in ("f", "m"):
        for name, (model, es, ts) in SCENARIOS.items():
            folder = tree / "exp" / model / f"libri_test_enrolls{es}-libri_test_trials_{sex}{ts}"
            pos, neg = read_pairs(
                folder / "scores", tree / "data" / f"libri_test_trials_{sex}" / "trials"
            )
            expected, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
            got = report["conditions"][name]["by"]["sex"][sex.upper()]
            assert got["eer"] == pytest.approx(float(expected), abs=1e-6)
            assert got["n_pairs"] == len(pos) + len(neg)
    out, js = tmp_path / "s.vxm", tmp_path / "by.json"
    assert main(["report", str(out), "--json", str(js), "--by", "age"]) == 2


# A tree whose test set has trial speakers who are not enrolled, as the challenge's (folded in
# from test_vpc_groups.py). In the challenge's LibriSpeech test set 29 of the 40 trial speakers
# are enrolled; the others appear in the per-gender keys only as non-target lines against every
# enrolled speaker of their gender, and the challenge's ``asv.py`` computes SpeechBrain's EER on
# every line of the key. The pairwise numbers count every line (per gender, per subset, per
# single list); the 1-to-N numbers rank each trial of an enrolled speaker within its gender's
# complete list and pool the genders.

UNENROLLED_SCENARIOS = {  # condition -> (model folder, enrolment suffix, trial suffix)
    "original": ("asv_orig", "", ""),
    "mcadams (lazy-informed)": ("asv_orig", "_mcadams", "_mcadams"),
    "mcadams (semi-informed)": ("asv_anon_mcadams", "_mcadams", "_mcadams"),
}


@pytest.fixture(scope="module")
def unenrolled_tree(tmp_path_factory) -> Path:
    return write_tree(
        tmp_path_factory.mktemp("vpc") / "tree",
        {"mcadams": 1.0},
        n_speakers=5,
        n_utts=3,
        n_unenrolled=2,
        seed=4,
    )


@pytest.fixture(scope="module")
def unenrolled_study(unenrolled_tree):
    return read_vpc_tree(unenrolled_tree).study


def _unenrolled_eer(root: Path, name: str, split: str, sex: str) -> tuple[float, int]:
    model, es, ts = UNENROLLED_SCENARIOS[name]
    folder = root / "exp" / model / f"libri_{split}_enrolls{es}-libri_{split}_trials_{sex}{ts}"
    pos, neg = read_pairs(
        folder / "scores", root / "data" / f"libri_{split}_trials_{sex}" / "trials"
    )
    value, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
    return float(value), len(pos) + len(neg)


@pytest.mark.parametrize("name", list(UNENROLLED_SCENARIOS))
@pytest.mark.parametrize("split", ["dev", "test"])
@pytest.mark.parametrize("sex", ["f", "m"])
def test_per_gender_eers_count_every_key_line(unenrolled_study, unenrolled_tree, name, split, sex):
    expected, n_lines = _unenrolled_eer(unenrolled_tree, name, split, sex)
    cond = unenrolled_study.get(name).subset("sex", sex.upper())
    sm = cond.eval if split == "test" else cond.dev
    assert sm.n_other_trials == 2 * 3  # 2 unenrolled speakers x 3 utterances
    report = evaluate(sm, parts=("pairwise",))
    assert report.trials_used.n_pairs == n_lines
    assert report.baseline.eer == pytest.approx(expected, abs=1e-6)
    assert report.trials_used.one_to_n_left_out["speaker_not_enrolled"] == 6


def test_a_single_per_gender_key_counts_every_line(unenrolled_tree, tmp_path, capsys):
    for sex in ("f", "m"):
        folder = (
            unenrolled_tree / "exp" / "asv_orig" / f"libri_test_enrolls-libri_test_trials_{sex}"
        )
        key = unenrolled_tree / "data" / f"libri_test_trials_{sex}" / "trials"
        out = tmp_path / f"{sex}.json"
        argv = ["evaluate", str(folder / "scores"), "--trials", str(key), "--json", str(out)]
        assert main(argv) == 0, capsys.readouterr().err
        r = json.loads(out.read_text())
        expected, n_lines = _unenrolled_eer(unenrolled_tree, "original", "test", sex)
        assert r["n_pairs"] == n_lines
        assert r["eer"] == pytest.approx(expected, abs=1e-6)
        assert r["trials_used"]["one_to_n"]["left_out"]["speaker_not_enrolled"] == 6
        assert r["linkability"] is not None  # the enrolled speakers' trials are complete


def test_report_by_sex_equals_the_challenge_and_the_summary_check_is_silent(
    unenrolled_tree, tmp_path
):
    from tests.vpc_tree import summaries_of_the_scores

    summaries_of_the_scores(
        unenrolled_tree, "mcadams"
    )  # the results files as the challenge writes them
    report = _report_by_sex(unenrolled_tree, tmp_path)
    for name in ("original", "mcadams (semi-informed)"):
        for sex in ("f", "m"):
            expected, n_lines = _unenrolled_eer(unenrolled_tree, name, "test", sex)
            got = report["conditions"][name]["by"]["sex"][sex.upper()]
            assert got["eer"] == pytest.approx(expected, abs=1e-6)
            assert got["n_pairs"] == n_lines


def test_the_default_report_has_1_to_n_numbers_pooled_over_the_genders(unenrolled_study):
    cond = unenrolled_study.get("mcadams (semi-informed)")
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
    threat_callouts(_study_of(cond), [report])  # no error: every identity number is there


def _study_of(cond):
    from voxmetrics.data.study import Study

    return Study(conditions=(cond,), name="one")


def test_pooled_curve_is_the_mean_of_each_trials_expectation(unenrolled_study):
    cond = unenrolled_study.get("original")
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
