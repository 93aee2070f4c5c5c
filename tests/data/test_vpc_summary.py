"""voxmetrics.data.vpc_summary: the results summaries of the VoicePrivacy run_evaluation.py."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.vpc_tree import RESULTS_ANON, RESULTS_ORIG
from voxmetrics.data.vpc_summary import (
    SECTIONS,
    fraction,
    read_results_summary,
    summary_scenario,
    utility_from_summary,
)
from voxmetrics.errors import VoxMetricsInputError


def _write(tmp_path, text: str, name: str = "results.txt"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_2024_summaries(tmp_path):
    text = RESULTS_ORIG.format(uar="42.5", uar_dev="40", wer="2.9") + RESULTS_ANON
    tables = read_results_summary(_write(tmp_path, text))
    assert set(tables) == set(SECTIONS.values())
    ser = tables["ser"]
    # the second header row ("mean") is dropped, the index column too
    assert list(ser.columns) == [
        "dataset", "split", "ser", "UAR", "ACC_sad", "ACC_neu", "ACC_ang", "ACC_hap",
    ]  # fmt: skip
    assert len(ser) == 4 and ser["UAR"].tolist()[:3] == [40.0, 69.0796, 42.5]
    asv = tables["asv"]
    assert asv["EER"].tolist() == [10.511, 0.931, 8.761, 0.418]
    assert asv["gender"].tolist() == ["f", "m", "f", "m"]  # text columns stay text
    assert tables["asv_anon"]["trial"].tolist() == ["anon"] * 4
    assert tables["asr"].loc[3, "WER"] == 2.9


def test_tables_without_index_and_repeated_sections_are_one_table(tmp_path):
    text = (
        "---- ASV_eval^anon results ----\n"
        "dataset split gender enrollment trial EER\n"
        "     en  test  mixed       anon  anon 12.5\n"
        "\n"
        "---- ASV_eval^anon results ----\n"
        "dataset split gender enrollment trial EER\n"
        "     de  test  mixed       anon  anon 20.25\n"
    )
    tables = read_results_summary(_write(tmp_path, text))
    assert list(tables) == ["asv_anon"]
    assert tables["asv_anon"]["dataset"].tolist() == ["en", "de"]
    assert tables["asv_anon"]["EER"].tolist() == [12.5, 20.25]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"no section found; a VoicePrivacy results summary has the sections SER results"),
        ("EER 3\n", r"the line 'EER 3' is outside any section; a results summary is made of"),
        (
            "---- ASR results ----\n dataset split asr WER\nlibri test 2.9\n",
            r"results\.txt, section 'ASR results': the row 'libri test 2\.9' has 3 field\(s\) "
            r"for the 4 columns dataset, split, asr, WER",
        ),
        (
            "---- ASR results ----\n dataset split asr WER\n0 libri test anon 2,9\n",
            r"section 'ASR results': column WER holds '2,9', not a number\.$",
        ),
    ],
)
def test_malformed_summaries(tmp_path, text, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        read_results_summary(_write(tmp_path, text))


def test_a_summary_that_is_not_text(tmp_path):
    p = tmp_path / "r.txt"
    p.write_bytes(b"\xff\xfe----")
    with pytest.raises(VoxMetricsInputError, match=r"is not UTF-8 text; a results summary is text"):
        read_results_summary(p)


def test_summary_errors(tmp_path):
    bad = tmp_path / "results_orig.txt"
    bad.write_text("---- Time: x ----\n\n---- MOS results ----\n a b\n0 1 2\n")
    with pytest.raises(VoxMetricsInputError, match=r"unknown section '---- MOS results ----'"):
        read_results_summary(bad)
    over = tmp_path / "over.txt"
    over.write_text(RESULTS_ORIG.format(uar="142.5", uar_dev="1", wer="2.9"))
    with pytest.raises(VoxMetricsInputError, match=r"a UAR is 142.5 %, outside 0-100 %"):
        utility_from_summary(read_results_summary(over), anonymised=True, source="over.txt")


@pytest.mark.parametrize(
    ("section", "enrollment", "trial", "scenario"),
    [
        ("asv", "original", "original", "original"),
        ("asv", "original", "anon", "ignorant"),
        ("asv", "anon", "anon", "lazy-informed"),
        ("asv", "anon", "original", None),
        ("asv_anon", "anon", "anon", "semi-informed"),
        ("asv_anon", "original", "original", None),
        ("asr", "anon", "anon", None),
    ],
)
def test_summary_scenario(section, enrollment, trial, scenario):
    assert summary_scenario(section, enrollment, trial) == scenario


def test_fraction():
    got = fraction(pd.Series(["2.9", "100", "0"]), "a UAR", "r.txt", bounded=True)
    assert got.tolist() == [0.029, 1.0, 0.0]  # no binary noise: 2.9 % is 0.029 exactly
    assert fraction(pd.Series([150.0]), "a WER", "r.txt", bounded=False).tolist() == [1.5]
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^r\.txt: a WER is -1 %, outside 0-100 %; the summary must hold percentages",
    ):
        fraction(pd.Series([3.0, -1.0]), "a WER", "r.txt", bounded=False)


def test_utility_of_the_anonymised_and_the_original_speech(tmp_path):
    text = RESULTS_ORIG.format(uar="42.5", uar_dev="40", wer="2.9")
    tables = read_results_summary(_write(tmp_path, text))
    anon = utility_from_summary(tables, anonymised=True, source="results of b1")
    assert anon.wer == 0.029 and anon.uar == 0.425 and anon.uar_method == "fold_mean"
    assert anon.per_class == {"sad": 0.027756, "neu": 0.379746, "ang": 0.72513, "hap": 0.578536}
    assert anon.source == "results of b1 (WER: test, UAR: test split)"
    orig = utility_from_summary(tables, anonymised=False, source="o")
    assert orig.wer == 0.01844 and orig.uar == 0.710618


def test_utility_of_the_dev_split_mean_of_datasets_or_none():
    asr = pd.DataFrame(
        {
            "dataset": ["en", "de", "en"],
            "split": ["dev", "dev", "dev"],
            "asr": ["anon", "anon", "original"],
            "WER": [10.0, 20.0, 5.0],
        }
    )
    u = utility_from_summary({"asr": asr}, anonymised=True, source="s")
    assert u.wer == pytest.approx(0.15) and u.uar is None and u.uar_method == ""
    assert u.source == "s (WER: dev, mean of 2 datasets split)"
    assert utility_from_summary({}, anonymised=True, source="s") is None
    assert utility_from_summary({"asr": asr.iloc[:0]}, anonymised=True, source="s") is None
