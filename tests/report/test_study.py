"""The study report's verdicts: stability, one front per attacker, exposure, provenance.

What the issue "Verdicts that hold up" asks of the report JSON: every ranking row has p_band
and rank_interval, every card cell a stability share, the fronts are per attacker, one DeID per
anonymiser, ``exposed_speakers``, and the versions and input fingerprints in ``provenance``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import warnings

import numpy as np
import pytest
from verdict_cases import two_system_study

from voxmetrics.data.provenance import LIBRARIES, InputFile
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.report.html import json_safe
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@functools.cache
def _report(bootstrap: int = 50):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        return build_study_report(two_system_study(), bootstrap=bootstrap, original="original")


@functools.cache
def _json(bootstrap: int = 50):
    return json.loads(json.dumps(json_safe(_report(bootstrap).to_dict()), allow_nan=False))


def test_every_ranking_row_says_how_firm_it_is():
    ranking = _json()["privacy_vs_utility"]["ranking"]
    assert ranking["rows"], "the two systems are ranked"
    for row in ranking["rows"]:
        assert 0.0 <= row["p_band"] <= 1.0 and 0.0 <= row["p_rank1"] <= 1.0
        lo, hi = row["rank_interval"]
        assert lo <= row["rank"] <= hi
    stability = ranking["stability"]
    assert stability["n_replicates"] == 50
    assert set(stability["p_band"]) == {"alpha (semi-informed)", "beta (semi-informed)"}
    assert "Maier-Hein" in stability["method"]


def test_every_card_cell_has_a_stability_share():
    card = _json()["report_card"]
    for cells in card["conditions"].values():
        for cell in cells.values():
            assert "stability" in cell and "flips" in cell
            if cell["stability"] is not None:
                assert 0.0 <= cell["stability"] <= 1.0
                assert cell["level"] in ("ok", "caution", "risk")


def test_one_front_per_attacker_with_the_original_as_reference():
    pvu = _json()["privacy_vs_utility"]
    assert pvu["front_attacker"] == "semi-informed"
    assert pvu["attackers"] == ["ignorant", "lazy-informed", "semi-informed"]
    fronts = pvu["eer_vs_wer"]["fronts"]
    assert set(fronts) == set(pvu["attackers"])
    for attacker, names in fronts.items():
        assert names and all(n.endswith(f"({attacker})") for n in names)
    points = {p["condition"]: p for p in pvu["eer_vs_wer"]["points"]}
    assert points["original"]["reference"] and not points["original"]["on_front"]


def test_exposed_speakers_and_provenance():
    d = _json()
    exposed = d["exposed_speakers"]
    assert "original" not in exposed["conditions"] and len(exposed["conditions"]) == 6
    counts = [s["n_exposed"] for s in exposed["speakers"]]
    assert counts == sorted(counts, reverse=True)
    assert all(s["sex"] in ("F", "M") for s in exposed["speakers"])
    p = d["provenance"]
    assert p["voxmetrics"] and set(LIBRARIES) <= set(p["libraries"])
    assert p["libraries"]["numpy"] == np.__version__
    assert p["seed"] == 0 and p["settings"]["bootstrap"] == 50
    assert p["options"]["original"] == "original"
    assert p["attackers"]["alpha (ignorant)"]["attacker"] == "ignorant"
    assert set(p["data"]) == set(d["conditions"])


def test_input_files_are_fingerprinted(tmp_path):
    f = tmp_path / "scores.txt"
    f.write_bytes(b"a b 0.5\n")
    rec = InputFile.of(f, role="eval")
    study = dataclasses.replace(demo_study(n_speakers=4), inputs=(rec,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        sr = build_study_report(
            study,
            bootstrap=0,
            inputs=[InputFile.of(f, role="study file")],
            attack_of=lambda c: None,
        )
    inputs = sr.to_dict()["provenance"]["inputs"]
    assert [i["role"] for i in inputs] == ["study file", "eval"]
    assert inputs[0]["sha256"] == rec.sha256 and inputs[0]["size"] == 8
    assert rec.check() is None
    f.write_bytes(b"a b 0.6\n")
    assert "changed" in rec.check()
    f.unlink()
    assert rec.check().endswith("not found")


def test_verdict_tables_beside_the_report_tables():
    sr = _report()
    verdicts = sr.verdict_tables()
    assert set(verdicts) == {
        "report_card_stability.csv",
        "voiceprivacy_stability.csv",
        "voiceprivacy_bands.csv",
        "exposed_speakers.csv",
    }
    assert not set(verdicts) & set(sr.tables())
    ranking = sr.tables()["voiceprivacy_ranking.csv"]
    assert {"P(in band)", "Rank 95% low", "Rank 95% high", "P(rank 1)"} <= set(ranking.columns)


def test_the_evaluate_json_of_a_condition_keeps_no_utility_replicates():
    cond = demo_study(n_speakers=4).get("random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        bare = evaluate_condition(cond, bootstrap=0)
        u = Utility(wer=0.85, uar=0.25, rho_f0=0.05, source="demo (set by hand)")
        reps = dataclasses.replace(u, replicates={"wer": [0.8, 0.9]}, draws={"wer": "x:2:0"})
        with_reps = evaluate_condition(dataclasses.replace(cond, utility=reps), bootstrap=0)
    assert bare.to_json() == with_reps.to_json()  # the replicates never reach its JSON
    assert "replicates" not in with_reps.to_dict()["utility"]


@pytest.mark.parametrize("bootstrap", [0])
def test_without_a_bootstrap_nothing_claims_a_stability(bootstrap):
    d = _json(bootstrap)
    assert d["privacy_vs_utility"]["ranking"]["stability"] is None
    assert all(r["p_band"] is None for r in d["privacy_vs_utility"]["ranking"]["rows"])
    for cells in d["report_card"]["conditions"].values():
        # the privacy numbers have no replicates; a utility computed from files keeps its own
        assert all(c["stability"] is None for k, c in cells.items() if k not in ("wer", "uar"))
