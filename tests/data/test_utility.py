"""voxmetrics.data.utility: a condition's utility numbers (WER, UAR, rho_F0), checked and stored."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from voxmetrics.data.utility import UAR_METHODS, UTILITY_METRICS, Utility
from voxmetrics.errors import VoxMetricsInputError


def test_defaults_and_value():
    u = Utility()
    assert (u.wer, u.uar, u.rho_f0) == (None, None, None)
    assert u.to_dict() == {
        "wer": None,
        "uar": None,
        "rho_f0": None,
        "intervals": {},
        "per_class": {},
        "source": "",
        "uar_method": "",
    }
    u = Utility(wer=1.25, uar=0.5, rho_f0=-0.25)  # a WER may exceed 1
    assert [u.value(m) for m in UTILITY_METRICS] == [1.25, 0.5, -0.25]
    assert u.value("eer") is None
    assert set(UAR_METHODS) == {"fold_mean", "pooled"}


def test_round_trip_through_json():
    u = Utility(
        wer=0.05,
        uar=0.61,
        rho_f0=0.8,
        intervals={"wer": (0.04, 0.06), "uar": (0.6, 0.6)},
        per_class={"ang": 0.7, "sad": 0.0},
        source="results",
        uar_method="pooled",
    )
    back = Utility.from_dict(json.loads(json.dumps(u.to_dict())))
    assert back == u
    assert back.intervals["wer"] == (0.04, 0.06) and back.per_class["sad"] == 0.0


def test_replicates_are_read_only_float64_and_go_to_the_file_only():
    u = Utility(wer=0.05, replicates={"wer": [0.04, 0.06, 0.05]}, draws={"wer": "d:3:0"})
    r = u.replicates["wer"]
    assert r.dtype == np.float64 and r.tolist() == [0.04, 0.06, 0.05]
    assert not r.flags.writeable
    assert "replicates" not in u.to_dict()
    # replicates and draws are not compared: the same numbers are the same utility
    assert u == Utility(wer=0.05)
    # a replicate that is not finite is stored as null and read back as NaN
    v = Utility(uar=0.5, replicates={"uar": [0.5, float("nan")]}, draws={"uar": "x"})
    stored = v.to_file_dict()
    assert stored["replicates"] == {"uar": [0.5, None]} and stored["draws"] == {"uar": "x"}
    back = Utility.from_dict(json.loads(json.dumps(stored)))
    assert back.replicates["uar"][0] == 0.5 and math.isnan(back.replicates["uar"][1])
    assert "replicates" not in Utility(wer=0.1).to_file_dict()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"wer": -0.01}, r"^utility: wer is -0\.01; it must be a fraction at least 0 "),
        ({"uar": 42.5}, r"^utility: uar is 42\.5; it must be a fraction in \[0, 1\] \(a perc"),
        ({"rho_f0": -1.5}, r"rho_f0 is -1\.5; it must be a fraction in \[-1, 1\]"),
        ({"wer": float("nan")}, r"^utility: wer is nan; give a finite number\.$"),
        ({"uar": True}, r"^utility: uar is True; give a finite number\.$"),
        ({"wer": "0.1"}, r"^utility: wer is '0\.1'; give a finite number\.$"),
        ({"per_class": {"ang": 1.5}}, r"per-class accuracy 'ang' is 1\.5; it must be a fraction"),
        ({"intervals": {"eer": (0.1, 0.2)}}, r"utility interval 'eer' must be a \(low, high\)"),
        ({"intervals": {"wer": (0.1,)}}, r"utility interval 'wer' must be a \(low, high\) pair"),
        ({"intervals": {"wer": (0.3, 0.2)}}, r"is \(0\.3, 0\.2\); its low end must not exceed"),
        ({"uar_method": "mean"}, r"uar_method 'mean' is unknown; use one of fold_mean, pooled"),
        ({"replicates": {"eer": [0.1]}}, r"utility replicates 'eer' are not of one of wer, uar"),
    ],
)
def test_bad_numbers_are_refused(kwargs, message):
    with pytest.raises(VoxMetricsInputError, match=message):
        Utility(**kwargs)


def test_from_dict_refuses_unknown_and_malformed_fields():
    with pytest.raises(
        VoxMetricsInputError, match=r"^utility has unknown field\(s\) bleu, mos; the fields are "
    ):
        Utility.from_dict({"wer": 0.1, "mos": 4, "bleu": 1})
    with pytest.raises(VoxMetricsInputError, match=r"^utility is malformed \("):
        Utility.from_dict({"wer": "many"})
    with pytest.raises(VoxMetricsInputError, match=r"^utility is malformed \("):
        Utility.from_dict({"intervals": {"wer": 0.1}})
    # a number out of range keeps its own message
    with pytest.raises(VoxMetricsInputError, match=r"uar is 42\.5; it must be a fraction"):
        Utility.from_dict({"uar": 42.5})
