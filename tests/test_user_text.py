"""User-facing text cites papers by authors and year and points to the documentation (issue 19).

Docstrings, page text (``app.py``, ``pages/``), CLI help, the report and the README must not
send a reader to files outside the repository (the project's internal spec files) or use
internal paper numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(
    r"(?:\b(?:metrics|sbls|design|style)\.md\b|\.\./shared|shared/docs|shared/seeds"
    r"|\b[Pp]apers? 00\d\b|\(paper \d)",
    re.IGNORECASE,
)
FILES = sorted(
    [
        *(ROOT / "voxmetrics").rglob("*.py"),
        ROOT / "app.py",
        *(ROOT / "pages").glob("*.py"),
        ROOT / "README.md",
    ],
    key=lambda p: str(p),
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_internal_references(path):
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert hits == [], "cite authors and year, or the documentation:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_should():
    for bad in (
        "see metrics.md section 2",
        "(paper 000, figure 4)",
        "Paper 001 turns",
        "``shared/docs/sbls.md``",
        "../shared/docs/design.md",
        "style.md 14",
        "Metrics.md section 1",
    ):
        assert FORBIDDEN.search(bad), bad
    for good in ("Šterns et al. 2025", "docs, Methods > LID", "voxmetrics.metrics", "paper_matrix"):
        assert not FORBIDDEN.search(good), good
