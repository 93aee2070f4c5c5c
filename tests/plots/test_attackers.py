"""The attackers figure (voxmetrics/plots/attackers.py): dev and eval side by side, the strongest
marked, skipped back-ends left out; read from the comparison's table, never recomputed."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from voxmetrics.plots.attackers import STRONGEST_MARK, attackers_figure
from voxmetrics.plots.style import CHANCE_COLOR, MATED_COLOR, NON_MATED_COLOR


def _comparison(**overrides) -> SimpleNamespace:
    """What the figure reads of an ``AttackerComparison``: three back-ends, one skipped."""
    frame = pd.DataFrame(
        {
            "Back-end": ["cosine", "lda", "plda"],
            "Dev EER": [0.30, 0.20, np.nan],
            "EER": [0.32, 0.25, np.nan],
            "Linkability": [0.40, np.inf, np.nan],
            "Chance (1/N)": [0.1, 0.125, np.nan],
            "Skipped": ["", "", "too few speakers"],
        }
    )
    values = {"name": "anon", "strongest": "lda", "select_by": "eer", "frame": lambda: frame}
    return SimpleNamespace(**{**values, **overrides})


def test_the_strongest_is_marked_and_drawn_in_its_own_colour():
    fig = attackers_figure(_comparison())
    dev, ev, best, link = fig.data
    labels = ["cosine", f"{STRONGEST_MARK} lda"]  # the skipped plda is left out
    assert list(dev.x) == list(ev.x) == list(best.x) == list(link.x) == labels
    assert list(dev.y) == [0.30, 0.20]
    assert list(ev.y) == [0.32, None] and list(best.y) == [None, 0.25]
    assert ev.marker.color == NON_MATED_COLOR and best.marker.color == MATED_COLOR
    assert best.name == f"Eval EER of the strongest {STRONGEST_MARK}"
    assert ev.offsetgroup == best.offsetgroup == "eval" and dev.offsetgroup == "dev"
    assert list(link.marker.color) == [NON_MATED_COLOR, MATED_COLOR]


def test_non_finite_numbers_are_gaps():
    link = attackers_figure(_comparison()).data[3]
    assert list(link.y) == [0.40, None]  # an infinite linkability is not drawn


def test_chance_lines_and_title():
    fig = attackers_figure(_comparison())
    lines = {(s.yref, s.line.dash): s.y0 for s in fig.layout.shapes}
    assert lines == {("y", "dot"): 0.5, ("y2", "dash"): 0.125}  # the largest 1/N
    assert all(s.line.color == CHANCE_COLOR for s in fig.layout.shapes)
    assert (
        fig.layout.title.text
        == f"Attackers of anon: {STRONGEST_MARK} lda, the strongest on dev (eer)"
    )
    assert fig.layout.yaxis.range == (0, 0.55)
    assert attackers_figure(_comparison(), title="T").layout.title.text == "T"


def test_without_any_chance_level_there_is_no_chance_line_on_the_right():
    frame = _comparison().frame().assign(**{"Chance (1/N)": np.nan})
    fig = attackers_figure(_comparison(frame=lambda: frame))
    assert [s.yref for s in fig.layout.shapes] == ["y"]


@pytest.mark.parametrize("strongest", ["cosine", "lda"])
def test_exactly_one_back_end_is_marked(strongest):
    fig = attackers_figure(_comparison(strongest=strongest))
    marked = [x for x in fig.data[0].x if x.startswith(STRONGEST_MARK)]
    assert marked == [f"{STRONGEST_MARK} {strongest}"]
