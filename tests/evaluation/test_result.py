"""The condition report (voxmetrics.evaluation.result): its fields and its JSON object."""

from __future__ import annotations

import json
import math

import pytest
from separable_cases import BITS, in_range, quiet_evaluate

from voxmetrics.analysis.tradeoff import has_utility
from voxmetrics.evaluation import evaluate_study
from voxmetrics.report.frames import overview_frame
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def demo_reports():
    return evaluate_study(demo_study(n_speakers=12), bootstrap=0)


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


def test_defaults_give_every_lid_number_and_chance_level_within_range():
    r = quiet_evaluate()
    block = r.to_dict()["lid"]
    assert block["variant"] == "reference-code"
    n = r.lid.n_enrolled
    for key in BITS:
        if key in block:
            assert in_range(block[key], n), (key, block[key])
        assert in_range(block["chance"][key], n), (key, block["chance"][key])
        low, high = block["intervals"].get(key, [None, None])
        assert in_range(low, n) and in_range(high, n)
    assert block["beyond_display_range"] == []
    assert block["display_range"] == [-64.0, pytest.approx(math.log2(5))]
