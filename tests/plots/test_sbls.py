"""Figure builders of the Soft biometrics page (voxmetrics/plots/sbls.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import plotly.graph_objects as go
import pytest

from voxmetrics.data.predictions import AttributePrediction
from voxmetrics.evaluation import evaluate_study
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.sbls import sbls, sbls_embeddings
from voxmetrics.plots.sbls import (
    COMPONENT_LABELS,
    WORST_COLOR,
    auc_matrix_figure,
    components_figure,
    confusion_figure,
    identity_figure,
    short_group,
    subgroup_figure,
)
from voxmetrics.synth import demo_study

AGE = ("18-35", "36-55", "56+")
pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.DegenerateDataWarning")


def _result(seed: int = 0, per_group=(40, 40, 40, 40, 40, 12), **options):
    """sex x age with the given group sizes (F/18-35, F/36-55, F/56+, M/...), noisy scores."""
    rng = np.random.default_rng(seed)
    sex, age = [], []
    for k, n in enumerate(per_group):
        sex += ["F" if k < 3 else "M"] * n
        age += [AGE[k % 3]] * n
    sex, age = np.array(sex), np.array(age)
    preds = {}
    for name, y, classes in (("sex", sex, ("F", "M")), ("age_group", age, AGE)):
        onehot = (y[:, None] == np.array(classes)).astype(float)
        preds[name] = AttributePrediction(
            classes, scores=onehot + rng.normal(scale=0.9, size=onehot.shape)
        )
    return sbls({"sex": sex, "age_group": age}, preds, **options)


def _interval(low, high, estimate):
    return BootstrapInterval(estimate, low, high, 0.95, 100, 100)


def test_components_figure_has_one_bar_per_component_and_condition():
    results = {"a": _result(0), "b": _result(1)}
    fig = components_figure(results)
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == list(COMPONENT_LABELS.values())
    for trace, key in zip(fig.data, COMPONENT_LABELS, strict=True):
        assert trace.type == "bar" and list(trace.x) == ["a", "b"]
        assert list(trace.y) == [getattr(results["a"], key), getattr(results["b"], key)]
        assert trace.error_y.array is None
    assert fig.layout.barmode == "group"
    assert "higher = more protection" in fig.layout.title.text


def test_components_figure_draws_the_intervals():
    r = _result(0)
    intervals = {"a": {"sbls": _interval(r.sbls - 0.05, r.sbls + 0.02, r.sbls)}}
    fig = components_figure({"a": r}, intervals)
    sbls_bar = fig.data[-1]
    assert sbls_bar.error_y.array == pytest.approx((0.02,))
    assert sbls_bar.error_y.arrayminus == pytest.approx((0.05,))
    assert fig.data[0].error_y.array is None  # no interval given for P_attr


def test_components_figure_shows_an_undefined_sbls_as_a_gap():
    r = _result(0, min_group_size=1000)
    assert r.sbls is None
    fig = components_figure({"a": r})
    assert fig.data[-1].y == (None,) and fig.data[-1].text == ("n/a",)


def test_confusion_figure_shows_counts_and_row_shares():
    r = _result(2)
    sex = r.attributes[0]
    fig = confusion_figure(sex)
    heat = fig.data[0]
    assert heat.type == "heatmap" and list(heat.x) == ["F", "M"] and list(heat.y) == ["F", "M"]
    rows = sex.confusion.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.array(heat.z), sex.confusion / rows)
    assert heat.text[0][0].startswith(f"{sex.confusion[0, 0]}<br>")
    assert "after alignment" in fig.layout.xaxis.title.text


def test_auc_matrix_figure_marks_the_chosen_permutation():
    r = _result(3)
    # a classifier with its columns in another order: the alignment is not the identity
    labels = {"sex": np.repeat(np.array(["F", "M"]), 60)}
    rng = np.random.default_rng(3)
    onehot = (labels["sex"][:, None] == np.array(["F", "M"])).astype(float)
    swapped = AttributePrediction(("M", "F"), scores=onehot[:, ::-1] + rng.normal(size=(120, 2)))
    sex = sbls(labels, {"sex": swapped}, min_group_size=1).attributes[0]
    assert sex.permutation == (1, 0)  # true F <- the attacker's column 1 ("F"), M <- column 0
    fig = auc_matrix_figure(sex, column_labels=["M", "F"])
    (heat,) = fig.data
    np.testing.assert_allclose(np.array(heat.z), sex.auc_matrix)
    assert list(heat.x) == ["M", "F"] and list(heat.y) == ["F", "M"]
    # one outline per true class c around (column pi(c), row c), in category-index units
    boxes = [(sh.x0, sh.x1, sh.y0, sh.y1) for sh in fig.layout.shapes]
    assert boxes == [(p - 0.5, p + 0.5, c - 0.5, c + 0.5) for c, p in enumerate(sex.permutation)]
    assert boxes[0][:2] == (0.5, 1.5)  # true F outlined in the attacker's "F" column
    assert "chosen alignment" in fig.layout.title.subtitle.text
    age = r.attributes[1]
    fig = auc_matrix_figure(age)
    assert list(fig.data[0].x) == ["column 1", "column 2", "column 3"]
    assert len(fig.layout.shapes) == 3


def test_auc_matrix_figure_refuses_hard_predictions():
    y = np.array(["F", "M"] * 10)
    hard = sbls({"sex": y}, {"sex": AttributePrediction(("F", "M"), predicted=y)}).attributes[0]
    with pytest.raises(ValueError, match="hard predictions"):
        auc_matrix_figure(hard)


def test_subgroup_figure_highlights_the_worst_and_lists_the_skipped():
    r = _result(4, min_group_size=30)  # the M / 56+ group has 12 utterances: skipped
    fig = subgroup_figure(r)
    by_name = {t.name.split(":")[0]: t for t in fig.data}
    assert set(by_name) == {"used", "worst", "skipped (n < min)"}
    joint = [row for row in r.subgroups if row.attribute == "all"]
    used = [row for row in joint if row.used]
    worst = max(used, key=lambda row: row.leakage)
    assert by_name["worst"].x == (worst.leakage,)
    assert by_name["worst"].y == (short_group(worst.group),)
    assert by_name["worst"].marker.color == WORST_COLOR
    assert by_name["skipped (n < min)"].y == ("M · 56+",)
    assert by_name["skipped (n < min)"].text == ("n = 12",)
    assert len(by_name["used"].x) == len(used) - 1
    # larger groups get larger markers
    ns = [c[1] for c in by_name["used"].customdata]
    sizes = dict(zip(ns, by_name["used"].marker.size, strict=True))
    assert len(set(sizes.values())) == 1  # every used group but the worst has 40 utterances
    assert by_name["skipped (n < min)"].marker.size[0] < next(iter(sizes.values()))
    # the uniform-guess line at 1 / (2 x 3)
    assert fig.layout.shapes[0].x0 == pytest.approx(1 / 6)
    assert "1/6" in fig.layout.annotations[0].text


def test_short_group():
    assert short_group("sex=M & age_group=56+") == "M · 56+"
    assert short_group("x=a=b") == "a=b"


@pytest.fixture(scope="module")
def small_demo():
    study = demo_study(n_speakers=12)
    original = study.get("plain").embeddings
    results = {
        c.name: sbls_embeddings(c.embeddings, original=original, min_group_size=1)
        for c in study.conditions
    }
    return results, evaluate_study(study)


def test_identity_figure_puts_sbls_beside_eer_and_lidmax(small_demo):
    results, reports = small_demo
    fig = identity_figure(results, reports)
    names = [r.name for r in reports]
    eer_panel = [t for t in fig.data if t.xaxis == "x"]
    assert [t.name for t in fig.data if t.showlegend] == names  # one legend entry each
    lid_panel = [t for t in fig.data if t.xaxis == "x2"]
    assert [t.name for t in eer_panel] == names
    for trace, rep in zip(eer_panel, reports, strict=True):
        assert trace.x == (rep.baseline.eer,) and trace.y == (results[rep.name].sbls,)
    assert [t.x[0] for t in lid_panel] == [r.lid.lid_max for r in reports]
    titles = [a.text for a in fig.layout.annotations]
    assert any("EER (higher = more protection)" in t for t in titles)
    assert any("LIDmax (higher = less protection)" in t for t in titles)
    assert "higher = more protection" in fig.layout.yaxis.title.text


def test_identity_figure_leaves_conditions_without_lid_out_of_the_right_panel(small_demo):
    results, reports = small_demo
    reports = [dataclasses.replace(reports[0], lid=None), *reports[1:]]
    fig = identity_figure(results, reports)
    assert len([t for t in fig.data if t.xaxis == "x"]) == len(reports)
    lid_names = [t.name for t in fig.data if t.xaxis == "x2"]
    assert lid_names == [r.name for r in reports[1:]]
