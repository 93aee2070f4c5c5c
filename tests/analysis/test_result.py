"""``voxmetrics.analysis._result``: what the analyses read of an evaluated condition.

:class:`ConditionResult` is a Protocol; the engine's ``ConditionReport`` must be one, member by
member and type by type, so that the analyses can take a report without importing the engine
(the layer above them).
"""

from __future__ import annotations

import dataclasses
import typing
import warnings

import numpy as np
import pytest

from voxmetrics.analysis._result import ConditionResult
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.evaluation import evaluate
from voxmetrics.evaluation.result import ConditionReport

MEMBERS = [n for n, v in vars(ConditionResult).items() if isinstance(v, property)]


@pytest.fixture(scope="module")
def report() -> ConditionReport:
    rng = np.random.default_rng(0)
    t, n = 40, 8
    speakers = np.array([f"s{j}" for j in range(n)])
    targets = np.arange(t) % n
    scores = rng.normal(size=(t, n))
    scores[np.arange(t), targets] += 2.0
    sm = ScoreMatrix.from_arrays(
        scores,
        trial_ids=[f"t{i}" for i in range(t)],
        trial_speakers=speakers[targets],
        enrol_speakers=speakers,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(sm)


def test_the_protocol_names_what_the_analyses_read():
    assert MEMBERS == [
        "name", "attacker", "baseline", "lid", "srd", "srd_model", "singling_out",
        "singling_out_interval", "intervals", "zebra", "utility", "replicates", "chance",
        "trials_used", "chance_linkability",
    ]  # fmt: skip
    fields = {f.name for f in dataclasses.fields(ConditionReport)}
    assert all(m in fields or isinstance(getattr(ConditionReport, m, None), property)
               for m in MEMBERS)  # fmt: skip


def test_a_condition_report_is_a_condition_result_type_by_type(report):
    for member in MEMBERS:
        hint = typing.get_type_hints(getattr(ConditionResult, member).fget)["return"]
        value = getattr(report, member)
        if hint is typing.Any:
            continue
        origin = typing.get_origin(hint)
        kinds = typing.get_args(hint) if origin in (typing.Union, type(int | None)) else (hint,)
        kinds = tuple(typing.get_origin(k) or k for k in kinds)
        assert isinstance(value, kinds), (member, hint, value)
    # a full report without a dev set or a bootstrap: these parts are there, these are not
    assert all(getattr(report, m) is not None for m in ("baseline", "srd", "zebra", "chance"))
    assert report.intervals == {} and report.replicates is None and report.utility is None
    assert report.baseline.eer < 0.5 and report.chance_linkability == pytest.approx(1 / 8)
