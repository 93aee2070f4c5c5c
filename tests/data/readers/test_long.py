"""Long score tables (voxmetrics.data.readers.long): one row per listed pair, CSV or Parquet."""

from __future__ import annotations

import pandas as pd
import pytest
from hostile_inputs import (
    refused,
)

from tests.data.readers.input_error_cases import GOOD_ROWS, LONG_HEADER, input_error, long_csv
from voxmetrics.data import (
    read_scores,
    write_scores,
)
from voxmetrics.errors import ExcludedTrialsWarning, IncompleteScoresWarning, VoxMetricsInputError
from voxmetrics.limits import Limits, use_limits

from .round_trip_cases import assert_same_matrix


def test_sparse_csv_keeps_refusing_duplicates_and_nan():
    text = "trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt1,a,b,0.1\nt2,b,b,0.8\n"
    sm = read_scores(text.encode(), name="s.csv")
    assert sm.mask.tolist() == [[True, True], [False, True]]
    with pytest.raises(VoxMetricsInputError, match=r"duplicate"):
        read_scores((text + "t2,b,b,0.7\n").encode(), name="s.csv")
    with pytest.raises(VoxMetricsInputError, match=r"line 4.*missing or NaN"):
        read_scores(text.replace("0.8", "nan").encode(), name="s.csv")
    only_mated = "trial_id,trial_speaker,enrol_speaker,score\nt1,a,a,0.9\nt2,b,b,0.8\n"
    with pytest.raises(VoxMetricsInputError, match=r"s\.csv: no non-mated pair is listed"):
        read_scores(only_mated.encode(), name="s.csv")


def test_long_csv_keeps_order_of_first_appearance():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score\n"
        "t2,b,b,0.8\nt1,a,b,0.1\nt2,b,a,0.2\nt1,a,a,0.9\n"
    )
    sm = read_scores(csv.encode())
    assert sm.trial_ids.tolist() == ["t2", "t1"]
    assert sm.enrol_speakers.tolist() == ["b", "a"]
    assert sm.scores.tolist() == [[0.8, 0.2], [0.1, 0.9]]
    assert sm.targets.tolist() == [0, 1]


def test_labels_stay_text_and_attributes_keep_numbers():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score,age,note\n"
        "007,NA,NA,1,34,x\n007,NA,null,0,34,x\n008,null,NA,0.5,51,\n008,null,null,0.25,51,\n"
    )
    sm = read_scores(csv.encode())
    assert sm.trial_ids.tolist() == ["007", "008"]
    assert sm.enrol_speakers.tolist() == ["NA", "null"]
    assert sm.attributes["age"].tolist() == [34, 51]
    assert sm.attributes["note"].tolist() == ["x", ""]  # text attributes are str; missing = ""


def test_blank_lines_and_bom_are_tolerated():
    csv = (
        "\ufefftrial_id,trial_speaker,enrol_speaker,score\n"
        "t1,a,a,0.9\n\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n\n"
    )
    assert read_scores(csv.encode()).shape == (2, 2)


def test_long_csv_with_unenrolled_trial_keeps_its_pairs_with_warning():
    csv = (
        "trial_id,trial_speaker,enrol_speaker,score\n"
        "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\nt3,zed,a,0.3\nt3,zed,b,0.4\n"
    )
    with pytest.warns(ExcludedTrialsWarning, match="not enrolled"):
        sm = read_scores(csv.encode(), name="scores.csv")
    assert sm.n_excluded_trials == 0
    assert sm.trial_ids.tolist() == ["t1", "t2"]
    assert sm.others.trial_speakers.tolist() == ["zed"] and sm.pairwise_view().n_pairs == 6


def test_fast_csv_path_equals_the_reference_path(small_sm, tmp_path):
    """The categorical parse (fast path) gives the same frame values as the plain str parse."""
    from voxmetrics.data.readers.long import scores_from_long
    from voxmetrics.data.readers.tables import read_csv_rows

    (path,) = write_scores(small_sm, tmp_path / "s.csv", format="csv")
    data = path.read_bytes().replace(b"utt001", b"0012")  # a numeric-looking trial id
    fast = scores_from_long(*read_csv_rows(data, "s.csv", categorical=True))
    ref = scores_from_long(*read_csv_rows(data, "s.csv", categorical=False))
    assert_same_matrix(fast, ref)
    assert "0012" in fast.trial_ids
    for k in ref.attributes:
        assert fast.attributes[k].tolist() == ref.attributes[k].tolist()


def test_parquet_text_attributes_stay_text(tmp_path):
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["1", "1", "2", "2"],
            "enrol_speaker": ["1", "2", "1", "2"],
            "score": [0.9, 0.1, 0.2, 0.8],
            "code": ["007", "007", "010", "010"],
            "age": [34, 34, 51, 51],
        }
    )
    df.to_parquet(tmp_path / "s.parquet")
    sm = read_scores(tmp_path / "s.parquet")
    assert sm.attributes["code"].tolist() == ["007", "010"]
    assert sm.attributes["age"].tolist() == [34, 51]
    assert sm.enrol_speakers.tolist() == ["1", "2"]


CSV_HEADER = "trial_id,trial_speaker,enrol_speaker,score\n"


GOOD = CSV_HEADER + "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n"


CSV_CASES = {
    "wide-header": (
        (CSV_HEADER.strip() + "," + ",".join(f"c{i}" for i in range(20_000)) + "\n"),
        r"20,004 columns.*max_columns",
    ),
    "nan-score": (GOOD.replace("0.9", "nan"), r"line 2.*score"),
    "inf-score": (GOOD.replace("0.9", "inf"), r"line 2.*(infinite|score)"),
    "overflowing-score": (GOOD.replace("0.9", "1e400"), r"line 2.*(infinite|score)"),
    "text-score": (GOOD.replace("0.9", "high"), r"line 2.*score"),
    "nul-bytes": (GOOD.replace("t1", "t\x001"), r"not a recognised format|binary|NUL|not UTF-8"),
    "utf16": (GOOD.encode("utf-16").decode("latin1"), r"UTF-16|not UTF-8|not a recognised"),
    "header-only": (CSV_HEADER, r"no data rows"),
    "ragged": (GOOD + "t3,c,a\n", r"line 6"),
    "duplicate-pair": (GOOD + "t1,a,b,0.3\n", r"duplicate \(trial, enrolled\) pair"),
    "missing-target-pair": (
        GOOD.rsplit("t2,b,b", 1)[0].replace("t1,a,a,0.9\n", ""),
        r"no mated \(target\) pair is listed",
    ),
    "one-enrolled": (CSV_HEADER + "t1,a,a,0.9\nt2,a,a,0.8\n", r"enrolled|two"),
    "no-enrolled-trial": (CSV_HEADER + "t1,z,a,0.9\nt1,z,b,0.1\n", r"enrolled"),
    "empty-labels": (GOOD.replace("t1,a,a", ",a,a"), r"line 2.*trial_id"),
    "missing-columns": ("a,b,c\n1,2,3\n", r"not a recognised format|lacks|missing"),
    "very-long-line": (CSV_HEADER + "t1,a,a," + "9" * 2_000_000 + "\n", r"score|line 2"),
    "trial-speaker-varies": (GOOD.replace("t1,a,b", "t1,b,b"), r"trial 't1' has trial_speaker"),
    "score-column-twice": (
        CSV_HEADER.replace("score", "score,score")
        + GOOD[len(CSV_HEADER) :].replace("\n", ",0.5\n"),
        r" \(columns 4 and 5\); keep one",  # column 'score' appears twice in s.csv (...)
    ),
}


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_malformed_csv_gets_one_message(case):
    text, match = CSV_CASES[case]
    data = text.encode("latin1") if case == "utf16" else text.encode()
    refused(read_scores, data, name="s.csv", match=r"s\.csv.*" + match)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e200, 1e300])
def test_extreme_but_finite_scores_are_read_exactly(scale):
    text = CSV_HEADER + "".join(
        f"t{i},{s},{e},{v!r}\n"
        for i, s in enumerate("ab")
        for e, v in zip(
            "ab",
            [0.9 * scale, 0.1 * scale] if s == "a" else [0.2 * scale, 0.8 * scale],
            strict=True,
        )
    )
    sm = read_scores(text.encode(), name="s.csv")
    assert sm.scores.tolist() == [[0.9 * scale, 0.1 * scale], [0.2 * scale, 0.8 * scale]]


def test_row_limit_names_the_limit_and_how_to_raise_it():
    with use_limits(Limits(max_rows=3)):
        message = refused(read_scores, GOOD.encode(), name="s.csv", match=r"max_rows=3")
    assert "--limit max_rows=VALUE" in message and "VOXMETRICS_LIMITS" in message
    assert "voxmetrics.toml" in message


def test_cell_limit_applies_to_the_pivoted_matrix():
    with use_limits(Limits(max_cells=3)):
        refused(read_scores, GOOD.encode(), name="s.csv", match=r"2 trials x 2 enrolled.*max_cells")


def test_frames_are_kept_exact_for_a_valid_pivot():
    df = pd.DataFrame(
        {
            "trial_id": ["t1", "t1", "t2", "t2"],
            "trial_speaker": ["a", "a", "b", "b"],
            "enrol_speaker": ["b", "a", "a", "b"],
            "score": [0.1, 0.9, 0.2, 0.8],
        }
    )
    sm = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    assert sm.enrol_speakers.tolist() == ["b", "a"]
    assert sm.scores.tolist() == [[0.1, 0.9], [0.8, 0.2]]


T, N = 6, 8


SPK = [f"s{j}" for j in range(N)]


def test_long_csv_cut_at_a_line_boundary_is_refused():
    lines = ["trial_id,trial_speaker,enrol_speaker,score\n"]
    lines += [f"t{i},{SPK[i % N]},{e},0.{j}\n" for i in range(T) for j, e in enumerate(SPK)]
    refused(
        read_scores,
        "".join(lines[:30]).encode(),
        name="s.csv",
        match=r"rows end early.*line 30.*trial 't3'.*29 listed pairs of T x N = 4 x 8 = 32",
    )


def test_nan_score_rows_are_dropped_only_when_asked():
    text = (
        b"trial_id,trial_speaker,enrol_speaker,score\n"
        b"t1,a,a,0.9\nt1,a,b,nan\nt2,b,a,0.2\nt2,b,b,0.8\n"
    )
    refused(read_scores, text, name="s.csv", match=r"line 3: score is missing or NaN")
    with pytest.warns(IncompleteScoresWarning, match=r"1 of 4 rows have an empty or NaN score"):
        assert read_scores(text, name="s.csv", allow_incomplete=True).n_pairs == 3


def test_a_sparse_list_out_of_grid_order_is_still_read():
    text = (
        b"trial_id,trial_speaker,enrol_speaker,score\n"
        b"t1,a,a,0.9\nt1,a,b,0.1\nt2,b,b,0.8\nt3,c,c,0.7\nt3,c,a,0.3\n"
    )
    assert read_scores(text, name="s.csv").n_pairs == 5


# ----------------------------------------------------------------------------------------------
# Bad long scores: no data rows, a duplicate pair, a trial's speaker or attribute that
# changes; an incomplete matrix is a sparse trial list
# ----------------------------------------------------------------------------------------------


def test_header_only():
    with input_error(r"s\.csv: has a header but no data rows; add one row per"):
        read_scores(long_csv(""), name="s.csv")


def test_duplicate_pair_gives_both_lines_and_the_pair():
    data = long_csv(GOOD_ROWS + "t1,a,b,0.3\n")
    with input_error(
        r"s\.csv: line 6: duplicate \(trial, enrolled\) pair: trial 't1' x enrolled 'b' "
        r"already appears on line 3 .*keep one score per pair"
    ):
        read_scores(data, name="s.csv")


def test_incomplete_matrix_is_a_sparse_trial_list():
    rows = [
        (f"t{i}", f"spk{i}", f"spk{j}", 0.1 * i - 0.01 * j) for i in range(20) for j in range(20)
    ]
    drop = {(3, 7), (3, 8), *((5, j) for j in range(10))}
    df = pd.DataFrame(
        [r for k, r in enumerate(rows) if divmod(k, 20) not in drop],
        columns=["trial_id", "trial_speaker", "enrol_speaker", "score"],
    )
    sm = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    assert sm.n_pairs == 388 and sm.shape == (20, 20)
    assert not sm.mask[3, 7] and not sm.mask[5, :10].any() and sm.mask[5, 10:].all()
    assert sm.complete_rows().n_trials == 18  # t3 and t5 miss pairs


def test_trial_speaker_must_be_constant_per_trial():
    data = long_csv("t1,a,a,0.9\nt1,b,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n")
    with input_error(
        r"s\.csv: line 3: trial 't1' has trial_speaker 'b' but line 2 gives 'a'.*same "
        "value on all the trial's rows"
    ):
        read_scores(data, name="s.csv")


def test_attribute_must_be_constant_per_trial():
    data = long_csv(
        "t1,a,a,0.9,F\nt1,a,b,0.1,F\nt2,b,a,0.2,M\nt2,b,b,0.8,F\n",
        header=LONG_HEADER.strip() + ",sex\n",
    )
    with input_error(r"s\.csv: line 5: trial 't2' has sex 'F' but line 4 gives 'M'"):
        read_scores(data, name="s.csv")
