"""VoicePrivacy 2026 trees: track 1 (mixed lists, asv_ssl), track 2 (one list per language,
one retrained model per language) and exp/-only folders and zips. Every tree is written by the
tests (tests/vpc_tree.py) in the layout of the challenge's run_evaluation.py; the reference
EER is SpeechBrain's on the pairs the challenge's asv.py reads (one per distinct key pair,
with the label of its last line)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from speechbrain.utils.metric_stats import EER as speechbrain_eer

from tests.vpc_tree import (
    add_embeddings,
    read_pairs,
    write_summaries_2026,
    write_tree,
    write_tree_2026,
    zip_exp_only,
    zip_tree,
)
from voxmetrics.analysis.vpc import check_summary_eers
from voxmetrics.cli import main
from voxmetrics.data.studybuild import build_study
from voxmetrics.data.vpc import is_vpc_tree, read_results_summary, read_vpc_tree, read_vpc_zip
from voxmetrics.data.vpc_lists import read_key
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.metrics.eer import eer

NAMES = {  # condition -> (model, enrolment suffix, trial suffix); track 2 adds the language
    "original": ("asv_ssl", "", ""),
    "mcadams (ignorant)": ("asv_ssl", "", "_mcadams"),
    "mcadams (lazy-informed)": ("asv_ssl", "_mcadams", "_mcadams"),
    "mcadams (semi-informed)": ("asv_anon_mcadams", "_mcadams", "_mcadams"),
}


@pytest.fixture(scope="module")
def track1(tmp_path_factory) -> Path:
    return write_tree_2026(
        tmp_path_factory.mktemp("vpc26") / "t1", n_speakers=4, n_utts=3, n_unenrolled=1, seed=3
    )


@pytest.fixture(scope="module")
def track2(tmp_path_factory) -> Path:
    return write_tree_2026(
        tmp_path_factory.mktemp("vpc26") / "t2", track=2, languages=("en", "de", "fr"), seed=5
    )


def _challenge(root: Path, model: str, folder: str, key: str) -> tuple[float, list, list]:
    """SpeechBrain's EER of one score folder on asv.py's pairs, and those pairs."""
    pos, neg = read_pairs(root / "exp" / model / folder / "scores", root / "data" / key / "trials")
    value, _ = speechbrain_eer(torch.tensor(pos), torch.tensor(neg))
    return float(value), pos, neg


def test_the_mixed_key_repeats_pairs_and_the_last_label_counts(track1):
    key = track1 / "data" / "libri_test_trials_mixed" / "trials"
    lines = [ln.split() for ln in key.read_text().splitlines()]
    read = read_key(key)
    assert read.n_lines == len(lines) and read.n_repeated_lines > 0 and read.n_relabelled > 0
    last = {}
    for e, t, lab in lines:
        last[(e, t)] = lab == "target"
    got = dict(zip(zip(read.pairs["enrol"], read.pairs["trial"], strict=True),
                   read.pairs["target"], strict=True))  # fmt: skip
    assert got == last  # asv.py's dict: one entry per distinct pair, the last line's label
    first = {}
    for e, t, lab in lines:
        first.setdefault((e, t), lab == "target")
    first_nontarget_then_target = [p for p, lab in last.items() if lab and not first[p]]
    assert first_nontarget_then_target  # such pairs exist in the script's key
    scores = track1 / "exp" / "asv_ssl" / "libri_test_enrolls-libri_test_trials_mixed" / "scores"
    assert len(scores.read_text().splitlines()) == len(last)  # one score per distinct pair


def test_track1_conditions_and_eers(track1):
    imp = read_vpc_tree(track1)
    assert imp.edition == "2026"
    assert imp.study.names == list(NAMES)
    assert not imp.missing
    notes = "\n".join(imp.notes)
    assert "line(s) repeat a pair listed before" in notes and "last line" in notes
    assert "not enrolled" in notes  # one unenrolled speaker per gender
    for name, (model, es, ts) in NAMES.items():
        cond = imp.study.get(name)
        assert cond.attacker == name.split("(")[-1].rstrip(")") if "(" in name else "original"
        for split, sm in (("test", cond.eval), ("dev", cond.dev)):
            folder = f"libri_{split}_enrolls{es}-libri_{split}_trials_mixed{ts}"
            expected, pos, neg = _challenge(track1, model, folder, f"libri_{split}_trials_mixed")
            pairs = sm.pairwise_view()
            assert sm.n_pairs == len(pos) + len(neg)  # every distinct key pair, none dropped
            assert sorted(pairs.tar.tolist()) == sorted(pos)
            assert eer(pairs.tar, pairs.non) == pytest.approx(expected, abs=1e-6)
            assert set(sm.attribute_values("sex")) == {"F", "M"}  # from spk2gender


def test_track1_1_to_n_numbers_are_pooled_per_gender_by_default(track1):
    cond = read_vpc_tree(track1).study.get("mcadams (lazy-informed)")
    report = evaluate_condition(cond)
    groups = report.trials_used.groups
    assert report.trials_used.reason is None and groups["by"] == "sex"
    assert set(groups["groups"]) == {"F", "M"}
    assert all(g["n_enrolled"] == 4 for g in groups["groups"].values())
    assert report.baseline.linkability is not None and report.lid is not None
    assert report.to_dict()["trials_used"]["one_to_n"]["pooled"]["by"] == "sex"


def test_track1_summary_rows_are_the_lazy_informed_attacker(track1, tmp_path):
    imp = read_vpc_tree(track1)
    eers = imp.summary_eers
    orig_rows = eers[eers["model"] == "original"]
    assert set(orig_rows["condition"]) == {"mcadams (lazy-informed)"}
    assert set(eers.loc[eers["model"] == "anonymised", "condition"]) == {"mcadams (semi-informed)"}
    assert set(eers["gender"]) == {"mixed"}
    check = check_summary_eers(imp)
    assert check.n_agree == 4 and not check.mismatches
    assert check.agreement == "4 EER(s) of the results summaries agree with the scores"
    # a summary of another run: the lazy-informed test EER moved by 1 %
    root = tmp_path / "t"
    shutil.copytree(track1, root)
    summary = root / "exp" / "results_summary" / "eval_orig_mcadams" / "results_orig.txt"
    text = summary.read_text().splitlines()
    i = next(k for k, ln in enumerate(text) if " test " in ln and "mixed" in ln)
    head, value = text[i].rsplit(maxsplit=1)
    text[i] = f"{head} {float(value) + 1:.3f}"
    summary.write_text("\n".join(text) + "\n")
    check = check_summary_eers(read_vpc_tree(root))
    assert check.n_agree == 3 and len(check.mismatches) == 1
    m = check.mismatches[0]
    assert (m.condition, m.split, m.gender) == ("mcadams (lazy-informed)", "test", "mixed")
    assert "the EER of mcadams (lazy-informed) (test, mixed)" in m.message


def test_track1_utility_from_the_2026_summary(track1):
    imp = read_vpc_tree(track1)
    u = imp.study.get("mcadams (semi-informed)").utility
    assert u.uar == pytest.approx(0.534914) and u.uar_method == "fold_mean"
    assert u.wer == pytest.approx(imp.study.get("mcadams (ignorant)").utility.wer)
    assert imp.study.get("original").utility.uar == pytest.approx(0.710618)


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_track2_per_language_eers_are_the_challenges(track2, lang):
    imp = read_vpc_tree(track2)
    assert imp.edition == "2026" and not imp.missing
    for name, (model, es, ts) in NAMES.items():
        if name.endswith("(semi-informed)"):
            model = f"asv_anon_track2_10_{lang}_mcadams"  # one retrained model per language
        cond = imp.study.get(name)
        sub = cond.eval.subset_attribute("language", lang)
        folder = f"{lang}_test_enrolls{es}-{lang}_test_trials_mixed{ts}"
        expected, pos, neg = _challenge(track2, model, folder, f"{lang}_test_trials_mixed")
        assert sub.n_pairs == len(pos) + len(neg)
        assert eer(sub.tar, sub.non) == pytest.approx(expected, abs=1e-6)
        assert all(t.startswith(f"{lang}/") for t in sub.trial_ids)  # ids named per dataset


def test_track2_attributes_groups_and_summaries(track2):
    imp = read_vpc_tree(track2)
    cond = imp.study.get("mcadams (semi-informed)")
    assert set(cond.eval.attributes) == {"sex", "language", "language_sex"}
    assert cond.eval.attribute_values("language") == ["de", "en", "fr"]
    report = evaluate_condition(cond)
    assert report.trials_used.groups["by"] == "language_sex"
    assert len(report.trials_used.groups["groups"]) == 6
    # the per-language ASV_eval^anon tables are printed without the index column
    per_lang = track2 / "exp/results_summary/track2/eval_anon_10_de_mcadams/results_anon.txt"
    assert per_lang.read_text().splitlines()[3].startswith("dataset split")
    tables = read_results_summary(per_lang)
    assert list(tables["asv_anon"]["dataset"]) == ["de", "de"]
    check = check_summary_eers(imp)
    assert check.n_agree == 12 and not check.mismatches  # 3 languages x 2 splits x 2 attackers
    u = cond.utility
    assert "mean of 3 datasets" in u.source and u.uar_method == "fold_mean"


def test_published_2026_result_for_rank_file(tmp_path):
    """The 2026 repository's track 2 result file: its ASV_eval^anon sections, one per language,
    printed without the index column, after one with it."""
    text = (
        "---- Time: 13-06-26_05:45 ----\n\n---- ASV_eval results ----\n"
        "   dataset split gender enrollment trial     EER\n"
        "8       de   dev  mixed       anon  anon   8.309\n"
        "11      de  test  mixed       anon  anon  11.494\n\n"
        "---- ASR results ----\n   dataset split       asr     WER\n"
        "2       de   dev  original   5.246\n10      de   dev      anon   7.807\n\n"
        "---- Time: 06-06-26_05:22 ----\n\n---- ASV_eval^anon results ----\n"
        "dataset split gender enrollment trial   EER\n"
        "     en   dev  mixed       anon  anon 1.398\n"
        "     en  test  mixed       anon  anon 3.734\n\n"
        "---- Time: 06-06-26_12:31 ----\n\n---- ASV_eval^anon results ----\n"
        "dataset split gender enrollment trial   EER\n"
        "     de   dev  mixed       anon  anon 1.431\n"
    )
    path = tmp_path / "result_for_rank_BM1"
    path.write_text(text)
    tables = read_results_summary(path)
    assert tables["asv_anon"]["dataset"].tolist() == ["en", "en", "de"]
    assert tables["asv_anon"]["EER"].tolist() == [1.398, 3.734, 1.431]
    assert tables["asv"]["EER"].tolist() == [8.309, 11.494]
    bad = tmp_path / "bad"
    bad.write_text("---- ASV_eval^anon results ----\ndataset split EER\n en dev 1 2 3\n")
    with pytest.raises(VoxMetricsInputError, match=r"has 5 field\(s\) for the 3 columns"):
        read_results_summary(bad)


def test_exp_only_zip_equals_the_tree_and_says_what_is_missing(track1, tmp_path):
    root = tmp_path / "t"
    shutil.copytree(track1, root)
    add_embeddings(root, seed=2)  # the scores become the embeddings' cosines
    write_summaries_2026(root, {"mcadams": 1.0}, track=1, datasets=("libri",))
    full = read_vpc_tree(root)
    imp = read_vpc_zip(zip_exp_only(root), "exp_only.zip")
    assert imp.study.names == full.study.names
    for c in full.study.conditions:
        z = imp.study.get(c.name)
        assert z.eval.equals(c.eval) and z.dev.equals(c.dev)  # labels from the embeddings
        assert z.embeddings is not None and z.utility == c.utility
    missing = "\n".join(imp.missing)
    assert missing.startswith("data/: not in the tree") and "cannot be checked" in missing
    notes = "\n".join(imp.notes)
    assert "labelled by the speaker of each trial in the challenge's utterance embeddings" in notes
    assert check_summary_eers(imp).n_agree == 4


def test_exp_folder_without_data_nor_embeddings_uses_librispeech_ids(tmp_path):
    root = write_tree(tmp_path / "t", {"mcadams": 1.0})
    full = read_vpc_tree(root).study
    shutil.rmtree(root / "data")
    assert is_vpc_tree(root) and is_vpc_tree(root / "exp")
    for source in (root, root / "exp"):
        imp = read_vpc_tree(source)
        assert "prefix of each trial id before its first '-'" in "\n".join(imp.notes)
        for c in full.conditions:
            assert imp.study.get(c.name).eval.equals(c.eval)
    assert build_study(root).names == full.names


def test_a_submission_zip_without_scores_says_why(track1):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        rank = track1 / "exp/results_summary/eval_orig_mcadams/results_orig.txt"
        zf.write(rank, "exp/results_summary/track1/result_for_rank_mcadams")
    with pytest.raises(VoxMetricsInputError, match=r"holds results summaries but no scores"):
        read_vpc_zip(buf.getvalue(), "result_for_submission_mcadams.zip")


def test_study_build_reads_a_2026_tree(track2, tmp_path, capsys):
    out = tmp_path / "t2.vxm"
    assert main(["study", "build", str(out), str(track2)]) == 0
    err = capsys.readouterr().err
    assert "voxmetrics: a VoicePrivacy 2026 evaluation tree" in err
    assert "found mcadams (semi-informed) test: 54 trials x 18 enrolled" in err
    assert "note: en_test_trials_mixed/trials:" in err
    assert "missing:" not in err
    assert "12 EER(s) of the results summaries agree with the scores" in err


def test_zip_of_a_2026_tree_equals_the_folder(track2):
    full = read_vpc_tree(track2)
    imp = read_vpc_zip(zip_tree(track2), "t2.zip")
    for c in full.study.conditions:
        assert imp.study.get(c.name).eval.equals(c.eval)


def test_per_gender_subset_of_a_mixed_list(track1):
    """sex = F of the mixed list is the challenge's female list (its distinct pairs)."""
    cond = read_vpc_tree(track1).study.get("original")
    sub = cond.eval.subset_attribute("sex", "F")
    report = evaluate(sub, parts=("pairwise",))
    pos, neg = read_pairs(
        track1 / "exp/asv_ssl/libri_test_enrolls-libri_test_trials_mixed/scores",
        track1 / "data/libri_test_trials_mixed/trials",
    )
    assert report.trials_used.n_pairs == sub.pairwise_view().n_pairs < len(pos) + len(neg)
    assert all(s.startswith("20") for s in sub.enrol_speakers)  # the female speakers


def test_an_exp_folder_of_model_folders_without_scores_is_a_tree_without_conditions(tmp_path):
    """What a submission zip unpacks to (model files, no score folder): a clear refusal, not
    the folder layout's "'asv_anon_x' is not an attacker"."""
    (tmp_path / "exp" / "asv_anon_mcadams").mkdir(parents=True)
    (tmp_path / "exp" / "asv_anon_mcadams" / "results_mcadams.csv").write_text("x\n")
    assert is_vpc_tree(tmp_path)
    with pytest.raises(VoxMetricsInputError, match=r"the tree holds no score folders \(exp/"):
        build_study(tmp_path)
