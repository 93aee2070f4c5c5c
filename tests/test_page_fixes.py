"""Small page fixes of issue 27 (item 7): labels, ticks, missing values, lengths, words."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from voxmetrics.analysis.linkage import default_lengths
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Study
from voxmetrics.embeddings.conditions import conditions_from_embeddings
from voxmetrics.evaluation import evaluate_study
from voxmetrics.plots.linkage import singling_out_vs_n_figure
from voxmetrics.plots.overview import eer_lidmax_figure, eer_linkability_figure
from voxmetrics.plots.style import log_ticks, merged_labels
from voxmetrics.synth import demo_embeddings, demo_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


@pytest.fixture(scope="module")
def twins():
    """Two conditions with the same scores (they coincide on every scatter) and a third."""
    demo = demo_study(n_speakers=6)
    plain = demo.get("plain")
    twin = dataclasses.replace(plain, name="plain-copy")
    study = Study(conditions=(plain, twin, demo.get("random")), name="twins")
    return evaluate_study(study, bootstrap=0)


# ---------------------------------------------------------------- coinciding labels


def test_coinciding_conditions_share_one_label_and_keep_their_hover(twins):
    for fig in (eer_linkability_figure(twins), eer_lidmax_figure(twins)):
        points = fig.data[0]
        assert list(points.text) == ["plain, plain-copy", "", "random"]
        assert list(points.hovertext) == ["plain", "plain-copy", "random"]
        assert "%{hovertext}" in points.hovertemplate


@given(st_.lists(st_.tuples(st_.integers(0, 5), st_.integers(0, 5)), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_merged_labels_name_every_point_once(points):
    xs = [x / 10 for x, _ in points]
    ys = [y / 10 for _, y in points]
    names = [f"c{k}" for k in range(len(points))]
    shown = merged_labels(xs, ys, names, x_tol=0.01, y_tol=0.01)
    named = [n for text in shown if text for n in text.split(", ")]
    assert sorted(named) == sorted(names)  # each name once
    # no two labelled points coincide
    labelled = {(x, y) for x, y, text in zip(xs, ys, shown, strict=True) if text}
    assert len(labelled) == sum(1 for t in shown if t)


# ---------------------------------------------------------------- log ticks


@given(
    st_.integers(2, 100_000),
    st_.integers(1, 2),
    st_.sampled_from([0.05, 0.1, 0.15]),
)
@settings(max_examples=80, deadline=None)
def test_log_ticks_leave_room_for_every_label(top, low, fraction):
    ticks = log_ticks(top, low=low, min_fraction=fraction)
    assert ticks[-1] == max(top, low + 1) and ticks == sorted(set(ticks))
    span = math.log10(ticks[-1]) - math.log10(low)
    for a, b in itertools.pairwise(ticks):
        room = fraction * span * (len(str(a)) + len(str(b))) / 4
        assert math.log10(b / a) >= room - 1e-12, (a, b)


def test_the_three_digit_ceiling_does_not_overprint_its_neighbour():
    assert log_ticks(131)[-2:] == [50, 131]  # not 100 beside 131 ("100131")


def test_singling_out_ticks_do_not_print_30_beside_32():
    es = demo_embeddings(n_speakers=6, n_trial=64)["plain"]
    from voxmetrics.analysis.linkage import singling_out_vs_n

    curve = singling_out_vs_n(es)
    fig = singling_out_vs_n_figure({"plain": curve})
    ticks = list(fig.layout.xaxis.tickvals)
    assert not {30, 32} <= set(ticks), ticks


# ---------------------------------------------------------------- defaults from the data


def test_default_conversation_lengths_end_with_what_the_data_allow():
    sets = demo_embeddings(n_speakers=4, n_enrol=1, n_trial=20)
    assert default_lengths([sets["plain"]]) == (1, 3, 20)  # not 30: skipped on such data
    assert default_lengths([demo_embeddings(n_speakers=3, n_trial=40)["plain"]]) == (1, 3, 30)
    short = demo_embeddings(n_speakers=3, n_enrol=1, n_trial=2)["plain"]
    assert default_lengths([sets["plain"], short]) == (1, 2)  # the set with fewest decides


# ---------------------------------------------------------------- missing values


# ---------------------------------------------------------------- one word: original


def test_the_baseline_is_called_original_as_the_attacker():
    meta = pd.DataFrame(
        {
            "utt_id": list("abcdefgh"),
            "speaker": ["s", "t"] * 4,
            "role": ["enrol", "enrol", "trial", "trial"] * 2,
            "split": ["eval"] * 8,
            "system": ["original"] * 4 + ["B1"] * 4,
        }
    )
    es = EmbeddingSet.from_arrays(np.eye(8) + 0.1, meta)
    conditions = conditions_from_embeddings(es)
    assert [c.name for c in conditions] == ["original", "B1 / ignorant", "B1 / lazy-informed"]
    assert conditions[0].scenario == "original"
    assert not any("unprotected" in c.name for c in conditions)
