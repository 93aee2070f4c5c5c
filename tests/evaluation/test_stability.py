"""Paired replicates of a study's ranking (voxmetrics.evaluation.stability)."""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
from verdict_cases import two_system_study

from voxmetrics.analysis.ranking import report_ranking
from voxmetrics.data.study import Study
from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.stability import ranking_replicates
from voxmetrics.synth import demo_study


@functools.cache
def _demo(bootstrap: int = 40):
    study = demo_study(n_speakers=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        return study, evaluate_study(study, bootstrap=bootstrap)


def test_same_speakers_and_seed_reuse_each_reports_replicates():
    study, reports = _demo()
    reps = ranking_replicates(study, reports, n_boot=40)
    assert reps.n_replicates == 40
    for r in reports:
        # the conditions share their trial speakers and the seed: replicate b is one draw
        assert np.array_equal(reps.of(r.name, "eer"), r.replicates.reps["eer"])
    assert any("one draw for every system" in n for n in reps.notes)
    assert any("taken as fixed" in n for n in reps.notes)  # the demo's utility is set by hand
    assert ranking_replicates(study, reports, n_boot=0) is None


def test_other_speakers_are_resampled_on_the_studys_draw():
    study, reports = _demo()
    # a condition on half the trial speakers: its own replicates are not the study's draw
    cond = study.get("random")
    keep = np.isin(cond.eval.trial_speakers, np.unique(cond.eval.trial_speakers)[:4])
    half = dataclasses.replace(cond, name="half", eval=cond.eval.subset_trials(keep))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        (own,) = evaluate_study(Study((half,)), bootstrap=40)
    both = Study((*study.conditions, half))
    reps = ranking_replicates(both, [*reports, own], n_boot=40)
    assert not np.array_equal(reps.of("half", "eer"), own.replicates.reps["eer"])
    assert reps.of("half", "eer").shape == (40,)
    assert any("half" in n and "again" in n for n in reps.notes)


def test_the_ranking_attacker_and_the_utility_replicates():
    study = two_system_study()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        reports = evaluate_study(study)  # the study's 50 replicates
    reps = ranking_replicates(study, reports, n_boot=50, attacker="semi-informed")
    assert set(reps.values) == {"alpha (semi-informed)", "beta (semi-informed)"}
    alpha = reps.of("alpha (semi-informed)", "wer")
    assert alpha is not None and alpha.shape == (50,)  # its own speakers' replicates
    assert reps.of("beta (semi-informed)", "wer") is None  # known only as a number
    ranking = report_ranking(reports, replicates=reps)
    assert ranking.stability.fixed["beta (semi-informed)"] == ("wer", "uar")
    assert ranking.stability.fixed["alpha (semi-informed)"] == ("uar",)
    for row in ranking.rows:
        assert row.p_band is not None and row.rank_interval[0] <= row.rank
