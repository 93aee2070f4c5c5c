"""The weak-attacker check (voxmetrics.analysis.weak_attacker): it fires on an undertrained
attacker, with its reasons, and stays quiet on a well-trained one."""

from __future__ import annotations

import warnings

import pytest

from tests.attack_cases import attack_embeddings
from voxmetrics.analysis.attackers import condition_attackers
from voxmetrics.analysis.weak_attacker import CHECKS, check_attacker
from voxmetrics.data.recipe import WEAK_ATTACKER
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition


def _sweep(**data):
    anon, orig = attack_embeddings(0, **data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return anon, orig, condition_attackers(anon, originals=orig)


def test_quiet_on_a_well_trained_attacker():
    anon, orig, sweep = _sweep()
    check = check_attacker(sweep, original=orig)
    assert check.ran == ("original_speech", "trained_vs_cosine")
    assert not check.weak and check.message == "" and check.reasons == ()
    condition = sweep.condition("ok", embeddings=anon, cautions=check.reasons)
    assert not evaluate_condition(condition).to_dict()["attacker"]["weak"]


def test_fires_on_an_undertrained_attacker_with_its_reasons():
    # a mild anonymiser (cosine works) and an attacker trained on 3 speakers of 2 utterances
    anon, orig, sweep = _sweep(n_train=3, train_utts=2, nuisance=0.6)
    check = check_attacker(sweep, original=orig)
    assert check.weak
    assert [f.check for f in check.findings] == ["trained_vs_cosine"]
    assert check.message.startswith(WEAK_ATTACKER)
    assert "every trained back-end is weaker than plain cosine" in check.reasons[0]
    # a named LDA attacker: also too weak on original speech
    lda = condition_attackers(anon, originals=orig, backends=["lda"])
    named = check_attacker(lda, original=orig)
    assert [f.check for f in named.findings] == ["original_speech", "trained_vs_cosine"]
    values = dict(named.findings[0].values)
    assert values["attacker_eer"] > values["reference_eer"] + 0.05
    report = evaluate_condition(lda.condition("weak", embeddings=anon, cautions=named.reasons))
    block = report.to_dict()["attacker"]
    assert block["weak"] and block["warning"] == WEAK_ATTACKER
    assert block["cautions"] == list(named.reasons)


def test_the_reference_eer_is_what_a_well_trained_verifier_reaches():
    _, orig, sweep = _sweep()
    # against an (implausibly) perfect reference the well-trained attacker is too weak
    check = check_attacker(sweep, original=orig, reference_eer=0.0, margin=0.0)
    assert "original_speech" in [f.check for f in check.findings]
    assert "reference verifier" in check.reasons[0]
    with pytest.raises(VoxMetricsInputError, match="fraction in"):
        check_attacker(sweep, original=orig, reference_eer=2.0)


@pytest.mark.parametrize(
    ("eers", "fired"),
    [
        ({"ignorant": 0.45, "lazy-informed": 0.30, "semi-informed": 0.10}, []),
        ({"ignorant": 0.30, "lazy-informed": 0.45}, ["lazy-informed"]),
        ({"ignorant": 0.48, "lazy-informed": 0.30, "semi-informed": 0.35}, ["semi-informed"]),
        ({"lazy-informed": 0.300, "semi-informed": 0.305}, []),  # within the margin
    ],
)
def test_ordering_of_attackers(eers, fired):
    check = check_attacker(eer_by_knowledge=eers)
    assert check.ran == ("ordering",)
    assert [f.values[0][0].removesuffix("_eer") for f in check.findings] == fired


def test_nothing_to_check_runs_nothing():
    check = check_attacker()
    assert check.ran == () and not check.weak
    assert set(CHECKS) == {"original_speech", "trained_vs_cosine", "ordering"}
    assert check.to_dict() == {"weak": False, "message": None, "findings": [], "checks_run": []}
