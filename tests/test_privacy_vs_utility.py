"""Privacy against utility outside voxmetrics.analysis.tradeoff: the demo's utility numbers,
the figure (plots.utility), the study report's section, tables and JSON, the CLI's JSON."""

from __future__ import annotations

import dataclasses
import json

import pytest

from voxmetrics.analysis.tradeoff import ConditionNumbers, privacy_utility_tradeoff
from voxmetrics.synth import demo_study


def _c(name, attacker="semi-informed", chance=None, **values):
    return ConditionNumbers(name, attacker, values, chance_linkability=chance)


@pytest.fixture(scope="module")
def demo_study_report():
    from voxmetrics.report.study import build_study_report

    return build_study_report(demo_study(n_speakers=10), bootstrap=0)


def test_demo_conditions_carry_plausible_utility():
    s = demo_study(n_speakers=6)
    u = {c.name: c.utility for c in s.conditions}
    assert all(v is not None for v in u.values())
    # the random system destroys the speech with the speaker
    assert u["random"].wer > 0.5 and u["random"].uar <= 0.25 + 1e-12
    assert u["plain"].wer < min(v.wer for k, v in u.items() if k != "plain")
    assert u["plain"].uar > max(v.uar for k, v in u.items() if k != "plain")


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
