"""The ZEBRA page through the app's entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import pytest
from app_cases import APP, open_page, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.analysis.zebra import worst_trial
from voxmetrics.data.study import Study
from voxmetrics.metrics.zebra import pav_transform, zebra
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY

ZEBRA = "pages/5_ZEBRA.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
INTERVAL_COLUMNS = [
    "D_ECE 95% low",
    "D_ECE 95% high",
    "|log10 LR| q95",
    "|log10 LR| q95 95% low",
    "|log10 LR| q95 95% high",
]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _page(*, boot: int | None = None) -> AppTest:
    # the replicates set before the first run of the page, which would bootstrap
    return open_page(ZEBRA, timeout=90, state=None if boot is None else {"vm_zebra_boot": boot})


def test_page_runs_on_the_demo_with_intervals():
    at = _page()
    assert not at.error
    assert at.title[0].value.startswith("ZEBRA")
    assert [s.value for s in at.subheader] == [
        "ECE profiles",
        "Expected and worst-case disclosure",
        "PAV calibration of one condition",
        "The worst case",
    ]
    assert at.multiselect(key="vm_zebra_conditions").value == DEMO_NAMES
    assert at.number_input(key="vm_zebra_boot").value == 200
    intro = text_of(at.markdown)
    assert "0.721" in intro and "zero evidence" in intro and "log10 l" in intro

    df = at.dataframe[0].value
    assert sorted(df["Condition"]) == sorted(DEMO_NAMES)
    assert list(df["D_ECE (bits)"]) == sorted(df["D_ECE (bits)"], reverse=True)
    study = demo_study()
    for _, row in df.iterrows():
        r = zebra(study.get(row["Condition"]).eval.tar, study.get(row["Condition"]).eval.non)
        assert row["Tag"] == r.tag and row["D_ECE (bits)"] == pytest.approx(r.d_ece)
        assert row["log10 l"] == pytest.approx(r.log10_l)
        assert row["Posterior odds (flat prior)"] == r.odds
        assert row["D_ECE 95% low"] <= row["D_ECE 95% high"]
        assert row["|log10 LR| q95 95% low"] <= row["|log10 LR| q95 95% high"]
        assert row["|log10 LR| q95"] <= row["log10 l"]
    assert "200 speaker-level bootstrap replicates" in text_of(at.caption)


def test_worst_case_names_the_trial():
    at = _page(boot=0)
    chosen = at.selectbox(key="vm_zebra_chosen")
    assert chosen.value in DEMO_NAMES
    sm = demo_study().get(chosen.value).eval
    r = zebra(sm.tar, sm.non)
    worst = worst_trial(sm, r, pav_transform(sm.tar, sm.non))
    text = text_of(at.markdown)
    assert f"`{worst.trial_id}`" in text
    table = at.dataframe[1].value
    assert table["Trial id"].tolist() == [worst.trial_id]
    assert table["Enrolled identity"].tolist() == [worst.enrolled]
    # another condition: the section follows the selection
    at.selectbox(key="vm_zebra_chosen").select("anon-leaky").run()
    assert not at.exception
    sm = demo_study().get("anon-leaky").eval
    r = zebra(sm.tar, sm.non)
    worst = worst_trial(sm, r, pav_transform(sm.tar, sm.non))
    assert at.dataframe[1].value["Trial id"].tolist() == [worst.trial_id]
    assert "In **anon\\-leaky**" in text_of(at.markdown)  # Markdown-escaped name


def test_llr_checkbox_adds_the_actual_curves():
    at = _page(boot=0)
    assert "Dashed: the actual ECE" not in text_of(at.caption)
    at.checkbox(key="vm_zebra_llr").check().run()
    assert not at.exception and not at.error
    assert "Dashed: the actual ECE" in text_of(at.caption)
    assert len(at.dataframe[0].value) == 5


def test_bootstrap_off_hides_the_intervals():
    at = _page(boot=0)
    df = at.dataframe[0].value
    assert not set(INTERVAL_COLUMNS) & set(df.columns)
    assert list(df.columns) == [
        "Condition",
        "EER",  # the 1-to-1 view beside the ZEBRA numbers
        "D_ECE (bits)",
        "log10 l",
        "Tag",
        "Posterior odds (flat prior)",
    ]
    assert "bootstrap replicates" not in text_of(at.caption)
    # switching it on adds them
    at.number_input(key="vm_zebra_boot").set_value(50).run()
    assert not at.exception
    assert set(INTERVAL_COLUMNS) <= set(at.dataframe[0].value.columns)


def test_selection_narrows_the_table():
    at = _page(boot=0)
    at.multiselect(key="vm_zebra_conditions").set_value(["random", "plain"]).run()
    assert not at.exception
    # sorted by D_ECE: plain (0.70 bits) discloses more than random (0.005)
    assert at.dataframe[0].value["Condition"].tolist() == ["plain", "random"]
    at.multiselect(key="vm_zebra_conditions").set_value([]).run()
    assert not at.exception
    assert "Pick at least one condition" in text_of(at.info)
    assert not at.dataframe


def test_empty_study_is_explained():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[STUDY_KEY] = Study()
    at.switch_page(ZEBRA).run()
    assert not at.exception
    assert "no conditions" in at.info[0].value
    assert not at.dataframe
