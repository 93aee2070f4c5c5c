"""Fixtures of the LID tests: the demo study, Hypothesis kept safe from SpeechBrain."""

from __future__ import annotations

import pytest
from metric_registry import forget_unimportable_modules

from voxmetrics.synth import demo_study


@pytest.fixture(autouse=True)
def _hypothesis_safe_after_speechbrain():
    # other test modules import SpeechBrain, whose lazy modules break hypothesis' module scan
    forget_unimportable_modules()


@pytest.fixture(scope="module")
def demo():
    return demo_study()
