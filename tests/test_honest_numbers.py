"""Honest numbers on real-shaped data (issue #27): safe LID defaults and clamped displays.

The data mimic original speech scored by a speaker encoder: the dev mated and non-mated pools
separate (every mated score above every non-mated one), where the unpenalised
maximum-likelihood calibration hits its cap and its LIDs go to thousands of bits below zero.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from voxmetrics._types import DEFAULT_BOOTSTRAP, DEFAULT_LID_VARIANT, LID_DISPLAY_FLOOR
from voxmetrics.analysis.lid import LIDRow, chance_frame, lid_table
from voxmetrics.data import ScoreMatrix
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.evaluation import compare_conditions, evaluate
from voxmetrics.evaluation.card import report_card
from voxmetrics.metrics.lid import calibrate_lid
from voxmetrics.metrics.paired import paired_p_values
from voxmetrics.plots.lid import lid_ccdf_figure, lid_histogram_figure
from voxmetrics.report.frames import intervals_frame, overview_frame
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

BITS = ("alid", "lid_plus", "lid_minus", "lid_max", "lid_q95")


def separable(n_speakers: int, per_speaker: int, seed: int, prefix: str, gap: float):
    """Cosine-like scores whose mated scores sit ``gap`` above the non-mated ones."""
    rng = np.random.default_rng(seed)
    speakers = [f"{prefix}{k}" for k in range(n_speakers)]
    targets = np.repeat(np.arange(n_speakers), per_speaker)
    scores = rng.normal(0.1, 0.05, (targets.size, n_speakers))
    scores[np.arange(targets.size), targets] = rng.normal(0.1 + gap, 0.05, targets.size)
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"{prefix}t{i}" for i in range(targets.size)],
        trial_speakers=np.repeat(speakers, per_speaker),
        enrol_speakers=speakers,
    )


DEV = separable(8, 4, 0, "d", gap=0.5)  # separable: max-likelihood w is infinite
EVAL = separable(5, 4, 1, "e", gap=0.2)  # N = 5, as the original condition


def quiet_evaluate(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate(EVAL, dev=DEV, name="original", bootstrap=30, **options)


def in_range(x: float | None, n: int) -> bool:
    return x is None or LID_DISPLAY_FLOOR <= x <= math.log2(n) + 1e-9


def test_dev_pools_really_separate():
    tar = DEV.scores[np.arange(DEV.scores.shape[0]), DEV.targets]
    non = DEV.scores.copy()
    non[np.arange(DEV.scores.shape[0]), DEV.targets] = np.nan
    assert tar.min() > np.nanmax(non)


def test_the_default_calibration_is_the_authors_recipe():
    assert DEFAULT_LID_VARIANT == "reference-code"
    assert StudySettings().lid_variant == "reference-code"
    assert StudySettings().evaluate_options()["lid_variant"] == "reference-code"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)  # finite, no cap
        cal = calibrate_lid(DEV.scores, DEV.targets)
    assert cal.variant == "reference-code" and cal.converged and abs(cal.w) < 100


def test_defaults_give_every_lid_number_and_chance_level_within_range():
    r = quiet_evaluate()
    block = r.to_dict()["lid"]
    assert block["variant"] == "reference-code"
    n = r.lid.n_enrolled
    for key in BITS:
        if key in block:
            assert in_range(block[key], n), (key, block[key])
        assert in_range(block["chance"][key], n), (key, block["chance"][key])
        low, high = block["intervals"].get(key, [None, None])
        assert in_range(low, n) and in_range(high, n)
    assert block["beyond_display_range"] == []
    assert block["display_range"] == [-64.0, pytest.approx(math.log2(5))]


def test_maximum_likelihood_warns_names_the_condition_and_keeps_raw_json():
    with pytest.warns(DegenerateDataWarning, match="LID numbers beyond the display range"):
        r = evaluate(EVAL, dev=DEV, name="original", bootstrap=30, lid_variant="maximum-likelihood")
    block = r.to_dict()["lid"]
    # the JSON keeps the raw numbers and flags the ones displays clamp
    assert block["chance"]["alid"] < -1000
    assert "chance.alid" in block["beyond_display_range"]


def test_displays_and_exports_clamp_whatever_the_variant():
    r = quiet_evaluate(lid_variant="maximum-likelihood")
    n = r.lid.n_enrolled
    ov = overview_frame([r])
    assert in_range(ov.loc[0, "alid"], n) and in_range(ov.loc[0, "lid_max"], n)
    iv = intervals_frame([r])
    lid_rows = iv[iv["key"].isin(BITS)]
    assert not lid_rows.empty
    for column in ("value", "low", "high", "chance"):
        values = lid_rows[column].dropna()
        assert ((values >= LID_DISPLAY_FLOOR) & (values <= math.log2(n) + 1e-9)).all(), column
    table = lid_table({"original": r.lid})
    for column in ("ALID (bits)", "LID+ (bits)", "LID− (bits)", "LIDmax (bits)"):
        value = table.loc[0, column]
        assert math.isnan(value) or in_range(value, n), column
    condition = Condition("original", eval=EVAL, dev=DEV)
    row = LIDRow(condition=condition, report=None, lid=r.lid)
    chance = chance_frame([row], {"original": r.chance})
    bits = chance[chance["Number"].str.endswith("(bits)")]
    assert (bits["Chance"] >= LID_DISPLAY_FLOOR).all()


def test_lid_figures_do_not_stretch_to_absurd_values():
    # a trial with an absurd LID (as the capped fit gives) next to an ordinary condition
    r = quiet_evaluate(lid_variant="maximum-likelihood")
    lid = r.lid.lid.copy()
    lid[0] = -7525.0
    steep = replace(r.lid, lid=lid)
    fig = lid_ccdf_figure({"steep": steep, "plain": quiet_evaluate().lid})
    assert min(min(t.x) for t in fig.data) >= LID_DISPLAY_FLOOR
    hist = lid_histogram_figure({"steep": steep})
    assert min(hist.data[0].customdata[:, 0]) >= LID_DISPLAY_FLOOR


def test_a_study_uses_the_default_variant():
    study = Study([Condition("original", eval=EVAL, dev=DEV, attacker="original")])
    assert study.settings.lid_variant == "reference-code"


# ------------------------------------------------------------------ the report card (item 2)


def original_report(chance_q95: float | None = None):
    """The unprotected original at N = 5 (EER 0, linkability 1), its chance LID q95 set."""
    r = evaluate_original()
    if chance_q95 is None:
        return r
    values = {**r.chance.values, "lid_q95": chance_q95}
    return replace(r, chance=replace(r.chance, values=values))


@functools.cache
def evaluate_original():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return evaluate(EVAL, dev=DEV, name="original", attacker="original", bootstrap=200)


def test_the_original_is_unprotected():
    r = evaluate_original()
    assert r.baseline.eer == 0.0 and r.baseline.linkability == 1.0 and r.lid.n_enrolled == 5


@pytest.mark.parametrize("chance", [math.log2(5), math.log2(5) - 1e-6, 2.3185])
def test_no_ok_cell_for_an_unprotected_condition_whose_chance_sits_at_the_ceiling(chance):
    # with N = 5 and a steep calibration, chance LIDmax (its q95) reaches log2 N: the number
    # cannot tell this condition from chance, which says nothing about safety
    r = original_report(chance)
    card = report_card([r])
    levels = card.frame("level").loc[0].tolist()[1:]
    assert "ok" not in levels, levels
    lid_cell = card.cells[0][card.keys.index("lid_max")]
    assert lid_cell.level == "uninformative"
    assert "uninformative at N = 5" in lid_cell.text


def test_at_chance_is_uninformative_when_chance_is_in_the_risk_band():
    # not at the ceiling, but chance itself is above 1 bit: "≈ chance" is no evidence of safety
    iv = evaluate_original().intervals["lid_q95"]
    r = original_report(iv.low + 1e-9)
    assert iv.low + 1e-9 < math.log2(5) - 1e-3
    cell = report_card([r]).cells[0][1]
    assert cell.level == "uninformative" and "≈ chance" in cell.text


# ------------------------------------------------------------------ comparisons (item 3)


@functools.cache
def demo():
    return demo_study()


def test_plain_and_random_differ_after_holm_at_the_default_replicates():
    # EER 0.009 vs 0.485: the floored resampling p (>= 1/201) made every row "not significant"
    study = demo()
    n_boot = StudySettings().bootstrap
    assert n_boot == DEFAULT_BOOTSTRAP == 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compare_conditions(
            study.get("plain"), study.get("random"), n_boot=n_boot, original=study.conditions[0]
        )
    eer = out["eer"]
    assert eer.a < 0.02 and eer.b > 0.45
    for key in ("eer", "linkability", "alid", "min_cllr", "d_ece"):
        assert out[key].p_adjusted < 0.05, key
    # the resampling p beside it is floored, and says so
    assert eer.p_resampled >= eer.p_floor == pytest.approx(1 / (n_boot + 1))
    assert eer.to_dict()["p_floor"] == eer.p_floor


def test_paired_p_values_are_the_normal_approximation_of_the_bootstrap():
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 0.1, 200)  # z about 5
    p, p_res, floor = paired_p_values(d, 0.5)
    assert p == pytest.approx(math.erfc(0.5 / np.std(d, ddof=1) / math.sqrt(2)))
    assert p < 1e-4 and p_res == floor == 1 / 201  # below the floor of the resampling p
    # no difference: nothing to reject, at any resolution
    p0, p0_res, _ = paired_p_values(rng.normal(0.0, 0.1, 200), 0.0)
    assert p0 == 1.0 and p0_res == 1.0
    # a difference small against its spread: a large p
    assert paired_p_values(rng.normal(0.02, 0.1, 200), 0.02)[0] > 0.5


def test_the_report_compares_against_a_chosen_reference():
    study = demo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, bootstrap=20, reference="random")
    assert sr.reference == "random"
    assert set(sr.comparisons) == {f"{n} vs random" for n in study.names if n != "random"}
    assert sr.to_dict()["comparison_reference"] == "random"
    with pytest.raises(VoxMetricsInputError, match="reference 'nope'"):
        build_study_report(study, bootstrap=0, reference="nope")


def test_report_files_show_lid_within_range_for_the_capped_fit():
    # the study report's tables (HTML, PDF, LaTeX, Markdown, CSV) of the capped fit
    import re

    from voxmetrics.analysis.lid import lid_trials
    from voxmetrics.report.html import study_report_html
    from voxmetrics.report.tables import results_tables

    study = Study([Condition("original", eval=EVAL, dev=DEV, attacker="original")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, bootstrap=30, lid_variant="maximum-likelihood")
    r = sr.reports[0]
    assert r.chance.values["alid"] < -1000  # raw: absurd
    numbers = [
        float(x)
        for table in results_tables(sr).values()
        for cell in table.astype(str).to_numpy().ravel()
        for x in re.findall(r"-?\d+\.\d+", cell)
    ]
    assert min(numbers) >= LID_DISPLAY_FLOOR
    assert sr.intervals()["chance"].min() >= LID_DISPLAY_FLOOR
    assert lid_trials(EVAL, r.lid)["lid_bits"].min() >= LID_DISPLAY_FLOOR
    # the page's tables too (its embedded JSON keeps the raw numbers, flagged)
    page = study_report_html(sr).split('id="voxmetrics-data"')[0]
    cells = re.findall(r"<td[^>]*>(-?\d+\.\d+)", page)
    assert cells and min(float(c) for c in cells) >= LID_DISPLAY_FLOOR
