"""The srd and srd_model blocks of ``python -m voxmetrics evaluate`` (design.md, metrics.md 4).

``demo DIR`` writes every demo condition in every format; ``evaluate`` on each format must give
identical SRD blocks, equal to the library on the original matrix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.metrics.srd import fit_beta_binomial, srd
from voxmetrics.synth import demo_study

CONDITIONS = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
SRD_KEYS = {"mean_d", "idr", "std_d", "max_d", "spread"}
MODEL_KEYS = SRD_KEYS | {"loss", "alpha", "beta", "loss_value", "converged", "kl_bits",
                         "rank1_match"}  # fmt: skip
FORMATS = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo_srd")
    assert main(["demo", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def study():
    return demo_study()


def _evaluate(path: Path, capsys, *extra: str) -> dict:
    argv = ["evaluate", str(path), *extra]
    if path.suffix == ".scores":
        argv += ["--trials", f"{path}.key"]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_every_format_gives_the_same_srd_blocks(condition, demo_dir, study, capsys):
    capsys.readouterr()  # drop the file list printed by the demo command
    results = {
        fmt: _evaluate(demo_dir / f"{condition}_eval{suffix}", capsys)
        for fmt, suffix in FORMATS.items()
    }
    first = results["csv"]
    # the statistics, whether the histogram is sparse and the chance levels (no intervals
    # without --bootstrap)
    assert set(first["srd"]) == SRD_KEYS | {"sparse", "chance"}
    assert set(first["srd_model"]) == MODEL_KEYS
    assert first["srd_model"]["loss"] == "CLL"
    for fmt, result in results.items():
        # ranks do not depend on the order of rows or columns, so the blocks are identical
        assert result["srd"] == first["srd"], fmt
        assert result["srd_model"] == first["srd_model"], fmt
        assert result["srd"]["idr"] == result["linkability"], fmt
    # and they are the library's numbers on the matrix the demo wrote
    sm = study.get(condition).eval
    ref = srd(sm.scores, sm.targets)
    assert {k: first["srd"][k] for k in SRD_KEYS} == ref.to_dict()
    assert first["srd"]["sparse"] == ref.sparse
    fit = fit_beta_binomial(ref.histogram, loss="CLL")
    assert first["srd_model"]["alpha"] == fit.alpha
    assert first["srd_model"]["beta"] == fit.beta
    assert first["srd_model"]["converged"] is fit.converged


def test_srd_block_values_are_in_range(demo_dir, capsys):
    capsys.readouterr()
    for condition in ("plain", "random"):
        r = _evaluate(demo_dir / f"{condition}_eval.npz", capsys)
        s, n = r["srd"], r["n_enrolled"]
        assert 0 <= s["mean_d"] <= s["max_d"] <= 5.321928094887363  # log2 40
        assert 0 <= s["spread"] <= 1 and 0 <= s["idr"] <= 1
        assert n == 40
    # plain: 317 of 320 trials at rank 1; random: ranks near uniform
    assert _evaluate(demo_dir / "plain_eval.npz", capsys)["srd"]["mean_d"] > 5
    assert _evaluate(demo_dir / "random_eval.npz", capsys)["srd"]["mean_d"] < 0.5


def test_fail_on_can_use_the_srd_blocks(demo_dir, capsys):
    capsys.readouterr()
    path = str(demo_dir / "plain_eval.npz")
    assert main(["evaluate", path, "--fail-on", "srd.mean_d > 1.0"]) == 1
    _, err = capsys.readouterr()
    assert "--fail-on condition holds: srd.mean_d > 1.0" in err
    assert main(["evaluate", path, "--fail-on", "srd_model.idr < 0.5"]) == 0
    capsys.readouterr()
