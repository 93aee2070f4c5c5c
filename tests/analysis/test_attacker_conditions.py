"""``voxmetrics.analysis.attacker_conditions``: a study's conditions under other attackers.

On embeddings that hide the speaker from cosine but not from a trained back-end
(tests/attack_cases.py): each back-end asked for is one condition (``"<name> [<back-end>]"``,
cosine keeping the name), ``"strongest"`` keeps the strongest on dev under the condition's own
name, conditions not scored from embeddings by cosine pass through untouched, and what could
not be tried is noted with why.
"""

from __future__ import annotations

import pytest
from attack_cases import attack_embeddings

from voxmetrics.analysis.attacker_conditions import INFORMED, study_attackers
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError


@pytest.fixture(scope="module")
def anon():
    return attack_embeddings(0, n_train=20, n_dev=10, n_eval=10)[0]


def _cond(anon, name, attacker="semi-informed", backend="cosine"):
    return Condition(
        name,
        eval=anon.score_matrix("eval"),
        dev=anon.score_matrix("dev"),
        embeddings=anon,
        recipe=AttackerRecipe(backend),
        attacker=attacker,
        utility=Utility(wer=0.05),
    )


def test_strongest_and_a_list_of_backends_together_are_refused(anon):
    with pytest.raises(VoxMetricsInputError, match="either 'strongest' or a list of back-ends"):
        study_attackers([_cond(anon, "x")], backends=["strongest", "lda"])


def test_each_backend_asked_for_is_a_condition_and_the_others_pass_through(anon):
    plain = Condition("plain", eval=anon.score_matrix("eval"))  # imported scores
    lda_made = _cond(anon, "by-lda", backend="lda")  # not scored by cosine: not attacked again
    cs = [_cond(anon, "x"), _cond(anon, "y", "ignorant"), plain, lda_made]
    r = study_attackers(cs, backends=["cosine", "lda", "procrustes"])
    got = [(c.name, c.attacker, c.recipe and c.recipe.backend) for c in r.conditions]
    assert got == [
        ("x", "semi-informed", "cosine"),
        ("x [lda]", "semi-informed", "lda"),
        ("y", "ignorant", "cosine"),
        ("y [lda]", "ignorant", "lda"),
        ("plain", "semi-informed", None),
        ("by-lda", "semi-informed", "lda"),
    ]
    assert r.conditions[4] is plain and r.conditions[5] is lda_made
    assert all(c.utility == Utility(wer=0.05) for c in r.conditions[:4])  # kept
    assert sorted(r.checks) == ["x", "x [lda]", "y", "y [lda]"] and sorted(r.sweeps) == ["x", "y"]
    assert "ignorant" not in INFORMED
    x_note, y_note = r.notes  # procrustes: no original embeddings (x), not informed (y)
    assert x_note.startswith("x: procrustes left out: a mapping attack needs the original")
    assert y_note == (
        "y: procrustes left out: a mapping attack needs an attacker who knows the anonymiser "
        "(lazy-informed, semi-informed)"
    )


def test_cosine_alone_changes_nothing_and_one_backend_keeps_the_name(anon):
    cs = [_cond(anon, "x")]
    assert study_attackers(cs, backends=["cosine"]).conditions == tuple(cs)
    (only,) = study_attackers(cs, backends=["lda"]).conditions
    assert only.name == "x" and only.recipe.backend == "lda"


def test_the_strongest_on_dev_is_kept_under_the_condition_s_name(anon):
    r = study_attackers([_cond(anon, "x")])
    (kept,) = r.conditions
    sweep = r.sweeps["x"]
    assert kept.name == "x" and kept.recipe.backend == sweep.chosen != "cosine"
    assert kept.recipe.selected_by == "eer"
    tried = {b: v for b, v in kept.recipe.candidates if v is not None}
    assert tried[sweep.chosen] == min(tried.values())  # the lowest dev EER
    assert tried["cosine"] > tried[sweep.chosen]  # the anonymiser hides from cosine only
