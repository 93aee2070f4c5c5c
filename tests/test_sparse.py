"""Sparse trial lists and per-subset results (issue 15).

The files are shaped like VoicePrivacy's: female trials scored against the female enrolled
speakers only and male against male (a block-diagonal trial list), written in every score
format. Every number is checked against the complete-matrix path where both apply, and against
the pooled metrics of the listed pairs (collected by hand from the long rows) where only the
sparse path applies.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sparse_cases import (
    N_PER_SEX,
    block_mask,
    full_matrix,
    kaldi_files,
    listed_rows,
    npz_bytes,
    with_mask,
)

from voxmetrics.cli import main
from voxmetrics.data import ScoreMatrix, read_scores
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate
from voxmetrics.evaluation.one_to_n import one_to_n_views
from voxmetrics.evaluation.result import NO_COMPLETE_TRIAL
from voxmetrics.metrics.cllr import cllr, min_cllr
from voxmetrics.metrics.dcf import verification
from voxmetrics.metrics.eer import eer, eer_rocch
from voxmetrics.metrics.legal import linkability
from voxmetrics.metrics.srd import srd
from voxmetrics.metrics.zebra import zebra


def _by_hand(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Mated and non-mated scores of the listed rows, one by one."""
    mated = (df.trial_speaker == df.enrol_speaker).to_numpy()
    return df.score.to_numpy()[mated], df.score.to_numpy()[~mated]


def _same(a: dict, b: dict, *, skip: tuple[str, ...] = ()) -> None:
    for k in a:
        if k not in skip:
            assert a[k] == b[k], k


# ---------------------------------------------------------------------------- evaluation


def test_pairwise_metrics_use_every_listed_pair():
    sm = full_matrix()
    mask = block_mask(sm)
    df = listed_rows(sm, mask)
    sparse = read_scores(df.to_csv(index=False).encode(), name="s.csv")
    r = evaluate(sparse).to_dict()
    tar, non = _by_hand(df)
    assert r["eer"] == eer(tar, non)
    assert r["eer_rocch"] == pytest.approx(eer_rocch(tar, non), abs=1e-15)
    assert r["cllr"] == pytest.approx(cllr(tar, non), rel=1e-12)
    assert r["min_cllr"] == pytest.approx(min_cllr(tar, non), abs=1e-12)
    z = zebra(tar, non).to_dict()
    for k in ("d_ece", "log10_l", "tag"):
        assert r["zebra"][k] == pytest.approx(z[k], abs=1e-12)
    assert r["n_pairs"] == int(mask.sum())
    v = verification(tar, non)  # minDCF and d' of the listed pairs
    assert r["dcf"] == v.dcf.to_dict()
    assert r["d_prime"] == pytest.approx(v.d_prime, rel=1e-12)
    assert r["trials_used"]["pairwise"] == {
        "n_pairs": int(mask.sum()),
        "n_tar": tar.size,
        "n_non": non.size,
        "n_trials": sm.n_trials,
        "n_enrolled": sm.n_enrolled,
    }
    # the 1-to-N metrics: no trial is listed against all 12 identities, but every trial is
    # listed against the 6 of its sex: ranked there, pooled over the two sexes
    one = r["trials_used"]["one_to_n"]
    assert (one["n_trials"], one["n_enrolled"], one["reason"]) == (36, 6, None)
    assert one["pooled"] == {
        "by": "sex",
        "groups": {"F": {"n_trials": 18, "n_enrolled": 6}, "M": {"n_trials": 18, "n_enrolled": 6}},
    }
    per_sex = [evaluate(sparse.subset_attribute("sex", v)).to_dict() for v in ("F", "M")]
    assert r["linkability"] == pytest.approx(np.mean([d["linkability"] for d in per_sex]))
    assert r["srd"]["mean_d"] == pytest.approx(np.mean([d["srd"]["mean_d"] for d in per_sex]))
    for k in ("srd_model", "lid"):  # one model per group (of its own N); no calibration here
        assert r[k] is None, k
    json.dumps(r, allow_nan=False)
    # without the attribute, there is no group to rank within
    alone = ScoreMatrix.from_arrays(
        sparse.scores, trial_ids=sparse.trial_ids, trial_speakers=sparse.trial_speakers,
        enrol_speakers=sparse.enrol_speakers, mask=sparse.mask,
    )  # fmt: skip
    assert evaluate(alone).to_dict()["trials_used"]["one_to_n"]["reason"] == NO_COMPLETE_TRIAL


def test_one_to_n_metrics_use_the_complete_trials():
    sm = full_matrix()
    mask = np.ones(sm.shape, dtype=bool)
    mask[[0, 4, 9], [3, 0, 11]] = False
    sparse = with_mask(sm, mask)
    r = evaluate(sparse, cross_calibrate=3)
    keep = np.ones(sm.n_trials, dtype=bool)
    keep[[0, 4, 9]] = False
    rows = sm.subset_trials(keep)
    assert r.baseline.linkability == linkability(rows.scores, rows.targets)
    assert r.srd.ranks.tolist() == srd(rows.scores, rows.targets).ranks.tolist()
    assert r.to_dict()["lid"] == evaluate(rows, cross_calibrate=3).to_dict()["lid"]
    assert r.trials_used.one_to_n_trials == 33 and r.trials_used.reason is None
    assert r.trials_used.n_tar == sm.n_trials  # every mated pair is still listed
    assert r.trials_used.n_pairs == sm.n_trials * sm.n_enrolled - 3


def test_full_mask_equals_the_complete_path():
    sm = full_matrix()
    a = evaluate(sm, cross_calibrate=3, bootstrap=20).to_dict()
    b = evaluate(
        read_scores(npz_bytes(sm, np.ones(sm.shape, bool)), name="s.npz"),
        cross_calibrate=3,
        bootstrap=20,
    ).to_dict()
    assert a == b


def _female_block(sm: ScoreMatrix) -> ScoreMatrix:
    f = sm.attributes["sex"] == "F"
    cols = np.char.startswith(sm.enrol_speakers, "f")
    return ScoreMatrix.from_arrays(
        sm.scores[np.ix_(f, cols)],
        trial_ids=sm.trial_ids[f],
        trial_speakers=sm.trial_speakers[f],
        enrol_speakers=sm.enrol_speakers[cols],
        attributes={"sex": sm.attributes["sex"][f]},
    )


@pytest.mark.parametrize("source", ["complete", "sparse"])
def test_by_sex_equals_each_sex_evaluated_alone(source):
    sm = full_matrix()
    mask = block_mask(sm) if source == "sparse" else np.ones(sm.shape, bool)
    data = read_scores(listed_rows(sm, mask).to_csv(index=False).encode(), name="s.csv")
    r = evaluate(data, by="sex", cross_calibrate=3).to_dict()
    assert set(r["by"]) == {"sex"} and set(r["by"]["sex"]) == {"F", "M"}
    alone = evaluate(_female_block(sm), cross_calibrate=3).to_dict()
    female = r["by"]["sex"]["F"]
    _same(alone, female, skip=("n_excluded_trials",))
    assert female["trials_used"]["one_to_n"] == {
        "n_trials": 18,
        "n_enrolled": 6,
        "reason": None,
        "left_out": {"speaker_not_enrolled": 0, "not_listed_against_all": 0},
    }
    assert "by" not in female
    if source == "complete":  # the pooled numbers are the complete path's
        _same(evaluate(sm, cross_calibrate=3).to_dict(), r, skip=("by",))


def test_by_splits_dev_too():
    sm, dev_full = full_matrix(0), full_matrix(1)
    dev = ScoreMatrix.from_arrays(
        dev_full.scores,
        trial_ids=dev_full.trial_ids,
        trial_speakers=np.char.add("d", dev_full.trial_speakers),
        enrol_speakers=np.char.add("d", dev_full.enrol_speakers),
        attributes=dev_full.attributes,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate(sm, dev=dev, by="sex")
        f_dev = dev.subset_attribute("sex", "F")
        alone = evaluate(_female_block(sm), dev=f_dev)
    assert r.by["sex"]["F"].to_dict()["lid"] == alone.to_dict()["lid"]
    assert f_dev.n_enrolled == N_PER_SEX


def test_subset_refusals():
    sm = full_matrix()
    with pytest.raises(VoxMetricsInputError, match=r"no per-trial attribute 'age'.*sex"):
        evaluate(sm, by="age")
    with pytest.raises(VoxMetricsInputError, match=r"no trial has sex = 'X'.*F, M"):
        sm.subset_attribute("sex", "X")
    one = ScoreMatrix.from_arrays(
        np.eye(3),
        trial_ids=["t1", "t2", "t3"],
        trial_speakers=["a", "b", "c"],
        enrol_speakers=["a", "b", "c"],
        attributes={"g": ["x", "y", "y"]},
    )
    with pytest.raises(VoxMetricsInputError, match=r"g = 'x' has 1 enrolled identity"):
        one.subset_attribute("g", "x")


def test_sparse_bootstrap_gives_lid_and_zebra_intervals():
    sm = full_matrix()
    mask = np.ones(sm.shape, dtype=bool)
    mask[0, 3] = False
    sparse = ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        mask=mask,
    )
    r = evaluate(sparse, cross_calibrate=3, bootstrap=10)
    assert r.lid_intervals is not None and r.zebra_intervals is not None


# ------------------------------------------------------------------------------------ CLI


def test_cli_sparse_kaldi_and_by(tmp_path, capsys):
    sm = full_matrix()
    mask = block_mask(sm)
    df = listed_rows(sm, mask)
    scores, key = kaldi_files(df)
    (tmp_path / "scores").write_bytes(scores)
    (tmp_path / "trials").write_bytes(key)
    assert main(["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "trials")]) == 0
    r = json.loads(capsys.readouterr().out)
    tar, non = _by_hand(df)
    assert r["eer"] == eer(tar, non) and r["linkability"] is None
    assert r["trials_used"]["one_to_n"]["reason"] == NO_COMPLETE_TRIAL

    df.to_csv(tmp_path / "s.csv", index=False)
    html = tmp_path / "r.html"
    assert main(["evaluate", str(tmp_path / "s.csv"), "--by", "sex", "--html", str(html)]) == 0
    r = json.loads(capsys.readouterr().out)
    alone = evaluate(_female_block(sm)).to_dict()
    _same(alone, r["by"]["sex"]["F"], skip=("n_excluded_trials",))
    assert "[sex=M]" in html.read_text()

    assert main(["evaluate", str(tmp_path / "s.csv"), "--by", "age"]) == 2
    err = capsys.readouterr().err
    assert "no per-trial attribute 'age'" in err and "Traceback" not in err


def test_cli_fail_on_reads_a_subset(tmp_path, capsys):
    sm = full_matrix()
    sm.to_long_frame().to_csv(tmp_path / "s.csv", index=False)
    code = main(
        ["evaluate", str(tmp_path / "s.csv"), "--by", "sex", "--fail-on", "by.sex.F.eer < 2"]
    )
    assert code == 1
    assert math.isfinite(json.loads(capsys.readouterr().out)["by"]["sex"]["M"]["eer"])


# ------------------------------------------------------------------------------------ study report


def test_study_report_of_a_sparse_condition(tmp_path):
    from voxmetrics.data.study import Condition, Study
    from voxmetrics.report.html import study_report_html
    from voxmetrics.report.study import build_study_report

    sm = full_matrix()
    block = read_scores(listed_rows(sm, block_mask(sm)).to_csv(index=False).encode(), name="b.csv")
    mask = np.ones(sm.shape, dtype=bool)
    mask[0, 3] = False
    holes = with_mask(sm, mask)
    study = Study((Condition("block", block), Condition("holes", holes)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, cross_calibrate=3)
    page = study_report_html(sr)
    assert "block" in page and "holes" in page
    lid = sr.tables()["lid_per_trial.csv"]
    # block: no trial is listed against all 12, but each against the 6 of its sex: its LID
    # is pooled over the two sexes (every trial); holes: its complete trials
    assert set(lid["condition"]) == {"block", "holes"}
    assert (lid["condition"] == "holes").sum() == sm.n_trials - 1
    assert (lid["condition"] == "block").sum() == sm.n_trials
    # the 1-to-N pages show the same: block whole (complete per sex), holes on its complete trials
    views = one_to_n_views(study)
    assert views.left_out == () and views.partial == ("holes",)
    assert views.grouped == {"block": "sex"} and views.study.names == ["block", "holes"]
    assert views.study.get("holes").eval.n_trials == sm.n_trials - 1
    assert views.study.get("block").eval.n_trials == sm.n_trials
    json.dumps(sr.to_dict(), allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 7),
    st.integers(2, 5),
    st.integers(0, 2**32 - 1),
    st.floats(0.3, 0.95),
    st.sampled_from(["reference", "attacker"]),
    st.sampled_from([np.float64, np.float32]),
)
def test_sparse_evaluate_equals_the_reference_on_its_pairs(t, n, seed, density, ties, dtype):
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, n, size=t)
    mask = rng.random((t, n)) < density
    mask[np.arange(t), targets] |= rng.random(t) < 0.8  # most, not all, mated pairs listed
    mask[0, targets[0]] = True  # at least one
    mask[np.arange(t), rng.integers(0, n, size=t)] = True  # every trial lists a pair
    scores = np.round(rng.normal(size=(t, n)) + 2.0 * np.eye(n)[targets], 1).astype(dtype)
    own = np.zeros((t, n), dtype=bool)
    own[np.arange(t), targets] = True
    tar, non = scores[mask & own], scores[mask & ~own]  # the listed pairs, by hand
    if non.size == 0:
        with pytest.raises(VoxMetricsInputError, match=r"no non-mated pair is listed"):
            ScoreMatrix.from_arrays(
                scores,
                trial_ids=[f"t{i}" for i in range(t)],
                trial_speakers=[f"s{j}" for j in targets],
                enrol_speakers=[f"s{j}" for j in range(n)],
                mask=mask,
            )
        return
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(t)],
        trial_speakers=[f"s{j}" for j in targets],
        enrol_speakers=[f"s{j}" for j in range(n)],
        mask=mask,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate(sm, ties=ties).to_dict()
    if mask.all():
        assert sm.is_complete
    else:
        assert r["n_pairs"] == int(mask.sum()) == tar.size + non.size
    assert r["eer"] == eer(tar, non, ties=ties)
    assert r["eer_rocch"] == pytest.approx(eer_rocch(tar, non, ties=ties), abs=1e-12)
    assert r["min_cllr"] == pytest.approx(min_cllr(tar, non, ties=ties), abs=1e-12)
    assert r["cllr"] == pytest.approx(cllr(tar, non), rel=1e-6)
    z = zebra(tar, non, ties=ties)
    assert r["zebra"]["d_ece"] == pytest.approx(z.d_ece, abs=1e-12)
    assert r["zebra"]["log10_l"] == pytest.approx(z.log10_l, abs=1e-12)
    assert r["zebra"]["tag"] == z.tag
    cols = mask.any(axis=0)
    rows = mask[:, cols].all(axis=1) & mask[np.arange(t), targets]
    if rows.any() and cols.sum() >= 2:
        col_of = np.cumsum(cols) - 1
        sub = scores[np.ix_(rows, cols)]
        assert r["linkability"] == linkability(sub, col_of[targets[rows]])
        assert r["trials_used"]["one_to_n"]["n_trials"] == int(rows.sum())
    else:
        assert r["linkability"] is None and r["srd"] is None


def test_cli_kaldi_by_sex_with_a_speaker_table(tmp_path, capsys):
    sm = full_matrix()
    df = listed_rows(sm, block_mask(sm))
    scores, key = kaldi_files(df)
    (tmp_path / "scores").write_bytes(scores)
    (tmp_path / "trials").write_bytes(key)
    speakers = pd.DataFrame({"speaker": sm.enrol_speakers})
    speakers["sex"] = np.where(np.char.startswith(sm.enrol_speakers, "f"), "F", "M")
    speakers.to_csv(tmp_path / "spk2sex.csv", index=False)
    argv = ["evaluate", str(tmp_path / "scores"), "--trials", str(tmp_path / "trials")]
    assert main([*argv, "--by", "sex", "--trial-attributes", str(tmp_path / "spk2sex.csv")]) == 0
    r = json.loads(capsys.readouterr().out)
    alone = evaluate(_female_block(sm)).to_dict()
    _same(alone, r["by"]["sex"]["F"], skip=("n_excluded_trials",))
    # a table that misses a speaker, and one without a key column, are refused
    speakers.iloc[1:].to_csv(tmp_path / "short.csv", index=False)
    assert main([*argv, "--trial-attributes", str(tmp_path / "short.csv")]) == 2
    assert "3 trial(s) are not covered, e.g. trial 'u000'" in capsys.readouterr().err
    speakers.rename(columns={"speaker": "who"}).to_csv(tmp_path / "nokey.csv", index=False)
    assert main([*argv, "--trial-attributes", str(tmp_path / "nokey.csv")]) == 2
    assert "needs a 'trial_id' column" in capsys.readouterr().err


@pytest.mark.parametrize(("seed", "decimals"), [(5, 1), (6, 0), (7, 3)])
def test_sparse_zebra_bootstrap_equals_resampling(seed, decimals):
    """Each replicate: ZEBRA of the listed pairs of the resampled trials (slow reference)."""
    from reference_pooled import zebra as ref_zebra

    from voxmetrics.metrics.bootstrap import speaker_resample_counts
    from voxmetrics.metrics.zebra import zebra_bootstrap

    rng = np.random.default_rng(seed)
    n_t, n_e = 40, 8
    t = rng.integers(0, n_e, n_t)
    s = rng.normal(0, 1, (n_t, n_e)).round(decimals)
    s[np.arange(n_t), t] += 1.5
    mask = rng.random((n_t, n_e)) < 0.6
    mask[np.arange(n_t), t] = rng.random(n_t) < 0.9
    mask[np.arange(n_t), (t + 1) % n_e] = True
    s[~mask] = np.nan
    speakers = np.array([f"s{j}" for j in t])
    ci = zebra_bootstrap(s, t, speakers, n_boot=60, seed=2, mask=mask)
    counts, inverse, _ = speaker_resample_counts(speakers, n_boot=60, rng=np.random.default_rng(2))
    trials_of = [np.flatnonzero(inverse == j) for j in range(counts.shape[1])]
    own = np.zeros(mask.shape, dtype=bool)
    own[np.arange(n_t), t] = True
    d, w = [], []
    for b in range(60):
        idx = np.concatenate([np.tile(trials_of[j], c) for j, c in enumerate(counts[b]) if c])
        listed, mated = mask[idx], own[idx]
        tar_b, non_b = s[idx][listed & mated], s[idx][listed & ~mated]
        d.append(ref_zebra(tar_b, non_b, targets_first=True)[0])  # ZEBRA's rocch_pava order
        w.append(ref_zebra(tar_b, non_b, targets_first=False)[1])  # its optimal_llr order
    lo, hi = np.quantile(d, [0.025, 0.975])
    assert (ci["d_ece"].low, ci["d_ece"].high) == (pytest.approx(lo), pytest.approx(hi))
    # log10 l is a maximum: no percentile interval (issue 18); its q95 carries the interval
    assert (ci["log10_l"].low, ci["log10_l"].high) == (None, None)
    assert ci["log10_l_q95"].low <= ci["log10_l_q95"].high <= max(w)
    assert ci["log10_l"].estimate == zebra(s[mask & own], s[mask & ~own]).log10_l


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_zebra_worst_case_maps_back_to_a_listed_cell(seed):
    from voxmetrics.analysis.zebra import worst_trial
    from voxmetrics.metrics.pools import SortedPools
    from voxmetrics.metrics.zebra import pav_transform, zebra_from_pools

    rng = np.random.default_rng(seed)
    n_t, n_e = 30, 6
    t = rng.integers(0, n_e, n_t)
    s = rng.normal(0, 1, (n_t, n_e)).round(2)
    s[np.arange(n_t), t] += 2.0
    mask = rng.random((n_t, n_e)) < 0.5
    mask[np.arange(n_t), t] = rng.random(n_t) < 0.8
    mask[np.arange(n_t), (t + 1) % n_e] = True
    mask[0, t[0]] = True
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"t{i}" for i in range(n_t)],
        trial_speakers=[f"s{j}" for j in t],
        enrol_speakers=[f"s{j}" for j in range(n_e)],
        mask=mask,
    )
    result = zebra_from_pools(SortedPools.of(sm))
    worst = worst_trial(sm, result, pav_transform(sm.tar, sm.non))
    assert sm.mask[worst.row, worst.column]
    assert worst.score == result.worst_score
    assert worst.mated == (worst.column == sm.targets[worst.row]) == result.worst_is_mated


def test_cli_report_of_a_study_with_sparse_conditions(tmp_path, capsys):
    from voxmetrics.data.study import Condition, Study
    from voxmetrics.data.studyfile import save_study

    sm = full_matrix()
    no_sex = listed_rows(sm, block_mask(sm)).drop(columns="sex")  # no group to rank within
    block = read_scores(no_sex.to_csv(index=False).encode(), name="b.csv")
    save_study(Study((Condition("block", block), Condition("full", sm))), tmp_path / "s.vxm")
    out = tmp_path / "out"
    code = main(
        ["report", str(tmp_path / "s.vxm"), "--html", str(tmp_path / "r.html"),
         "--json", str(tmp_path / "r.json"), "--csv", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    data = json.loads((tmp_path / "r.json").read_text())
    text = json.dumps(data)
    assert NO_COMPLETE_TRIAL in text and "trials_used" in text
    assert (out / "overview.csv").exists()


def test_one_listed_identity_leaves_no_one_to_n_search():
    # both trials are listed against 'a' only ('b' is never listed): nothing to rank against
    sm = ScoreMatrix.from_arrays(
        [[0.9, np.nan], [0.3, np.nan]],
        trial_ids=["t1", "t2"],
        trial_speakers=["a", "b"],
        enrol_speakers=["a", "b"],
        nan_missing=True,
    )
    assert sm.complete_rows() is None
    r = evaluate(sm).to_dict()
    assert r["eer"] == eer([0.9], [0.3]) and r["linkability"] is None


def test_cli_scheduler_refuses_by(tmp_path, capsys):
    sm = full_matrix()
    sm.to_long_frame().to_parquet(tmp_path / "s.parquet")
    code = main(["evaluate", str(tmp_path / "s.parquet"), "--scheduler", "local", "--by", "sex"])
    assert code == 2 and "--by cannot be used with --scheduler" in capsys.readouterr().err


# --------------------------------------------------------------- intervals of a sparse list


def _sparse_with_complete_rows(seed: int, decimals: int):
    """40 trials of 8 speakers: a random trial list where trials 0-9 are complete."""
    rng = np.random.default_rng(seed)
    n_t, n_e = 40, 8
    t = np.concatenate([np.arange(n_e), rng.integers(0, n_e, n_t - n_e)])
    s = rng.normal(0, 1, (n_t, n_e)).round(decimals)
    s[np.arange(n_t), t] += 1.5
    mask = rng.random((n_t, n_e)) < 0.6
    mask[np.arange(n_t), t] = rng.random(n_t) < 0.9
    mask[np.arange(n_t), (t + 1) % n_e] = True
    mask[:10] = True
    enrol = np.array([f"s{j}" for j in range(n_e)])
    sm = ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"u{i:02d}" for i in range(n_t)],
        trial_speakers=enrol[t],
        enrol_speakers=enrol,
        mask=mask,
    )
    return sm, s, t, mask


@pytest.mark.parametrize(("seed", "decimals", "ties"), [(5, 1, "reference"), (6, 3, "attacker")])
def test_sparse_intervals_equal_reevaluating_each_resampled_pair_list(seed, decimals, ties):
    """Slow reference: each replicate's trial list rebuilt and every number recomputed."""
    import reference_pooled as ref

    from voxmetrics.metrics.uncertainty import SpeakerDraws

    sm, s, t, mask = _sparse_with_complete_rows(seed, decimals)
    n_boot = 40
    r = evaluate(sm, bootstrap=n_boot, seed=3, ties=ties)
    full = sm.complete_rows()
    assert full is not None and full.n_trials >= 10
    draws = SpeakerDraws.draw(sm.trial_speakers, n_boot=n_boot, seed=3)
    inv, inv_full = draws.index(sm.trial_speakers), draws.index(full.trial_speakers)
    own = np.zeros(mask.shape, dtype=bool)
    own[np.arange(t.size), t] = True
    first = ties == "reference"
    for b in range(n_boot):
        c = draws.counts[b]
        idx = np.concatenate([np.repeat(np.flatnonzero(inv == j), c[j]) for j in range(c.size)])
        listed, mated = mask[idx], own[idx]
        tar, non = s[idx][listed & mated], s[idx][listed & ~mated]
        reps = {k: r.replicates.reps[k][b] for k in ("eer", "eer_rocch", "cllr", "min_cllr")}
        if tar.size == 0:
            assert all(math.isnan(v) for v in reps.values())
            continue
        assert reps["cllr"] == pytest.approx(cllr(tar, non), rel=1e-12)
        assert reps["eer_rocch"] == pytest.approx(ref.eer_rocch(tar, non, first), abs=1e-12)
        assert reps["min_cllr"] == pytest.approx(ref.min_cllr(tar, non, first), abs=1e-12)
        # the replicate EER is eer_from_runs of the reweighted runs: SpeechBrain's EER of the
        # resampled pairs up to one ROC step (widened by a group of tied non-targets)
        step = 1 / tar.size + np.unique(non, return_counts=True)[1].max() / non.size
        assert reps["eer"] == pytest.approx(eer(tar, non), abs=step)
        rows = np.concatenate(
            [np.repeat(np.flatnonzero(inv_full == j), c[j]) for j in range(c.size)]
        )
        link = r.replicates.reps["linkability"][b]
        if rows.size == 0:
            assert math.isnan(link)
        else:
            assert link == pytest.approx(linkability(full.scores[rows], full.targets[rows]))
    top = r.to_dict()["intervals"]
    for k in ("eer", "eer_rocch", "cllr", "min_cllr", "linkability"):
        low, high = top[k]
        assert low <= high, k
        iv = r.intervals[k]
        assert (iv.low, iv.high) == (low, high)
    assert len(top["linkability_vs_n"]) == len(r.to_dict()["linkability_vs_n"])
    # deterministic by seed
    assert evaluate(sm, bootstrap=n_boot, seed=3, ties=ties).to_dict()["intervals"] == top


def test_a_complete_list_in_long_form_has_the_dense_intervals():
    sm = full_matrix()
    data = read_scores(
        listed_rows(sm, np.ones(sm.shape, bool)).to_csv(index=False).encode(), name="s.csv"
    )
    a = evaluate(sm, cross_calibrate=3, bootstrap=30, seed=4).to_dict()
    b = evaluate(data, cross_calibrate=3, bootstrap=30, seed=4).to_dict()
    assert a["intervals"] == b["intervals"] and a["intervals"]["eer"] is not None


def test_the_sparse_replicates_of_a_complete_mask_equal_the_dense_ones():
    """The listed-pair path itself (mask of every pair) against the complete-matrix path."""
    from voxmetrics.metrics.uncertainty import SpeakerDraws, condition_replicates

    sm = full_matrix(2)
    s, t, spk = sm.scores, sm.targets, sm.trial_speakers
    d = SpeakerDraws.draw(spk, n_boot=50, seed=1)
    dense = condition_replicates(s, t, spk, d)
    listed = condition_replicates(
        s, t, spk, d, mask=np.ones(s.shape, dtype=bool), complete=(s, t, spk)
    )
    assert list(listed.estimates) == list(dense.estimates)
    for k, v in dense.reps.items():
        np.testing.assert_allclose(listed.reps[k], v, rtol=1e-12, atol=1e-15, err_msg=k)
        assert listed.estimates[k] == pytest.approx(dense.estimates[k], rel=1e-12), k
    np.testing.assert_array_equal(listed.curve_reps, dense.curve_reps)


def test_sparse_list_without_complete_trials_has_pairwise_intervals_only():
    sm = full_matrix()
    no_sex = listed_rows(sm, block_mask(sm)).drop(columns="sex")  # no group to rank within
    data = read_scores(no_sex.to_csv(index=False).encode(), name="s.csv")
    r = evaluate(data, bootstrap=30, seed=1).to_dict()
    top = r["intervals"]
    for k in ("eer", "eer_rocch", "cllr", "min_cllr"):
        assert top[k][0] <= r[k] + 0.5 and top[k][0] <= top[k][1], k
    assert top["linkability"] is None and top["linkability_vs_n"] is None
    assert r["linkability"] is None and r["srd"] is None and r["lid"] is None
    assert r["zebra"]["intervals"]["d_ece"][0] <= r["zebra"]["intervals"]["d_ece"][1]
    json.dumps(r, allow_nan=False)
