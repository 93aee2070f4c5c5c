"""The ``lid`` block of the command line (design.md contract; metrics.md sections 2 and 7).

``python -m voxmetrics demo DIR`` writes every demo condition in every score format; these
tests run ``evaluate`` in-process through :func:`voxmetrics.cli.main` on those files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from voxmetrics.errors import DegenerateDataWarning
from voxmetrics.metrics.lid import W_MAX, calibrate_lid, lid
from voxmetrics.synth import demo_study

from .cli_cases import run

LID_KEYS = {
    "display_range",
    "beyond_display_range",
    "chance",
    "w",
    "b",
    "alid",
    "pdr",
    "ndr",
    "lid_plus",
    "lid_minus",
    "lid_max",
    "calibration",
    "variant",
    "converged",
    "n_degenerate",
}
FORMATS = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    from voxmetrics.cli import main

    out = tmp_path_factory.mktemp("demo_lid")
    assert main(["demo", str(out), "--format", "all"]) == 0
    return out


def files(demo_dir: Path, condition: str, fmt: str = "npz") -> list[str]:
    """EVAL and --dev arguments (with the Kaldi key files) of one condition and format."""
    ev = demo_dir / f"{condition}_eval{FORMATS[fmt]}"
    dev = demo_dir / f"{condition}_dev{FORMATS[fmt]}"
    argv = [str(ev), "--dev", str(dev)]
    if fmt == "kaldi":
        ev_key, dev_key = Path(f"{ev}.key"), Path(f"{dev}.key")
        assert ev_key.is_file() and dev_key.is_file(), "demo wrote no Kaldi key files"
        argv += ["--trials", str(ev_key), "--dev-trials", str(dev_key)]
    return argv


def evaluate_json(argv, capsys) -> dict:
    status, out, err = run(["evaluate", *argv], capsys)
    assert status == 0, err
    return json.loads(out)


def test_dev_fills_the_lid_block_identically_in_every_format(demo_dir, capsys):
    results = {fmt: evaluate_json(files(demo_dir, "anon-leaky", fmt), capsys) for fmt in FORMATS}
    for fmt, r in results.items():
        block = r["lid"]
        assert set(block) == LID_KEYS, fmt
        assert block.pop("calibration") == "dev" and block["n_degenerate"] == 0, fmt
        chance = dict(block.pop("chance"))
        assert chance.pop("alid") < block["alid"]  # the demo's leak is beyond chance
        assert all(v is None or isinstance(v, float) for v in chance.values()), fmt
        assert (block.pop("variant"), block.pop("converged")) == ("reference-code", True)
        assert block.pop("beyond_display_range") == [], fmt
        assert block.pop("display_range")[0] == -64.0, fmt
        assert all(isinstance(v, float) for k, v in block.items() if k != "n_degenerate"), fmt
    # identical, not merely close: every format round-trips the float64 scores exactly
    first = results["npz"]
    for fmt, r in results.items():
        assert r == first, fmt


def test_lid_block_matches_the_library_on_the_demo_study(demo_dir, capsys):
    # the CLI must calibrate on DEV and evaluate EVAL (not the other way round)
    cond = demo_study().get("anon-leaky")
    expected = lid(
        cond.eval.scores, cond.eval.targets, calibrate_lid(cond.dev.scores, cond.dev.targets)
    ).to_dict()
    block = evaluate_json(files(demo_dir, "anon-leaky"), capsys)["lid"]
    for key, value in expected.items():
        assert block[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    assert block["alid"] == pytest.approx(
        block["pdr"] * block["lid_plus"] + block["ndr"] * block["lid_minus"], rel=1e-12
    )


def test_leaky_condition_has_chance_eer_but_lid_max_above_one_bit(demo_dir, capsys):
    # the point of paper 000: a near-chance pooled EER hides near-certain linkage of a few
    r = evaluate_json(files(demo_dir, "anon-leaky"), capsys)
    assert r["eer"] > 0.45
    assert r["lid"]["lid_max"] > 1.0
    assert r["lid"]["lid_max"] <= math.log2(r["n_enrolled"])
    assert r["n_trials"] == 320 and r["n_enrolled"] == 40


def test_without_dev_lid_is_null(demo_dir, capsys):
    r = evaluate_json([str(demo_dir / "anon-leaky_eval.npz")], capsys)
    assert "lid" in r and r["lid"] is None


def test_cross_calibrate_labels_the_block(demo_dir, capsys):
    r = evaluate_json([str(demo_dir / "anon-leaky_eval.npz"), "--cross-calibrate", "5"], capsys)
    block = r["lid"]
    assert set(block) == LID_KEYS
    assert block["calibration"].startswith("cross-calibrated")
    assert block["calibration"] == "cross-calibrated (5-fold on eval)"


def test_dev_wins_over_cross_calibrate(demo_dir, capsys):
    r = evaluate_json([*files(demo_dir, "plain"), "--cross-calibrate", "5"], capsys)
    assert r["lid"]["calibration"] == "dev"


def test_bootstrap_adds_intervals(demo_dir, capsys):
    plain = evaluate_json(files(demo_dir, "anon-leaky"), capsys)["lid"]
    boot = evaluate_json([*files(demo_dir, "anon-leaky"), "--bootstrap", "200"], capsys)["lid"]
    assert set(boot) == LID_KEYS | {"intervals", "lid_q95"}
    assert set(boot["intervals"]) == {
        "alid", "pdr", "ndr", "lid_plus", "lid_minus", "lid_max", "lid_q95"
    }  # fmt: skip
    for key, (low, high) in boot["intervals"].items():
        if key != "lid_max":
            assert low <= high, key
    # the point estimates do not move; a maximum has no interval, its 0.95 quantile has
    assert {k: boot[k] for k in plain} == plain
    assert boot["intervals"]["lid_max"] == [None, None]
    assert boot["intervals"]["lid_q95"][0] <= boot["lid_q95"] <= boot["lid_max"]
    again = evaluate_json([*files(demo_dir, "anon-leaky"), "--bootstrap", "200"], capsys)["lid"]
    assert again["intervals"] == boot["intervals"]  # seeded (--seed 0)


def test_reference_code_variant_is_sample_sd_balanced_and_penalised(demo_dir, capsys):
    argv = [*files(demo_dir, "anon-mild"), "--lid-variant", "maximum-likelihood"]
    metrics = evaluate_json(argv, capsys)["lid"]
    assert metrics["variant"] == "maximum-likelihood"
    ref = evaluate_json(files(demo_dir, "anon-mild"), capsys)["lid"]  # the default
    assert ref["variant"] == "reference-code" and ref["converged"] is True
    dev = demo_study().get("anon-mild").dev
    expected = calibrate_lid(
        dev.scores, dev.targets, class_weight="balanced", ddof=1, penalty_c=1.0
    )
    # ddof=1 alone would scale w by sqrt(40/39) and leave every LID as it is
    # (tests/metrics/lid/test_calibration.py)
    assert ref["w"] == pytest.approx(expected.w, rel=1e-9)
    assert ref["b"] == pytest.approx(expected.b, rel=1e-9)
    assert ref["w"] != pytest.approx(metrics["w"], rel=1e-3)
    assert ref["alid"] != pytest.approx(metrics["alid"], rel=1e-6)


def test_old_variant_name_is_the_maximum_likelihood_fit(demo_dir, capsys):
    argv = [*files(demo_dir, "anon-mild"), "--lid-variant", "maximum-likelihood"]
    new = evaluate_json(argv, capsys)["lid"]
    old = evaluate_json([*files(demo_dir, "anon-mild"), "--lid-variant", "metrics"], capsys)
    assert old["lid"] == new


def test_separable_dev_gives_the_same_calibration_as_the_library(tmp_path, capsys):
    # separable dev pools: the CLI (float32 files) and the library (float64) agree on the cap
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.data.writers import write_scores

    spk = [f"s{i}" for i in range(6)]

    def matrix(prefix, seed):
        s = np.random.default_rng(seed).normal(0, 0.1, (18, 6))
        t = np.arange(18) % 6
        s[np.arange(18), t] += 1.0
        return ScoreMatrix.from_arrays(
            s,
            trial_ids=[f"{prefix}{i}" for i in range(18)],
            trial_speakers=[f"{prefix}{spk[j]}" for j in t],
            enrol_speakers=[f"{prefix}{x}" for x in spk],
        )

    dev, ev = matrix("d", 1), matrix("e", 2)
    write_scores(dev, tmp_path / "dev.csv", format="csv")
    write_scores(ev, tmp_path / "eval.csv", format="csv")
    with pytest.warns(DegenerateDataWarning):
        ml = {"variant": "maximum-likelihood"}
        cal = calibrate_lid(dev.scores.astype(np.float64), dev.targets, **ml)
    argv = [str(tmp_path / "eval.csv"), "--dev", str(tmp_path / "dev.csv")]
    default = evaluate_json(argv, capsys)["lid"]  # the authors' recipe stays finite
    assert default["converged"] is True and default["variant"] == "reference-code"
    assert default["beyond_display_range"] == []
    out = evaluate_json([*argv, "--lid-variant", "maximum-likelihood"], capsys)
    assert out["lid"]["converged"] is False
    assert out["lid"]["w"] == cal.w == W_MAX
    assert out["lid"]["b"] == pytest.approx(cal.b, rel=1e-6)


@pytest.mark.parametrize(("condition", "status"), [("anon-leaky", 1), ("random", 0)])
def test_fail_on_lid_max(demo_dir, capsys, condition, status):
    got, out, err = run(
        ["evaluate", *files(demo_dir, condition), "--fail-on", "lid.lid_max > 1.0"], capsys
    )
    assert got == status, err
    result = json.loads(out)  # the JSON object is printed either way
    assert (result["lid"]["lid_max"] > 1.0) == (status == 1)
    assert ("--fail-on condition holds" in err) == (status == 1)


def test_fail_on_lid_without_dev_is_bad_input(demo_dir, capsys):
    got, out, err = run(
        ["evaluate", str(demo_dir / "random_eval.npz"), "--fail-on", "lid.lid_max > 1.0"], capsys
    )
    assert got == 2 and out == ""
    assert "lid" in err and "null" in err
