"""The LID page's widgets and text (voxmetrics.ui.lid_page)."""

from __future__ import annotations

import pytest

from voxmetrics.synth import demo_study
from voxmetrics.ui.lid_page import ceiling_example

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_lid_intro_gives_the_ceiling_of_the_study():
    assert ceiling_example(demo_study(n_speakers=5)) == "here 2.3 bits: N = 5 enrolled speakers"
    assert "5.3 bits for N = 40" not in ceiling_example(demo_study(n_speakers=5))
