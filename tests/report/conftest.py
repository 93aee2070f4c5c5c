"""The study report the tests of ``voxmetrics.report`` share, built once per package."""

from __future__ import annotations

import warnings

import pytest

from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@pytest.fixture(scope="package")
def demo_report():
    """The demo study of 12 speakers, 60 bootstrap replicates."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return build_study_report(demo_study(n_speakers=12), bootstrap=60)
