"""The Linkage analyses (voxmetrics/analysis/linkage.py): the tables and calls the Linkage page,
the report and the CLI share. Their figures are tested in ``tests/plots/test_linkage.py``, the
page in ``test_app_linkage.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from voxmetrics.analysis import linkage
from voxmetrics.analysis.linkage import TABLE_COLUMNS, default_lengths, linkage_table
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics.legal import legal_evaluation, linkability_curve
from voxmetrics.metrics.similarity import voice_distinctiveness, voice_similarity
from voxmetrics.synth import demo_embeddings, demo_study

# the demo's plain condition is perfectly separated: its LID and CLL fits warn, as they should
pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")


@pytest.fixture(scope="module")
def demo():
    return demo_study()


@pytest.fixture(scope="module")
def reports():
    return {c.name: evaluate_condition(c) for c in demo_study(n_speakers=12).conditions}


def test_speaker_mean_scores_is_the_mean_of_each_trial_speakers_rows():
    rng = np.random.default_rng(0)
    enrol = ["c", "a", "b", "z"]  # z has no trial
    trial_speakers = ["b", "a", "b", "c", "a", "a"]
    scores = rng.normal(size=(6, 4))
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(6)],
        trial_speakers=trial_speakers,
        enrol_speakers=enrol,
    )
    table = linkage.speaker_mean_scores(sm)
    assert list(table.columns) == ["trial_speaker", "enrol_speaker", "mean_score", "n_trials"]
    # rows sorted, own columns first in the same order, then the speakers without trials
    assert list(dict.fromkeys(table["trial_speaker"])) == ["a", "b", "c"]
    assert list(dict.fromkeys(table["enrol_speaker"])) == ["a", "b", "c", "z"]
    for row in table.itertuples():
        mine = [i for i, s in enumerate(trial_speakers) if s == row.trial_speaker]
        col = enrol.index(row.enrol_speaker)
        assert row.mean_score == pytest.approx(scores[mine, col].mean())
        assert row.n_trials == len(mine)


def test_conversation_lengths_keep_two_groups_per_speaker(demo):
    # demo: 8 trial utterances per speaker -> L = 1, 2, 4 (8 // 8 = 1 group is too few)
    assert linkage.conversation_lengths(demo.get("plain").embeddings) == (1, 2, 4)
    meta = pd.DataFrame(
        {"utt_id": list("abcdefg"), "speaker": list("xxxxxyy"), "role": "trial", "split": "eval"}
    )
    es = EmbeddingSet.from_arrays(np.eye(7), meta)
    assert linkage.conversation_lengths(es) == (1,)  # y has 2 trials
    single = EmbeddingSet.from_arrays(np.eye(7)[:6], meta.iloc[:6])  # y has 1 trial
    assert linkage.conversation_lengths(single) == ()


def test_speaker_order_groups_by_sex_then_id(demo):
    order = linkage.speaker_order(demo.get("plain").embeddings)
    assert len(order.speakers) == 40 and order.groups is not None
    sexes = [order.groups[s] for s in order.speakers]
    assert sexes == sorted(sexes)  # all F, then all M
    for sex in ("F", "M"):
        group = [s for s in order.speakers if order.groups[s] == sex]
        assert group == sorted(group)
    meta = pd.DataFrame({"utt_id": ["1", "2"], "speaker": ["b", "a"], "role": "trial",
                         "split": "eval"})  # fmt: skip
    bare = linkage.speaker_order(EmbeddingSet.from_arrays(np.eye(2), meta))
    assert bare.speakers == ("a", "b") and bare.groups is None


def test_linkage_table(reports):
    toy = voice_distinctiveness(
        [[0.9, 0.2, 0.1], [0.2, 0.8, 0.3], [0.1, 0.3, 0.85]],
        [[0.6, 0.3, 0.2], [0.3, 0.5, 0.35], [0.2, 0.35, 0.55]],
        [[0.7, 0.4, 0.3], [0.4, 0.65, 0.45], [0.3, 0.45, 0.7]],
    )  # metrics.md 5: DeID 0.589744, G_VD -3.357921 dB
    scores_only = {"x": dataclasses.replace(reports["random"], singling_out=None)}
    df = linkage_table({**reports, **scores_only}, {"anon-mild": toy})
    assert list(df.columns) == list(TABLE_COLUMNS.values())
    assert list(df["Condition"]) == [*reports, "x"]
    row = df.set_index("Condition")
    assert row.loc["anon-mild", "DeID"] == pytest.approx(0.589744, abs=1e-6)
    assert row.loc["anon-mild", "G_VD (dB)"] == pytest.approx(-3.357921, abs=1e-6)
    assert row.loc["plain", "Linkability"] == reports["plain"].baseline.linkability
    assert row.loc["plain", "Singling out"] == reports["plain"].singling_out.value
    assert row.loc["plain", "N speakers"] == 12
    assert pd.isna(row.loc["x", "Singling out"]) and pd.isna(row.loc["x", "N speakers"])
    assert pd.isna(row.loc["plain", "DeID"])  # no similarity given for it
    assert str(df["N speakers"].dtype) == "Int64"


def test_similarity_equals_the_library_and_counts_the_shared_ids(demo):
    o, a = demo.get("plain").embeddings, demo.get("anon-strong").embeddings
    out = linkage.similarity(o, a, calibration="raw")
    assert out.to_dict() == voice_similarity(o, a, calibration="raw").to_dict()
    overlap = linkage.utterance_overlap(o, a)
    assert (overlap.shared, overlap.anonymised) == (480, 480)  # 40 speakers x 12 utterances
    assert linkage.utterance_count(o) == 480


def test_sampled_linkability_is_the_library_curve(demo):
    sm = demo.get("anon-mild").eval
    got = linkage.sampled_linkability(sm, n_draws=5, seed=1)
    ref = linkability_curve(sm.scores, sm.targets, n_draws=5, seed=1)
    np.testing.assert_array_equal(got.sampled, ref.sampled)
    np.testing.assert_array_equal(got.expected, ref.expected)


def test_legal_sorts_and_dedups_the_lengths(demo):
    es = demo.get("anon-mild").embeddings
    assert linkage.legal(es, (3, 1, 3)).to_dict() == legal_evaluation(es, (1, 3)).to_dict()


def test_singling_out_vs_n_and_legal_report_progress_and_keep_their_numbers(demo):
    """The page's progress bars: ascending fractions in [0, 1), the same curves without."""
    from voxmetrics.metrics.legal import singling_out_curve

    es = demo.get("anon-mild").embeddings
    steps = []
    got = linkage.singling_out_vs_n(es, progress=lambda f, m: steps.append((f, m)))
    ref = singling_out_curve(es)
    np.testing.assert_array_equal(got.value, ref.value)
    np.testing.assert_array_equal(got.sd, ref.sd)
    fractions = [f for f, _ in steps]
    assert len(steps) == ref.n.size and fractions[0] == 0.0
    assert fractions == sorted(fractions) and fractions[-1] < 1.0
    assert steps[-1][1] == f"singling out of 20 populations of {ref.n[-1]}"
    steps.clear()
    got = linkage.legal(es, (1, 3), progress=lambda f, m: steps.append((f, m)))
    assert got.to_dict() == legal_evaluation(es, (1, 3)).to_dict()
    assert steps[0] == (0.0, "L = 1: averaging")
    assert [f for f, _ in steps] == sorted(f for f, _ in steps) and steps[-1][0] < 1.0
    assert any(m.startswith("L = 3: singling out") for _, m in steps)


@pytest.mark.parametrize(
    ("text", "lengths"), [("1, 3, 30", (1, 3, 30)), ("30,1, 1", (1, 30)), (" 2 ,", (2,))]
)
def test_parse_lengths(text, lengths):
    assert linkage.parse_lengths(text) == lengths


@pytest.mark.parametrize("text", ["", "1, two", "0, 3", "-1", "1.5"])
def test_parse_lengths_rejects_what_is_not_whole_numbers_from_1(text):
    with pytest.raises(VoxMetricsInputError, match="whole numbers >= 1"):
        linkage.parse_lengths(text)


def test_distinctiveness_against_is_each_pair_s_similarity_with_progress(demo):
    from voxmetrics.metrics.embedding_intervals import similarity_intervals

    o = demo.get("plain").embeddings
    sets = {n: demo.get(n).embeddings for n in ("plain", "anon-mild", "random")}
    steps = []
    values, ivs = linkage.distinctiveness_against(
        o, sets, n_boot=20, seed=4, progress=lambda f, m: steps.append((f, m))
    )
    assert [m for _, m in steps] == [f"Similarity matrices of {n}…" for n in sets]
    assert [f for f, _ in steps] == pytest.approx([0, 1 / 3, 2 / 3])
    for name, es in sets.items():
        ref = voice_similarity(o, es)
        assert values[name] == ref.distinctiveness
    assert sorted(ivs) == ["anon-mild", "random"]  # not the original against itself
    ref = similarity_intervals(voice_similarity(o, sets["random"]), n_boot=20, seed=4)
    assert ivs["random"] == ref
    small, _ = linkage.distinctiveness_against(o, sets, max_utterances=100)
    assert small == {}  # 480 utterances each: all skipped


def test_distinctiveness_against_leaves_out_a_set_it_cannot_compare(demo):
    import warnings

    from voxmetrics.errors import DegenerateDataWarning

    o = demo.get("plain").embeddings
    meta = o.meta.assign(speaker="x" + o.meta["speaker"])  # no speaker in common
    other = EmbeddingSet.from_arrays(o.embeddings, meta)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values, _ = linkage.distinctiveness_against(o, {"other": other, "plain": o})
    assert list(values) == ["plain"]
    assert any(
        issubclass(w.category, DegenerateDataWarning) and "other: no DeID" in str(w.message)
        for w in caught
    )


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_default_conversation_lengths_end_with_what_the_data_allow():
    sets = demo_embeddings(n_speakers=4, n_enrol=1, n_trial=20)
    assert default_lengths([sets["plain"]]) == (1, 3, 20)  # not 30: skipped on such data
    assert default_lengths([demo_embeddings(n_speakers=3, n_trial=40)["plain"]]) == (1, 3, 30)
    short = demo_embeddings(n_speakers=3, n_enrol=1, n_trial=2)["plain"]
    assert default_lengths([sets["plain"], short]) == (1, 2)  # the set with fewest decides
