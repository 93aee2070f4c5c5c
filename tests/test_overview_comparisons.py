"""The Overview page's comparisons reuse the card's attackers and the condition reports."""

from __future__ import annotations

import pytest

from voxmetrics.synth import demo_study


@pytest.mark.usefixtures("fresh_app_caches")
def test_the_overview_compares_without_computing_the_reports_again(monkeypatch):
    # the card's attackers and the condition reports serve the comparison: no attacker is
    # trained twice, and the comparison computes no LID, singling out or replicate again
    from streamlit.testing.v1 import AppTest

    from voxmetrics.analysis import sbls as sbls_module
    from voxmetrics.evaluation import compare as compare_module
    from voxmetrics.ui.state import STUDY_KEY

    trained: list[str] = []
    attack = sbls_module.default_attack

    def counted(cond):
        trained.append(cond.name)
        return attack(cond)

    def refused(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(sbls_module, "default_attack", counted)
    for name in ("evaluate", "singling_out_of", "replicate_condition"):
        monkeypatch.setattr(compare_module, name, refused)
    demo = demo_study(n_speakers=10)
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.session_state[STUDY_KEY] = demo
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception and not at.error
    assert sorted(trained) == sorted(c.name for c in demo.conditions)
    tables = [d.value for d in at.dataframe]
    assert any("p (Holm)" in t.columns for t in tables)
