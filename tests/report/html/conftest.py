"""The study report pages the tests of ``voxmetrics.report.html`` read, built once per package."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import pytest

from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.report.export import report_html
from voxmetrics.report.html import json_safe, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

from .page_cases import NASTY


@pytest.fixture(scope="package")
def sr():
    """A demo study with a condition named :data:`NASTY`, without a bootstrap."""
    study = demo_study(n_speakers=8).renamed("plain", NASTY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        return build_study_report(replace(study, name="<b>my study</b>"), bootstrap=0)


@pytest.fixture(scope="package")
def page(sr) -> str:
    """The page of :func:`sr` as ``voxmetrics.report.export.report_html`` writes it."""
    return report_html(sr)


# The verdicts that hold up, on the page: a study of two anonymisers under three attackers,
# bootstrapped (tests/verdict_cases.py); every block of the page is checked against the numbers
# of the JSON it embeds.


@pytest.fixture(scope="package")
def vsr():
    """Two anonymisers under three attackers, with the original speech, 50 replicates."""
    from verdict_cases import two_system_study

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        return build_study_report(two_system_study(), bootstrap=50, original="original")


@pytest.fixture(scope="package")
def vpage(vsr) -> str:
    """The page of :func:`vsr`."""
    return study_report_html(vsr)


@pytest.fixture(scope="package")
def vdata(vsr) -> dict:
    """The JSON of :func:`vsr`, as the page embeds it."""
    return json.loads(json.dumps(json_safe(vsr.to_dict()), allow_nan=False))
