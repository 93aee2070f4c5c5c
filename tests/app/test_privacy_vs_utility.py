"""The Privacy vs utility page through the app's entrypoint with Streamlit's AppTest."""

from __future__ import annotations

import dataclasses

import pytest
from app_cases import open_page, table_with, text_of
from streamlit.testing.v1 import AppTest
from verdict_cases import two_system_study

from voxmetrics.analysis.tradeoff import NO_UTILITY_HELP
from voxmetrics.data.study import Study
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import MENU
from voxmetrics.ui.utility_page import FRONT_KEY

PAGE = "pages/12_Privacy_vs_utility.py"

pytestmark = [
    pytest.mark.usefixtures("fresh_app_caches"),
    pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning"),
]


def _page(study: Study | None = None, **state) -> AppTest:
    return open_page(PAGE, study, timeout=120, state=state)


def test_the_page_is_in_the_menu():
    assert PAGE in [m.path for m in MENU]


def test_page_runs_on_the_demo_front_ranking_callout():
    at = _page()
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Privacy vs utility"
    assert [s.value for s in at.subheader] == [
        "Privacy against utility",
        "VoicePrivacy ranking",
        "Ranked as private, still leaking",
    ]
    points = at.dataframe[0].value.set_index("Condition")
    assert points.loc["random", "WER"] == pytest.approx(0.85)
    assert bool(points.loc["plain", "Original speech"])  # the demo's first condition
    assert not bool(points.loc["plain", "On the Pareto front"])
    assert bool(points.loc["random", "On the Pareto front"])
    ranking = at.dataframe[1].value
    assert list(ranking.columns) == ["EER band", "Rank", "System", "EER", "WER", "UAR"]
    top40 = ranking[ranking["EER band"] == "EER >= 40%"]
    assert top40["System"].tolist()[-1] == "random"  # private, but last on WER
    assert "plain" not in ranking["System"].tolist()
    # the auditors' call-out: a warning naming the systems, and its table
    assert any("still leaking" in w.value and "leaky" in w.value for w in at.warning)
    called = at.dataframe[-1].value
    assert "Why" in called.columns and "anon-leaky" in called["System"].tolist()
    assert "random" not in called["System"].tolist()


def test_metric_pickers_change_the_table():
    at = _page(vm_utility_privacy="lid_max", vm_utility_utility="uar")
    assert not at.error
    points = at.dataframe[0].value
    assert "LIDmax (bits)" in points.columns and "UAR" in points.columns
    assert points.set_index("Condition").loc["random", "UAR"] == pytest.approx(0.25)


def test_no_utility_says_how_to_add_it():
    s = demo_study()
    bare = Study(
        conditions=tuple(dataclasses.replace(c, utility=None) for c in s.conditions), name="bare"
    )
    at = _page(bare)
    assert not at.error
    assert any(NO_UTILITY_HELP[:40] in i.value for i in at.info)
    assert not at.subheader


def test_one_front_per_attacker_and_how_firm_the_ranking_is():
    at = open_page("pages/12_Privacy_vs_utility.py", two_system_study(), timeout=180)
    assert not at.error, [e.value for e in at.error]
    assert [s.value for s in at.subheader] == [
        "Privacy against utility",
        "VoicePrivacy ranking",
        "Ranked as private, still leaking",
    ]
    picker = at.radio(key=FRONT_KEY)
    assert picker.value == "semi-informed"  # the ranking's attacker first
    assert list(picker.options) == ["ignorant", "lazy-informed", "semi-informed"]
    captions = text_of(at.caption)
    assert "The **semi-informed** attacker's conditions" in captions
    points = at.dataframe[0].value.set_index("Condition")
    # each attacker's conditions against their own front: both systems under every attacker
    assert points["On the Pareto front"].sum() == 6
    assert not points.loc["original", "On the Pareto front"]
    stability = table_with(at, "P(in band)")
    assert set(stability["System"]) == {"alpha (semi-informed)", "beta (semi-informed)"}
    assert stability["P(in band)"].between(0, 1).all()
    lows = stability["Rank 95% interval"].str.split("–").str[0].astype(int)
    assert (lows <= stability["Rank"]).all()
    bands = table_with(at, "P(EER >= 40%)")
    assert list(bands["System"]) == ["alpha (semi-informed)", "beta (semi-informed)"]
    assert "Maier-Hein et al. 2018" in captions and "Kendall" in captions
    assert "taken as fixed" in captions  # beta's utility is known only as a number
    picker.set_value("ignorant").run()
    assert not at.exception
    assert "The **ignorant** attacker's conditions" in text_of(at.caption)
