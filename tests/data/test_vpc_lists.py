"""voxmetrics.data.vpc_lists: the trial keys and scores of a VoicePrivacy tree, joined per split.

Small lists written by hand: speakers a, b (female) and c, d (male), one trial each (``a-1``...),
every trial scored against every enrolled speaker of its list.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voxmetrics.data.vpc_lists import (
    KeyRead,
    TrialList,
    read_kaldi_frame,
    read_key,
    read_mapping,
    read_score_file,
    split_matrix,
)
from voxmetrics.errors import ExcludedTrialsWarning, VoxMetricsInputError


def _file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _list(root: Path, name: str, key: str, scores: str, **files: str) -> tuple[Path, Path]:
    """data/<name>/trials (+ utt2spk, spk2gender...) and exp/<name>/scores."""
    k = _file(root / "data" / name / "trials", key)
    for fname, text in files.items():
        _file(root / "data" / name / fname, text)
    return _file(root / "exp" / name / "scores", scores), k


def _pairs(spk: tuple[str, str], scores: tuple[float, float, float, float]) -> tuple[str, str]:
    """The key and the scores of a 2 x 2 list: (x, x-1), (y, x-1), (x, y-1), (y, y-1)."""
    x, y = spk
    pairs = [(x, f"{x}-1"), (y, f"{x}-1"), (x, f"{y}-1"), (y, f"{y}-1")]
    key = "".join(f"{e} {t} {'target' if t[0] == e else 'nontarget'}\n" for e, t in pairs)
    return key, "".join(f"{e} {t} {s}\n" for (e, t), s in zip(pairs, scores, strict=True))


@pytest.fixture
def lists_2024(tmp_path) -> list[TrialList]:
    out = []
    for part, spk, scores in (
        ("trials_f", ("a", "b"), (0.9, 0.1, 0.2, 0.8)),
        ("trials_m", ("c", "d"), (0.7, 0.3, 0.4, 0.6)),
    ):
        key, text = _pairs(spk, scores)
        u2s = "".join(f"{s}-1 {s}\n" for s in spk)
        s, k = _list(tmp_path, f"libri_test_{part}", key, text, utt2spk=u2s)
        out.append(TrialList("libri", part, s, k))
    return out


def test_read_kaldi_frame(tmp_path):
    p = _file(tmp_path / "f", "\ufeffa b c\n\n  007   1e3 nan  \n")
    df = read_kaldi_frame(p, ("one", "two", "three"), "one two three")
    # text, not numbers: '007' stays '007' and 'nan' is a label
    assert df.to_dict("list") == {"one": ["a", "007"], "two": ["b", "1e3"], "three": ["c", "nan"]}
    with pytest.raises(VoxMetricsInputError, match=r"/f: line 2 has 4 fields; every line must be"):
        read_kaldi_frame(_file(p, "a b c\na b c d\n"), ("1", "2", "3"), "1 2 3")
    with pytest.raises(VoxMetricsInputError, match=r"/f: line 3 has 2 field\(s\); every line must"):
        read_kaldi_frame(_file(p, "a b c\n\na b\n"), ("1", "2", "3"), "1 2 3")
    with pytest.raises(VoxMetricsInputError, match=r"/f: the file is empty; it should hold `1 2"):
        read_kaldi_frame(_file(p, "\n\n"), ("1", "2"), "1 2")
    p.write_bytes(b"a \xff c\n")
    with pytest.raises(VoxMetricsInputError, match=r"/f: is not UTF-8 text; a `1 2 3` file is"):
        read_kaldi_frame(p, ("1", "2", "3"), "1 2 3")


def test_read_key_keeps_each_pair_once_with_its_last_label(tmp_path):
    key = _file(
        tmp_path / "trials",
        "a a-1 nontarget\nb a-1 nontarget\na a-1 TARGET\nb a-1 nontarget\nb b-1 target\n",
    )
    kr = read_key(key)
    assert isinstance(kr, KeyRead)
    assert kr.pairs.to_dict("list") == {
        "enrol": ["a", "b", "b"],
        "trial": ["a-1", "a-1", "b-1"],
        "target": [True, False, True],
    }
    assert (kr.n_lines, kr.n_relabelled, kr.n_repeated_lines) == (5, 1, 2)
    with pytest.raises(
        VoxMetricsInputError, match=r"label 'maybe' is neither 'target' nor 'nontarget'; each"
    ):
        read_key(_file(key, "a a-1 target\nb a-1 maybe\n"))


def test_read_score_file(tmp_path):
    p = _file(tmp_path / "scores", "a a-1 0.5\nb a-1 -1e-3\n")
    df = read_score_file(p)
    assert df["score"].dtype == np.float64 and df["score"].tolist() == [0.5, -0.001]
    for bad, what in (("inf", "inf"), ("x", "x"), ("nan", "nan")):
        with pytest.raises(
            VoxMetricsInputError,
            match=rf"the score '{what}' of \(b, a-1\) is not a finite number; each line is",
        ):
            read_score_file(_file(p, f"a a-1 0.5\nb a-1 {bad}\n"))
    with pytest.raises(VoxMetricsInputError, match=r"the pair \(a, a-1\) is scored twice; each"):
        read_score_file(_file(p, "a a-1 0.5\na a-1 0.5\n"))


def test_read_mapping(tmp_path):
    p = _file(tmp_path / "utt2spk", "a-1 a\nb-1 b\na-1 a\n")
    assert read_mapping(p, "utt_id speaker") == {"a-1": "a", "b-1": "b"}
    with pytest.raises(VoxMetricsInputError, match=r"'a-1' is given both 'a' and 'b'; give it one"):
        read_mapping(_file(p, "a-1 a\na-1 b\n"), "utt_id speaker")


def test_trial_list_folder(tmp_path):
    assert TrialList("libri", "trials_f", tmp_path / "s", None).folder is None
    key = tmp_path / "data" / "x" / "trials"
    assert TrialList("libri", "trials_f", tmp_path / "s", key).folder == key.parent


def test_the_2024_per_gender_lists_are_one_sparse_matrix(lists_2024):
    sm, read = split_matrix(lists_2024, "original test")
    assert sm.shape == (4, 4) and sm.n_pairs == 8  # each list's pairs, nothing across lists
    assert sm.trial_ids.tolist() == ["a-1", "b-1", "c-1", "d-1"]
    assert sm.enrol_speakers.tolist() == ["a", "b", "c", "d"]
    assert sm.attributes["sex"].tolist() == ["F", "F", "M", "M"]
    assert sorted(sm.tar.tolist()) == [0.6, 0.7, 0.8, 0.9]
    assert sorted(sm.non.tolist()) == [0.1, 0.2, 0.3, 0.4]
    assert sm.mask[0].tolist() == [True, True, False, False] and sm.source == "original test"
    assert read.notes == [] and read.problems == []


def test_a_trial_in_both_gender_lists_is_refused(tmp_path, lists_2024):
    key, scores = _pairs(("a", "c"), (0.9, 0.1, 0.2, 0.8))
    s, k = _list(tmp_path, "other_trials_m", key, scores)
    with pytest.raises(
        VoxMetricsInputError, match=r"^t: trial 'a-1' is in both the female and the male trial"
    ):
        split_matrix([lists_2024[0], TrialList("libri", "trials_m", s, k)], "t")


def test_a_mixed_list_with_repeated_pairs_and_spk2gender(tmp_path):
    key = "a a-1 nontarget\na a-1 target\nb a-1 nontarget\nb a-1 nontarget\n"
    key += "a b-1 nontarget\nb b-1 target\n"
    s, k = _list(
        tmp_path,
        "libri_test_trials_mixed",
        key,
        "a a-1 0.9\nb a-1 0.1\na b-1 0.2\nb b-1 0.8\n",
        spk2gender="a f\nb m\n",
    )
    sm, read = split_matrix([TrialList("libri", "trials_mixed", s, k)], "anon test")
    assert sm.attributes["sex"].tolist() == ["F", "M"] and "language" not in sm.attributes
    assert sm.tar.tolist() == [0.9, 0.8] and sm.n_pairs == 4
    assert read.notes == [
        "libri_test_trials_mixed/trials: 2 line(s) repeat a pair listed before, 1 of them with "
        "both labels; each of its 4 distinct pairs counts once, with the label of its last line, "
        "as the challenge's asv.py reads the key"
    ]


def test_a_mixed_list_without_genders_has_no_sex_and_says_why(tmp_path):
    key, scores = _pairs(("a", "b"), (0.9, 0.1, 0.2, 0.8))
    s, k = _list(tmp_path, "x_trials_mixed", key, scores)
    sm, read = split_matrix([TrialList("libri", "trials_mixed", s, k)], "t")
    assert "sex" not in sm.attributes
    assert read.problems == [
        "t: the gender of 2 trial(s) is unknown (no spk2gender names their speaker), so the "
        "condition has no per-gender subsets and its 1-to-N numbers are not pooled per gender"
    ]
    # the challenge's embeddings may give the genders instead
    sm, read = split_matrix(
        [TrialList("libri", "trials_mixed", s, k, genders={"a": "m", "b": "f"})], "t"
    )
    assert sm.attributes["sex"].tolist() == ["M", "F"] and read.problems == []


def test_several_datasets_qualify_every_identity(tmp_path):
    lists = []
    for lang, scores in (("en", (0.9, 0.1, 0.2, 0.8)), ("de", (0.7, 0.3, 0.4, 0.6))):
        key, text = _pairs(("a", "b"), scores)
        s, k = _list(tmp_path / lang, "trials_mixed", key, text, spk2gender="a f\nb m\n")
        lists.append(TrialList(lang, "trials_mixed", s, k))
    sm, _ = split_matrix(lists, "anon test")
    # sorted by dataset: de before en; the same ids of two corpora never meet
    assert sm.trial_ids.tolist() == ["de/a-1", "de/b-1", "en/a-1", "en/b-1"]
    assert sm.enrol_speakers.tolist() == ["de/a", "de/b", "en/a", "en/b"]
    assert sm.attributes["language"].tolist() == ["de", "de", "en", "en"]
    assert sm.attributes["language_sex"].tolist() == ["de F", "de M", "en F", "en M"]
    assert sm.n_pairs == 8 and sorted(sm.tar.tolist()) == [0.6, 0.7, 0.8, 0.9]


def test_without_a_key_the_pairs_are_labelled_by_speaker(tmp_path):
    scores = _file(tmp_path / "scores", "a a-1 0.9\nb a-1 0.1\na b-1 0.2\nb b-1 0.8\n")
    sm, read = split_matrix([TrialList("libri", "trials_f", scores, None)], "t")
    assert sm.trial_speakers.tolist() == ["a", "b"] and sm.tar.tolist() == [0.9, 0.8]
    assert "the prefix of each trial id before its first '-'" in read.notes[0]
    named = _file(tmp_path / "named", "a u1 0.9\nb u1 0.1\na u2 0.2\nb u2 0.8\n")
    tl = TrialList("libri", "trials_f", named, None, speakers={"u1": "a", "u2": "b"})
    sm, read = split_matrix([tl], "t")
    assert sm.tar.tolist() == [0.9, 0.8] and "(idx2spk)" in read.notes[0]
    with pytest.raises(VoxMetricsInputError, match=r"no trial key \(data/ is missing\) and no utt"):
        split_matrix([TrialList("libri", "trials_f", named, None)], "t")
    tl = TrialList("libri", "trials_f", named, None, speakers={"u1": "a"})
    with pytest.raises(
        VoxMetricsInputError,
        match=r"2 scored pair\(s\) have a trial the challenge's utterance embeddings do not name "
        r"\(first: 'u2'\)",
    ):
        split_matrix([tl], "t")


def test_scores_and_key_must_be_the_same_list(tmp_path):
    key, scores = _pairs(("a", "b"), (0.9, 0.1, 0.2, 0.8))
    s, k = _list(tmp_path, "x_trials_f", key, "".join(scores.splitlines(True)[:3]))
    with pytest.raises(
        VoxMetricsInputError, match=r"1 of the 4 pairs of the trial key .* have no score \(first: b"
    ):
        split_matrix([TrialList("libri", "trials_f", s, k)], "t")
    s.write_text(scores + "a c-1 0.5\n")
    with pytest.raises(VoxMetricsInputError, match=r"1 scored pair\(s\) are not in the trial key"):
        split_matrix([TrialList("libri", "trials_f", s, k)], "t")


def _with_unenrolled_trial(tmp_path: Path) -> TrialList:
    """A female list with a trial of z, who is not enrolled, against each enrolled speaker."""
    key, scores = _pairs(("a", "b"), (0.9, 0.1, 0.2, 0.8))
    key += "a z-1 nontarget\nb z-1 nontarget\n"
    scores += "a z-1 0.3\nb z-1 0.4\n"
    s, k = _list(tmp_path, "x_trials_f", key, scores, spk2gender="a f\nb m\n")
    return TrialList("libri", "trials_f", s, k)


def test_notes_on_unenrolled_trials_and_other_genders(tmp_path, lists_2024):
    sm, read = split_matrix([_with_unenrolled_trial(tmp_path), lists_2024[1]], "t")
    # z is listed against the women only: its row stays in the sparse matrix, non-mated
    assert sm.trial_ids.tolist() == ["a-1", "b-1", "z-1", "c-1", "d-1"]
    assert sm.trial_enrolled.tolist() == [True, True, False, True, True]
    assert sm.n_pairs == 10 and sm.n_other_trials == 0
    assert read.notes == [
        "t: 1 trial(s) have a speaker who is not enrolled; their listed pairs count as non-mated "
        "(as in the challenge's EER), and the 1-to-N metrics leave them out.",
        "t: x_trials_f/spk2gender gives 1 speaker(s) of the trials_f list another gender (first: "
        "'b'); sex follows the list, as in the challenge's results.",
    ]
    # the EER of the subset sex = F counts every pair of the female list, z's two too
    with pytest.warns(ExcludedTrialsWarning, match=r"t \[sex=F\]: 1 of 3 trials have a speaker"):
        women = sm.subset_attribute("sex", "F")
    assert women.pairwise_view().n_pairs == 6


def test_no_problem_when_the_subset_holds_every_pair_of_its_list(tmp_path, lists_2024):
    _, read = split_matrix([_with_unenrolled_trial(tmp_path), lists_2024[1]], "t")
    assert read.problems == []


def test_a_single_list_keeps_its_unenrolled_trial_apart(tmp_path):
    sm, read = split_matrix([_with_unenrolled_trial(tmp_path)], "t")
    # listed against every enrolled speaker, z's trial goes to the matrix's others
    assert sm.n_pairs == 4 and sm.n_other_trials == 1
    assert sm.pairwise_view().n_pairs == 6
    assert read.problems == []  # the subset's pairwise view holds all 6 pairs of its list


def test_a_single_list_notes_its_unenrolled_trial(tmp_path):
    _, read = split_matrix([_with_unenrolled_trial(tmp_path)], "t")
    assert any("1 trial(s) have a speaker who is not enrolled" in n for n in read.notes)
