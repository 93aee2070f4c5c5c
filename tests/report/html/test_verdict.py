"""The report's verdict blocks (voxmetrics/report/html/verdict.py): summary, card, threats."""

from __future__ import annotations

import html
import re

import pytest

from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_card_cells_carry_their_level(sr, page):
    levels = [c.level for row in sr.card.cells for c in row]
    cells = re.findall(r'<td class="lvl lvl-([a-z]+)"', page)
    assert cells == [lv.replace("/", "") for lv in levels]
    for t in REPORT_CARD_THRESHOLDS.values():  # the legend quotes the thresholds
        assert html.escape(t.explanation) in page


def test_threat_section_names_the_thresholds_when_none_is_called_out(sr, page):
    assert sr.callouts == ()
    section = page[page.index('<section id="threat">') : page.index('<section id="overview">')]
    assert "No condition crossed the call-out thresholds" in section
    assert "0.45" in section and "1 bit" in section and "2x" in section


def test_summary_states_the_settings_used(page):
    summary = page[page.index('<section id="summary">') : page.index('<section id="report-card">')]
    assert "no bootstrap intervals, seed 0" in summary  # the override, not the study's 200
    assert "Verdict" in summary and "at risk on at least one metric" in summary
