"""Every attacker of one condition side by side (voxmetrics.evaluation.attackers), and its
figure (voxmetrics.plots.attackers)."""

from __future__ import annotations

import json

import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.attackers import (
    BACKEND_COLUMNS,
    BACKEND_PARTS,
    backend_condition_name,
    compare_attackers,
)
from voxmetrics.plots.attackers import STRONGEST_MARK, attackers_figure
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def hidden():
    anon, orig = attack_embeddings(0)
    cond = Condition(
        "hidden",
        eval=anon.score_matrix("eval"),
        dev=anon.score_matrix("dev"),
        embeddings=anon,
        attacker="lazy-informed",
        recipe=AttackerRecipe("cosine"),
    )
    return cond, orig


@pytest.fixture(scope="module")
def comparison(hidden):
    cond, orig = hidden
    return compare_attackers(cond, original=orig, backends=["cosine", "lda", "plda", "procrustes"])


def test_each_backend_is_evaluated_as_its_condition_is(hidden, comparison):
    cond, _ = hidden
    assert list(comparison.reports) == ["cosine", "lda", "plda", "procrustes"]
    made = dict(
        zip(comparison.reports, comparison.conditions(list(comparison.reports)), strict=True)
    )
    for backend, report in comparison.reports.items():
        c = made[backend]
        assert c.name == backend_condition_name("hidden", backend) == f"hidden [{backend}]"
        assert c.attacker == "lazy-informed" and c.recipe.backend == backend
        again = evaluate_condition(c, parts=BACKEND_PARTS)
        assert again.baseline.eer == report.baseline.eer
        assert again.lid.lid_max == report.lid.lid_max
    # the cosine back-end is today's attacker, bit for bit
    assert comparison.reports["cosine"].baseline.eer == evaluate_condition(cond).baseline.eer


def test_the_frame_has_every_number_and_marks_the_strongest(comparison):
    frame = comparison.frame()
    assert list(frame.columns) == list(BACKEND_COLUMNS)
    assert frame["Strongest"].sum() == 1
    row = frame.set_index("Back-end").loc[comparison.strongest]
    assert row["Dev EER"] == frame["Dev EER"].min()  # chosen on dev
    assert row["EER"] == comparison.reports[comparison.strongest].baseline.eer  # reported on eval
    cosine = frame.set_index("Back-end").loc["cosine"]
    assert row["EER"] < cosine["EER"] / 2  # a trained back-end undoes this anonymiser
    tar = comparison.reports["lda"].verification.tar_at_far.to_dict()
    lda = frame.set_index("Back-end").loc["lda"]
    assert (lda["TAR @ FAR 1 %"], lda["TAR @ FAR 0.1 %"]) == (tar["0.01"], tar["0.001"])
    assert lda["Trained on"] == "train"
    d = json.loads(json.dumps(comparison.to_dict(), allow_nan=False))
    assert d["sweep"]["chosen"] == comparison.strongest and len(d["backends"]) == 4


def test_the_strongest_condition_carries_how_it_was_chosen_and_the_check(comparison):
    (c,) = comparison.conditions()
    assert c.recipe.selected_by == "eer" and c.recipe.backend == comparison.strongest
    assert c.recipe.cautions == comparison.check.reasons
    assert "original_speech" in comparison.check.ran  # the original voices were given


def test_another_dev_metric_gets_its_column_and_the_ignorant_attacker_no_mapping():
    cond = demo_study(n_speakers=8).get("anon-mild")
    ignorant = Condition("x", eval=cond.eval, dev=cond.dev, embeddings=cond.embeddings,
                         attacker="ignorant")  # fmt: skip
    cmp = compare_attackers(
        ignorant, backends=["cosine", "lda", "procrustes"], select_by="min_cllr"
    )
    assert "Dev min_cllr" in cmp.frame().columns
    assert list(cmp.reports) == ["cosine", "lda"]
    assert "procrustes left out" in cmp.notes[0]


def test_bad_input_is_one_message():
    cond = demo_study(n_speakers=6).get("plain")
    bare = Condition("bare", eval=cond.eval, dev=cond.dev)
    with pytest.raises(VoxMetricsInputError, match="no utterance embeddings"):
        compare_attackers(bare)
    with pytest.raises(VoxMetricsInputError, match="chosen by one of"):
        compare_attackers(cond, select_by="accuracy")


def test_progress_goes_from_the_sweep_to_the_evaluations():
    cond = demo_study(n_speakers=6).get("plain")
    seen = []
    compare_attackers(cond, backends=["cosine", "lda"], progress=lambda f, m: seen.append((f, m)))
    assert seen[0] == (0.0, "trying cosine") and seen[-1][1] == "evaluating lda"
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][0] < 1.0


def test_the_figure_marks_the_strongest_and_shows_dev_and_eval(comparison):
    fig = attackers_figure(comparison)
    dev, ev, best, link = fig.data
    assert list(dev.x) == list(ev.x) == list(best.x) == list(link.x)
    marked = [x for x in ev.x if x.startswith(STRONGEST_MARK)]
    assert marked == [f"{STRONGEST_MARK} {comparison.strongest}"]
    frame = comparison.frame()
    eval_eer = [b if a is None else a for a, b in zip(ev.y, best.y, strict=True)]
    assert eval_eer == list(frame["EER"]) and list(dev.y) == list(frame["Dev EER"])
    assert [y is not None for y in best.y] == list(frame["Strongest"])
    assert ev.offsetgroup == best.offsetgroup  # one slot per back-end
    assert comparison.strongest in fig.layout.title.text
