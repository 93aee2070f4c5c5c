"""Attacker predictions for SBLS (design.md input format 6): reading and joining to metadata."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    refused,
)

from voxmetrics.data.predictions import AttributePrediction, join_predictions
from voxmetrics.errors import VoxMetricsInputError

UTTS = np.array(["u3", "u1", "u4", "u2"])  # the metadata's order, not sorted
SEX = ("F", "M")
AGE = ("18-35", "36-55", "56+")


def _soft_frame(seed: int = 0) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Long soft layout for sex and age_group over UTTS, rows shuffled; and the wide truth."""
    rng = np.random.default_rng(seed)
    truth = {"sex": rng.random((UTTS.size, 2)), "age_group": rng.random((UTTS.size, 3))}
    rows = [
        (u, attr, c, float(truth[attr][i, k]))
        for attr, classes in (("sex", SEX), ("age_group", AGE))
        for i, u in enumerate(UTTS)
        for k, c in enumerate(classes)
    ]
    df = pd.DataFrame(rows, columns=["utt_id", "attribute", "class", "score"])
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True), truth


def _hard_frame() -> pd.DataFrame:
    rows = [("u2", "sex", "M"), ("u1", "sex", "F"), ("u4", "sex", "F"), ("u3", "sex", "M")]
    return pd.DataFrame(rows, columns=["utt_id", "attribute", "predicted"])


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("as_bytes", [True, False], ids=["csv", "frame"])
def test_soft_layout_round_trips_in_the_metadata_order(as_bytes):
    df, truth = _soft_frame()
    source = _csv(df) if as_bytes else df
    out = join_predictions(source, UTTS, ["sex", "age_group"], name="pred.csv")
    assert set(out) == {"sex", "age_group"}
    assert out["sex"].classes == SEX and out["age_group"].classes == AGE
    for attr in out:
        assert out[attr].predicted is None
        # CSV writes floats with repr, so they come back bit for bit
        np.testing.assert_array_equal(out[attr].scores, truth[attr])


def test_hard_layout_round_trips_in_the_metadata_order():
    out = join_predictions(_csv(_hard_frame()), UTTS, ["sex", "age_group"])
    assert list(out) == ["sex"]  # only the attributes present in the file
    pred = out["sex"]
    assert isinstance(pred, AttributePrediction) and pred.scores is None
    assert pred.predicted.tolist() == ["M", "F", "F", "M"]  # u3, u1, u4, u2
    assert pred.classes == ("F", "M")


def test_numeric_utterance_ids_match_string_metadata():
    df = pd.DataFrame({"utt_id": [1, 2], "attribute": ["sex", "sex"], "predicted": ["F", "M"]})
    out = join_predictions(_csv(df), np.array(["2", "1"]), ["sex"])
    assert out["sex"].predicted.tolist() == ["M", "F"]


# ---------------------------------------------------------------- every mismatch is named


def _soft_with(change) -> bytes:
    df, _ = _soft_frame()
    return _csv(change(df))


CASES = [
    pytest.param(
        lambda df: pd.concat(
            [
                df,
                pd.DataFrame(
                    [["zz9", "sex", "F", 0.1], ["zz9", "sex", "M", 0.9]], columns=df.columns
                ),
            ]
        ),
        ["1 utterance(s)", "'zz9'", "not in the metadata"],
        id="unknown-utterance",
    ),
    pytest.param(
        lambda df: df[~((df["utt_id"] == "u4") & (df["attribute"] == "age_group"))],
        ["1 utterance(s)", "no 'age_group' scores", "'u4'"],
        id="missing-utterance",
    ),
    pytest.param(
        lambda df: df[~((df["utt_id"] == "u1") & (df["class"] == "M"))],
        ["utterance 'u1'", "no score for class 'M'", "'sex'"],
        id="missing-class-score",
    ),
    pytest.param(
        lambda df: pd.concat([df, df[(df["utt_id"] == "u2") & (df["class"] == "56+")]]),
        ["utterance 'u2'", "two scores for class '56+'", "'age_group'"],
        id="duplicate-score",
    ),
    pytest.param(
        lambda df: pd.concat([df, pd.DataFrame([["u1", "accent", "US", 0.5]], columns=df.columns)]),
        ["'accent'", "no true labels", "sex, age_group"],
        id="unknown-attribute",
    ),
    pytest.param(
        lambda df: df.rename(columns={"score": "prob"}),
        [
            "needs columns",
            "utt_id, attribute, class, score",
            "found utt_id, attribute, class, prob",
        ],
        id="missing-columns",
    ),
    pytest.param(
        lambda df: df.assign(score=df["score"].astype(object).where(df.index != 3, "high")),
        ["non-numeric", "'high'"],
        id="non-numeric-score",
    ),
    pytest.param(
        lambda df: df.assign(score=df["score"].where(df.index != 5, np.inf)),
        ["non-numeric or infinite"],
        id="infinite-score",
    ),
]


@pytest.mark.parametrize(("change", "phrases"), CASES)
def test_soft_mismatches_are_explained(change, phrases):
    with pytest.raises(VoxMetricsInputError) as info:
        join_predictions(_soft_with(change), UTTS, ["sex", "age_group"], name="attacker.csv")
    message = str(info.value)
    assert message.startswith("attacker.csv: ")
    for phrase in phrases:
        assert phrase in message, message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("change", "phrases"),
    [
        pytest.param(
            lambda df: pd.concat([df, df.iloc[[0]]]),
            ["utterance 'u2'", "two 'sex' predictions"],
            id="duplicate-prediction",
        ),
        pytest.param(
            lambda df: df[df["utt_id"] != "u3"],
            ["1 utterance(s)", "no 'sex' prediction", "'u3'"],
            id="missing-utterance",
        ),
        pytest.param(
            lambda df: df.replace({"utt_id": {"u1": "x1"}}),
            ["'x1'", "not in the metadata"],
            id="unknown-utterance",
        ),
    ],
)
def test_hard_mismatches_are_explained(change, phrases):
    with pytest.raises(VoxMetricsInputError) as info:
        join_predictions(_csv(change(_hard_frame())), UTTS, ["sex"], name="hard.csv")
    for phrase in phrases:
        assert phrase in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "content", [b"\x00\x01\x02 not a table \xff\xfe", b"", b"a,b\n1,2\n"], ids=str
)
def test_garbage_files_give_one_clear_error(content):
    with pytest.raises(VoxMetricsInputError, match=r"garbage\.csv"):
        join_predictions(content, UTTS, ["sex"], name="garbage.csv")


# used to be a strict xfail: fixed in the library
def test_unreadable_predictions_file_names_the_predictions_layouts():
    with pytest.raises(VoxMetricsInputError) as info:
        join_predictions(b"\x00\x01 not a table \xff", UTTS, ["sex"], name="junk.csv")
    assert "utt_id, attribute, class, score" in str(info.value)


@pytest.mark.parametrize(
    "header",
    [b"utt_id,attribute,class,score\n", b"utt_id,attribute,predicted\n"],
    ids=["soft", "hard"],
)
def test_a_predictions_file_with_a_header_and_no_rows_says_so(header):
    with pytest.raises(
        VoxMetricsInputError,
        match=r"^empty\.csv: the predictions file has a "
        r"header but no rows",
    ):
        join_predictions(header, UTTS, ["sex"], name="empty.csv")
    frame = pd.DataFrame(columns=["utt_id", "attribute", "predicted"])
    with pytest.raises(VoxMetricsInputError, match=r"has a header but no rows"):
        join_predictions(frame, UTTS, ["sex"], name="empty.csv")


def test_labels_without_rows_leave_nothing_to_join_to():
    with pytest.raises(VoxMetricsInputError, match=r"the labels \(metadata\) have no rows"):
        join_predictions(_csv(_hard_frame()), np.array([], dtype=str), ["sex"], name="p.csv")


PRED_META_IDS = np.array([f"u{i}" for i in range(4)])


PREDICTION_CASES = {
    "hard-missing-prediction": (
        "utt_id,attribute,predicted\nu0,sex,F\nu1,sex,\nu2,sex,M\nu3,sex,F\n",
        r"utterance 'u1' has an empty 'sex' prediction",
    ),
    "soft-missing-class": ("utt_id,attribute,class,score\nu0,sex,,0.5\n", r"score without a class"),
    "blank-utt": ("utt_id,attribute,predicted\n,sex,F\n", r"data row 1 has an empty utt_id"),
    "blank-attribute": ("utt_id,attribute,predicted\nu0,,F\n", r"empty attribute"),
    "nan-score": ("utt_id,attribute,class,score\nu0,sex,F,nan\n", r"non-numeric or infinite"),
    "unknown-utt": ("utt_id,attribute,predicted\nzz,sex,F\n", r"not in the metadata"),
    "missing-utt": ("utt_id,attribute,predicted\nu0,sex,F\n", r"3 utterance\(s\) have no"),
    "no-columns": ("a,b\n1,2\n", r"needs columns utt_id, attribute"),
}


@pytest.mark.parametrize("case", list(PREDICTION_CASES))
def test_bad_predictions_get_one_message(case):
    text, match = PREDICTION_CASES[case]
    refused(
        join_predictions,
        text.encode(),
        PRED_META_IDS,
        ["sex"],
        name="p.csv",
        match=r"p\.csv.*" + match,
    )


def test_sparse_soft_predictions_are_refused_before_the_pivot():
    rows = "".join(f"u{i % 4},sex,class{i},0.5\n" for i in range(5000))
    refused(
        join_predictions,
        ("utt_id,attribute,class,score\n" + rows).encode(),
        PRED_META_IDS,
        ["sex"],
        name="p.csv",
        match=r"p\.csv: attribute 'sex': 5,000 classes.*max_classes",
    )
