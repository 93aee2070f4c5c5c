"""The study report (voxmetrics/report/study.py): its settings, progress, intervals, comparisons
and the verdicts of its JSON.

What the issue "Verdicts that hold up" asks of the report JSON: every ranking row has p_band
and rank_interval, every card cell a stability share, the fronts are per attacker, one DeID per
anonymiser, ``exposed_speakers``, and the versions and input fingerprints in ``provenance``.
The report of the full demo: its JSON, tables, settings, evaluators, errors, and comparisons
against a chosen reference.
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
from voxmetrics.errors import VoxMetricsInputError, VoxMetricsWarning
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS
from voxmetrics.report.html import json_safe, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


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


def test_the_study_setting_chooses_the_lid_variant_of_every_condition():
    import dataclasses

    from voxmetrics.data.study import StudySettings
    from voxmetrics.metrics.lid import calibrate_lid
    from voxmetrics.report.study import build_study_report

    study = dataclasses.replace(
        demo_study(n_speakers=12),
        settings=StudySettings(bootstrap=0, lid_variant="reference-code"),
    )
    d = build_study_report(study).to_dict()
    assert d["settings"]["lid_variant"] == "reference-code"
    for name, block in d["conditions"].items():
        lid_block = block["lid"]
        assert lid_block["variant"] == "reference-code"
        dev = study.get(name).dev
        expected = calibrate_lid(dev.scores, dev.targets, variant="reference-code")
        assert lid_block["w"] == expected.w
        assert block["sbls"]["attacker_trained_on"] == "anonymised"  # one default attacker


def test_study_report_progress_moves_through_the_similarity_and_comparisons():
    """The bar keeps moving after the conditions: the similarity matrices and the pairs."""
    from voxmetrics.report.study import build_study_report

    seen = []
    build_study_report(
        demo_study(n_speakers=6), bootstrap=5, progress=lambda f, m: seen.append((f, m))
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    messages = [m for _, m in seen]
    assert any(m.startswith("Voice similarity of") for m in messages)
    assert messages.index("Paired comparisons") > max(
        i for i, m in enumerate(messages) if m.startswith("Evaluating")
    )
    assert all(f < 1.0 for f, m in seen if m != "Done")


def test_every_headline_number_has_its_interval_in_the_json(demo_report):
    d = json.loads(json.dumps(demo_report.to_dict(), allow_nan=False))
    c = d["conditions"]["anon-mild"]
    for k in ("eer", "eer_rocch", "cllr", "min_cllr", "linkability"):
        lo, hi = c["intervals"][k]
        assert lo <= hi
    band = np.array(c["intervals"]["linkability_vs_n"])
    assert band[:, 0].tolist() == [n for n, _ in c["linkability_vs_n"]]
    assert (band[:, 1] <= band[:, 2]).all()
    assert set(c["lid"]["intervals"]) == {
        "alid",
        "pdr",
        "ndr",
        "lid_plus",
        "lid_minus",
        "lid_max",
        "lid_q95",
    }
    assert set(c["srd"]["intervals"]) == {"mean_d", "idr", "max_d", "max_d_q95"}
    assert set(c["zebra"]["intervals"]) == {"d_ece", "log10_l", "log10_l_q95"}
    assert set(c["srd"]["chance"]) == {"mean_d", "idr", "max_d", "max_d_q95"}
    assert c["chance"]["linkability"] == pytest.approx(1 / 12, abs=1e-9)
    assert "alid" in c["lid"]["chance"]


def test_study_comparisons_equal_compare_conditions(demo_report):
    """The report reuses each condition's replicates; the result is compare_conditions'."""
    from voxmetrics.evaluation import compare_conditions

    st = demo_study(n_speakers=12)
    lib = compare_conditions(
        st.get("plain"), st.get("anon-mild"), n_boot=60, original=st.get("plain")
    )
    got = demo_report.comparisons["anon-mild vs plain"]
    assert {k: c.to_dict() for k, c in got.items()} == {k: c.to_dict() for k, c in lib.items()}


def test_sbls_intervals_in_the_report_are_the_analysis_modules(demo_report):
    """JSON `sbls.intervals`, the LaTeX/Markdown and HTML tables, the comparisons: one call."""
    from voxmetrics.analysis.sbls import SBLSOptions, compare_sbls, default_attack, sbls_intervals
    from voxmetrics.metrics.uncertainty import SpeakerDraws
    from voxmetrics.report.tables import results_tables

    st = demo_report.study
    attack = default_attack(st.get("anon-mild"))
    ivs = sbls_intervals(attack, SBLSOptions(), n_boot=60, seed=st.settings.seed)
    block = demo_report.to_dict()["conditions"]["anon-mild"]["sbls"]
    assert block["intervals"] == {k: [iv.low, iv.high] for k, iv in ivs.items()}
    for key, (low, high) in block["intervals"].items():
        assert low <= block[key] <= high, key
    table = results_tables(demo_report)["sbls"].set_index("Condition")
    iv = ivs["sbls"]
    assert table.loc["anon-mild", "SBLS"] == f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
    overview = results_tables(demo_report)["overview"].set_index("Condition")
    assert overview.loc["anon-mild", "SBLS"] == table.loc["anon-mild", "SBLS"]
    page = study_report_html(demo_report)
    assert "SBLS 95% CI" in page and f"[{iv.low:.3f}, {iv.high:.3f}]" in page
    section = page.split('id="intervals"', 1)[1].split("</section>", 1)[0]
    assert "P_subgroup" in section and "SBLS" in section  # the intervals table lists SBLS too
    # the report card shows the SBLS interval beside the value
    card = demo_report.card.frame("text").set_index("Condition")
    assert card.loc["anon-mild", "SBLS"] == table.loc["anon-mild", "SBLS"]
    # the comparison against the first condition carries SBLS, paired on the study's draws
    comp = demo_report.comparisons["anon-mild vs plain"]
    speakers = sorted({str(s) for c in st.conditions for s in c.eval.trial_speakers})
    draws = SpeakerDraws.draw(speakers, n_boot=60, seed=st.settings.seed)
    lib = compare_sbls(default_attack(st.get("plain")), attack, draws)
    assert {k: comp[k].to_dict() for k in lib} == {k: c.to_dict() for k, c in lib.items()}


def test_without_bootstrap_the_sbls_block_has_no_intervals():
    sr = build_study_report(demo_study(n_speakers=6), bootstrap=0)
    block = sr.to_dict()["conditions"]["anon-mild"]["sbls"]
    assert block is not None and "intervals" not in block
    from voxmetrics.report.tables import results_tables

    assert not results_tables(sr)["sbls"]["SBLS"].str.contains("[", regex=False).any()


# ----------------------------------------------------------------------------------------------
# The study report of the full demo: its JSON, tables, settings, evaluators and errors
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def study():
    """The full demo study."""
    return demo_study()


@pytest.fixture(scope="module")
def study_report(study):
    """Its study report, with the override bootstrap=50."""
    return build_study_report(study, bootstrap=50)


def test_study_report_json_has_every_number(study, study_report):
    d = json.loads(json.dumps(study_report.to_dict(), allow_nan=False))
    assert list(d["conditions"]) == study.names
    for r in study_report.reports:
        c = d["conditions"][r.name]
        assert c["eer"] == r.baseline.eer
        assert c["lid"]["lid_max"] == r.lid.lid_max
        assert c["lid"]["intervals"]["lid_max"] == [
            r.lid_intervals["lid_max"].low,
            r.lid_intervals["lid_max"].high,
        ]
        assert c["sbls"]["sbls"] == study_report.sbls[r.name].sbls
    assert [c["condition"] for c in d["threat_callouts"]] == ["anon-leaky"]
    # the settings used: the study's, with the override bootstrap=50
    assert d["settings"] == {
        "bootstrap": 50,
        "seed": 0,
        "cross_calibrate": None,
        "lid_variant": "reference-code",
        "ties": "reference",
        "linkability_rule": "code",
    }
    assert study.settings.bootstrap == 200
    assert set(d["report_card"]["thresholds"]) == set(REPORT_CARD_THRESHOLDS)


def test_study_report_tables(study, study_report):
    tables = study_report.tables()
    assert set(tables) == {
        "overview.csv",
        "report_card.csv",
        "report_card_levels.csv",
        "callout_worst_trials.csv",
        "lid_per_trial.csv",
        "verification.csv",
        "privacy_vs_utility.csv",  # the demo has utility numbers
        "voiceprivacy_ranking.csv",
        "utility_callouts.csv",
    }
    assert tables["verification.csv"]["Condition"].tolist() == study.names
    lid = tables["lid_per_trial.csv"]
    assert len(lid) == sum(c.eval.n_trials for c in study.conditions)
    worst = tables["callout_worst_trials.csv"]
    assert set(worst["condition"]) == {"anon-leaky"}
    assert list(worst.columns[:3]) == ["condition", "trial", "speaker"]


def test_study_report_uses_the_settings_and_reports_progress(study):
    from voxmetrics.data import StudySettings

    small = dataclasses.replace(
        demo_study(n_speakers=6), settings=StudySettings(bootstrap=0, seed=1)
    )
    seen = []
    sr = build_study_report(small, progress=lambda f, m: seen.append((f, m)))
    assert all(r.lid_intervals is None for r in sr.reports)
    assert seen[0] == (0.0, "Evaluating plain") and seen[-1] == (1.0, "Done")
    with_boot = build_study_report(small, bootstrap=20)
    assert all(r.lid_intervals is not None for r in with_boot.reports)


def test_study_report_through_given_evaluators_is_the_same_report():
    # the dashboard builds the report through its caches: same numbers, each condition
    # evaluated once with the study's options and each attacker trained once
    from voxmetrics.analysis.sbls import default_attack
    from voxmetrics.data import StudySettings

    small = dataclasses.replace(
        demo_study(n_speakers=6), settings=StudySettings(bootstrap=20, seed=2)
    )
    calls: list[tuple[str, dict]] = []
    attacked: list[str] = []

    def evaluator(cond, **options):
        calls.append((cond.name, options))
        return evaluate_condition(cond, **options)

    def attack_of(cond):
        attacked.append(cond.name)
        return default_attack(cond)

    direct = build_study_report(small)
    hooked = build_study_report(small, evaluator=evaluator, attack_of=attack_of)
    assert [name for name, _ in calls] == attacked == small.names
    assert all(options == small.settings.evaluate_options() for _, options in calls)
    a, b = direct.to_dict(), hooked.to_dict()
    a.pop("created"), b.pop("created")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert any(v is not None for v in hooked.sbls.values())
    # no attack: no SBLS, and the card says so
    none = build_study_report(small, attack_of=lambda cond: None)
    assert all(v is None for v in none.sbls.values()) and not none.sbls_intervals


def test_empty_study_report_is_a_clear_error():
    from voxmetrics.data import Study

    with pytest.raises(VoxMetricsInputError, match="no conditions"):
        build_study_report(Study())


# ----------------------------------------------------------------------------------------------
# The comparisons against a chosen reference condition
# ----------------------------------------------------------------------------------------------


def test_the_report_compares_against_a_chosen_reference(study):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, bootstrap=20, reference="random")
    assert sr.reference == "random"
    assert set(sr.comparisons) == {f"{n} vs random" for n in study.names if n != "random"}
    assert sr.to_dict()["comparison_reference"] == "random"
    with pytest.raises(VoxMetricsInputError, match="reference 'nope'"):
        build_study_report(study, bootstrap=0, reference="nope")
