"""Singling out, DeID and G_VD in the paired comparison of two conditions (and the report).

Tests of voxmetrics.evaluation.compare, the study report and the CLI; the replicate functions
of voxmetrics.metrics.embedding_intervals alone are tested in
``tests/metrics/test_embedding_intervals.py``.

The same speaker-level replicate weights as every other number: a drawn speaker brings its
singling-out predicate and its rows and columns of the similarity matrices. Conditions without
embeddings (or without the original voices) get a null difference with a reason, never an
error.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.metrics.linkage_cases import similarity_result, singled
from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import LINKAGE_COMPARE_KEYS, LinkageInputs, compare_conditions
from voxmetrics.evaluation.compare import _linkage_rows
from voxmetrics.metrics.embedding_intervals import (
    similarity_replicates,
    singling_out_replicates,
)
from voxmetrics.metrics.paired import compare_replicates
from voxmetrics.metrics.uncertainty import ConditionReplicates, SpeakerDraws
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _empty(n_boot: int) -> ConditionReplicates:
    return ConditionReplicates({}, {}, np.zeros(0, np.int64), np.zeros(0), np.zeros((n_boot, 0)))


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study(n_speakers=12)


# ---------------------------------------------------------------- a hand-checkable case


def test_singling_out_difference_by_hand():
    # predicates a, b isolate at rates 1 and 0 in A, 1 and 1 in B; three replicates draw
    # (a, b), (a, a), (b, b): A = 0.5, 1, 0 and B = 1, 1, 1, so the differences are
    # 0.5, 0, 1 around the estimate 1 - 0.5 = 0.5
    draws = SpeakerDraws(np.array(["a", "b"]), np.array([[1, 1], [2, 0], [0, 2]]))
    a = LinkageInputs(singled(["a", "b"], [1, 0]), None)
    b = LinkageInputs(singled(["a", "b"], [1, 1]), None)
    np.testing.assert_array_equal(singling_out_replicates(a.singling_out, draws), [0.5, 1, 0])
    c = compare_replicates(a.replicates(_empty(3), draws), b.replicates(_empty(3), draws))
    so = c["singling_out"]
    assert (so.a, so.b, so.difference) == (0.5, 1.0, 0.5)
    # percentile interval of (0, 0.5, 1) at 2.5 % and 97.5 % (linear interpolation)
    assert so.interval == pytest.approx((0.025, 0.975))
    # resampling p = (1 + #{|d* - 0.5| >= 0.5}) / (1 + 3) = (1 + 2) / 4, floored at 1 / 4
    assert so.p_resampled == pytest.approx(0.75) and so.reason is None
    assert so.p_floor == pytest.approx(0.25)
    # p: normal approximation, z = 0.5 / sd(0.5, 0, 1) = 0.5 / 0.5 = 1, p = erfc(1 / sqrt 2)
    assert so.p_value == pytest.approx(math.erfc(1 / math.sqrt(2)))


def test_deid_difference_by_hand():
    # D_diag(M_oo) = 0.8 for both; D_diag(M_oa) = 0.4 in A (DeID 0.5), 0.2 in B (DeID 0.75)
    oo = [[0.9, 0.1], [0.1, 0.9]]
    a = LinkageInputs(None, similarity_result(["a", "b"], oo, [[0.6, 0.2], [0.2, 0.6]], oo))
    b = LinkageInputs(None, similarity_result(["a", "b"], oo, [[0.5, 0.3], [0.3, 0.5]], oo))
    # the second replicate draws speaker a twice: no off-diagonal pair, DeID undefined
    draws = SpeakerDraws(np.array(["a", "b"]), np.array([[1, 1], [2, 0], [1, 1], [1, 1]]))
    reps = similarity_replicates(b.similarity, draws)
    assert reps["deid"][0] == pytest.approx(0.75) and np.isnan(reps["deid"][1])
    c = compare_replicates(a.replicates(_empty(4), draws), b.replicates(_empty(4), draws))
    assert c["deid"].a == pytest.approx(0.5) and c["deid"].b == pytest.approx(0.75)
    assert c["deid"].difference == pytest.approx(0.25)
    assert c["deid"].interval == pytest.approx((0.25, 0.25))  # the 3 defined replicates
    # no |d* - 0.25| >= 0.25: (1 + 0) / 4, the floor of 3 replicates
    assert c["deid"].p_resampled == pytest.approx(1 / 4) == c["deid"].p_floor
    assert c["deid"].p_value == 0.0  # every replicate differs by 0.25: sd 0, no doubt
    assert c["g_vd"].difference == 0.0 and c["g_vd"].p_value == 1.0


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    rates=st.lists(st.floats(0, 1), min_size=2, max_size=6),
    n_boot=st.integers(5, 40),
    seed=st.integers(0, 2**16),
)
def test_compare_of_a_singling_out_with_itself_is_zero_with_p_one(rates, n_boot, seed):
    spk = [f"s{i}" for i in range(len(rates))]
    li = LinkageInputs(singled(spk, rates), None)
    draws = SpeakerDraws.draw(spk, n_boot=n_boot, seed=seed)
    c = compare_replicates(
        li.replicates(_empty(n_boot), draws), li.replicates(_empty(n_boot), draws)
    )
    assert c["singling_out"].difference == 0.0 and c["singling_out"].p_value == 1.0
    assert c["singling_out"].interval == (0.0, 0.0)


def test_compare_of_a_condition_with_itself_is_zero_with_p_one(demo):
    c = compare_conditions(
        demo.get("anon-mild"), demo.get("anon-mild"), n_boot=50, original=demo.get("plain")
    )
    for k in LINKAGE_COMPARE_KEYS:
        assert c[k].difference == 0.0 and c[k].p_value == 1.0, k
        assert c[k].reason is None
    assert c["deid"].a == c["deid"].b > 0


def test_anonymisation_raises_deid_and_lowers_singling_out(demo):
    c = compare_conditions(
        demo.get("plain"), demo.get("random"), n_boot=100, original=demo.get("plain")
    )
    assert c["deid"].a == 0.0  # the original against itself
    assert c["deid"].difference > 0.5 and c["deid"].interval[0] > 0 and c["deid"].p_value < 0.05
    assert c["singling_out"].difference < 0 and c["singling_out"].interval[1] < 0
    # Holm over every number, the new ones included
    assert c["deid"].p_adjusted >= c["deid"].p_value


# ---------------------------------------------------------------- null with a reason


def test_without_embeddings_the_numbers_are_null_with_a_reason(demo):
    plain = demo.get("plain")
    bare = Condition(name="scores only", eval=plain.eval, dev=plain.dev)
    c = compare_conditions(bare, demo.get("anon-mild"), n_boot=30, original=plain)
    for k in LINKAGE_COMPARE_KEYS:
        assert c[k].difference is None and c[k].p_value is None and c[k].interval == (None, None)
        assert "scores only has no utterance embeddings" in c[k].reason
        assert c[k].to_dict()["reason"] == c[k].reason
    assert c["singling_out"].b is not None  # B's own value is still given
    assert "reason" not in c["linkability"].to_dict()  # the other numbers are as before


def test_without_an_original_deid_is_null_with_a_reason(demo):
    c = compare_conditions(demo.get("plain"), demo.get("anon-mild"), n_boot=30)
    assert c["deid"].difference is None and "no original voices chosen" in c["deid"].reason
    assert c["singling_out"].reason is None and c["singling_out"].p_value is not None
    bare = Condition(name="o", eval=demo.get("plain").eval)
    c = compare_conditions(demo.get("plain"), demo.get("anon-mild"), n_boot=30, original=bare)
    assert "the original voices, o, have no utterance embeddings" in c["g_vd"].reason


def test_linkage_rows_join_both_reasons_once():
    why = {k: "x has no utterance embeddings" for k in LINKAGE_COMPARE_KEYS}
    rows = _linkage_rows({}, LinkageInputs(None, None, why), LinkageInputs(None, None, why))
    assert rows["deid"].reason == "x has no utterance embeddings"


# ---------------------------------------------------------------- the study report and the CLI


@pytest.fixture(scope="module")
def report(demo):
    return build_study_report(demo, bootstrap=40)


def test_report_has_deid_and_gvd_with_intervals_against_the_first_condition(report, demo):
    assert report.original == "plain"
    df = report.intervals()
    rows = df[df["key"].isin(["deid", "g_vd"])]
    assert set(rows["condition"]) == set(demo.names)
    mild = rows[(rows["condition"] == "anon-mild") & (rows["key"] == "deid")].iloc[0]
    iv = report.similarity_intervals["anon-mild"]["deid"]
    assert (mild["value"], mild["low"], mild["high"]) == (iv.estimate, iv.low, iv.high)
    assert mild["low"] <= mild["value"] <= mild["high"]
    d = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    vs = d["voice_similarity"]
    assert vs["original"] == "plain" and vs["conditions"]["plain"]["deid"] == 0.0
    assert vs["conditions"]["anon-mild"]["intervals"]["deid"] == [iv.low, iv.high]


def test_report_comparisons_have_singling_out_and_deid(report, demo):
    comp = report.comparisons["anon-mild vs plain"]
    lib = compare_conditions(
        demo.get("plain"), demo.get("anon-mild"), n_boot=40, original=demo.get("plain")
    )
    for k in LINKAGE_COMPARE_KEYS:
        assert comp[k].to_dict() == lib[k].to_dict()


def test_report_with_a_scores_only_condition_says_why(demo):
    plain = demo.get("plain")
    study = Study(
        name="mixed",
        conditions=(plain, Condition(name="bare", eval=demo.get("anon-mild").eval)),
    )
    sr = build_study_report(study, bootstrap=20)
    comp = sr.comparisons["bare vs plain"]
    assert "bare has no utterance embeddings" in comp["deid"].reason
    vs = sr.to_dict()["voice_similarity"]["conditions"]["bare"]
    assert vs["deid"] is None and "no utterance embeddings" in vs["reason"]
    assert "bare" not in set(sr.intervals().query("key == 'deid'")["condition"])


def test_report_original_must_be_a_condition(demo):
    from voxmetrics.errors import VoxMetricsInputError

    with pytest.raises(VoxMetricsInputError, match="no such condition"):
        build_study_report(demo, bootstrap=0, original="nope")
    sr = build_study_report(demo, bootstrap=0, original="random")
    assert sr.to_dict()["voice_similarity"]["conditions"]["random"]["deid"] == 0.0
    row = sr.intervals().query("key == 'deid' and condition == 'plain'").iloc[0]
    assert row["low"] is None and row["value"] > 0.5


def test_cli_compare_takes_the_original(tmp_path, demo, capsys):
    from voxmetrics.cli import main
    from voxmetrics.data.studyfile import save_study

    path = tmp_path / "demo.vxm"
    save_study(demo, path)
    args = ["compare", str(path), "anon-mild", "anon-strong", "--bootstrap", "30"]
    assert main([*args, "--original", "plain"]) == 0
    out = json.loads(capsys.readouterr().out)
    lib = compare_conditions(
        demo.get("anon-mild"), demo.get("anon-strong"), n_boot=30, original=demo.get("plain")
    )
    assert out["deid"] == lib["deid"].to_dict() and out["deid"]["p_value"] is not None
    assert out["singling_out"] == lib["singling_out"].to_dict()
    assert "reason" not in out["singling_out"]
    assert main([*args, "--original", "nope"]) == 2
    assert "no condition named 'nope'" in capsys.readouterr().err


def test_sets_too_large_for_the_similarity_matrices_are_skipped_with_a_reason(demo):
    from voxmetrics.evaluation import linkage_inputs

    plain = demo.get("plain")
    li = linkage_inputs(demo.get("anon-mild"), plain, max_utterances=100)
    assert li.similarity is None and li.singling_out is not None
    assert "more than the 100 whose every pair is compared" in li.reasons["deid"]
    assert "python -m voxmetrics similarity" in li.reasons["g_vd"]
    c = compare_conditions(plain, demo.get("anon-mild"), n_boot=20, original=plain)
    assert c["deid"].reason is None  # 144 utterances: under the default limit


def test_the_other_numbers_keep_their_adjustment(demo):
    """Singling out, DeID and G_VD are a Holm family of their own."""
    a, b = demo.get("anon-mild"), demo.get("anon-strong")
    with_original = compare_conditions(a, b, n_boot=40, original=demo.get("plain"), sbls=False)
    without = compare_conditions(a, b, n_boot=40, sbls=False)
    others = [k for k in without if k not in LINKAGE_COMPARE_KEYS]
    assert "linkability" in others
    for k in others:
        assert with_original[k] == without[k], k
    trio = {k: with_original[k].p_value for k in LINKAGE_COMPARE_KEYS}
    from voxmetrics.metrics.paired import holm

    assert {k: with_original[k].p_adjusted for k in LINKAGE_COMPARE_KEYS} == holm(trio)


def test_cli_report_takes_the_original(tmp_path, demo, capsys):
    from voxmetrics.cli import main
    from voxmetrics.data.studyfile import save_study

    path = tmp_path / "demo.vxm"
    save_study(demo, path)
    out = tmp_path / "r.json"
    args = ["report", str(path), "--json", str(out), "--bootstrap", "0"]
    assert main([*args, "--original", "random"]) == 0
    vs = json.loads(out.read_text())["voice_similarity"]
    assert vs["original"] == "random" and vs["conditions"]["random"]["deid"] == 0.0
    assert vs["conditions"]["plain"]["intervals"] is None  # no bootstrap, no interval
    assert main([*args, "--original", "nope"]) == 2
    assert "--original 'nope': no such condition" in capsys.readouterr().err
