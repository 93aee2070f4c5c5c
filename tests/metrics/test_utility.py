"""Utility metrics against their references: WER against jiwer, UAR against scikit-learn, the
vectorised bootstrap against the generic speaker bootstrap, rho_F0 on known contours.

The readers' errors are tested in tests/test_utility_metrics.py, ``study build --wer/--uar``
in tests/cli/test_utility.py.
"""

from __future__ import annotations

import jiwer
import numpy as np
import pytest
from sklearn.metrics import recall_score

from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import speaker_bootstrap
from voxmetrics.metrics.utility import (
    combine_utility,
    f0_contour,
    mean_pitch_correlation,
    pitch_correlation,
    unweighted_average_recall,
    word_error_rate,
)

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]


def _sentences(rng, n):
    return [" ".join(rng.choice(WORDS, size=rng.integers(1, 8))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_wer_equals_jiwer(seed):
    rng = np.random.default_rng(seed)
    ref = _sentences(rng, 30)
    hyp = _sentences(rng, 30)
    hyp[3] = ""  # an empty hypothesis: all deletions
    r = word_error_rate(ref, hyp)
    assert r.wer == pytest.approx(jiwer.wer(ref, hyp), abs=1e-12)
    out = jiwer.process_words(ref, hyp)
    assert (r.substitutions, r.deletions, r.insertions) == (
        out.substitutions,
        out.deletions,
        out.insertions,
    )
    assert r.n_words == sum(len(s.split()) for s in ref)


def test_wer_bootstrap_equals_generic_speaker_bootstrap():
    rng = np.random.default_rng(7)
    ref, hyp = _sentences(rng, 40), _sentences(rng, 40)
    spk = np.repeat([f"s{k}" for k in range(8)], 5)
    r = word_error_rate(ref, hyp, speakers=spk, n_boot=300, seed=3)
    ref_a, hyp_a = np.array(ref, dtype=object), np.array(hyp, dtype=object)

    def stat(idx):
        return {"wer": jiwer.wer(list(ref_a[idx]), list(hyp_a[idx]))}

    expected = speaker_bootstrap(stat, spk, n_boot=300, seed=3)["wer"]
    assert r.interval.low == pytest.approx(expected.low, abs=1e-12)
    assert r.interval.high == pytest.approx(expected.high, abs=1e-12)
    assert r.interval.low <= r.wer <= r.interval.high


@pytest.mark.parametrize("seed", range(5))
def test_uar_equals_sklearn_macro_recall(seed):
    rng = np.random.default_rng(seed)
    classes = ["ang", "hap", "neu", "sad"]
    y = rng.choice(classes, size=60)
    p = np.where(rng.random(60) < 0.6, y, rng.choice(classes, size=60))
    r = unweighted_average_recall(y, p)
    assert r.uar == pytest.approx(recall_score(y, p, average="macro"), abs=1e-12)
    per = recall_score(y, p, average=None, labels=classes)
    assert [r.per_class[c] for c in classes] == pytest.approx(per.tolist())


def test_uar_bootstrap_equals_generic_speaker_bootstrap():
    rng = np.random.default_rng(1)
    y = rng.choice(["a", "b", "c"], size=48)
    p = np.where(rng.random(48) < 0.5, y, rng.choice(["a", "b", "c"], size=48))
    spk = np.repeat([f"s{k}" for k in range(12)], 4)
    r = unweighted_average_recall(y, p, speakers=spk, n_boot=200, seed=5)

    def stat(idx):
        yy = y[idx]
        return {"uar": recall_score(yy, p[idx], labels=np.unique(yy), average="macro")}

    expected = speaker_bootstrap(stat, spk, n_boot=200, seed=5)["uar"]
    assert (r.interval.low, r.interval.high) == pytest.approx((expected.low, expected.high))


def test_pitch_correlation_rules():
    a = np.array([0, 0, 110, 120, 130, 125, 0, 0, 140, 150, 0.0])
    assert pitch_correlation(a, 1.5 * a) == pytest.approx(1.0)  # a shifted register
    assert pitch_correlation(a, np.roll(1.5 * a, 2)) == pytest.approx(1.0)  # aligned by lag
    assert pitch_correlation(a, np.zeros_like(a)) == 0.0  # undefined -> 0 as the challenge's
    # values outside 75-500 Hz are unvoiced: a 600 Hz frame counts as 0
    b = a.copy()
    b[3] = 600.0
    assert pitch_correlation(a, b) == pytest.approx(np.corrcoef(a, np.where(b > 500, 0, b))[0, 1])
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        pitch_correlation([np.nan, 1.0], [1.0, 2.0])


def test_f0_contour_of_a_tone():
    sr = 16000
    t = np.arange(sr // 2) / sr
    f0 = f0_contour(0.5 * np.sin(2 * np.pi * 150.0 * t), sr)
    voiced = f0[f0 > 0]
    assert voiced.size > 0.6 * f0.size
    assert np.median(voiced) == pytest.approx(150.0, rel=0.02)
    r = mean_pitch_correlation([(f0, f0), (f0, f0)], speakers=["a", "b"], n_boot=50)
    assert r.rho_f0 == pytest.approx(1.0) and r.interval.low == pytest.approx(1.0)


def test_utility_checks_fractions():
    with pytest.raises(VoxMetricsInputError, match=r"uar is 61; it must be a fraction in \[0, 1\]"):
        Utility(uar=61.0)
    u = combine_utility(
        Utility(wer=0.1, uar=0.5, per_class={"a": 0.5}, source="summary"),
        wer=word_error_rate(["a b"], ["a c"]),
        source="text",
    )
    assert (u.wer, u.uar, u.source) == (0.5, 0.5, "summary; text")


def _challenge_fold_uar(ref, hyp, folds) -> float:
    """The challenge's evaluate_ser.py: per fold recall_score(average="macro"), then the mean
    of the per-fold UARs (before its rounding to 0.001 %)."""
    import warnings

    values = []
    for f in sorted(set(folds)):
        inside = [k for k, x in enumerate(folds) if x == f]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(
                recall_score([ref[k] for k in inside], [hyp[k] for k in inside], average="macro")
            )
    return float(np.mean(values))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uar_with_folds_is_the_challenges_mean_of_per_fold_uars(seed):
    rng = np.random.default_rng(seed)
    classes = np.array(["ang", "hap", "neu", "sad"])
    n = 200
    ref = classes[rng.integers(0, 4, size=n)].tolist()
    hyp = [r if rng.random() < 0.6 else str(rng.choice(classes)) for r in ref]
    folds = rng.integers(1, 6, size=n).tolist()
    ref[0], hyp[0], folds[0] = "ang", "sad", 9  # a fold whose only utterance is mispredicted
    r = unweighted_average_recall(ref, hyp, folds=folds)
    assert r.method == "fold_mean" and len(r.per_fold) == 6
    assert r.uar == pytest.approx(_challenge_fold_uar(ref, hyp, folds), abs=1e-12)
    assert r.per_fold["9"] == 0.0  # "sad" predicted but absent counts as a class, as there
    pooled = unweighted_average_recall(ref, hyp)
    assert pooled.method == "pooled" and pooled.uar != pytest.approx(r.uar)
    iv = unweighted_average_recall(ref, hyp, folds=folds, n_boot=200, seed=1).interval
    assert iv.low <= r.uar <= iv.high
