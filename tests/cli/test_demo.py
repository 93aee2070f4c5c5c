"""``python -m voxmetrics demo DIR``: the demo study as score files, embeddings and a study file."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.data.studyfile import load_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


@pytest.fixture(scope="module")
def demo_vxm(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "vxm"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["demo.vxm"]  # only the study file
    return out / "demo.vxm"


def test_demo_vxm_is_the_demo_study(demo_vxm):
    study = load_study(demo_vxm)
    assert study.names == DEMO_NAMES
    assert all(c.dev is not None and c.embeddings is not None for c in study.conditions)
