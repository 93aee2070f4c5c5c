"""The ``zebra`` block of ``python -m voxmetrics evaluate`` (design.md command-line contract)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.metrics.zebra import zebra
from voxmetrics.synth import demo_study

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
FORMATS = {"csv": ".csv", "parquet": ".parquet", "npz": ".npz", "kaldi": ".scores"}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo_zebra")
    assert main(["demo", str(out)]) == 0  # every format by default
    return out


def _argv(demo_dir: Path, name: str, fmt: str) -> list[str]:
    path = demo_dir / f"{name}_eval{FORMATS[fmt]}"
    argv = ["evaluate", str(path)]
    if fmt == "kaldi":
        key = Path(f"{path}.key")
        assert key.is_file(), "write_scores(format='kaldi') wrote no .key file"
        argv += ["--trials", str(key)]
    return argv


def _zebra_block(argv: list[str], capsys) -> tuple[int, dict]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    return status, json.loads(out)["zebra"]


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_every_format_gives_the_same_zebra_block(demo_dir, capsys, name):
    blocks = {fmt: _zebra_block(_argv(demo_dir, name, fmt), capsys)[1] for fmt in FORMATS}
    first = blocks["csv"]
    assert set(first) == {"d_ece", "log10_l", "tag", "odds"}  # no intervals without bootstrap
    for fmt, block in blocks.items():
        assert block == first, fmt  # the writers round-trip the scores exactly
    # and it is the library's ZEBRA of the simulated eval matrix
    cond = demo_study().get(name)
    assert first == zebra(cond.eval.tar, cond.eval.non).to_dict()


def test_bootstrap_adds_intervals(demo_dir, capsys):
    argv = [*_argv(demo_dir, "anon-mild", "npz"), "--bootstrap", "100", "--seed", "3"]
    _, block = _zebra_block(argv, capsys)
    assert set(block) == {"d_ece", "log10_l", "tag", "odds", "intervals", "log10_l_q95"}
    assert set(block["intervals"]) == {"d_ece", "log10_l", "log10_l_q95"}
    assert block["intervals"]["log10_l"] == [None, None]  # a maximum: see its 0.95 quantile
    for key in ("d_ece", "log10_l_q95"):
        low, high = block["intervals"][key]
        assert low <= high, key
    assert 0.0 <= block["intervals"]["d_ece"][0] <= block["intervals"]["d_ece"][1] <= 0.7214
    _, again = _zebra_block(argv, capsys)
    assert again == block  # seeded


@pytest.mark.parametrize(("name", "status"), [("plain", 1), ("random", 0)])
def test_fail_on_expected_disclosure(demo_dir, capsys, name, status):
    argv = [*_argv(demo_dir, name, "csv"), "--fail-on", "zebra.d_ece > 0.5"]
    got = main(argv)
    out, err = capsys.readouterr()
    assert got == status
    d_ece = json.loads(out)["zebra"]["d_ece"]
    assert (d_ece > 0.5) == (status == 1)
    assert ("--fail-on condition holds" in err) == (status == 1)


def test_fail_on_tag(demo_dir, capsys):
    # the tag is a string: "zebra.tag == 'D'" holds for plain (log10 l = 4.04, tag D)
    argv = [*_argv(demo_dir, "plain", "npz"), "--fail-on", "zebra.tag == 'D'"]
    assert main(argv) == 1
    capsys.readouterr()
