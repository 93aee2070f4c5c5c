"""One anonymiser, one DeID (voxmetrics.analysis.anonymisers and the study report)."""

from __future__ import annotations

import warnings

import pytest
from verdict_cases import two_system_study

from voxmetrics.analysis.anonymisers import (
    VOICE_SOURCE_ORDER,
    anonymiser_of,
    anonymisers,
    voice_sources,
)
from voxmetrics.errors import VoxMetricsWarning


@pytest.mark.parametrize(
    ("name", "attacker", "anonymiser"),
    [
        ("sttts (semi-informed)", "semi-informed", "sttts"),
        ("sttts (ignorant)", "ignorant", "sttts"),
        ("mcadams / lazy-informed", "lazy-informed", "mcadams"),
        ("sttts (ignorant)", "semi-informed", "sttts (ignorant)"),  # not its attacker
        ("(ignorant)", "ignorant", "(ignorant)"),  # nothing left
        ("b1", "semi-informed", "b1"),
    ],
)
def test_anonymiser_of(name, attacker, anonymiser):
    assert anonymiser_of(name, attacker) == anonymiser


def test_voice_sources_prefer_the_lazy_informed_embeddings():
    assert VOICE_SOURCE_ORDER[0] == "lazy-informed"
    conds = [
        ("s (ignorant)", "ignorant", True),
        ("s (semi-informed)", "semi-informed", True),
        ("s (lazy-informed)", "lazy-informed", True),
        ("t (ignorant)", "ignorant", True),
        ("t (semi-informed)", "semi-informed", False),
        ("u", "semi-informed", False),
        ("original", "original", True),
    ]
    src = voice_sources(conds)
    assert {src[n] for n, _, _ in conds[:3]} == {"s (lazy-informed)"}
    assert src["t (semi-informed)"] == "t (ignorant)"  # the only one with embeddings
    assert src["u"] is None and src["original"] == "original"
    assert anonymisers((n, a) for n, a, _ in conds) == {
        "s": ["s (ignorant)", "s (semi-informed)", "s (lazy-informed)"],
        "t": ["t (ignorant)", "t (semi-informed)"],
        "u": ["u"],
    }


def test_the_report_has_one_deid_per_anonymiser():
    from voxmetrics.report.study import build_study_report

    study = two_system_study()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        sr = build_study_report(study, bootstrap=20, original="original")
    sim = sr.to_dict()["voice_similarity"]
    assert set(sim["anonymisers"]) == {"alpha", "beta"}
    for system in ("alpha", "beta"):
        names = [f"{system} ({a})" for a in ("ignorant", "lazy-informed", "semi-informed")]
        deids = {sim["conditions"][n]["deid"] for n in names}
        assert len(deids) == 1  # shared by its attacker set-ups
        assert {sim["conditions"][n]["voices_from"] for n in names} == {f"{system} (lazy-informed)"}
        assert sim["anonymisers"][system]["deid"] == deids.pop()
        assert sim["anonymisers"][system]["conditions"] == names
        ivs = [sim["conditions"][n]["intervals"] for n in names]
        assert all(iv == ivs[0] for iv in ivs)  # one interval too
    # the report's tables and comparisons read the same values
    values = sr.similarity_values()
    assert (
        values["alpha (ignorant)"]["deid"].estimate
        == values["alpha (semi-informed)"]["deid"].estimate
    )
