"""Privacy against utility on the page (voxmetrics/report/html/utility.py): fronts, ranking."""

from __future__ import annotations

import html
import re

import pytest

from .page_cases import block_of, rows_of, section_of

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_the_ranking_says_how_firm_it_is(vpage, vdata):
    ranking = vdata["privacy_vs_utility"]["ranking"]
    block = block_of(vpage, "ranking-stability")
    tables = block.split("</table>")
    entries = rows_of(tables[0])
    assert len(entries) == len(ranking["rows"]) > 0
    for cells, row in zip(entries, ranking["rows"], strict=True):
        lo, hi = row["rank_interval"]
        assert cells == [
            f"EER >= {row['band']:.0%}",
            str(row["rank"]),
            row["condition"],
            f"{row['p_band']:.3f}",
            f"{lo}–{hi}",
            f"{row['p_rank1']:.3f}",
        ]
    stability = ranking["stability"]
    bands = {c[0]: c[1:] for c in rows_of(tables[1])}
    assert set(bands) == set(stability["p_band"])
    for system, p in stability["p_band"].items():
        assert bands[system][:4] == [f"{v:.3f}" for v in p.values()]
        assert bands[system][4] == (", ".join(k.upper() for k in stability["fixed"][system]))
    taus = rows_of(tables[2])
    for cells, (band, t) in zip(taus, stability["kendall_tau"].items(), strict=True):
        assert cells == [
            f"EER >= {float(band):.0%}",
            f"{t['median']:.3f}",
            f"[{t['low']:.3f}, {t['high']:.3f}]",
            str(t["n"]),
        ]
    notes = section_of(vpage, "utility")
    assert stability["notes"] and all(html.escape(n) in notes for n in stability["notes"])
    assert "taken as fixed" in notes and f"{stability['n_replicates']} speaker-bootstrap" in block


def test_one_front_per_attacker(vpage, vdata):
    pvu = vdata["privacy_vs_utility"]
    section = section_of(vpage, "utility")
    names = re.findall(r'class="figure" data-figure="([^"]+)"', section)
    others = [a for a in pvu["attackers"] if a != pvu["front_attacker"]]
    assert names == ["eer_wer", "eer_uar", "lidmax_wer"] + [f"eer_wer_{a}" for a in others]
    titles = [t for t in re.findall(r'"text":"([^"]+ attacker)"', section) if " vs " in t]
    assert titles[:3] == [
        f"{t}: {pvu['front_attacker']} attacker"
        for t in ("EER vs WER", "EER vs UAR", "LIDmax (bits) vs WER")
    ]
    assert titles[3:] == [f"EER vs WER: {a} attacker" for a in others]
    fronts = re.search(r'<ul class="fronts">(.*?)</ul>', section, re.S).group(1)
    items = re.findall(r"<li><b>(.*?)</b>: (.*?)</li>", fronts, re.S)
    assert {a: re.findall(r"<strong>(.*?)</strong>", m) for a, m in items} == {
        a: [html.escape(n) for n in names] for a, names in pvu["eer_vs_wer"]["fronts"].items()
    }


def test_without_a_bootstrap_nothing_claims_a_stability(page):
    assert "No bootstrap: the ranking comes from one draw" in section_of(page, "utility")
    card = section_of(page, "report-card")
    assert "How firm each level is" not in card and "No bootstrap" in card
    assert "Who stays exposed" in section_of(page, "exposed")
