"""The study report page (issue 9): sections, plotly.js once, offline, escaped, its JSON island."""

from __future__ import annotations

import html
import html.parser
import json
import re
from dataclasses import replace

import pytest

from voxmetrics.evaluation.card import REPORT_CARD_THRESHOLDS
from voxmetrics.report.export import report_html
from voxmetrics.report.html import REPORT_SECTIONS, json_safe, study_report_html
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
NASTY = '<script>alert("x")</script>&amp'
PLOTLY_MARKER = "* plotly.js v"  # the banner at the top of the plotly.js bundle
PLOTLY_SCRIPT = re.compile(r'<script type="text/javascript" id="plotlyjs">.*?</script>', re.S)


@pytest.fixture(scope="module")
def sr():
    study = demo_study(n_speakers=8).renamed("plain", NASTY)
    return build_study_report(replace(study, name="<b>my study</b>"), bootstrap=0)


@pytest.fixture(scope="module")
def page(sr) -> str:
    return report_html(sr)


def _without_plotlyjs(page: str) -> str:
    stripped, n = PLOTLY_SCRIPT.subn("", page)
    assert n == 1
    return stripped


def test_every_section_is_there_in_order(page):
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == list(REPORT_SECTIONS)
    for sid in REPORT_SECTIONS:  # and linked from the table of contents
        assert f'href="#{sid}"' in page


def test_sbls_section_only_with_sbls():
    study = demo_study(n_speakers=8)
    no_embeddings = replace(
        study, conditions=tuple(replace(c, embeddings=None) for c in study.conditions)
    )
    page = study_report_html(build_study_report(no_embeddings, bootstrap=0))
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == [s for s in REPORT_SECTIONS if s != "sbls"]
    assert 'href="#sbls"' not in page
    assert "Without singling out" in page  # says which conditions lack it


def test_plotly_js_embedded_exactly_once(page):
    assert page.count(PLOTLY_MARKER) == 1
    assert page.count('id="plotlyjs"') == 1
    body = _without_plotlyjs(page)
    n_figures = body.count('<div class="figure"')
    assert n_figures >= 9
    assert body.count("Plotly.newPlot(") == n_figures
    assert body.count('class="plotly-graph-div"') == n_figures
    assert 'data-figure="ece_profiles"' in body  # ECE profiles passed in by export.report_html


def test_loads_nothing_from_the_network(page):
    body = _without_plotlyjs(page)
    assert not re.search(r"""\bsrc\s*=\s*["']?\s*(https?:)?//""", body, re.I)
    assert "@import" not in body and "url(" not in body
    assert not re.search(r"mathjax|cdn\.|fonts\.googleapis", body, re.I)
    # the only external addresses: plain links to the papers
    for m in re.finditer(r"""\bhref\s*=\s*["']?\s*(https?:)?//""", body, re.I):
        tag = body[body.rfind("<", 0, m.start()) : m.start()]
        assert tag.startswith('<a class="paper"'), tag
    assert len(re.findall(r'<a class="paper" href="https://', body)) >= 5


def test_user_strings_are_escaped(page):
    assert NASTY not in page
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp" in page
    assert "<b>my study</b>" not in page
    assert "<title>VoxMetrics report: &lt;b&gt;my study&lt;/b&gt;</title>" in page
    # no script element but the two JSON / JS ones of the page and plotly's per figure
    body = _without_plotlyjs(page)
    assert body.count("<script") == body.count("</script>")


def test_json_island_is_every_number(sr, page):
    m = re.search(
        r'<script type="application/json" id="voxmetrics-data">(.*?)</script>', page, re.S
    )
    assert m is not None
    assert "<" not in m.group(1)  # nothing that could close the element early
    data = json.loads(m.group(1), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert data == json.loads(json.dumps(json_safe(sr.to_dict()), allow_nan=False))
    assert list(data["conditions"]) == [r.name for r in sr.reports]
    assert data["conditions"][NASTY]["eer"] == sr.reports[0].baseline.eer


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


def test_title_and_print_css(sr):
    page = study_report_html(sr, title="Audit <2026>")
    assert "<title>Audit &lt;2026&gt;</title>" in page
    assert "@media print" in page and "break-before: page" in page
    assert 'data-figure="ece_profiles"' in page  # the report carries its ECE curves




# ------------------------------------------------- the verdicts that hold up, on the page
# A study of two anonymisers under three attackers, bootstrapped (tests/verdict_cases.py): every
# new block of the page is checked against the numbers of the JSON it embeds.


@pytest.fixture(scope="module")
def vsr():
    from verdict_cases import two_system_study

    return build_study_report(two_system_study(), bootstrap=50, original="original")


@pytest.fixture(scope="module")
def vpage(vsr) -> str:
    return study_report_html(vsr)


@pytest.fixture(scope="module")
def vdata(vsr) -> dict:
    return json.loads(json.dumps(json_safe(vsr.to_dict()), allow_nan=False))


def _section(page: str, sid: str) -> str:
    start = page.index(f'<section id="{sid}">')
    return page[start : page.index("</section>", start)]


def _block(page: str, bid: str) -> str:
    """The block ``<div class="block" id=bid>`` up to its own closing tag."""
    start = page.index(f'<div class="block" id="{bid}">')
    depth = 0
    for m in re.finditer(r"<div\b|</div>", page[start:]):
        depth += 1 if m.group() == "<div" else -1
        if depth == 0:
            return page[start : start + m.end()]
    raise AssertionError(f"block {bid} is not closed")


def _rows(fragment: str) -> list[list[str]]:
    """The text of each body cell of each table row of an HTML fragment."""
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", fragment, re.S):
        for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
            rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows


class _Balance(html.parser.HTMLParser):
    """Every element closed in order (void elements aside), and no id given twice."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "col", "wbr", "source"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.ids += [v for k, v in attrs if k == "id"]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def test_the_page_is_well_formed_with_unique_ids(vpage, page):
    for p in (vpage, page):
        parser = _Balance()
        parser.feed(_without_plotlyjs(p))
        assert parser.errors == [] and parser.stack == []
        assert len(parser.ids) == len(set(parser.ids))


def test_the_ranking_says_how_firm_it_is(vpage, vdata):
    ranking = vdata["privacy_vs_utility"]["ranking"]
    block = _block(vpage, "ranking-stability")
    tables = block.split("</table>")
    entries = _rows(tables[0])
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
    bands = {c[0]: c[1:] for c in _rows(tables[1])}
    assert set(bands) == set(stability["p_band"])
    for system, p in stability["p_band"].items():
        assert bands[system][:4] == [f"{v:.3f}" for v in p.values()]
        assert bands[system][4] == (", ".join(k.upper() for k in stability["fixed"][system]))
    taus = _rows(tables[2])
    for cells, (band, t) in zip(taus, stability["kendall_tau"].items(), strict=True):
        assert cells == [
            f"EER >= {float(band):.0%}",
            f"{t['median']:.3f}",
            f"[{t['low']:.3f}, {t['high']:.3f}]",
            str(t["n"]),
        ]
    notes = _section(vpage, "utility")
    assert stability["notes"] and all(html.escape(n) in notes for n in stability["notes"])
    assert "taken as fixed" in notes and f"{stability['n_replicates']} speaker-bootstrap" in block


def test_one_front_per_attacker(vpage, vdata):
    pvu = vdata["privacy_vs_utility"]
    section = _section(vpage, "utility")
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


def test_the_card_says_which_levels_flip_and_why(vsr, vpage, vdata):
    card = _section(vpage, "report-card")
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
    shares = {r[0]: r[1:] for r in _rows(block.split("<h3>How firm each level is</h3>")[1])}
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


def test_who_stays_exposed(vpage, vdata):
    exposed = vdata["exposed_speakers"]
    section = _section(vpage, "exposed")
    assert REPORT_SECTIONS["exposed"] == "Who stays exposed" and "rank-1 rate" in section
    counts = {r[0]: r[1:] for r in _rows(section.split("</table>")[0])}
    assert list(counts) == exposed["conditions"]
    table = _rows(section.split("</table>")[1])
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


def test_provenance_and_how_to_check_it(tmp_path):
    from verdict_cases import two_system_study

    from voxmetrics.data.provenance import InputFile

    f = tmp_path / "my study.vxm"
    f.write_bytes(b"not read")
    sr = build_study_report(
        two_system_study(), bootstrap=0, inputs=[InputFile.of(f, role="study file")]
    )
    p = json_safe(sr.to_dict())["provenance"]
    section = _section(study_report_html(sr), "provenance")
    (rec,) = p["inputs"]
    assert [rec["role"], rec["path"], str(rec["size"]), rec["sha256"]] in _rows(section)
    for name, version in p["libraries"].items():
        assert f"<td>{name}</td><td>{html.escape(version or 'not installed')}</td>" in section
    assert f"<td>voxmetrics</td><td>{p['voxmetrics']}</td>" in section
    assert f"<dt>Seed</dt><dd>{p['seed']}</dd>" in section
    assert "linkability_rule: code" in section and "original: original" in section
    for name, rec in p["attackers"].items():
        assert f"<td>{html.escape(name)}</td><td>{rec['attacker']}</td>" in section
        assert f'title="{p["data"][name]}"' in section
    assert html.escape(f"report '{f}' --verify 'two systems_report.json'") in section
    assert REPORT_SECTIONS["provenance"] == "Provenance"


def test_deid_and_g_vd_per_anonymiser(vpage, vdata):
    anonymisers = vdata["voice_similarity"]["anonymisers"]
    rows = _rows(_block(vpage, "anonymisers"))
    assert [r[0] for r in rows] == list(anonymisers) == ["alpha", "beta"]
    for cells, a in zip(rows, anonymisers.values(), strict=True):
        lo, hi = a["intervals"]["deid"]
        assert cells[1:3] == [f"{a['deid']:.3f}", f"[{lo:.3f}, {hi:.3f}]"]
        assert cells[3] == f"{a['g_vd']:.2f}"
        assert cells[5:] == [a["voices_from"], ", ".join(a["conditions"])]


def test_each_comparison_is_headed_in_the_order_of_its_columns(vpage, vdata):
    section = _section(vpage, "compare")
    reference = vdata["comparison_reference"]
    for pair, numbers in vdata["comparisons"].items():
        b = pair.removesuffix(f" vs {reference}")
        head = f"<h3>{html.escape(b)} vs {html.escape(reference)} <small>(B − A"
        start = section.index(head)
        table = section[start : section.index("</table>", start)]
        columns = re.findall(r"<th>(.*?)</th>", table)
        assert columns[:4] == ["Number", f"B: {html.escape(b)}", f"A: {reference}", "B − A"]
        eer = next(r for r in _rows(table) if r[0] == "EER")
        c = numbers["eer"]
        assert eer[1:4] == [f"{c['b']:.3f}", f"{c['a']:.3f}", f"{c['difference']:.3f}"]
        assert eer[-1] == "fraction of errors; 0.5 = chance, 0 = every comparison right"


def test_every_interval_is_read_against_its_unit_and_reference(vsr, vpage):
    section = _section(vpage, "intervals")
    assert "<th>Unit and reference</th>" in section
    rows = {(r[0], r[1]): r for r in _rows(section)}
    alid = rows[("alpha (ignorant)", "ALID (bits)")]
    assert alid[-1] == "bits; 0 = nothing learned, at most log2 N = 3.32"
    assert rows[("alpha (ignorant)", "SBLS")][-1].startswith("score in [0, 1]")
    assert "Units and reference points" in _section(vpage, "overview")


def test_without_a_bootstrap_nothing_claims_a_stability(page):
    assert "No bootstrap: the ranking comes from one draw" in _section(page, "utility")
    card = _section(page, "report-card")
    assert "How firm each level is" not in card and "No bootstrap" in card
    assert "Who stays exposed" in _section(page, "exposed")
