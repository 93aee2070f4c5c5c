"""The building blocks of the report's pages: section ids, papers, escaping, tables, figures.

Every user string goes through :func:`esc`; numbers are formatted by one rule; figures become
divs without plotly.js (the page has it once, in its head). The style sheet, the download script
and the method definitions are package data (``voxmetrics/report/assets``, read with
:func:`asset`).
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Iterable, Mapping
from importlib.resources import files
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from voxmetrics._types import MISSING
from voxmetrics.metrics.lid import clamp_lid_number
from voxmetrics.plots.decimate import decimate_figure

__all__ = [
    "PAPERS",
    "REPORT_SECTIONS",
    "Figures",
    "asset",
    "esc",
    "interval_cell",
    "json_name",
    "json_safe",
    "method_definitions",
    "names_of",
    "section",
    "swatch",
    "table_html",
]

REPORT_SECTIONS: dict[str, str] = {
    "summary": "Summary",
    "report-card": "Report card",
    "threat": "Threat call-outs",
    "exposed": "Who stays exposed",
    "overview": "Overview",
    "utility": "Privacy vs utility",
    "lid": "LID: local information disclosure",
    "srd": "SRD: similarity rank disclosure",
    "zebra": "ZEBRA: zero evidence",
    "verification": "Verification: DET, DCF, APE",
    "linkage": "Linkage and singling out",
    "sbls": "SBLS: soft-biometric leakage",
    "intervals": "Intervals and chance",
    "compare": "Paired comparison",
    "methods": "Methods",
    "provenance": "Provenance",
    "data": "Data",
}
"""Section ids (the anchors of the page) and their headings, in page order. ``sbls`` is
present only when some condition has an SBLS."""

PAPERS: dict[str, tuple[str, str, str]] = {
    "000": (
        "Goodbye Equal Error Rate, Hello Local Information Disclosure: Evaluating Voice "
        "Anonymisation against 1-to-N Linkage Threats",
        "D. Šterns, K. Drossos, N. Fernandes, T. Bäckström, C. Palamidessi",
        "",
    ),
    "001": (
        "Legally validated evaluation framework for voice anonymization",
        "N. Vauquier, B. M. L. Srivastava, S. A. Hosseini, E. Vincent; Interspeech 2025",
        "",
    ),
    "002": (
        "Privacy Disclosure of Similarity Rank in Speech and Language Processing",
        "T. Bäckström, M. H. Vali, M. Nguyen, S. Rech; IEEE Trans. Audio, Speech and "
        "Language Processing 34, 2026",
        "",
    ),
    "003": (
        "Measuring Soft Biometric Leakage in Speaker De-Identification Systems",
        "S. Seo, O. Aulov, P. J. Phillips; arXiv:2509.14469, 2025",
        "https://arxiv.org/abs/2509.14469",
    ),
    "004": (
        "The Privacy ZEBRA: Zero Evidence Biometric Recognition Assessment",
        "A. Nautsch et al.; Interspeech 2020",
        "https://doi.org/10.21437/Interspeech.2020-1815",
    ),
}
"""The papers behind the metrics: title, authors and venue, and a link (a DOI where the paper
gives one, else a search for the exact title)."""

_PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}


@functools.cache
def asset(name: str) -> str:
    """The text of ``voxmetrics/report/assets/<name>`` (the page's style sheet, script, texts).

    Examples
    --------
    >>> asset("report.css").startswith(":root {")
    True
    """
    return (files("voxmetrics.report") / "assets" / name).read_text(encoding="utf-8")


def method_definitions() -> list[tuple[str, str, str | None]]:
    """The Methods section's (term, definition, key of its paper in :data:`PAPERS` or None).

    Read from ``assets/methods.md``: each ``## `` heading is a term, an optional ``Paper: KEY``
    line names its paper, and the paragraph that follows is the definition, its lines joined
    with single spaces.

    Examples
    --------
    >>> [(t, p) for t, _, p in method_definitions()][:2]
    [('EER, Cllr, min Cllr', None), ('Linkability', '001')]
    """
    out = []
    for block in asset("methods.md").split("\n## ")[1:]:
        term, _, body = block.partition("\n")
        paragraphs = [p.strip() for p in body.strip().split("\n\n")]
        paper = None
        if paragraphs[0].startswith("Paper: "):
            paper = paragraphs.pop(0).removeprefix("Paper: ")
        out.append((term.strip(), " ".join(" ".join(paragraphs).split("\n")), paper))
    return out


def json_safe(obj: Any) -> Any:
    """``obj`` with NaN and infinities as None, NumPy values as Python ones, tuples as lists.

    What strict JSON (``allow_nan=False``, JavaScript's ``JSON.parse``) accepts.

    Examples
    --------
    >>> json_safe({"a": float("nan"), "b": (np.float64(1.5), np.int64(2)), "c": [np.inf]})
    {'a': None, 'b': [1.5, 2], 'c': [None]}
    """
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is pd.NA or obj is pd.NaT:
        return None
    return obj


def json_name(study_name: str) -> str:
    """The file name of a study report's JSON download (``<study>_report.json``).

    Examples
    --------
    >>> json_name("demo"), json_name("")
    ('demo_report.json', 'study_report.json')
    """
    return f"{study_name or 'study'}_report.json"


def esc(text: Any) -> str:
    """``text`` as HTML-escaped text (quotes too)."""
    return html.escape(str(text), quote=True)


def _missing(v: Any) -> bool:
    if v is None or v is pd.NA:
        return True
    return isinstance(v, float | np.floating) and math.isnan(v)


def _fmt(v: Any, spec: str = ".3f") -> str:
    if _missing(v):
        return MISSING
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return format(float(v), spec)
    return esc(v)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
        v, bool | np.bool_
    )


def swatch(color: str | None) -> str:
    """The colour swatch of a condition (nothing without a colour)."""
    return "" if color is None else f'<span class="swatch" style="background:{color}"></span>'


def table_html(
    df: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    name_column: str = "Condition",
    formats: Mapping[str, str] | None = None,
    wide: bool = False,
) -> str:
    """A DataFrame as an escaped HTML table; condition names get their colour swatch."""
    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    rows = []
    for values in df.itertuples(index=False, name=None):
        cells = []
        for col, v in zip(df.columns, values, strict=True):
            if col == name_column and colors is not None and not _missing(v):
                cells.append(f"<td>{swatch(colors.get(str(v)))}{esc(v)}</td>")
            elif _is_number(v) or _missing(v):
                cells.append(f'<td class="num">{_fmt(v, (formats or {}).get(col, ".3f"))}</td>')
            else:
                cells.append(f"<td>{_fmt(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cls = ' class="wide"' if wide else ""
    return (
        f'<div class="table-wrap"><table{cls}><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def names_of(names: Iterable[str], colors: Mapping[str, str]) -> str:
    """Condition names with their swatches, joined in prose."""
    parts = [f"{swatch(colors.get(n))}<strong>{esc(n)}</strong>" for n in names]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


class Figures:
    """Turns figures into divs (no plotly.js: it is in the head once) with unique ids.

    A figure of more than :data:`~voxmetrics.plots.decimate.MAX_POINTS` points is decimated
    first (:func:`~voxmetrics.plots.decimate.decimate_figure`): the page stays drawable, and
    its JSON and CSV files keep every number.
    """

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, fig: go.Figure, name: str) -> str:
        """``fig`` as a div (decimated when large) with the id ``vx-fig-<n>-<name>``."""
        self.n += 1
        fig = decimate_figure(fig, full="the JSON and CSV files have every number")
        div = fig.to_html(
            full_html=False,
            include_plotlyjs=False,
            include_mathjax=False,
            config=_PLOTLY_CONFIG,
            div_id=f"vx-fig-{self.n}-{name}",
        )
        return f'<div class="figure" data-figure="{esc(name)}">{div}</div>'


def interval_cell(
    intervals: Mapping[str, Any] | None, key: str, digits: int, n_enrolled: int | None = None
) -> str:
    """The interval of ``key`` as "[low, high]", :data:`~voxmetrics._types.MISSING` without it.

    With ``n_enrolled``, LID bits are shown within [-64, log2 N].
    """
    iv = (intervals or {}).get(key)
    if iv is None:
        return MISSING
    if n_enrolled is not None:
        iv = iv.map(lambda x: clamp_lid_number(key, x, n_enrolled))
    return iv.bounds_text(f".{digits}f") or MISSING


def section(sid: str, body: str) -> str:
    """The section ``sid`` of the page: its anchor, its heading, ``body``."""
    return f'<section id="{sid}"><h2>{esc(REPORT_SECTIONS[sid])}</h2>{body}</section>'
