"""The report's result sections (voxmetrics/report/html/sections.py): each against the JSON."""

from __future__ import annotations

import html
import re

import pytest

from voxmetrics.report.html import study_report_html

from .page_cases import block_of, rows_of, section_of

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_deid_and_g_vd_per_anonymiser(vpage, vdata):
    anonymisers = vdata["voice_similarity"]["anonymisers"]
    rows = rows_of(block_of(vpage, "anonymisers"))
    assert [r[0] for r in rows] == list(anonymisers) == ["alpha", "beta"]
    for cells, a in zip(rows, anonymisers.values(), strict=True):
        lo, hi = a["intervals"]["deid"]
        assert cells[1:3] == [f"{a['deid']:.3f}", f"[{lo:.3f}, {hi:.3f}]"]
        assert cells[3] == f"{a['g_vd']:.2f}"
        assert cells[5:] == [a["voices_from"], ", ".join(a["conditions"])]


def test_each_comparison_is_headed_in_the_order_of_its_columns(vpage, vdata):
    section = section_of(vpage, "compare")
    reference = vdata["comparison_reference"]
    for pair, numbers in vdata["comparisons"].items():
        b = pair.removesuffix(f" vs {reference}")
        head = f"<h3>{html.escape(b)} vs {html.escape(reference)} <small>(B − A"
        start = section.index(head)
        table = section[start : section.index("</table>", start)]
        columns = re.findall(r"<th>(.*?)</th>", table)
        assert columns[:4] == ["Number", f"B: {html.escape(b)}", f"A: {reference}", "B − A"]
        eer = next(r for r in rows_of(table) if r[0] == "EER")
        c = numbers["eer"]
        assert eer[1:4] == [f"{c['b']:.3f}", f"{c['a']:.3f}", f"{c['difference']:.3f}"]
        assert eer[-1] == "fraction of errors; 0.5 = chance, 0 = every comparison right"


def test_every_interval_is_read_against_its_unit_and_reference(vsr, vpage):
    section = section_of(vpage, "intervals")
    assert "<th>Unit and reference</th>" in section
    rows = {(r[0], r[1]): r for r in rows_of(section)}
    alid = rows[("alpha (ignorant)", "ALID (bits)")]
    assert alid[-1] == "bits; 0 = nothing learned, at most log2 N = 3.32"
    assert rows[("alpha (ignorant)", "SBLS")][-1].startswith("score in [0, 1]")
    assert "Units and reference points" in section_of(vpage, "overview")


def test_report_page_has_the_interval_and_comparison_sections(demo_report):
    page = study_report_html(demo_report)
    assert 'id="intervals"' in page and 'id="compare"' in page
    assert "random vs plain" in page and "p (Holm)" in page
