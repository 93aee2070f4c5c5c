"""Intervals, chance levels and paired comparisons in the JSON, the card and the report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import evaluate, evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.report.frames import intervals_frame
from voxmetrics.report.html import study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _random_condition(rng, name, n_spk=30, per=2, n=90) -> Condition:
    spk = [f"s{i}" for i in range(n_spk) for _ in range(per)]
    enrol = [f"s{i}" for i in range(n)]
    sm = ScoreMatrix.from_arrays(
        rng.normal(size=(len(spk), n)),
        trial_ids=[f"{name}-t{i}" for i in range(len(spk))],
        trial_speakers=spk,
        enrol_speakers=enrol,
    )
    return Condition(name=name, eval=sm)


@pytest.fixture(scope="module")
def demo_report():
    return build_study_report(demo_study(n_speakers=12), bootstrap=60)


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


def test_independent_random_conditions_are_at_chance_and_the_card_is_green():
    """Random scores: MeanD is biased upward (few trials against N), chance says by how much."""
    rng = np.random.default_rng(7)
    conds = [_random_condition(rng, f"r{k}") for k in range(3)]
    reports = evaluate_study(Study(name="null", conditions=tuple(conds)), bootstrap=200)
    for r in reports:
        assert r.srd.stats.mean_d > 0.5  # 60 trials against 90 identities: biased upward
        excess = r.srd.stats.mean_d - r.chance.values["mean_d"]
        assert abs(excess) < 0.15
        iv = r.intervals["linkability"]
        assert iv.low <= r.chance.values["linkability"] <= iv.high
    levels = report_card(reports).frame("level")
    assert set(levels["Linkability vs chance"]) == {"ok"}
    assert set(levels["EER"]) == {"ok"}


def test_intervals_frame_lists_values_intervals_and_excess(demo_report):
    df = intervals_frame(demo_report.reports)
    row = df[(df["condition"] == "random") & (df["key"] == "mean_d")].iloc[0]
    r = next(r for r in demo_report.reports if r.name == "random")
    assert row["value"] == r.srd.stats.mean_d
    assert row["excess"] == pytest.approx(r.srd.stats.mean_d - r.chance.values["mean_d"])
    assert df[df["key"] == "lid_max"]["low"].isna().all()


def test_labelled_tables_keep_every_value_under_its_label(demo_report):
    from voxmetrics.report.frames import (
        COMPARISON_COLUMNS,
        INTERVALS_COLUMNS,
        comparison_frame,
        labelled,
    )

    raw = intervals_frame(demo_report.reports)
    shown = labelled(raw, INTERVALS_COLUMNS)
    assert list(shown.columns) == [
        "Condition", "Number", "Value", "95% low", "95% high", "Chance", "Excess over chance"
    ]  # fmt: skip
    pd.testing.assert_frame_equal(
        shown, raw.drop(columns="key").set_axis(list(shown.columns), axis=1)
    )
    comparison = next(iter(demo_report.comparisons.values()))
    raw = comparison_frame(comparison)
    shown = labelled(raw, COMPARISON_COLUMNS)
    assert list(shown.columns) == [
        "Number",
        "A",
        "B",
        "B − A",
        "95% low",
        "95% high",
        "p",
        "p (Holm)",
        "p (resampled, ≥ 1/(B+1))",
        "Not compared because",
    ]
    pd.testing.assert_frame_equal(
        shown, raw.drop(columns=["key", "p_floor"]).set_axis(list(shown.columns), axis=1)
    )


def test_report_page_has_the_interval_and_comparison_sections(demo_report):
    page = study_report_html(demo_report)
    assert 'id="intervals"' in page and 'id="compare"' in page
    assert "random vs plain" in page and "p (Holm)" in page


def test_condition_without_bootstrap_has_chance_but_no_intervals():
    rng = np.random.default_rng(1)
    r = evaluate(_random_condition(rng, "x").eval).to_dict()
    assert r["intervals"] is None and r["srd"].get("intervals") is None
    assert r["chance"]["linkability"] == pytest.approx(1 / 90)


def test_study_comparisons_equal_compare_conditions(demo_report):
    """The report reuses each condition's replicates; the result is compare_conditions'."""
    from voxmetrics.evaluation import compare_conditions

    st = demo_study(n_speakers=12)
    lib = compare_conditions(
        st.get("plain"), st.get("anon-mild"), n_boot=60, original=st.get("plain")
    )
    got = demo_report.comparisons["anon-mild vs plain"]
    assert {k: c.to_dict() for k, c in got.items()} == {k: c.to_dict() for k, c in lib.items()}


def test_singling_out_interval_is_the_weighted_mean_of_predicate_rates(demo_report):
    from voxmetrics.metrics.embedding_intervals import singling_out_interval
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    r = next(r for r in demo_report.reports if r.name == "anon-mild")
    so = r.singling_out
    assert so.per_predicate.mean() == pytest.approx(so.value)
    iv = singling_out_interval(so, n_boot=40, seed=2)
    d = SpeakerDraws.draw(so.predicates, n_boot=40, seed=2)
    w = d.counts[:, d.index(so.predicates)]
    reps = (w * so.per_predicate).sum(1) / w.sum(1)
    np.testing.assert_allclose([iv.low, iv.high], np.quantile(reps, [0.025, 0.975]))
    c = demo_report.to_dict()["conditions"]["anon-mild"]
    assert c["intervals"]["singling_out"] == [
        r.singling_out_interval.low,
        r.singling_out_interval.high,
    ]
    row = intervals_frame([r]).set_index("key").loc["singling_out"]
    assert row["chance"] == so.chance


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


def test_compare_conditions_sbls_draws_its_own_speakers_when_needed():
    """Draws over other speakers than the attacked ones: both attacks share new draws."""
    import numpy as np

    from voxmetrics.analysis.sbls import compare_sbls, default_attack
    from voxmetrics.evaluation import compare_conditions_sbls
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    st = demo_study(n_speakers=8)
    a, b = default_attack(st.get("plain")), default_attack(st.get("anon-mild"))
    other = SpeakerDraws.draw(["nobody"], n_boot=30, seed=4)
    got = compare_conditions_sbls(st.get("plain"), st.get("anon-mild"), other)
    union = sorted(set(np.r_[a.speakers, b.speakers].tolist()))
    want = compare_sbls(a, b, SpeakerDraws.draw(union, n_boot=30, seed=4))
    assert {k: c.to_dict() for k, c in got.items()} == {k: c.to_dict() for k, c in want.items()}
    bare = Condition("bare", eval=st.get("plain").eval)
    assert compare_conditions_sbls(bare, st.get("anon-mild"), other) == {}


@pytest.mark.parametrize("variant", ["maximum-likelihood", "reference-code"])
def test_compare_conditions_calibrates_lid_with_the_chosen_variant(variant):
    """The paired comparison's LID numbers are those of the conditions' own reports."""
    from voxmetrics.evaluation import compare_conditions, evaluate_condition

    study = demo_study(n_speakers=8)
    a, b = study.get("plain"), study.get("anon-mild")
    out = compare_conditions(a, b, n_boot=20, lid_variant=variant, sbls=False)
    for cond, side in ((a, "a"), (b, "b")):
        lid = evaluate_condition(cond, lid_variant=variant).lid
        assert getattr(out["alid"], side) == pytest.approx(lid.alid, abs=1e-12)
        assert getattr(out["lid_max"], side) == pytest.approx(lid.lid_max, abs=1e-12)
