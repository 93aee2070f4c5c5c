"""Who stays exposed (voxmetrics/report/html/exposure.py): the speakers table of the page."""

from __future__ import annotations

import pytest

from voxmetrics.report.html import REPORT_SECTIONS

from .page_cases import rows_of, section_of

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_who_stays_exposed(vpage, vdata):
    exposed = vdata["exposed_speakers"]
    section = section_of(vpage, "exposed")
    assert REPORT_SECTIONS["exposed"] == "Who stays exposed" and "rank-1 rate" in section
    counts = {r[0]: r[1:] for r in rows_of(section.split("</table>")[0])}
    assert list(counts) == exposed["conditions"]
    table = rows_of(section.split("</table>")[1])
    listed = [s for s in exposed["speakers"] if s["n_exposed"] > 0]
    assert [r[0] for r in table] == [s["speaker"] for s in listed]
    for cells, s in zip(table, listed, strict=True):
        assert cells[1:5] == [
            s["sex"],
            s["age_group"],
            f"{s['n_exposed']} of {s['n_conditions']}",
            f"{s['mean_rank1_rate']:.3f}",
        ]
        for cell, name in zip(cells[5:], exposed["conditions"], strict=True):
            h = s["conditions"][name]
            assert cell.startswith(f"{h['rank1_rate']:.3f}LIDmax {h['lid_max']:.2f} bits")
            assert cell.endswith("singled out") == bool(h["singled_out"])
    for name in exposed["conditions"]:
        n = sum(s["conditions"][name]["exposed"] for s in exposed["speakers"])
        assert counts[name][0] == f"{n} of {len(exposed['speakers'])}"
    assert "chance 1/N = 0.100; LID at most log2 N = 3.32 bits" in section
