"""The strongest attacker tried on each system (voxmetrics.analysis.strongest), and the card,
call-outs, ranking and study report that judge it and name it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.attack_cases import attack_embeddings, with_backends
from voxmetrics.analysis.attackers import dev_figure
from voxmetrics.analysis.ranking import report_callouts, report_ranking
from voxmetrics.analysis.strongest import AS_GIVEN, strongest_attackers, weak_attacker_message
from voxmetrics.data.recipe import WEAK_ATTACKER, AttackerRecipe
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.utility import Utility
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.evaluation.threat import threat_callouts
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def hidden_study() -> Study:
    """One system whose speakers a linear back-end finds again: cosine, LDA and PLDA tried."""
    anon, _ = attack_embeddings(0, n_train=0, with_train=False)
    cond = Condition(
        "hidden",
        eval=anon.score_matrix("eval"),
        dev=anon.score_matrix("dev"),
        embeddings=anon,
        recipe=AttackerRecipe("cosine"),
        utility=Utility(wer=0.05, uar=0.6),
    )
    plain = Condition(
        "other",
        eval=anon.score_matrix("eval"),
        dev=anon.score_matrix("dev"),
        utility=Utility(wer=0.04, uar=0.6),
    )
    return with_backends(Study(conditions=(cond, plain)), "hidden", ["lda", "plda"])


def test_the_lowest_dev_eer_is_judged_and_the_others_are_left_out(hidden_study):
    s = strongest_attackers(hidden_study.conditions)
    (choice,) = s.choices  # "other" has no recipe and no sibling: no choice, judged as it is
    assert (choice.system, choice.attacker) == ("hidden", "semi-informed")
    assert [t.condition for t in choice.tried] == ["hidden", "hidden [lda]", "hidden [plda]"]
    devs = {c.name: dev_figure(c.dev, "eer") for c in hidden_study.conditions}
    best = min(["hidden", "hidden [lda]", "hidden [plda]"], key=devs.__getitem__)
    assert best != "hidden"  # a trained back-end undoes this anonymiser
    assert choice.condition == best and choice.dev_eer == devs[best]
    assert s.judged(best) and s.judged("other")
    out = s.left_out()
    assert set(out) == {"hidden", "hidden [lda]", "hidden [plda]"} - {best}
    assert all("weaker attacker of hidden (semi-informed)" in why for why in out.values())
    assert s.keep(hidden_study.names) == [n for n in hidden_study.names if n in (best, "other")]
    assert choice.backend in choice.label and "strongest of 3 attackers tried" in choice.label
    assert "cosine" in choice.label  # the weaker ones with their dev EERs
    assert s.label("other") == "" and s.label(best) == choice.label
    frame = s.frame()
    assert frame["Judged"].sum() == 1
    assert list(frame["Condition"]) == [t.condition for t in choice.tried]
    json.dumps(s.to_dict())


def test_conditions_without_recipes_form_no_choice_and_the_demo_is_unchanged():
    study = demo_study(n_speakers=6)
    s = strongest_attackers(study.conditions)
    assert s.choices == () and s.left_out() == {} and s.keep(study.names) == study.names


def test_a_condition_without_recipe_joins_its_systems_attackers_as_given(hidden_study):
    plain = dataclasses.replace(hidden_study.get("hidden"), recipe=None)
    s = strongest_attackers(hidden_study.with_condition(plain).conditions)
    assert s.choices[0].tried[0].backend == AS_GIVEN


def test_without_dev_scores_nothing_is_chosen_and_every_attacker_is_judged(hidden_study):
    no_dev = Study(
        conditions=tuple(
            dataclasses.replace(c, dev=None) for c in hidden_study.conditions if "hidden" in c.name
        )
    )
    s = strongest_attackers(no_dev.conditions)
    assert len(s.choices) == 3 and not any(c.compared for c in s.choices)
    assert s.left_out() == {} and all(s.judged(n) for n in no_dev.names)
    assert "not compared" in s.label("hidden [lda]")


def test_a_lone_attacker_chosen_by_the_sweep_says_so():
    recipe = AttackerRecipe(
        "plda", selected_by="eer", dev_value=0.1, candidates=(("cosine", 0.3), ("plda", 0.1))
    )
    study = demo_study(n_speakers=6)
    c = dataclasses.replace(study.get("anon-mild"), recipe=recipe)
    s = strongest_attackers([c])
    assert s.label("anon-mild") == (
        "plda, the strongest of 2 back-ends tried (chosen on dev by eer: 0.1)"
    )


def test_weak_attacker_message():
    assert weak_attacker_message(None) == ""
    r = AttackerRecipe("lda", cautions=("a", "b"))
    assert weak_attacker_message(r) == f"{WEAK_ATTACKER} (a; b)"


# ---------------------------------------------------------------- the verdicts judge it


@pytest.fixture(scope="module")
def judged(hidden_study):
    weak = dataclasses.replace(
        hidden_study.get("other"), recipe=AttackerRecipe("cosine", cautions=("too few",))
    )
    study = hidden_study.with_condition(weak)
    reports = evaluate_study(study, bootstrap=0)
    return study, reports, strongest_attackers(study.conditions)


def test_the_card_judges_the_strongest_names_it_and_warns_of_a_weak_attacker(judged):
    study, reports, attackers = judged
    best = attackers.choices[0].condition
    card = report_card(reports, attackers=attackers)
    assert card.conditions == tuple(attackers.keep(study.names)) == ("other", best)
    assert card.attackers[best] == attackers.label(best)
    assert set(card.not_judged) == set(attackers.left_out())
    assert card.weak_attackers == {"other": f"{WEAK_ATTACKER} (too few)"}
    kinds = [(n, k) for n, k, _ in card.attacker_notes()]
    assert (best, "judged") in kinds and ("other", "weak") in kinds
    d = json.loads(json.dumps(card.to_dict()))
    assert d["attackers"][best] and d["weak_attackers"]["other"].startswith(WEAK_ATTACKER)
    # without attackers: every row, as before; the weak-attacker warning holds anyway
    plain = report_card(reports)
    assert plain.conditions == tuple(study.names) and plain.attackers == {}
    assert plain.weak_attackers == card.weak_attackers


def test_callouts_judge_the_strongest_and_name_it(judged):
    study, reports, attackers = judged
    every = threat_callouts(study, reports, eer_min=0.0)
    called = {c.condition for c in every}
    assert called <= {attackers.choices[0].condition, "other"}
    for c in every:
        assert c.judged_attacker == attackers.label(c.condition)
        assert json.loads(json.dumps(c.to_dict()))["judged_attacker"] == (c.judged_attacker or None)


def test_the_ranking_bands_on_the_strongest_and_says_which(judged):
    study, reports, attackers = judged
    best = attackers.choices[0].condition
    ranking = report_ranking(reports, bands=(0.0,), attackers=attackers)
    ranked = {r.condition: r for r in ranking.rows}
    assert set(ranked) == {best, "other"}
    assert ranked[best].judged_attacker == attackers.label(best)
    assert ranked["other"].judged_attacker == "cosine"  # alone: its recipe names it
    for name, why in attackers.left_out().items():
        assert ranking.unranked[name] == why
    assert "Attacker" in ranking.frame().columns
    # without attackers: every condition is a system, as before
    every = report_ranking(reports, bands=(0.0,))
    assert {r.condition for r in every.rows} == set(study.names)
    assert "Attacker" not in every.frame().columns
    assert report_callouts(reports, bands=(0.0,), attackers=attackers) is not None


def test_the_study_report_judges_the_strongest_in_every_part(judged):
    study, _, attackers = judged
    sr = build_study_report(study, bootstrap=0)
    assert sr.attackers.to_dict() == attackers.to_dict()
    assert sr.card.conditions == tuple(attackers.keep(study.names))
    d = json.loads(json.dumps(sr.to_dict(), allow_nan=False, default=str))
    assert d["attackers"]["not_judged"] == attackers.left_out()
    assert d["attackers"]["weak"] == {"other": f"{WEAK_ATTACKER} (too few)"}
    rows = d["privacy_vs_utility"]["ranking"]["rows"]
    assert {r["condition"] for r in rows} <= set(attackers.keep(study.names))
    assert "attackers.csv" in sr.tables()
    record = d["provenance"]["attackers"]["hidden [lda]"]
    assert record["backend"] == "lda" and record["trained_on"] == "dev (cross-fitted)"
    assert record["n_train_speakers"] == 30 and record["cautions"] == []
    assert d["provenance"]["attackers"]["other"]["cautions"] == ["too few"]
