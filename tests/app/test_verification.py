"""The Verification page through the app's entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import pandas as pd
import pytest
from app_cases import open_page
from streamlit.testing.v1 import AppTest

from voxmetrics.metrics.dcf import dcf, det_curve
from voxmetrics.plots.verification import ape_figure, det_figure
from voxmetrics.synth import demo_study

PAGE = "pages/11_Verification.py"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _page(**state) -> AppTest:
    return open_page(PAGE, timeout=90, state=state)


def test_page_runs_on_the_demo_and_its_table_matches_the_library():
    at = _page()
    assert not at.error
    assert at.title[0].value.startswith("Verification")
    assert [s.value for s in at.subheader] == [
        "Detection costs and d'",
        "DET curves",
        "APE plot (normalised Bayes error)",
    ]
    table = at.dataframe[0].value
    assert table["Condition"].tolist() == demo_study().names
    sm = demo_study().get("anon-mild").eval
    row = table.set_index("Condition").loc["anon-mild"]
    ref = dcf(sm.tar, sm.non)
    assert row["minDCF (P=0.01)"] == pytest.approx(ref.min_dcf[0])
    assert row["minDCF (P=0.001)"] == pytest.approx(ref.min_dcf[1])
    assert pd.isna(row["actDCF (P=0.01)"])


def test_llr_switch_and_custom_priors():
    at = _page(vm_verif_llr=True, vm_verif_priors="0.05")
    assert not at.error
    table = at.dataframe[0].value
    assert [c for c in table.columns if "DCF" in c] == ["minDCF (P=0.05)", "actDCF (P=0.05)"]
    assert table["actDCF (P=0.05)"].notna().all()


def test_bad_priors_say_how_to_fix():
    at = _page(vm_verif_priors="0.01, x")
    assert "give numbers separated by commas" in at.error[0].value
    at = _page(vm_verif_priors="2")
    assert any("strictly between 0 and 1" in e.value for e in at.error)


def test_figures_of_the_page():
    sm = demo_study().get("plain").eval
    fig = det_figure({"plain": det_curve(sm.tar, sm.non, max_points=100)})
    assert [t.name for t in fig.data] == ["plain", "plain (ROCCH)", "EER line"]
    assert fig.layout.yaxis.scaleanchor == "x"
    assert 90 <= len(fig.data[0].x) <= 100
    full = det_curve(sm.tar, sm.non)  # the corners of the steppy curve, a few hundred
    assert 100 < len(det_figure({"plain": full}).data[0].x) == full.pmiss.size <= 500
    from voxmetrics.metrics.dcf import ape_curve

    fig = ape_figure({"plain": ape_curve(sm.tar, sm.non)}, p_targets=[0.01])
    assert [t.name for t in fig.data] == ["default (prior only)", "plain (minimum)"]
    assert fig.layout.shapes[0].x0 == pytest.approx(-4.59512, abs=1e-5)
