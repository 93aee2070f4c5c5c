"""SBLS attacks (voxmetrics.analysis.sbls.attacks): the page's, the default and uploaded ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from voxmetrics.analysis.sbls import (
    COMPONENTS,
    SBLSOptions,
    attack_sbls,
    default_attack,
    embeddings_attack,
    predictions_attack,
)
from voxmetrics.analysis.sbls import attacks as attacks_module
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.sbls import sbls, sbls_embeddings
from voxmetrics.synth import demo_study

from .sbls_cases import sbls_statistic


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study()


@pytest.mark.parametrize("attacker", ["original", "anonymised"])
def test_the_page_attack_is_sbls_embeddings(demo, attacker):
    cond, original = demo.get("anon-strong"), demo.get("plain")
    attack = embeddings_attack(cond, original=original, attacker=attacker)
    ours = attack_sbls(attack)
    reference = sbls_embeddings(cond.embeddings, original=original.embeddings, attacker=attacker)
    assert ours.to_dict() | {"attacker": ""} == reference.to_dict() | {"attacker": ""}
    assert attack.n == int((cond.embeddings.meta["split"] == "eval").sum())
    assert attacker in attack.attacker
    assert attack.short == (
        "original (plain)" if attacker == "original" else "anonymised (own dev)"
    )
    if attacker == "anonymised":  # one label of the default attacker everywhere
        assert ours.attacker == reference.attacker


def test_the_default_attack_is_the_informed_one(demo):
    attack = default_attack(demo.get("anon-mild"))
    assert attack is not None and attack.trained_on == "anonymised"
    assert default_attack(Condition("x", eval=demo.get("plain").eval)) is None


def test_the_bootstrap_statistic_recomputes_sbls_with_fixed_predictions(demo):
    attack = embeddings_attack(demo.get("anon-mild"), original=demo.get("plain"))
    options = SBLSOptions(min_group_size=20)
    statistic = sbls_statistic(attack, options)
    full = sbls(attack.labels, attack.predictions, min_group_size=20)
    assert statistic(np.arange(attack.n)) == {
        "p_attr": full.p_attr,
        "p_assoc": full.p_assoc,
        "p_subgroup": full.p_subgroup,
        "sbls": full.sbls,
    }
    one_class = np.flatnonzero(attack.labels["sex"] == "F")
    assert statistic(one_class) == dict.fromkeys(COMPONENTS)


def test_original_attacker_needs_original_embeddings(demo):
    with pytest.raises(VoxMetricsInputError, match="original"):
        embeddings_attack(demo.get("anon-mild"), original=None, attacker="original")
    no_emb = Condition("x", eval=demo.get("plain").eval)
    with pytest.raises(VoxMetricsInputError, match="no embeddings"):
        embeddings_attack(no_emb, attacker="anonymised")


def test_uploads_need_attribute_labels(demo):
    plain = demo.get("plain")
    bare_eval = dataclasses.replace(plain.eval, attributes={})
    cond = Condition("bare", eval=bare_eval)
    data = b"utt_id,attribute,predicted\nx,sex,F\n"
    with pytest.raises(VoxMetricsInputError, match="no attribute labels"):
        predictions_attack(cond, data, "p.csv")
    with pytest.raises(VoxMetricsInputError, match=r"p\.csv: .*not in the metadata"):
        predictions_attack(Condition("ok", eval=plain.eval), data, "p.csv")


def test_the_builtin_attacker_is_trained_once_per_data_in_a_process(demo, monkeypatch):
    # the report, the compare command and the page attack the same condition: one training
    from voxmetrics.metrics.sbls import builtin_attacker

    cond = demo.get("anon-mild")
    monkeypatch.setattr(attacks_module, "_PREDICTIONS", type(attacks_module._PREDICTIONS)())
    fits = []
    monkeypatch.setattr(
        attacks_module,
        "builtin_attacker",
        lambda *a, **k: fits.append(1) or builtin_attacker(*a, **k),
    )
    first = default_attack(cond)
    again = default_attack(cond)
    assert len(fits) == 1
    assert again.key == first.key
    for a in first.predictions:
        np.testing.assert_array_equal(again.predictions[a].scores, first.predictions[a].scores)
        assert not again.predictions[a].scores.flags.writeable
    # the same numbers as a fresh training
    fresh = builtin_attacker(
        *(lambda es, dev, ev: (
            es.embeddings[dev], {a: es.meta[a].to_numpy()[dev] for a in first.labels},
            es.embeddings[ev]))(
            cond.embeddings,
            (cond.embeddings.meta["split"] == "dev").to_numpy(),
            (cond.embeddings.meta["split"] == "eval").to_numpy(),
        )
    )  # fmt: skip
    for a in first.predictions:
        np.testing.assert_array_equal(first.predictions[a].scores, fresh[a].scores)
    assert attack_sbls(again).to_dict() == attack_sbls(first).to_dict()
    # other data (another condition, the original attacker) is trained on its own
    default_attack(demo.get("anon-strong"))
    embeddings_attack(cond, original=demo.get("plain"), attacker="original")
    assert len(fits) == 3
