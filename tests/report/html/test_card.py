"""The report card's notes on the page (voxmetrics/report/html/card.py): flips and stability."""

from __future__ import annotations

import html

import pytest

from .page_cases import rows_of, section_of

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_the_card_says_which_levels_flip_and_why(vsr, vpage, vdata):
    card = section_of(vpage, "report-card")
    block = card[card.index('id="card-notes"') : card.index("<h3>Legend</h3>")]
    assert "One rule for every cell" in block and "small N" in block
    flips = [(n, k, c) for n, cells in vdata["report_card"]["conditions"].items()
             for k, c in cells.items() if c["flips"]]  # fmt: skip
    assert flips, "the two-system study has levels that flip"
    for name, label, cell in vsr.card.flipping():
        assert (
            f"<b>{html.escape(name)}</b>, {html.escape(label)}: ⇅ the level ({cell.level}) holds "
            f"in {cell.stability:.1%} of {cell.n_replicates} replicates"
        ) in block
    for name, label, note in vsr.card.notes():
        assert f"<b>{html.escape(name)}</b>, {html.escape(label)}: {html.escape(note)}" in block
    shares = {r[0]: r[1:] for r in rows_of(block.split("<h3>How firm each level is</h3>")[1])}
    for name, cells in vdata["report_card"]["conditions"].items():
        expected = [
            "–"
            if c["stability"] is None
            else f"{c['stability']:.1%}" + (" ⇅" if c["flips"] else "")
            for c in cells.values()
        ]
        assert shares[name] == expected
    # the flip mark is in the card's own cells too
    assert card.count("⇅") >= 2 * len(flips)
