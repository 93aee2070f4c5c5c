"""The home page (app.py), the dashboard's entrypoint, with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import pytest
from app_cases import open_app, text_of
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.ui.state import STUDY_KEY

DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _study(at: AppTest) -> Study:
    return at.session_state[STUDY_KEY]


def test_home_opens_on_the_demo_study():
    at = open_app(timeout=30)
    assert _study(at).names == DEMO_NAMES
    text = text_of(at.markdown)
    assert "Current study:" in text and "5 conditions" in text
    assert "1-to-N" in text
    assert at.button(key="vm_home_demo").label == "Load demo study"
