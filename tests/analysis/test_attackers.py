"""The attacker sweep of one condition (voxmetrics.analysis.attackers): choose on dev, report
on eval, with honest dev figures and the recipe on the condition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.analysis.attackers import (
    SELECT_METRICS,
    condition_attackers,
    dev_figure,
    parse_backend_params,
)
from voxmetrics.data import EmbeddingSet
from voxmetrics.embeddings.backends import BACKENDS, TRAINED_BACKENDS
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate, evaluate_condition
from voxmetrics.metrics.legal import link_rank_ties
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.synth import demo_embeddings, demo_study


@pytest.fixture(scope="module")
def hidden():
    return attack_embeddings(0)


@pytest.fixture(scope="module")
def sweep(hidden):
    anon, orig = hidden
    return condition_attackers(anon, originals=orig)


def test_strongest_is_a_trained_backend_chosen_on_dev_and_far_below_cosine_on_eval(hidden, sweep):
    anon, _ = hidden
    assert sweep.chosen in (*TRAINED_BACKENDS, "fusion")
    assert sweep.select_by == "eer" and sweep.trained_on == "train"
    chosen = sweep.strongest
    # chosen by its dev figure: the lowest of every back-end tried (ties to the first)
    tried = [o.dev_value for o in sweep.outcomes if o.dev_value is not None]
    assert chosen.dev_value == min(tried) and chosen.dev_eer == chosen.dev_value
    # reported on eval through the engine, far below today's cosine attacker
    report = evaluate_condition(sweep.condition("hidden", embeddings=anon))
    cosine = evaluate(anon.score_matrix("eval"), dev=anon.score_matrix("dev"))
    assert cosine.baseline.eer > 0.35
    assert report.baseline.eer < cosine.baseline.eer / 3
    block = report.to_dict()["attacker"]
    assert block["backend"] == sweep.chosen and block["trained_on"] == "train"
    assert block["selected_by"] == "eer" and block["dev_value"] == chosen.dev_value
    assert [c["backend"] for c in block["candidates"]] == list(BACKENDS)
    assert block["n_train_speakers"] == 60 and not block["weak"]


def test_the_cosine_outcome_is_todays_scoring_bit_for_bit(hidden, sweep):
    anon, _ = hidden
    cosine = sweep.outcome("cosine")
    np.testing.assert_array_equal(cosine.eval.scores, anon.score_matrix("eval").scores)
    np.testing.assert_array_equal(cosine.dev.scores, anon.score_matrix("dev").scores)
    assert cosine.recipe.to_dict()["trained_on"] == "none"


def test_skipped_backends_say_why_and_a_named_one_is_not_chosen(hidden):
    anon, _ = hidden
    sweep = condition_attackers(anon)  # no originals: no mapping attack
    assert "original embeddings" in sweep.outcome("procrustes").skipped
    assert sweep.outcome("procrustes").eval is None
    named = condition_attackers(anon, backends=["lda"])
    assert named.chosen == "lda" and named.select_by is None
    recipe = named.recipe()
    assert recipe.selected_by is None and recipe.candidates == () and recipe.dev_value is None
    with pytest.raises(VoxMetricsInputError, match="original embeddings"):
        condition_attackers(anon, backends=["procrustes"])


def test_dev_figures_are_cross_fitted_when_trained_on_dev():
    """On embeddings without any speaker information, LDA trained and scored on the same dev
    speakers looks strong (in sample); cross-fitted, it is at chance, as it is on eval."""
    rng = np.random.default_rng(3)
    rows, meta = [], []
    for split in ("dev", "eval"):
        for s in range(25):
            for role, k in (("enrol", 2), ("trial", 4)):
                for i in range(k):
                    rows.append(rng.standard_normal(60))
                    meta.append((f"{split}{s}{role}{i}", f"{split}{s}", role, split))
    es = EmbeddingSet.from_arrays(
        np.array(rows), pd.DataFrame(meta, columns=["utt_id", "speaker", "role", "split"])
    )
    sweep = condition_attackers(es, backends=["cosine", "lda"])
    assert sweep.trained_on == "dev (cross-fitted)"
    lda = sweep.outcome("lda")
    assert lda.recipe.trained_on == "dev (cross-fitted)"
    assert lda.dev_eer > 0.35  # out of sample: no better than chance
    from voxmetrics.embeddings.backends import TrainingData, fit_backend

    in_sample = es.score_matrix_with("dev", fit_backend("lda", TrainingData.of(es)))
    assert dev_figure(in_sample) < 0.2  # what an in-sample figure would claim
    assert dev_figure(lda.eval) > 0.35  # and what eval shows


def test_cross_fitted_dev_figures_use_the_pairs_within_folds():
    """A back-end trained without a fold knows the other folds' speakers (their profiles come
    from its training utterances): scored against them, a trial's held-out target stands out
    by that alone, and a fusion learns it (dev EER 0.40 on speech without speaker information,
    0.51 on eval). Dev figures, fusion weights and calibration use the pairs within folds."""
    es = demo_embeddings(seed=0)["random"]  # nothing of the speaker is left
    sweep = condition_attackers(es)
    for o in (o for o in sweep.outcomes if o.ok):
        assert o.dev_eer > 0.44, o.name  # no better than chance on dev, as on eval
        assert o.dev.is_complete  # the condition keeps every dev score
        pairs = o.dev_pairs
        assert pairs.target_listed.all() and pairs.mask.sum(axis=1).max() == 8  # 40 / 5 folds
        np.testing.assert_array_equal(o.dev_listed, sweep.outcome("cosine").dev_listed)
        assert o.dev_eer == dev_figure(pairs)
    assert sweep.outcome("fusion").recipe.trained_on == "dev (cross-fitted)"
    # linkability by blocks: each trial among the 8 identities of its fold
    by_link = condition_attackers(es, backends=["cosine", "lda"], select_by="linkability")
    assert 0.0 < by_link.outcome("lda").dev_value < 0.5
    # with a train split nothing is restricted: every dev pair is out of sample
    anon, _ = attack_embeddings(2, n_train=20, n_dev=10, n_eval=10)
    assert condition_attackers(anon, backends=["cosine", "lda"]).outcome("lda").dev_listed is None


def test_a_small_dev_set_keeps_two_speakers_per_fold():
    study = demo_study(n_speakers=12).subset("sex", "F")
    es = study.get("plain").embeddings  # 6 dev speakers: 3 folds of 2, not 5 of 1 or 2
    sweep = condition_attackers(es)
    assert sweep.outcome("fusion").ok  # every fold has non-mated pairs to weigh
    assert (
        sweep.outcome("lda").dev_pairs.mask.sum(axis=1).tolist()
        == [2] * es.score_matrix("dev").n_trials
    )


def test_never_trained_on_the_evaluated_speakers():
    anon, _ = attack_embeddings(1, n_train=6, n_dev=5, n_eval=5)
    meta = anon.meta.copy()
    meta.loc[meta["split"] == "train", "speaker"] = meta.loc[
        meta["split"] == "train", "speaker"
    ].str.replace("train", "eval")
    leaky = EmbeddingSet.from_arrays(anon.embeddings, meta)
    with pytest.raises(VoxMetricsInputError, match="shares 5 speaker"):
        condition_attackers(leaky, backends=["lda"])
    with pytest.raises(VoxMetricsInputError, match="cannot be reported on it"):
        condition_attackers(
            attack_embeddings(1, with_train=False)[0], backends=["lda"], split="dev"
        )


def test_choosing_needs_dev_and_a_known_metric():
    anon, _ = attack_embeddings(1, n_train=6, n_dev=5, n_eval=5)
    no_dev = EmbeddingSet.from_arrays(
        anon.embeddings[anon.meta["split"] != "dev"],
        anon.meta[anon.meta["split"] != "dev"],
    )
    with pytest.raises(VoxMetricsInputError, match="needs a dev split"):
        condition_attackers(no_dev)
    assert condition_attackers(no_dev, backends=["lda"]).strongest.dev is None
    with pytest.raises(VoxMetricsInputError, match="chosen by one of"):
        condition_attackers(anon, select_by="auc")
    with pytest.raises(VoxMetricsInputError, match="'pca' is unknown"):
        condition_attackers(anon, backends=["pca"])


@pytest.mark.parametrize("metric", list(SELECT_METRICS))
def test_the_choice_follows_the_metric_and_ties_go_to_the_first(hidden, metric):
    anon, _ = hidden
    sweep = condition_attackers(anon, backends=["cosine", "snorm", "lda", "max"], select_by=metric)
    values = {o.name: o.dev_value for o in sweep.outcomes}
    better = max if SELECT_METRICS[metric].stronger == "higher" else min
    best = better(values.values())
    assert sweep.chosen == next(n for n, v in values.items() if v == best)
    assert sweep.recipe().selected_by == metric


def test_score_normalisation_reorders_the_candidates(hidden, sweep):
    """S-norm / AS-norm apply to every cell: the 1-to-N ranks change, not only the EER."""
    ties = link_rank_ties("code")
    ranks = {
        name: target_ranks(
            sweep.outcome(name).eval.scores, sweep.outcome(name).eval.targets, ties=ties
        )
        for name in ("cosine", "snorm", "asnorm")
    }
    assert (ranks["snorm"] != ranks["cosine"]).any()
    assert (ranks["asnorm"] != ranks["snorm"]).any()


def test_fusion_and_calibration_give_llrs_with_actual_costs(hidden):
    anon, orig = hidden
    sweep = condition_attackers(anon, originals=orig, backends=["fusion"])
    fused = sweep.strongest
    assert fused.score_kind == "llr" and fused.recipe.calibrated
    assert "lda" in fused.recipe.params["components"]
    report = evaluate_condition(sweep.condition("fused", embeddings=anon))
    assert report.score_kind == "llr"
    assert report.to_dict()["dcf"]["0.01"]["act_dcf"] is not None
    cal = condition_attackers(anon, backends=["lda"], calibrate=True)
    lda = cal.strongest
    assert lda.score_kind == "llr" and cal.recipe().calibrated
    raw = condition_attackers(anon, backends=["lda"]).strongest
    # a monotone map: the same EER, a calibrated (lower) actual Cllr
    assert dev_figure(lda.eval) == pytest.approx(dev_figure(raw.eval), abs=1e-12)
    no_dev = EmbeddingSet.from_arrays(
        anon.embeddings[anon.meta["split"] != "dev"], anon.meta[anon.meta["split"] != "dev"]
    )
    with pytest.raises(VoxMetricsInputError, match="fusion needs at least two"):
        condition_attackers(no_dev, backends=["fusion"])


def test_parse_backend_params_reads_numbers_and_refuses_malformed():
    assert parse_backend_params(["lda.dim=5", "x.flag=true", "w.s=0.5"]) == {
        "lda": {"dim": 5},
        "x": {"flag": True},
        "w": {"s": 0.5},
    }
    with pytest.raises(VoxMetricsInputError, match=r"NAME\.PARAM=VALUE"):
        parse_backend_params(["dim=5"])


def test_sweep_frame_and_dict(sweep):
    frame = sweep.frame()
    assert frame["Back-end"].tolist() == list(BACKENDS)
    assert frame["Chosen"].sum() == 1
    d = sweep.to_dict()
    assert d["chosen"] == sweep.chosen and len(d["backends"]) == len(BACKENDS)
