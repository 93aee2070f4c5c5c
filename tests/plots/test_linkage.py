"""Figure builders of the Linkage page (AppTest cannot see figures)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from voxmetrics.evaluation import evaluate_condition
from voxmetrics.metrics.legal import (
    conversation_length_curve,
    linkability_curve,
    singling_out,
)
from voxmetrics.metrics.similarity import voice_similarity
from voxmetrics.plots.linkage import (
    CONDITION_PALETTE,
    condition_colors,
    conversation_length_figure,
    linkability_vs_n_figure,
    mean_score_figure,
    similarity_matrices_figure,
    singling_out_figure,
    singling_out_vs_n_figure,
)
from voxmetrics.plots.style import CHANCE_COLOR
from voxmetrics.synth import demo_embeddings, demo_study

# the demo's plain condition is perfectly separated: its LID and CLL fits warn, as they should
pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=12)


@pytest.fixture(scope="module")
def reports(demo):
    return {c.name: evaluate_condition(c) for c in demo.conditions}


def _kinds(fig: go.Figure) -> list[str]:
    return [t.meta["kind"] for t in fig.data]


# ---------------------------------------------------------------- linkability vs N'


def test_linkability_figure_draws_each_curve_and_the_chance_curve(reports):
    curves = {n: r.linkability_curve for n, r in reports.items()}
    fig = linkability_vs_n_figure(curves, colors=condition_colors(list(curves)))
    assert _kinds(fig) == ["expected"] * 5 + ["chance"]
    for trace, (name, curve) in zip(fig.data, curves.items(), strict=False):
        assert trace.name == name
        np.testing.assert_array_equal(trace.x, curve.n)  # N' = 2, 5, 10, 12
        np.testing.assert_array_equal(trace.y, curve.expected)
    assert list(fig.data[0].x) == [2, 5, 10, 12]
    assert [t.line.color for t in fig.data[:5]] == list(CONDITION_PALETTE[:5])
    chance = fig.data[-1]
    assert chance.line.color == CHANCE_COLOR and chance.line.dash == "dash"
    assert chance.x[0] == 2 and chance.x[-1] == 12
    np.testing.assert_allclose(chance.y, 1 / np.asarray(chance.x))
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [2, 5, 10, 12]


def test_sampled_estimate_is_drawn_with_error_bars(demo):
    sm = demo.get("anon-mild").eval
    curve = linkability_curve(sm.scores, sm.targets, n_draws=30, seed=0)
    fig = linkability_vs_n_figure({"anon-mild": curve})
    assert _kinds(fig) == ["expected", "sampled", "sampled-legend", "chance"]
    sampled = fig.data[1]
    np.testing.assert_array_equal(sampled.y, curve.sampled)
    np.testing.assert_array_equal(sampled.error_y.array, curve.sampled_sd)
    assert sampled.marker.symbol == "circle-open" and sampled.showlegend is False
    assert fig.data[2].name == "sampled, 30 draws (± 1 SD)"


def test_chance_curve_spans_the_largest_n():
    small = linkability_curve(np.eye(3), [0, 1, 2])
    big = linkability_curve(np.eye(60), np.arange(60))
    fig = linkability_vs_n_figure({"small": small, "big": big})
    assert fig.data[-1].x[-1] == 60
    assert list(fig.layout.xaxis.tickvals) == [2, 5, 10, 20, 50, 60]


# ---------------------------------------------------------------- singling out


def test_singling_out_figure_has_a_bar_and_a_chance_tick_per_condition(reports):
    results = {n: r.singling_out for n, r in reports.items()}
    fig = singling_out_figure(results, colors=condition_colors(list(results)))
    bars, chance = fig.data
    assert list(bars.x) == list(results)
    assert list(bars.y) == [r.value for r in results.values()]
    assert list(bars.marker.color) == list(CONDITION_PALETTE[:5])
    # N = 12: (11/12)^11 = 0.3839
    assert list(chance.y) == pytest.approx([(11 / 12) ** 11] * 5)
    assert chance.marker.color == CHANCE_COLOR
    assert bars.customdata[0][:3] == [12, 8, 12]  # N, folds, predicates


def test_conversation_length_figure_panels_and_chance_lines(demo, reports):
    curves = {n: conversation_length_curve(demo.get(n).embeddings, (1, 2, 4))
              for n in ("plain", "random")}  # fmt: skip
    fig = conversation_length_figure(curves, reports)
    curve_traces = [t for t in fig.data if t.meta["kind"] == "curve"]
    assert [(t.meta["condition"], t.meta["panel"]) for t in curve_traces] == [
        ("plain", "singling_out"), ("plain", "linkability"),
        ("random", "singling_out"), ("random", "linkability"),
    ]  # fmt: skip
    np.testing.assert_array_equal(curve_traces[0].y, curves["plain"].singling_out)
    np.testing.assert_array_equal(curve_traces[1].y, curves["plain"].linkability)
    assert list(curve_traces[0].x) == [1, 2, 4]
    # one shared chance line per panel (same N everywhere)
    chance = [t for t in fig.data if t.meta["kind"] == "chance"]
    assert [t.meta["panel"] for t in chance] == ["singling_out", "linkability"]
    assert chance[0].y[0] == pytest.approx(reports["plain"].singling_out.chance)
    assert chance[1].y[0] == pytest.approx(1 / 12)
    assert chance[0].xaxis == "x" and chance[1].xaxis == "x2"


def test_conversation_length_without_reports_has_no_chance_line(demo):
    curves = {"plain": conversation_length_curve(demo.get("plain").embeddings, (1, 2))}
    assert "chance" not in _kinds(conversation_length_figure(curves))


def test_conversation_length_chance_per_condition_when_n_differs(reports):
    small = demo_study(n_speakers=6)
    other = {c.name: evaluate_condition(c) for c in small.conditions[:1]}
    curves = {
        "plain": conversation_length_curve(demo_study(n_speakers=12).get("plain").embeddings),
        "small": conversation_length_curve(small.get("plain").embeddings),
    }
    fig = conversation_length_figure(curves, {"plain": reports["plain"], "small": other["plain"]})
    chance = [t for t in fig.data if t.meta["kind"] == "chance"]
    assert {t.meta["condition"] for t in chance} == {"plain", "small"}
    assert all(t.line.dash == "dot" for t in chance)


# ---------------------------------------------------------------- similarity matrices


def test_similarity_figure_shows_three_matrices_reordered(demo):
    plain, mild = demo.get("plain").embeddings, demo.get("anon-mild").embeddings
    result = voice_similarity(plain, mild)
    speakers = result.oo.speakers.tolist()
    order = speakers[::-1]
    groups = {s: ("F" if k < 5 else "M") for k, s in enumerate(order)}
    fig = similarity_matrices_figure(result, order=order, groups=groups, original="plain",
                                     anonymised="anon-mild")  # fmt: skip
    assert [t.meta["matrix"] for t in fig.data] == ["oo", "oa", "aa"]
    assert all(isinstance(t, go.Heatmap) for t in fig.data)
    for trace, m in zip(fig.data, (result.oo, result.oa, result.aa), strict=True):
        # reversed order: the displayed matrix is the original one flipped on both axes
        np.testing.assert_array_equal(np.asarray(trace.z), m.matrix[::-1, ::-1])
        custom = np.asarray(trace.customdata)
        np.testing.assert_array_equal(custom[..., 0], m.mean_score[::-1, ::-1])
        np.testing.assert_array_equal(custom[..., 1], m.n_pairs[::-1, ::-1])
        assert (trace.zmin, trace.zmax) == (0.0, 1.0)
        assert "mean raw score" in trace.hovertemplate
    assert list(fig.data[0].x)[:2] == [f"{order[0]} (F)", f"{order[1]} (F)"]
    assert [t.showscale for t in fig.data] == [False, False, True]
    d = result.distinctiveness
    assert fig.layout.title.text == (
        f"anon-mild against plain: DeID {d.deid:.3f} · G_VD {d.g_vd:.2f} dB"
    )
    titles = [a.text for a in fig.layout.annotations]
    assert f"D<sub>diag</sub> = {result.oa.d_diag:.3f}" in titles[1]
    # one white line per axis per panel between the F and M groups
    assert len(fig.layout.shapes) == 3 * 2
    assert fig.layout.shapes[0].x0 == 4.5


def test_similarity_figure_without_order_keeps_the_library_order(demo):
    es = demo.get("plain").embeddings
    result = voice_similarity(es, es, calibration="raw")
    fig = similarity_matrices_figure(result)
    assert list(fig.data[0].y) == result.oo.speakers.tolist()
    assert not fig.layout.shapes
    assert fig.layout.xaxis.showticklabels is True  # 12 speakers: labels fit


# ---------------------------------------------------------------- mean scores


def test_mean_score_figure_pivots_in_the_given_order():
    table = pd.DataFrame(
        {
            "trial_speaker": ["b", "b", "b", "a", "a", "a"],
            "enrol_speaker": ["b", "a", "z", "b", "a", "z"],
            "mean_score": [0.9, 0.1, 0.2, 0.3, 0.8, 0.4],
            "n_trials": [2, 2, 2, 5, 5, 5],
        }
    )
    fig = mean_score_figure(table, title="t")
    heat = fig.data[0]
    assert list(heat.y) == ["b", "a"] and list(heat.x) == ["b", "a", "z"]
    assert np.asarray(heat.z).tolist() == [[0.9, 0.1, 0.2], [0.3, 0.8, 0.4]]
    assert np.asarray(heat.customdata).tolist() == [[2, 2, 2], [5, 5, 5]]
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.title.text == "t"


# ---------------------------------------------------------------- the summary table


def test_builders_accept_the_singling_out_of_a_tiny_case():
    r = singling_out([[1, 0], [0, 1]], ["a", "b"], [[1, .1], [1, -.1], [.1, 1], [-.1, 1]],
                     ["a", "a", "b", "b"])  # fmt: skip
    fig = singling_out_figure({"x": r})
    assert fig.data[0].y == (1.0,) and fig.data[1].y == (0.5,)


def test_linkability_band_is_drawn_behind_its_curve():
    from voxmetrics.metrics.legal import linkability_curve

    S = [[0.9, 0.8, 0.8, 0.8], [0.7, 0.6, 0.6, 0.6], [0.4, 0.5, 0.4, 0.4], [0.2, 0.2, 0.3, 0.2]]
    c = linkability_curve(S, [0, 0, 1, 2])
    band = np.column_stack([c.n, c.expected - 0.1, c.expected + 0.1])
    fig = linkability_vs_n_figure({"a": c}, bands={"a": band})
    kinds = [t.meta["kind"] for t in fig.data]
    assert kinds[:2] == ["band", "expected"]
    b = fig.data[0]
    np.testing.assert_allclose(b.y, np.concatenate([band[:, 1], band[::-1, 2]]))
    assert b.fill == "toself" and b.showlegend is False


# ---------------------------------------------------------------- Vauquier et al. 2025, figure 1


def test_legal_figure_has_metric_rows_and_length_columns(demo):
    from voxmetrics.metrics.legal import legal_evaluation
    from voxmetrics.plots.linkage import LEGAL_ROWS, legal_figure

    evs = {
        name: legal_evaluation(demo.get(name).embeddings, [1, 3, 30], n_draws=2)
        for name in ("plain", "anon-mild")
    }
    fig = legal_figure(evs, attackers={"plain": "original", "anon-mild": "informed"})
    titles = [a.text for a in fig.layout.annotations]
    # 3 rows x 2 columns (L = 30 has no data in the demo, so no column)
    assert titles == [f"{row}, L = {length}" for row in LEGAL_ROWS for length in (1, 3)]
    curves = [t for t in fig.data if t.meta["kind"] == "curve"]
    assert len(curves) == 2 * 2 * 3  # conditions x lengths x rows
    chance = [t for t in fig.data if t.meta["kind"] == "chance"]
    assert len(chance) == 2 * 3 and all(t.line.color == CHANCE_COLOR for t in chance)
    # each condition keeps one colour everywhere, and the legend names the attacker
    for name, attacker in (("plain", "original"), ("anon-mild", "informed")):
        mine = [t for t in curves if t.meta["condition"] == name]
        assert len({t.line.color for t in mine}) == 1
        assert {t.name for t in mine} == {f"{name} ({attacker})"}
        assert sum(t.showlegend for t in mine) == 1
    # the plotted values are the library's: 1 - EER and the linkability expectation
    r = evs["anon-mild"].results[0]
    eer_trace = next(
        t
        for t in curves
        if t.meta == {"condition": "anon-mild", "kind": "curve", "row": "1 - EER", "L": 1}
    )
    np.testing.assert_allclose(eer_trace.y, 1 - r.eer.eer)
    link = next(
        t
        for t in curves
        if t.meta["condition"] == "anon-mild"
        and t.meta["row"] == "linkability"
        and t.meta["L"] == 1
    )
    np.testing.assert_allclose(link.y, r.linkability.expected)
    # chance rows: (1 - 1/N)^(N-1), 1/N', 0.5
    by_row = {t.meta["row"]: t for t in chance[:3]}
    x = np.asarray(by_row["Linkability"].x, float)
    np.testing.assert_allclose(by_row["Linkability"].y, 1 / x)
    np.testing.assert_allclose(by_row["1 - EER"].y, 0.5)
    xs = np.asarray(by_row["Singling out"].x, float)
    np.testing.assert_allclose(by_row["Singling out"].y, (1 - 1 / xs) ** (xs - 1))


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_singling_out_ticks_do_not_print_30_beside_32():
    es = demo_embeddings(n_speakers=6, n_trial=64)["plain"]
    from voxmetrics.analysis.linkage import singling_out_vs_n

    curve = singling_out_vs_n(es)
    fig = singling_out_vs_n_figure({"plain": curve})
    ticks = list(fig.layout.xaxis.tickvals)
    assert not {30, 32} <= set(ticks), ticks
