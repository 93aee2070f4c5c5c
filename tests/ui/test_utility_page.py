"""The Privacy vs utility page's widgets (voxmetrics.ui.utility_page), in one-function AppTests.

Rankings, call-outs and trade-offs are made by hand; the pickers and SBLS take the small demo
(6 and 12 speakers). The whole page through the app is tests/app/test_privacy_vs_utility.py.
"""

from __future__ import annotations

import dataclasses

import pytest
from app_cases import run_function

from voxmetrics.analysis.ranking import (
    RankedSystem,
    RankingStability,
    UtilityCallout,
    VoicePrivacyRanking,
)
from voxmetrics.analysis.sbls import attack_sbls, default_attack
from voxmetrics.analysis.tradeoff import NO_UTILITY_HELP, Tradeoff, TradeoffPoint
from voxmetrics.data.study import Study
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.synth import demo_study
from voxmetrics.ui.utility_page import FRONT_KEY, PRIVACY_KEY, UTILITY_KEY, UtilityControls

pytestmark = pytest.mark.usefixtures("fresh_app_caches")

BANDS = (0.3, 0.4)
RULE = "an EER in a band while LIDmax is at least 1 bit"


def _reports(study: Study):
    """Each condition's verification report (milliseconds on the small demo)."""
    return [evaluate_condition(c, parts={"verification"}) for c in study.conditions]


# ------------------------------------------------------------------ show_no_utility


def _no_utility_page():
    from voxmetrics.ui.utility_page import show_no_utility

    show_no_utility()


def test_no_utility_says_how_to_add_it():
    at = run_function(_no_utility_page)
    assert [i.value for i in at.info] == [NO_UTILITY_HELP]


# ------------------------------------------------------------------ utility_controls


def _controls_page(study, reports):
    import streamlit as st

    from voxmetrics.ui.utility_page import utility_controls

    st.session_state["chosen"] = utility_controls(study, reports)


@pytest.fixture(scope="module")
def study() -> Study:
    return demo_study(n_speakers=6)


def test_the_pickers_default_to_eer_wer_the_first_condition_and_semi_informed(study):
    at = run_function(_controls_page, study, _reports(study))
    assert at.session_state["chosen"] == UtilityControls(
        privacy="eer", utility="wer", reference="plain", attacker="semi-informed"
    )
    privacy = at.selectbox(key=PRIVACY_KEY)
    assert privacy.options[:3] == [
        "EER (higher is more private)",
        "EER (ROCCH) (higher is more private)",
        "LIDmax (bits) (lower)",
    ]
    assert at.selectbox(key=UTILITY_KEY).options == [
        "WER (lower is more useful)",
        "UAR (higher)",
        "ρF0 (higher)",
    ]
    assert at.selectbox(key="vm_utility_reference").options == [*study.names, "(none)"]
    assert at.selectbox(key="vm_utility_attacker").options == ["semi-informed"]


def test_the_original_attacker_is_the_reference_and_never_the_ranking_attacker(study):
    conditions = {
        "plain": "original",
        "random": "ignorant",
        "anon-mild": "lazy-informed",
        "anon-strong": "ignorant",
        "anon-leaky": "lazy-informed",
    }
    relabelled = Study(
        tuple(dataclasses.replace(study.get(n), attacker=a) for n, a in conditions.items())
    )
    at = run_function(_controls_page, relabelled, _reports(relabelled))
    chosen = at.session_state["chosen"]
    assert chosen.reference == "plain"
    # no semi-informed condition: the first attacker of the study, original left out
    assert chosen.attacker == "ignorant"
    assert at.selectbox(key="vm_utility_attacker").options == ["ignorant", "lazy-informed"]
    at.selectbox(key="vm_utility_reference").set_value("(none)").run()
    at.selectbox(key=PRIVACY_KEY).set_value("lid_max").run()
    at.selectbox(key=UTILITY_KEY).set_value("uar").run()
    assert at.session_state["chosen"] == UtilityControls(
        privacy="lid_max", utility="uar", reference=None, attacker="ignorant"
    )


def test_a_remembered_reference_the_study_lost_falls_back_to_the_default(study):
    at = run_function(
        _controls_page,
        study,
        _reports(study),
        vm_utility_reference="gone",
        vm_utility_attacker="lazy-informed",
    )
    chosen = at.session_state["chosen"]
    assert (chosen.reference, chosen.attacker) == ("plain", "semi-informed")


# ------------------------------------------------------------------ study_sbls


def _sbls_page(study, reports):
    import streamlit as st

    from voxmetrics.ui.utility_page import study_sbls

    st.session_state["sbls"] = study_sbls(study, reports)


def test_study_sbls_is_each_conditions_default_attack_sbls():
    small = demo_study(n_speakers=12)
    reports = _reports(small)[:2]
    at = run_function(_sbls_page, small, reports)
    expected = {r.name: attack_sbls(default_attack(small.get(r.name))).sbls for r in reports}
    assert at.session_state["sbls"] == pytest.approx(expected)
    assert list(at.session_state["sbls"]) == ["plain", "random"]
    assert all(0 < v < 1 for v in expected.values())


def test_study_sbls_is_none_where_no_attack_can_be_trained(study):
    at = run_function(_sbls_page, study, _reports(study)[:2])
    assert at.session_state["sbls"] == {"plain": None, "random": None}


# ------------------------------------------------------------------ front_attacker


def _front_page(tradeoff, default):
    import streamlit as st

    from voxmetrics.ui.utility_page import front_attacker

    st.session_state["shown"] = front_attacker(tradeoff, default)


def _tradeoff() -> Tradeoff:
    return Tradeoff(
        "eer",
        "wer",
        (
            TradeoffPoint("orig", "original", 0.02, 0.02, reference=True),
            TradeoffPoint("a", "ignorant", 0.45, 0.10),
            TradeoffPoint("b", "semi-informed", 0.30, 0.08),
            TradeoffPoint("c", "lazy-informed", None, 0.08),  # not drawn
        ),
    )


def test_the_front_shown_is_the_ranking_attackers_until_another_is_picked():
    at = run_function(_front_page, _tradeoff(), "semi-informed")
    radio = at.radio(key=FRONT_KEY)
    assert list(radio.options) == ["ignorant", "semi-informed"]
    assert at.session_state["shown"] == "semi-informed"
    radio.set_value("ignorant").run()
    assert at.session_state["shown"] == "ignorant"


def test_a_default_not_drawn_falls_back_to_the_first_attacker():
    at = run_function(_front_page, _tradeoff(), "lazy-informed")
    assert at.session_state["shown"] == "ignorant"


def test_no_anonymised_condition_drawn_shows_no_picker():
    only_original = Tradeoff("eer", "wer", _tradeoff().points[:1])
    at = run_function(_front_page, only_original, "semi-informed")
    assert at.session_state["shown"] is None
    assert not at.radio


# ------------------------------------------------------------------ show_ranking


def _ranking_page(ranking):
    from voxmetrics.ui.utility_page import show_ranking

    show_ranking(ranking)


def _ranking(**changes) -> VoicePrivacyRanking:
    rows = (
        RankedSystem(0.3, 1, "b", 0.35, 0.05, 0.6),
        RankedSystem(0.3, 2, "a", 0.45, 0.10, 0.5),
        RankedSystem(0.4, 1, "a", 0.45, 0.10, 0.5),
    )
    uar_rows = (
        RankedSystem(0.3, 1, "b", 0.35, 0.05, 0.6),
        RankedSystem(0.3, 2, "a", 0.45, 0.10, 0.5),
        RankedSystem(0.4, 1, "a", 0.45, 0.10, 0.5),
    )
    ranking = VoicePrivacyRanking(
        bands=BANDS,
        attacker="semi-informed",
        rows=rows,
        unranked={"c": "EER 12.0 % below the lowest band"},
        uar_rows=uar_rows,
    )
    return dataclasses.replace(ranking, **changes)


def test_the_wer_and_uar_rankings_and_the_systems_left_out():
    at = run_function(_ranking_page, _ranking())
    assert at.caption[0].value == "Banded on the EER of the condition's trials, rounded to 0.001 %."
    assert [m.value for m in at.markdown] == ["Ranked by WER:", "Ranked by UAR:", "Not ranked:"]
    wer, uar, left = (d.value for d in at.dataframe)
    assert list(wer["System"]) == ["b", "a", "a"]
    assert list(wer["EER band"]) == ["EER >= 30%", "EER >= 30%", "EER >= 40%"]
    assert list(uar.columns) == ["EER band", "Rank", "System", "EER", "WER", "UAR"]
    assert left.to_dict("records") == [
        {"System": "c", "Not ranked because": "EER 12.0 % below the lowest band"}
    ]
    assert not at.info


def test_no_system_in_a_band_says_so():
    at = run_function(_ranking_page, _ranking(rows=(), uar_rows=(), unranked={}))
    assert at.info[0].value == (
        "No system under the semi-informed attacker reaches the lowest band (EER >= 30%) with "
        "a known WER."
    )
    assert not at.dataframe and not at.markdown


# ------------------------------------------------------------------ show_ranking_stability


def _stability_page(ranking):
    from voxmetrics.ui.utility_page import show_ranking_stability

    show_ranking_stability(ranking)


def test_without_a_bootstrap_nothing_says_how_firm_the_ranking_is():
    at = run_function(_stability_page, _ranking())
    assert at.markdown[0].value == "#### How firm each rank is"
    assert at.caption[0].value.startswith("No bootstrap in the study settings (Report page)")
    assert not at.dataframe


def test_how_firm_each_rank_is_with_kendalls_tau_per_band():
    stability = RankingStability(
        n_replicates=200,
        p_band={"a": {0.3: 1.0, 0.4: 0.75}, "b": {0.3: 0.5, 0.4: 0.0}},
        kendall_tau={
            0.3: {"median": 0.8, "low": 0.5, "high": 1.0, "n": 200},
            0.4: {"median": None, "low": None, "high": None, "n": 0},
        },
        notes=("b_1's WER taken as fixed",),
    )
    rows = tuple(
        dataclasses.replace(r, p_band=0.5, rank_interval=(1, 2), p_rank1=0.25)
        for r in _ranking().rows
    )
    at = run_function(_stability_page, _ranking(rows=rows, stability=stability))
    firm, bands = (d.value for d in at.dataframe)
    assert list(firm["Rank 95% interval"]) == ["1–2"] * 3
    assert list(firm["P(rank 1)"]) == [0.25] * 3
    assert bands.to_dict("records") == [
        {"System": "a", "P(EER >= 30%)": 1.0, "P(EER >= 40%)": 0.75},
        {"System": "b", "P(EER >= 30%)": 0.5, "P(EER >= 40%)": 0.0},
    ]
    assert [m.value for m in at.markdown] == [
        "#### How firm each rank is",
        "**Chance of entering each band**",
    ]
    caption = at.caption[0].value
    assert caption.startswith("From 200 speaker-bootstrap replicates, each ranked by the same")
    assert "(median [95 %], by band; 1 = the same order): 30%: 0.80 [0.50, 1.00]. " in caption
    assert "40%:" not in caption  # no τ where no replicate ranks
    assert caption.endswith(r"b\_1's WER taken as fixed.")


# ------------------------------------------------------------------ show_callouts


def _callouts_page(callouts, rule):
    from voxmetrics.ui.utility_page import show_callouts

    show_callouts(callouts, rule)


def test_no_callout_is_all_clear():
    at = run_function(_callouts_page, [], RULE)
    assert at.success[0].value == f"No ranked system is called out ({RULE})."
    assert not at.warning and not at.dataframe


def test_the_callout_names_each_system_and_shows_why():
    callouts = [
        UtilityCallout(
            "anon_1", "semi-informed", 0.42, 0.4, 3.1, 0.05, 0.025, ("LIDmax 3.10 bits",)
        ),
        UtilityCallout("b", "semi-informed", 0.33, 0.3, 1.5, None, None, ("LIDmax 1.50 bits",)),
    ]
    at = run_function(_callouts_page, callouts, RULE)
    assert at.warning[0].value == (
        r"Ranked as private by the EER bands, yet still leaking: **anon\_1**, **b**. "
        f"Called out: {RULE}."
    )
    table = at.dataframe[0].value
    assert list(table["System"]) == ["anon_1", "b"]
    assert list(table["Band cleared"]) == ["EER >= 40%", "EER >= 30%"]
    assert list(table["Why"]) == ["LIDmax 3.10 bits", "LIDmax 1.50 bits"]
    assert not at.success
