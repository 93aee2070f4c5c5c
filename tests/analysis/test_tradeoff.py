"""Privacy against utility (issue 26): the Pareto front, VoicePrivacy's ranking, the call-out.

Hand-computed fronts and rankings, hypothesis invariants of the front (no front point dominated,
every other point dominated), the utility numbers on the condition report and in its JSON, and
the demo's utility numbers.
"""

from __future__ import annotations

import dataclasses
import inspect
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.tradeoff import (
    EER_BANDS,
    PRIVACY_METRICS,
    ConditionNumbers,
    condition_numbers,
    has_utility,
    in_band,
    pareto_front,
    privacy_utility_tradeoff,
    reference_condition,
    report_callouts,
    report_ranking,
    report_tradeoff,
    utility_callouts,
    voiceprivacy_ranking,
)
from voxmetrics.data.study import Condition
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate, evaluate_condition, evaluate_study
from voxmetrics.evaluation.steps import assemble
from voxmetrics.report.frames import overview_frame
from voxmetrics.synth import demo_study


def _c(name, attacker="semi-informed", chance=None, **values):
    return ConditionNumbers(name, attacker, values, chance_linkability=chance)


# ------------------------------------------------------------------ the Pareto front


def test_front_by_hand_eer_against_wer():
    # EER higher is better, WER lower is better.
    # a (0.30, 0.05) dominates b (0.20, 0.08); c (0.40, 0.30) is the most private;
    # d (0.30, 0.05) equals a: neither dominates the other, both on the front.
    cs = [
        _c("orig", "original", eer=0.02, wer=0.018),
        _c("a", eer=0.30, wer=0.05),
        _c("b", eer=0.20, wer=0.08),
        _c("c", eer=0.40, wer=0.30),
        _c("d", eer=0.30, wer=0.05),
        _c("e", eer=0.45),  # no WER: not in the plane
    ]
    t = privacy_utility_tradeoff(cs, privacy="eer", utility="wer")
    on = {p.condition: p.on_front for p in t.points}
    assert on == {"orig": False, "a": True, "b": False, "c": True, "d": True, "e": False}
    assert [p.condition for p in t.front] == ["c", "a", "d"]
    assert t.reference is not None and t.reference.condition == "orig"
    assert [p.condition for p in t.missing] == ["e"]


def test_front_directions_lower_privacy_and_higher_utility():
    # LIDmax lower is better, UAR higher is better
    cs = [
        _c("a", lid_max=0.5, uar=0.60),
        _c("b", lid_max=2.0, uar=0.70),
        _c("c", lid_max=1.0, uar=0.55),  # dominated by a (less LIDmax, more UAR)
        _c("d", lid_max=0.2, uar=0.30),
    ]
    t = privacy_utility_tradeoff(cs, privacy="lid_max", utility="uar")
    assert [p.condition for p in t.points if p.on_front] == ["a", "b", "d"]
    # from the most private (lowest LIDmax) to the most useful
    assert [p.condition for p in t.front] == ["d", "a", "b"]


def test_sbls_is_a_protection_score():
    # SBLS: higher is more private (a protection score), unlike LID and D_ECE
    assert PRIVACY_METRICS["sbls"].higher_is_better
    assert not PRIVACY_METRICS["d_ece"].higher_is_better
    cs = [_c("a", sbls=0.9, wer=0.05), _c("b", sbls=0.8, wer=0.05)]
    t = privacy_utility_tradeoff(cs, privacy="sbls", utility="wer")
    assert [p.on_front for p in t.points] == [True, False]


def test_reference_never_on_the_front_even_when_best():
    cs = [_c("orig", "original", eer=0.9, wer=0.0), _c("a", eer=0.3, wer=0.1)]
    t = privacy_utility_tradeoff(cs)
    assert [p.on_front for p in t.points] == [False, True]
    # an explicit reference name works without attacker "original"
    t = privacy_utility_tradeoff(
        [_c("plain", eer=0.9, wer=0.0), _c("a", eer=0.3, wer=0.1)], reference="plain"
    )
    assert t.reference.condition == "plain" and not t.reference.on_front


def test_unknown_metric_is_refused():
    with pytest.raises(VoxMetricsInputError, match="privacy metric 'foo'"):
        privacy_utility_tradeoff([], privacy="foo")
    with pytest.raises(VoxMetricsInputError, match="utility metric 'bar'"):
        privacy_utility_tradeoff([], utility="bar")
    with pytest.raises(VoxMetricsInputError, match="one value per point"):
        pareto_front([1.0, 2.0], [1.0])


def _dominates(p, u, j, i):
    return p[j] >= p[i] and u[j] >= u[i] and (p[j] > p[i] or u[j] > u[i])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=25
    ),  # small integer grids: many ties and duplicates
    st.booleans(),
    st.booleans(),
)
def test_front_invariants(pairs, p_up, u_up):
    p = np.array([a for a, _ in pairs], dtype=float)
    u = np.array([b for _, b in pairs], dtype=float)
    mask = pareto_front(p, u, privacy_higher_is_better=p_up, utility_higher_is_better=u_up)
    pp, uu = (p if p_up else -p), (u if u_up else -u)
    n = len(p)
    for i in range(n):
        dominated = any(_dominates(pp, uu, j, i) for j in range(n))
        # no front point is dominated; every point off the front is dominated
        assert mask[i] == (not dominated)
    assert mask.any()  # a finite set always has a non-dominated point


# ------------------------------------------------------------------ VoicePrivacy ranking


def test_ranking_by_hand():
    cs = [
        _c("orig", "original", eer=0.01, wer=0.018, uar=0.70),
        _c("s1", eer=0.12, wer=0.04, uar=0.60),
        _c("s2", eer=0.35, wer=0.06, uar=0.55),
        _c("s3", eer=0.41, wer=0.06, uar=0.58),  # same WER as s2: UAR breaks the tie
        _c("s4", eer=0.20, wer=0.05, uar=None),  # exactly on the 20 % band: inside it
        _c("s5", eer=0.08, wer=0.02, uar=0.69),  # below 10 %: unranked
        _c("s6", eer=0.45),  # no WER: unranked
        _c("lazy", "lazy-informed", eer=0.45, wer=0.01),  # another attacker: not a system
    ]
    r = voiceprivacy_ranking(cs)
    assert r.bands == EER_BANDS
    got = [(b, k, c) for b, k, c in ((x.band, x.rank, x.condition) for x in r.rows)]
    assert got == [
        (0.10, 1, "s1"),
        (0.10, 2, "s4"),
        (0.10, 3, "s3"),
        (0.10, 4, "s2"),
        (0.20, 1, "s4"),
        (0.20, 2, "s3"),
        (0.20, 3, "s2"),
        (0.30, 1, "s3"),
        (0.30, 2, "s2"),
        (0.40, 1, "s3"),
    ]
    assert set(r.unranked) == {"s5", "s6"}
    assert "below the lowest band" in r.unranked["s5"]
    assert "WER unknown" in r.unranked["s6"]
    df = r.frame()
    assert list(df.columns) == ["EER band", "Rank", "System", "EER", "WER", "UAR"]
    assert df["EER band"].iloc[0] == "EER >= 10%"
    json.dumps(r.to_dict())


def test_ranking_ties_share_a_rank_and_bands_are_checked():
    cs = [
        _c("a", eer=0.5, wer=0.1, uar=0.5),
        _c("b", eer=0.5, wer=0.1, uar=0.5),
        _c("c", eer=0.5, wer=0.2, uar=0.5),
    ]
    r = voiceprivacy_ranking(cs, bands=[0.4])
    assert [(x.rank, x.condition) for x in r.rows] == [(1, "a"), (1, "b"), (3, "c")]
    with pytest.raises(VoxMetricsInputError, match="fractions"):
        voiceprivacy_ranking(cs, bands=[10, 20])


def test_ranking_attacker_is_chosen():
    cs = [_c("a", "lazy-informed", eer=0.3, wer=0.1), _c("b", eer=0.3, wer=0.05)]
    assert [x.condition for x in voiceprivacy_ranking(cs, attacker="lazy-informed").rows] == [
        "a",
        "a",
        "a",
    ]


# ------------------------------------------------------------------ the auditors' call-out


def test_callout_by_hand():
    cs = [
        # clears 40 %, LIDmax 1.0 exactly (the threshold counts) and linkability 2x chance
        # exactly (not above): one reason
        _c("edge", eer=0.42, chance=0.025, lid_max=1.0, linkability=0.05),
        # clears 30 %, linkability 3x chance: one reason
        _c("link", eer=0.31, chance=0.025, lid_max=0.2, linkability=0.075),
        # private on every count
        _c("fine", eer=0.48, chance=0.025, lid_max=0.3, linkability=0.03),
        # leaks but clears no band: not called out here (the EER already says it leaks)
        _c("low", eer=0.05, chance=0.025, lid_max=4.0, linkability=0.9),
        _c("orig", "original", eer=0.01, chance=0.025, lid_max=5.0, linkability=1.0),
    ]
    out = {c.condition: c for c in utility_callouts(cs)}
    assert set(out) == {"edge", "link"}
    assert out["edge"].band == 0.40 and len(out["edge"].reasons) == 1
    assert "LIDmax 1.00 bits" in out["edge"].reasons[0]
    assert out["link"].band == 0.30 and "3.0x" in out["link"].reasons[0]
    json.dumps([c.to_dict() for c in out.values()])


# ------------------------------------------------------------------ on the condition reports


@pytest.fixture(scope="module")
def demo_reports():
    return evaluate_study(demo_study(n_speakers=12), bootstrap=0)


def test_demo_conditions_carry_plausible_utility():
    s = demo_study(n_speakers=6)
    u = {c.name: c.utility for c in s.conditions}
    assert all(v is not None for v in u.values())
    # the random system destroys the speech with the speaker
    assert u["random"].wer > 0.5 and u["random"].uar <= 0.25 + 1e-12
    assert u["plain"].wer < min(v.wer for k, v in u.items() if k != "plain")
    assert u["plain"].uar > max(v.uar for k, v in u.items() if k != "plain")


def test_report_carries_utility_and_json_fractions(demo_reports):
    r = next(r for r in demo_reports if r.name == "random")
    assert r.utility == demo_study(n_speakers=6).get("random").utility
    d = json.loads(r.to_json())
    assert d["utility"]["wer"] == pytest.approx(0.85)
    assert d["utility"]["uar"] == pytest.approx(0.25)
    assert 0 <= d["eer"] <= 1  # beside the privacy metrics, both fractions
    df = overview_frame(demo_reports)
    assert df.set_index("condition").loc["random", "wer"] == pytest.approx(0.85)
    assert has_utility(demo_reports)


def test_no_utility_is_null_everywhere():
    cond = demo_study(n_speakers=6).get("anon-mild")
    bare = Condition("bare", eval=cond.eval, dev=cond.dev)
    r = evaluate_condition(bare)
    assert r.utility is None and r.to_dict()["utility"] is None
    assert not has_utility([r])
    assert overview_frame([r])[["wer", "uar", "rho_f0"]].isna().all(axis=None)
    n = condition_numbers(r)
    assert n.value("wer") is None and n.value("eer") == r.baseline.eer


def test_utility_passes_through_evaluate_condition_and_assemble():
    cond = demo_study(n_speakers=6).get("anon-mild")
    u = Utility(wer=0.1, uar=0.5, intervals={"wer": (0.08, 0.12)})
    r = evaluate_condition(dataclasses.replace(cond, utility=u), by="sex")
    assert r.utility is u
    assert all(sub.utility is None for sub in r.by["sex"].values())  # subsets: none
    assert r.to_dict()["utility"]["intervals"] == {"wer": [0.08, 0.12]}
    assert evaluate(cond.eval).utility is None
    assert "utility" in inspect.signature(assemble).parameters


def test_report_level_tradeoff_ranking_callouts(demo_reports):
    assert reference_condition(demo_reports, "plain") == "plain"
    t = report_tradeoff(demo_reports, privacy="eer", utility="wer", reference="plain")
    on = {p.condition for p in t.points if p.on_front}
    assert "plain" not in on
    assert "random" in on  # the most private system is always on an EER front
    ranking = report_ranking(demo_reports, reference="plain")
    assert "plain" not in {x.condition for x in ranking.rows}
    assert {x.condition for x in ranking.band(0.40)} >= {"random", "anon-leaky"}
    # random: every band, but last on WER in each
    for band in ranking.bands:
        rows = ranking.band(band)
        if rows:
            assert rows[-1].condition == "random"
    called = {c.condition for c in report_callouts(demo_reports, reference="plain")}
    assert "anon-leaky" in called and "random" not in called


# ------------------------------------------------------------------ the figure


def test_figure_front_reference_intervals_and_labels():
    from voxmetrics.plots.utility import label_groups, tradeoff_figure

    cs = [
        ConditionNumbers("orig", "original", {"eer": 0.02, "wer": 0.018}),
        ConditionNumbers(
            "a",
            "semi-informed",
            {"eer": 0.30, "wer": 0.05},
            intervals={"eer": (0.28, 0.33), "wer": (0.04, 0.06)},
        ),
        ConditionNumbers("b", "semi-informed", {"eer": 0.30, "wer": 0.05}),  # on a
        ConditionNumbers("c", "lazy-informed", {"eer": 0.45, "wer": 0.40}),
        ConditionNumbers("d", "semi-informed", {"eer": 0.10}),  # no WER: not drawn
    ]
    t = privacy_utility_tradeoff(cs)
    fig = tradeoff_figure(t)
    points, front, ref = fig.data
    assert list(points.x) == [0.30, 0.30, 0.45]
    # coinciding points share one label: a and b are named once, together
    texts = list(points.text)
    assert texts[0] == "a (semi-informed), b (semi-informed)" and texts[1] == ""
    assert sum(1 for x in texts if x) == 2
    # the error bars are the intervals, absent where unknown
    assert points.error_x.array[0] == pytest.approx(0.03)
    assert points.error_x.arrayminus[0] == pytest.approx(0.02)
    assert points.error_x.array[1] is None
    # each attacker's front is drawn through its non-dominated points, the reference apart;
    # two attackers' fronts are never joined (a gap between them: one front per attacker)
    assert sorted(x for x in front.x if x is not None) == [0.30, 0.30, 0.45]
    assert list(front.x) == [0.30, 0.30, None, 0.45]
    assert ref.name == "original speech" and list(ref.x) == [0.02]
    assert "more private" in fig.layout.xaxis.title.text
    assert "lower is more useful" in fig.layout.yaxis.title.text
    assert label_groups([]) == []


def test_figure_without_any_point():
    from voxmetrics.plots.utility import tradeoff_figure

    fig = tradeoff_figure(privacy_utility_tradeoff([_c("a", eer=0.3)]))
    assert len(fig.data[0].x) == 0 and len(fig.data) == 2


# ------------------------------------------------------------------ the report card


@pytest.mark.parametrize(
    ("key", "value", "level"),
    [
        ("wer", 0.0999, "ok"),
        ("wer", 0.10, "caution"),
        ("wer", 0.2999, "caution"),
        ("wer", 0.30, "risk"),
        ("uar", 0.50, "ok"),
        ("uar", 0.4999, "caution"),
        ("uar", 0.35, "caution"),
        ("uar", 0.3499, "risk"),
    ],
)
def test_card_utility_boundaries(key, value, level):
    from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS

    assert REPORT_CARD_THRESHOLDS[key].level(value) == level


def test_card_utility_columns(demo_reports):
    from voxmetrics.evaluation.card import UTILITY_UNKNOWN, report_card

    card = report_card(demo_reports)
    text = card.frame("text").set_index("Condition")
    levels = card.frame("level").set_index("Condition")
    # random is private on every privacy column, but not for free
    assert levels.loc["random", "WER"] == "risk" and levels.loc["random", "UAR"] == "risk"
    assert text.loc["random", "WER"] == "0.850"
    assert levels.loc["plain", "WER"] == "ok"
    cond = demo_study(n_speakers=12).get("random")
    bare = evaluate_condition(Condition("bare", eval=cond.eval, dev=cond.dev))
    row = report_card([bare]).frame("text").iloc[0]
    assert row["WER"] == UTILITY_UNKNOWN and row["UAR"] == UTILITY_UNKNOWN
    assert report_card([bare]).frame("level").iloc[0]["WER"] == "n/a"
    with_iv = dataclasses.replace(bare, utility=Utility(wer=0.05, intervals={"wer": (0.04, 0.06)}))
    row = report_card([with_iv]).frame("text").iloc[0]
    assert row["WER"] == "0.050 [0.040, 0.060]" and row["UAR"] == UTILITY_UNKNOWN


# ------------------------------------------------------------------ the study report and its JSON


@pytest.fixture(scope="module")
def demo_study_report():
    from voxmetrics.report.study import build_study_report

    return build_study_report(demo_study(n_speakers=10), bootstrap=0)


def test_study_report_json_has_utility_beside_privacy(demo_study_report):
    from voxmetrics.report.html import json_safe

    d = json.loads(json.dumps(json_safe(demo_study_report.to_dict()), allow_nan=False))
    random = d["conditions"]["random"]
    assert random["utility"]["wer"] == pytest.approx(0.85)  # a fraction, not 85 %
    assert random["utility"]["uar"] == pytest.approx(0.25)
    assert 0.0 <= random["eer"] <= 1.0
    pvu = d["privacy_vs_utility"]
    assert pvu["reference"] == "plain"
    assert pvu["ranking"]["bands"] == [0.1, 0.2, 0.3, 0.4]
    assert pvu["ranking"]["attacker"] == "semi-informed"
    assert {p["condition"] for p in pvu["eer_vs_wer"]["points"] if p["on_front"]} >= {"random"}
    assert "anon-leaky" not in {c["condition"] for c in pvu["callouts"]} or pvu["callouts"]
    tables = demo_study_report.tables()
    for name in ("privacy_vs_utility.csv", "voiceprivacy_ranking.csv", "utility_callouts.csv"):
        assert name in tables
    wide = tables["privacy_vs_utility.csv"]
    for col in ("EER", "LIDmax (bits)", "Linkability", "SBLS", "WER", "UAR", "ρF0"):
        assert col in wide.columns


def test_html_section_privacy_vs_utility(demo_study_report):
    from voxmetrics.report.html import REPORT_SECTIONS, study_report_html

    assert REPORT_SECTIONS["utility"] == "Privacy vs utility"
    page = study_report_html(demo_study_report)
    start = page.index('<section id="utility">')
    section = page[start : page.index("</section>", start)]
    assert section.count('class="figure"') == 3
    assert "VoicePrivacy ranking" in section and "EER &gt;= 40%" in section
    assert "Ranked as private, still leaking" in section


def test_html_section_without_utility_says_how_to_add_it():
    from voxmetrics.analysis.tradeoff import NO_UTILITY_HELP
    from voxmetrics.report.html import study_report_html
    from voxmetrics.report.study import build_study_report

    s = demo_study(n_speakers=6)
    bare = type(s)(
        conditions=tuple(dataclasses.replace(c, utility=None) for c in s.conditions), name="bare"
    )
    sr = build_study_report(bare, bootstrap=0)
    assert not sr.has_utility and "privacy_vs_utility.csv" not in sr.tables()
    page = study_report_html(sr)
    start = page.index('<section id="utility">')
    assert "study build" in page[start : page.index("</section>", start)]
    assert "study build" in NO_UTILITY_HELP
    card = sr.card.frame("text")
    assert (card["WER"] == "utility unknown").all()


def test_cli_report_json_has_wer_and_uar(tmp_path):
    from voxmetrics.cli import main
    from voxmetrics.data.studyfile import load_study

    assert main(["demo", str(tmp_path), "--format", "vxm"]) == 0
    vxm = tmp_path / "demo.vxm"
    if load_study(vxm).get("random").utility is None:
        pytest.skip("this build's study file does not store utility numbers yet (issue 26 part 1)")
    out = tmp_path / "r.json"
    assert main(["report", str(vxm), "--json", str(out), "--bootstrap", "0"]) == 0
    d = json.loads(out.read_text())
    assert d["conditions"]["random"]["utility"]["wer"] == pytest.approx(0.85)
    assert d["conditions"]["random"]["utility"]["uar"] == pytest.approx(0.25)


def test_paper_tables_carry_utility_and_the_ranking(demo_study_report):
    from voxmetrics.report.tables import TABLE_CAPTIONS, results_tables, table_latex

    tabs = results_tables(demo_study_report)
    assert list(tabs) == [k for k in TABLE_CAPTIONS if k in tabs]
    over = tabs["overview"].set_index("Condition")
    assert over.loc["random", "WER"] == "0.850" and over.loc["random", "UAR"] == "0.250"
    ranking = tabs["ranking"]
    assert all(isinstance(v, str) for v in ranking.to_numpy().ravel())
    assert ranking["Rank"].iloc[0] == "1"
    assert "EER \\textgreater{}= 10\\%" in table_latex(ranking)


def test_front_is_drawn_as_the_edge_of_the_dominated_region():
    from voxmetrics.plots.utility import tradeoff_figure

    t = privacy_utility_tradeoff([_c("a", eer=0.48, wer=0.85), _c("b", eer=0.46, wer=0.05)])
    front = tradeoff_figure(t).data[1]
    # from the most private point: along privacy at its utility, then down to the next one
    assert front.line.shape == "hv" and list(front.x) == [0.48, 0.46]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 0.6, allow_nan=False),
            st.one_of(st.none(), st.floats(0, 1.5, allow_nan=False)),
            st.one_of(st.none(), st.floats(0, 1, allow_nan=False)),
        ),
        max_size=12,
    )
)
def test_ranking_invariants(systems):
    cs = [_c(f"s{k}", eer=e, wer=w, uar=u) for k, (e, w, u) in enumerate(systems)]
    r = voiceprivacy_ranking(cs)
    for band in r.bands:
        rows = r.band(band)
        assert all(x.eer >= band for x in rows)
        keys = [(x.wer, -(x.uar if x.uar is not None else -np.inf)) for x in rows]
        assert keys == sorted(keys)
        assert [x.rank for x in rows] == sorted(x.rank for x in rows)
        if rows:
            assert rows[0].rank == 1
    for k, (e, w, _) in enumerate(systems):
        bands_in = [x.band for x in r.rows if x.condition == f"s{k}"]
        if w is None or not in_band(e, EER_BANDS[0]):
            assert not bands_in and f"s{k}" in r.unranked
        else:  # compared at the challenge's 0.001 %
            assert bands_in == [b for b in EER_BANDS if in_band(e, b)]


def test_every_original_condition_is_a_reference():
    from voxmetrics.plots.utility import tradeoff_figure

    cs = [
        _c("orig-b1", "original", eer=0.02, wer=0.018),
        _c("orig-b2", "original", eer=0.03, wer=0.018),
        _c("b1", eer=0.3, wer=0.05),
    ]
    t = privacy_utility_tradeoff(cs)
    assert [p.condition for p in t.references] == ["orig-b1", "orig-b2"]
    assert [p.condition for p in t.front] == ["b1"]
    assert voiceprivacy_ranking(cs, attacker="original").rows == ()
    stars = tradeoff_figure(t).data[2]
    assert list(stars.x) == [0.02, 0.03]
    # near each other: one label for both, no overprint
    assert sum(1 for x in stars.text if x) == 1


def test_a_uar_of_zero_is_known_not_missing():
    cs = [_c("zero", eer=0.5, wer=0.1, uar=0.0), _c("none", eer=0.5, wer=0.1)]
    r = voiceprivacy_ranking(cs, bands=[0.4])
    assert [(x.rank, x.condition) for x in r.rows] == [(1, "zero"), (2, "none")]


def test_blockwise_report_carries_the_utility_it_is_given():
    pytest.importorskip("distributed")
    from voxmetrics.distributed import dask_client
    from voxmetrics.evaluation.blockwise import evaluate_blockwise

    cond = demo_study(n_speakers=6).get("random")
    with dask_client("local", n_workers=1, processes=False) as client:
        r = evaluate_blockwise(cond.embeddings, client=client, utility=cond.utility)
    assert r.utility == cond.utility
    assert r.to_dict()["utility"]["wer"] == pytest.approx(0.85)
