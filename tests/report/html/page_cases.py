"""Helpers of the HTML report's tests: a name that must be escaped, and readers of the page.

The pages themselves are fixtures of ``conftest.py``: ``sr``/``page`` (a demo study with a
hostile condition name, no bootstrap) and ``vsr``/``vpage``/``vdata`` (two anonymisers under
three attackers, bootstrapped: tests/verdict_cases.py).
"""

from __future__ import annotations

import html
import re

NASTY = '<script>alert("x")</script>&amp'
"""A condition name that would run a script if the page did not escape it."""


def section_of(page: str, sid: str) -> str:
    """The section ``<section id=sid>`` of a page, up to its closing tag."""
    start = page.index(f'<section id="{sid}">')
    return page[start : page.index("</section>", start)]


def block_of(page: str, bid: str) -> str:
    """The block ``<div class="block" id=bid>`` up to its own closing tag."""
    start = page.index(f'<div class="block" id="{bid}">')
    depth = 0
    for m in re.finditer(r"<div\b|</div>", page[start:]):
        depth += 1 if m.group() == "<div" else -1
        if depth == 0:
            return page[start : start + m.end()]
    raise AssertionError(f"block {bid} is not closed")


def rows_of(fragment: str) -> list[list[str]]:
    """The text of each body cell of each table row of an HTML fragment."""
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", fragment, re.S):
        for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
            rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows
