"""The Threat model page's widget memory and metric row (voxmetrics.ui.threat_page)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from voxmetrics.evaluation.threat import PAPER_EXAMPLE_W, example_frame, example_view
from voxmetrics.ui.threat_page import EDITOR_VERSION_KEY, MATRIX_KEY, W_KEY, WIDGET_DEFAULTS

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _memory_page():
    import streamlit as st

    from voxmetrics.ui.threat_page import keep_widgets, restore_widgets

    restore_widgets()
    st.write(f"w={st.session_state['vm_threat_w']} n={st.session_state['vm_threat_n']}")
    keep_widgets()


def test_widgets_start_from_their_defaults_and_come_back_after_a_page_change():
    at = AppTest.from_function(_memory_page, default_timeout=30).run()
    assert not at.exception
    assert at.markdown[0].value == f"w={PAPER_EXAMPLE_W} n={WIDGET_DEFAULTS['vm_threat_n']}"
    assert at.session_state["vm_threat_n_kept"] == WIDGET_DEFAULTS["vm_threat_n"]
    # another page dropped the widget's own key, its kept copy remains
    at.session_state["vm_threat_n_kept"] = 7
    del at.session_state["vm_threat_n"]
    at.run()
    assert at.markdown[0].value == f"w={PAPER_EXAMPLE_W} n=7"


def _reset_page():
    import streamlit as st

    from voxmetrics.ui.threat_page import reset_example

    if st.button("Reset", key="reset"):
        reset_example()


def test_reset_brings_back_the_example_in_a_new_editor():
    at = AppTest.from_function(_reset_page, default_timeout=30)
    at.session_state[W_KEY] = 3.0
    at.session_state[MATRIX_KEY] = example_frame() * 2
    at.run()
    at.button(key="reset").click().run()
    assert not at.exception
    assert at.session_state[MATRIX_KEY].equals(example_frame())
    assert at.session_state[W_KEY] == PAPER_EXAMPLE_W
    assert at.session_state[EDITOR_VERSION_KEY] == 1  # a new key: the editor forgets its edits
    at.button(key="reset").click().run()
    assert at.session_state[EDITOR_VERSION_KEY] == 2


def _metric_page():
    from voxmetrics.evaluation.threat import example_frame, example_view
    from voxmetrics.ui.threat_page import metric_row

    metric_row(example_view(example_frame()))


def test_the_metric_row_shows_the_views_numbers_in_order():
    at = AppTest.from_function(_metric_page, default_timeout=30).run()
    assert not at.exception
    m = example_view(example_frame()).summary()
    assert [(x.label, x.value) for x in at.metric] == [
        ("EER", f"{m['eer']:.3f}"),
        ("ROCCH-EER", f"{m['eer_rocch']:.3f}"),
        ("Linkability", f"{m['linkability']:.3f}"),
        ("Chance (1/N)", f"{m['chance_linkability']:.3f}"),
        ("ALID (bits)", f"{m['alid']:.2f}"),
        ("LIDmax (bits)", f"{m['lid_max']:.2f}"),
    ]
    assert m["eer"] == 0.5 and m["chance_linkability"] == 0.25  # the paper's 4x4 example
    assert f"log₂ N = {m['lid_ceiling']:.2f} bits" in at.metric[5].help
