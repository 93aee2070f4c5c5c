"""Leftover: utility inputs read and paired (voxmetrics.data.transcripts, analysis.utility).

This file's tests of voxmetrics.metrics.utility now live in tests/metrics/test_utility.py,
those of ``study build --wer/--uar/--rho-f0`` in tests/cli/test_utility.py. What is left here
tests voxmetrics.data.transcripts and voxmetrics.analysis.utility, whose test files other
modules' owners keep.
"""

from __future__ import annotations

import pytest

from voxmetrics.data.transcripts import paired, read_labels, read_transcripts
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError


def test_readers_and_pairing(tmp_path):
    text = tmp_path / "text"
    text.write_text("u1 HELLO WORLD\nu2 YES\n")
    hyp = tmp_path / "hyp.csv"
    hyp.write_text("utt_id,text\nu1,HELLO WORD\nu2,YES\nu3,EXTRA\n")
    with pytest.raises(
        VoxMetricsInputError,
        match=r"hyp.csv: 1 utterance\(s\) are not in the reference text \(first: 'u3'\)",
    ):
        paired(
            read_transcripts(text),
            read_transcripts(hyp),
            reference_name="text",
            system_name="hyp.csv",
        )
    with pytest.raises(VoxMetricsInputError, match=r"utterance 'u1' is listed twice"):
        read_transcripts(b"u1 A\nu1 B\n", name="text")
    with pytest.raises(
        VoxMetricsInputError, match=r"line 2 is 'u2 a b'; every line must be `utt_id label`"
    ):
        read_labels(b"u1 a\nu2 a b\n", name="utt2emo")
    lacking = read_transcripts(b"u1 HELLO\n")
    with pytest.raises(
        VoxMetricsInputError, match=r"1 utterance\(s\) of the reference text have no output"
    ):
        paired(read_transcripts(text), lacking, reference_name="text", system_name="hyp")


def test_uar_utility_reads_a_fold_column_and_says_which():
    from voxmetrics.analysis.utility import uar_utility

    labels = b"utt_id,label,fold\nu1,ang,1\nu2,sad,1\nu3,ang,2\nu4,sad,2\n"
    preds = b"u1 ang\nu2 ang\nu3 ang\nu4 sad\n"
    u = uar_utility(labels, preds, labels_name="lab.csv", predictions_name="pred")
    assert u.uar_method == "fold_mean" and u.uar == pytest.approx((0.5 + 1.0) / 2)
    assert u.source == "UAR of pred (mean of 2 folds)"
    pooled = uar_utility(b"u1 ang\nu2 sad\nu3 ang\nu4 sad\n", preds, predictions_name="pred")
    assert pooled.uar_method == "pooled" and pooled.uar == pytest.approx((1.0 + 0.5) / 2)
    assert Utility.from_dict(u.to_dict()) == u
    with pytest.raises(VoxMetricsInputError, match=r"has no fold"):
        uar_utility(b"utt_id,label,fold\nu1,ang,1\nu2,sad,\n", b"u1 ang\nu2 ang\n")
    with pytest.raises(VoxMetricsInputError, match=r"uar_method 'median' is unknown"):
        Utility(uar=0.5, uar_method="median")
