"""The Overview page through the entrypoint (AppTest, style.md 17): the metric table, the report
card, its intervals, the compare panel and the call-outs on a study of two systems."""

from __future__ import annotations

import re

import pytest
from app_cases import APP, open_app, open_page, table_with, text_of
from streamlit.testing.v1 import AppTest
from verdict_cases import two_system_study

from voxmetrics.analysis.ranking import report_callouts
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.evaluation import condition_sbls, evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.plots.style import LEVEL_COLOURS
from voxmetrics.report import evaluate_condition
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY

OVERVIEW = "pages/1_Overview.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
CARD_COLUMNS = [
    "Condition",
    "EER",
    "LIDmax (bits)",
    "ZEBRA tag",
    "Linkability vs chance",
    "SBLS",
    "WER",
    "UAR",
]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _overview(study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    if study is not None:
        at.session_state[STUDY_KEY] = study
    at.switch_page(OVERVIEW).run()
    assert not at.exception, at.exception
    return at


def _cell_levels(at: AppTest) -> dict[tuple[int, int], str]:
    """The level of each styled cell (row, column), read back from its background colour."""
    styles = at.dataframe[0].proto.arrow_data.styler.styles
    by_colour = {colour.upper(): level for level, colour in LEVEL_COLOURS.items()}
    levels = {}
    for selectors, colour in re.findall(
        r"([^{}]+)\{\s*background-color:\s*(#[0-9A-Fa-f]{6})", styles
    ):
        for row, col in re.findall(r"row(\d+)_col(\d+)", selectors):
            levels[int(row), int(col)] = by_colour[colour.upper()]
    return levels


def test_the_card_comes_first_with_one_row_per_condition():
    at = _overview()
    card = at.dataframe[0].value
    assert list(card.columns) == CARD_COLUMNS
    assert list(card["Condition"]) == DEMO_NAMES
    # the metric table follows it
    assert {"EER", "Linkability", "Cllr"} <= set(at.dataframe[1].value.columns)
    markdown = text_of(at.markdown)
    assert markdown.index("### Report card") < markdown.index("### Metrics")
    # the legend and the documented thresholds
    assert "caution" in markdown and "not available" in markdown
    assert "ok >= 0.45, caution 0.30-0.45, risk < 0.30" in markdown
    assert "Why these values" in markdown
    captions = text_of(at.caption)
    assert "200 replicates" in captions and "informed attacker" in captions
    keys = [b.key for b in at.main.get("download_button")]
    assert "vm_dl_report_card.csv" in keys and "vm_dl_report_card.html" in keys
    assert not at.error


def test_lidmax_has_its_interval_and_the_card_levels_are_the_librarys():
    at = _overview()
    card = at.dataframe[0].value
    leaky = card.set_index("Condition").loc["anon-leaky"]
    # a maximum has no sound percentile interval: its 0.95 quantile carries one
    assert re.fullmatch(r"\d\.\d\d \(q95 \d\.\d\d \[\d\.\d\d, \d\.\d\d\]\)", leaky["LIDmax (bits)"])
    levels = _cell_levels(at)
    assert levels[DEMO_NAMES.index("anon-leaky"), CARD_COLUMNS.index("LIDmax (bits)")] == "risk"
    # every coloured cell is the library's level (n/a cells included)
    demo = demo_study()
    reports = [evaluate_condition(c, **demo.settings.evaluate_options()) for c in demo.conditions]
    sbls = {c.name: condition_sbls(c) for c in demo.conditions}
    expected = report_card(
        reports, sbls={k: (v.sbls if v is not None else None) for k, v in sbls.items()}
    )
    assert card.equals(expected.frame("text"))
    for i, row in expected.frame("level").iterrows():
        for j, level in enumerate(row.iloc[1:], start=1):
            assert levels[i, j] == level, (row["Condition"], CARD_COLUMNS[j])


def test_without_bootstrap_or_embeddings_the_card_says_so():
    demo = demo_study(n_speakers=8)
    conds = tuple(Condition(c.name, eval=c.eval, dev=c.dev) for c in demo.conditions[:2])
    at = _overview(Study(conds, settings=StudySettings(bootstrap=0)))
    card = at.dataframe[0].value
    assert list(card["SBLS"]) == ["–", "–"]
    assert "[" not in card["LIDmax (bits)"].iloc[0]
    assert "bootstrap off" in text_of(at.caption)


def test_intervals_and_the_compare_panel_are_the_librarys():
    from voxmetrics.report import compare_conditions

    at = _overview()
    tables = [d.value for d in at.dataframe]
    iv = next(t for t in tables if "Excess over chance" in t.columns)
    assert set(iv["Condition"]) == set(DEMO_NAMES)
    cmp_ = next(t for t in tables if "p (Holm)" in t.columns).set_index("Number")
    demo = demo_study()
    lib = compare_conditions(
        demo.get(DEMO_NAMES[0]),
        demo.get(DEMO_NAMES[1]),
        n_boot=max(200, demo.settings.bootstrap),
        seed=demo.settings.seed,
        original=demo.get(DEMO_NAMES[0]),  # the study's first condition, as in the report
    )
    assert cmp_.loc["Linkability", "B − A"] == lib["linkability"].difference
    assert cmp_.loc["Linkability", "p (Holm)"] == lib["linkability"].p_adjusted
    for number, key in (("Singling out", "singling_out"), ("DeID", "deid"), ("G_VD (dB)", "g_vd")):
        assert cmp_.loc[number, "B − A"] == pytest.approx(lib[key].difference)
        assert cmp_.loc[number, "p (Holm)"] == lib[key].p_adjusted


def test_the_compare_panel_follows_the_studys_linkability_rule():
    import dataclasses

    from condition_cases import tied as rounded

    from voxmetrics.report import compare_conditions

    demo = demo_study()
    tied = [rounded(c, 1, keep_dev=True) for c in demo.conditions]  # ties: the two rules differ
    settings = dataclasses.replace(demo.settings, linkability_rule="strict", bootstrap=50)
    at = _overview(dataclasses.replace(demo, conditions=tied, settings=settings))
    cmp_ = next(t for t in (d.value for d in at.dataframe) if "p (Holm)" in t.columns)
    cmp_ = cmp_.set_index("Number")
    options = {"n_boot": 200, "seed": demo.settings.seed, "original": tied[0]}
    strict = compare_conditions(tied[0], tied[1], linkability_rule="strict", **options)
    code = compare_conditions(tied[0], tied[1], linkability_rule="code", **options)
    assert strict["linkability"].difference != code["linkability"].difference
    assert cmp_.loc["Linkability", "B − A"] == strict["linkability"].difference


def _app() -> AppTest:
    return open_app(timeout=30)


def _page(path: str) -> AppTest:
    return open_page(path, timeout=30)


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def test_overview_lists_every_condition():
    at = _page(OVERVIEW)
    df = at.dataframe[1].value  # [0] is the report card (tests above)
    assert len(df) == 5
    assert list(df["Condition"]) == DEMO_NAMES
    assert {"EER", "Linkability", "Chance (1/N)", "Cllr"} <= set(df.columns)
    assert df["EER"].between(0, 1).all()
    assert [s.value for s in at.subheader] == ["EER vs linkability"]
    captions = text_of(at.caption)
    assert "log-likelihood ratios" in captions
    assert "high EER can coexist with high linkage" in captions
    assert not at.error


def test_empty_study_is_explained_and_the_demo_restores_it():
    at = _app()
    at.session_state[STUDY_KEY] = Study()
    at.switch_page(OVERVIEW).run()
    assert not at.exception
    assert not at.dataframe
    assert "no conditions yet" in at.info[0].value
    at.button(key="vm_sidebar_demo").click().run()
    assert not at.exception
    assert _study(at).names == DEMO_NAMES
    assert len(at.dataframe[0].value) == 5


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_the_card_says_why_and_how_firm_and_the_numbers_their_reference():
    at = open_page("pages/1_Overview.py", two_system_study(), timeout=180)
    assert not at.error
    markdown = text_of(at.markdown)
    assert "LIDmax (bits): ≈ chance" in markdown  # the rule's notes below the card
    stability = at.table[0].value
    assert "EER" in stability.columns and len(stability) == 7
    intervals = table_with(at, "Unit and reference")
    alid = intervals[intervals["Number"] == "ALID (bits)"]
    assert alid["Unit and reference"].str.contains("at most log2 N = 3.32").all()
    assert "⇅" in text_of(at.caption)


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
@pytest.mark.parametrize("which", ["two systems", "demo"])
def test_the_call_outs_say_what_the_card_says(which):
    from voxmetrics.evaluation.threat import threat_callouts
    from voxmetrics.synth import demo_study

    study = two_system_study() if which == "two systems" else demo_study()
    reports = evaluate_study(study, bootstrap=50)
    levels = report_card(reports).frame("level").set_index("Condition")
    reference = "original" if which == "two systems" else "plain"
    called = [*report_callouts(reports, reference=reference), *threat_callouts(study, reports)]
    for c in called:
        row = levels.loc[c.condition]
        cited_lid = any("LIDmax" in reason for reason in c.reasons)
        cited_link = any(("linkability" in r or "linked" in r) for r in c.reasons)
        assert not cited_lid or row["LIDmax (bits)"] == "risk"
        assert not cited_link or row["Linkability vs chance"] == "risk"
    if which == "demo":  # the leaky system: called out, and its card says risk
        assert "anon-leaky" in {c.condition for c in called}
