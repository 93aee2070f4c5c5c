"""`python -m voxmetrics compare STUDY.vxm A B`: the paired comparison of two conditions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.data.studyfile import save_study
from voxmetrics.report import compare_conditions
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def study_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cmp") / "demo.vxm"
    save_study(demo_study(n_speakers=12), path)
    return path


def test_compare_prints_every_number_with_difference_interval_and_p(study_file, capsys):
    assert main(["compare", str(study_file), "plain", "random", "--bootstrap", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"eer", "linkability", "mean_d", "d_ece", "alid", "lid_q95"} <= set(out)
    for v in out.values():
        assert set(v) == {
            "a", "b", "difference", "interval", "p_value", "p_adjusted", "p_resampled", "p_floor"
        }  # fmt: skip
    link = out["linkability"]
    assert link["difference"] == pytest.approx(link["b"] - link["a"])
    assert link["interval"][0] <= link["difference"] <= link["interval"][1]
    assert link["p_value"] < 0.05 <= 1.0  # plain links nearly every trial, random hardly any
    assert link["p_adjusted"] >= link["p_value"]
    assert out["lid_max"]["interval"] == [None, None] and out["lid_max"]["p_value"] is None
    # the library's numbers
    demo = demo_study(n_speakers=12)
    # the CLI's original voices default to the study's first condition (plain)
    lib = compare_conditions(
        demo.get("plain"), demo.get("random"), n_boot=100, original=demo.get("plain")
    )
    assert lib["linkability"].to_dict() == link


def test_compare_of_a_condition_with_itself_is_zero(study_file, capsys):
    assert main(["compare", str(study_file), "random", "random", "--bootstrap", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["eer"]["difference"] == 0.0 and out["eer"]["p_value"] == 1.0


def test_compare_unknown_condition_is_a_clear_error(study_file, capsys):
    assert main(["compare", str(study_file), "plain", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no condition named 'nope'" in err and "plain" in err and "Traceback" not in err


def test_compare_includes_sbls_with_its_own_holm_family(study_file, capsys):
    from voxmetrics.analysis.sbls import attack_sbls, default_attack

    assert main(["compare", str(study_file), "anon-leaky", "anon-mild", "--bootstrap", "60"]) == 0
    out = json.loads(capsys.readouterr().out)
    demo = demo_study(n_speakers=12)
    a, b = demo.get("anon-leaky"), demo.get("anon-mild")
    sa, sb = attack_sbls(default_attack(a)), attack_sbls(default_attack(b))
    for key in ("sbls", "p_attr", "p_assoc", "p_subgroup"):
        c = out[key]
        assert (c["a"], c["b"]) == (getattr(sa, key), getattr(sb, key))
        assert c["difference"] == pytest.approx(c["b"] - c["a"])
        if c["interval"][0] is not None:
            assert c["interval"][0] <= c["interval"][1]
            assert 0 <= c["p_value"] <= c["p_adjusted"] + 1e-12 <= 1 + 1e-12
    # the identity numbers keep their adjustment: SBLS is a family of its own
    # (the CLI's original voices: the study's first condition)
    without = compare_conditions(a, b, n_boot=60, sbls=False, original=demo.get("plain"))
    assert {k: c.to_dict() for k, c in without.items()} == {
        k: v for k, v in out.items() if k not in ("sbls", "p_attr", "p_assoc", "p_subgroup")
    }
