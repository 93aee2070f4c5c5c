"""Shared widgets (voxmetrics.ui.widgets): tables, figure downloads, reports, switches."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def test_a_downloaded_only_figure_is_built_on_click(monkeypatch):
    import plotly.graph_objects as go

    from voxmetrics.ui import widgets

    files: dict[str, object] = {}
    monkeypatch.setattr(
        widgets, "download_button", lambda label, data, name, mime, **kw: files.update({name: data})
    )
    monkeypatch.setattr(widgets, "find_chromium", lambda: None)
    built = []

    def make() -> go.Figure:
        built.append(True)
        return go.Figure(layout_title_text="the card")

    widgets.download_figure(make, "card")
    assert list(files) == ["card.html"] and not built  # nothing built before the click
    page = files["card.html"]()
    assert built == [True] and "the card" in page
    widgets.download_figure(go.Figure(layout_title_text="shown"), "shown")
    assert "shown" in files["shown.html"]()


def _table_script():
    import numpy as np
    import pandas as pd

    from voxmetrics import ui

    ui.show_table(
        pd.DataFrame({"Condition": ["a", "b"], "DeID": [0.5, np.nan], "Why": [None, "x"]}),
        "t.csv",
    )


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
def test_tables_show_a_dash_not_none():
    at = AppTest.from_function(_table_script, default_timeout=60).run()
    assert not at.exception
    assert at.dataframe[0].proto.placeholder == "–"  # voxmetrics._types.MISSING, as the reports
    df = at.dataframe[0].value
    assert df["DeID"].isna().tolist() == [False, True]  # the data stay missing (CSV: empty)
