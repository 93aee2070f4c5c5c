"""The verdicts' sections through the app's entrypoint (AppTest): fronts, stability, exposure.

A VoicePrivacy-shaped study of two systems under three attackers (``verdict_cases.py``): the
Privacy vs utility page draws one attacker's front at a time and says how firm the ranking is,
the Overview's card says why its cells read as they do and how firm each level is, the Threat
model page lists who stays exposed, and the call-outs say what the card says.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from verdict_cases import two_system_study

from voxmetrics.analysis.ranking import report_callouts
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.utility_page import FRONT_KEY

APP = "../app.py"  # resolved relative to this file

pytestmark = [
    pytest.mark.usefixtures("fresh_app_caches"),
    pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning"),
]


def _page(path: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.session_state[STUDY_KEY] = two_system_study()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


def _text(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def _table(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_one_front_per_attacker_and_how_firm_the_ranking_is():
    at = _page("pages/12_Privacy_vs_utility.py")
    assert not at.error, [e.value for e in at.error]
    assert [s.value for s in at.subheader] == [
        "Privacy against utility",
        "VoicePrivacy ranking",
        "Ranked as private, still leaking",
    ]
    picker = at.radio(key=FRONT_KEY)
    assert picker.value == "semi-informed"  # the ranking's attacker first
    assert list(picker.options) == ["ignorant", "lazy-informed", "semi-informed"]
    captions = _text(at.caption)
    assert "The **semi-informed** attacker's conditions" in captions
    points = at.dataframe[0].value.set_index("Condition")
    # each attacker's conditions against their own front: both systems under every attacker
    assert points["On the Pareto front"].sum() == 6
    assert not points.loc["original", "On the Pareto front"]
    stability = _table(at, "P(in band)")
    assert set(stability["System"]) == {"alpha (semi-informed)", "beta (semi-informed)"}
    assert stability["P(in band)"].between(0, 1).all()
    lows = stability["Rank 95% interval"].str.split("–").str[0].astype(int)
    assert (lows <= stability["Rank"]).all()
    bands = _table(at, "P(EER >= 40%)")
    assert list(bands["System"]) == ["alpha (semi-informed)", "beta (semi-informed)"]
    assert "Maier-Hein et al. 2018" in captions and "Kendall" in captions
    assert "taken as fixed" in captions  # beta's utility is known only as a number
    picker.set_value("ignorant").run()
    assert not at.exception
    assert "The **ignorant** attacker's conditions" in _text(at.caption)


def test_the_card_says_why_and_how_firm_and_the_numbers_their_reference():
    at = _page("pages/1_Overview.py")
    assert not at.error
    markdown = _text(at.markdown)
    assert "LIDmax (bits): ≈ chance" in markdown  # the rule's notes below the card
    stability = at.table[0].value
    assert "EER" in stability.columns and len(stability) == 7
    intervals = _table(at, "Unit and reference")
    alid = intervals[intervals["Number"] == "ALID (bits)"]
    assert alid["Unit and reference"].str.contains("at most log2 N = 3.32").all()
    assert "⇅" in _text(at.caption)


def test_who_stays_exposed_and_the_verdicts_checked():
    at = _page("pages/9_Threat_model.py")
    assert not at.error
    assert "#### Who stays exposed" in _text(at.markdown)
    exposed = _table(at, "Exposed under")
    assert exposed["Exposed under"].is_monotonic_decreasing
    assert "original: rank-1 rate" not in exposed.columns  # the original speech left out
    assert {"Sex", "Age group"} <= set(exposed.columns)
    checked = _table(at, "Called out")
    assert {"LIDmax verdict", "Linkability verdict"} <= set(checked.columns)


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
