r"""Paper-ready tables: the report's results as LaTeX (booktabs) and Markdown.

:func:`results_tables` turns a :class:`~voxmetrics.report.study.StudyReport` into the tables of
its report (overview, report card, VoicePrivacy ranking, LID, SRD, ZEBRA, linkage, SBLS), each
cell already written as text, bootstrap intervals beside their value ("0.470 [0.440, 0.500]").
:func:`table_latex` and :func:`table_markdown` write any such table (or any DataFrame of
numbers and text) for a paper or a README; :func:`write_tables` writes them all to a folder,
which is what ``python -m voxmetrics report STUDY.vxm --latex DIR --markdown DIR`` does.

The LaTeX needs ``\usepackage{booktabs}`` in the preamble; every LaTeX special character of
the text (``& % $ # _ { } ~ ^ \``) is escaped, and the few non-ASCII symbols of the labels
(α, β, −, –) are written as LaTeX.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from voxmetrics._types import MISSING
from voxmetrics.analysis.lid import LID_COLUMNS, lid_table
from voxmetrics.analysis.linkage import linkage_table
from voxmetrics.analysis.srd import srd_table
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import interval_text
from voxmetrics.metrics.lid import clamp_lid_number
from voxmetrics.report.study import StudyReport

__all__ = [
    "MISSING",
    "TABLE_CAPTIONS",
    "format_interval",
    "format_value",
    "latex_escape",
    "render_tables",
    "results_tables",
    "table_latex",
    "table_markdown",
    "write_tables",
]

TABLE_CAPTIONS: dict[str, str] = {
    "overview": "Every condition at a glance: the 1-to-1 baselines beside the 1-to-N metrics.",
    "report_card": "Report card: each metric with the level its threshold gives (⇅: the level "
    "is kept by fewer than 80 % of the speaker-bootstrap replicates).",
    "ranking": "VoicePrivacy 2024 ranking: systems in each band of the semi-informed attacker's "
    "EER (at least 10, 20, 30, 40 %), ranked by WER, then UAR (fractions); with a bootstrap, "
    "P(in band) (share of replicates whose EER reaches the band), the rank's 95 % interval and "
    "P(rank 1).",
    "lid": "Local information disclosure (LID, bits) with 95 % speaker-level bootstrap intervals.",
    "srd": "Similarity rank disclosure: statistics of the data and of the beta-binomial model "
    "(CLL loss).",
    "zebra": "ZEBRA: expected disclosure D_ECE (bits) and worst-case evidence log10 l, with 95 % "
    "speaker-level bootstrap intervals.",
    "linkage": "Linkability at the full N and singling out, with their chance levels; DeID and "
    "G_VD against the original voices.",
    "sbls": "Soft Biometric Leakage Score and its components (1 = no measurable leakage).",
    "sbls_attributes": "Soft biometric leakage per attribute.",
}
"""Caption of each table of :func:`results_tables`, by name, in report order."""

PathLike = str | os.PathLike[str]

_NUM = r"[-−]?(?:\d+(?:\.\d*)?|\.\d+|inf|nan)"
_NUMBER = re.compile(rf"{_NUM}(?: \[{_NUM}, {_NUM}\])?", re.IGNORECASE)
"""A number, alone or with its interval (a right-aligned cell)."""


def _missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float | np.floating) and math.isnan(v)


def format_value(v: Any, digits: int = 3) -> str:
    """One cell as text: floats with ``digits`` decimals, integers as is, missing as "–".

    Examples
    --------
    >>> format_value(0.46789), format_value(12), format_value(None), format_value(float("nan"))
    ('0.468', '12', '–', '–')
    >>> format_value(True), format_value("anon-mild"), format_value(float("inf"), 2)
    ('yes', 'anon-mild', 'inf')
    """
    if _missing(v):
        return MISSING
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return format(float(v), f".{digits}f")
    return str(v)


def format_interval(value: Any, low: Any = None, high: Any = None, digits: int = 3) -> str:
    """A value with its interval, "0.470 [0.440, 0.500]"; the value alone without one.

    :func:`~voxmetrics.metrics.bootstrap.interval_text` with ``digits`` decimals (a value that
    is not a number, such as text or a flag, as :func:`format_value` writes it).

    Examples
    --------
    >>> format_interval(0.4712, 0.4401, 0.5049)
    '0.471 [0.440, 0.505]'
    >>> format_interval(1.8, 1.25, 2.5, digits=2), format_interval(0.5), format_interval(None)
    ('1.80 [1.25, 2.50]', '0.500', '–')
    """
    if _missing(value) or not isinstance(value, numbers.Real) or isinstance(value, bool | np.bool_):
        return format_value(value, digits)
    return interval_text(value, low, high, f".{digits}f")


def _q95(intervals: Mapping[str, Any] | None, key: str, n_enrolled: int | None = None) -> str:
    """The 0.95 quantile reported beside a maximum, with its interval ("–" without a bootstrap).

    With ``n_enrolled``, LID bits are shown within [-64, log2 N].
    """
    iv = (intervals or {}).get(key)
    if iv is None:
        return MISSING
    if n_enrolled is None:
        return f"{iv:.2f}"
    return f"{iv.map(lambda x: clamp_lid_number(key, x, n_enrolled)):.2f}"


def _iv(
    value: Any,
    intervals: Mapping[str, Any] | None,
    key: str,
    digits: int = 3,
    n_enrolled: int | None = None,
) -> str:
    """``value [low, high]`` as text; with ``n_enrolled`` LID bits within [-64, log2 N]."""
    iv = (intervals or {}).get(key)

    def shown(x: Any) -> Any:
        return x if n_enrolled is None else clamp_lid_number(key, x, n_enrolled)

    if iv is None:
        return format_value(shown(value), digits)
    return format_interval(shown(value), shown(iv.low), shown(iv.high), digits)


def results_tables(sr: StudyReport, *, digits: int = 3) -> dict[str, pd.DataFrame]:
    """The report's results tables with every cell as text, by name (see :data:`TABLE_CAPTIONS`).

    Values carry ``digits`` decimals (LIDmax and log10 l two, like the report); ALID, PDR,
    LID+, LIDmax, D_ECE and log10 l carry their 95 % bootstrap interval when the report was
    built with one; WER and UAR theirs where known. ``lid`` is left out when no condition has
    LID, ``sbls`` and ``sbls_attributes`` when none has an SBLS, ``ranking`` (VoicePrivacy's
    ranking by EER bands) when none has a utility number.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> tabs = results_tables(build_study_report(demo_study(n_speakers=6), bootstrap=20))
    >>> list(tabs)[:5]
    ['overview', 'report_card', 'ranking', 'lid', 'srd']
    >>> list(tabs)[5:]
    ['zebra', 'linkage', 'sbls', 'sbls_attributes']
    >>> tabs["lid"].columns[:4].tolist()
    ['Condition', 'Calibration', 'ALID (bits)', 'PDR']
    """

    def f(v: Any, d: int = digits) -> str:
        return format_value(v, d)

    sbls = {r.name: sr.sbls.get(r.name) for r in sr.reports}

    def sbls_cell(name: str) -> str:
        s = sbls[name]
        return MISSING if s is None else _iv(s.sbls, sr.sbls_intervals.get(name), "sbls")

    overview = [
        {
            "Condition": r.name,
            "EER": f(r.baseline.eer),
            "EER (ROCCH)": f(r.baseline.eer_rocch),
            "min Cllr": f(r.baseline.min_cllr),
            "Linkability": f(r.baseline.linkability),
            "Chance (1/N)": f(r.baseline.chance_linkability),
            "ALID (bits)": MISSING
            if r.lid is None
            else _iv(r.lid.alid, r.lid_intervals, "alid", n_enrolled=r.lid.n_enrolled),
            "LIDmax (bits)": MISSING
            if r.lid is None
            else _iv(r.lid.lid_max, r.lid_intervals, "lid_max", 2, r.lid.n_enrolled),
            "MeanD (bits)": MISSING if r.srd is None else f(r.srd.stats.mean_d),
            "IdR": MISSING if r.srd is None else f(r.srd.stats.idr),
            "D_ECE (bits)": MISSING
            if r.zebra is None
            else _iv(r.zebra.d_ece, r.zebra_intervals, "d_ece"),
            "ZEBRA tag": MISSING if r.zebra is None else r.zebra.tag,
            "Singling out": MISSING if r.singling_out is None else f(r.singling_out.value),
            "SBLS": sbls_cell(r.name),
            "WER": _utility(r, "wer", digits),
            "UAR": _utility(r, "uar", digits),
        }
        for r in sr.reports
    ]
    out: dict[str, pd.DataFrame] = {
        "overview": pd.DataFrame(overview),
        "report_card": sr.card.frame("text"),
    }
    if sr.has_utility:
        out["ranking"] = _ranking_text(sr, digits)
    with_lid = [(r, r.lid) for r in sr.reports if r.lid is not None]
    numbers = lid_table({r.name: lid for r, lid in with_lid})
    lid = [
        {
            "Condition": row["Condition"],
            "Calibration": row["Calibration"],
            **{
                column: _iv(
                    row[column],
                    r.lid_intervals,
                    key,
                    2 if key == "lid_max" else 3,
                    lid.n_enrolled,
                )
                for key, column in LID_COLUMNS.items()
            },
            # a maximum has no bootstrap interval; its 0.95 quantile carries one
            "LID q95 (bits)": _q95(r.lid_intervals, "lid_q95", lid.n_enrolled),
            "Ceiling log2 N (bits)": f(row["Ceiling log2 N (bits)"], 2),
        }
        for (r, lid), row in zip(with_lid, numbers.to_dict("records"), strict=True)
    ]
    if lid:
        out["lid"] = pd.DataFrame(lid)
    # a sparse trial list without a complete trial has no ranks, so no SRD row
    ranked = [(r, r.srd, r.srd_model) for r in sr.reports if r.srd is not None]
    srd = srd_table(
        {r.name: s for r, s, _ in ranked},
        {r.name: [m] for r, _, m in ranked if m is not None},
        eer={r.name: r.baseline.eer for r, _, _ in ranked},
    )
    out["srd"] = _text_frame(srd, digits, {"α": ".4g", "β": ".4g"})
    out["zebra"] = pd.DataFrame(
        [
            {
                "Condition": r.name,
                "EER": f(r.baseline.eer),
                "D_ECE (bits)": MISSING
                if r.zebra is None
                else _iv(r.zebra.d_ece, r.zebra_intervals, "d_ece"),
                "log10 l": MISSING
                if r.zebra is None
                else _iv(r.zebra.log10_l, r.zebra_intervals, "log10_l", 2),
                "log10 l q95": _q95(r.zebra_intervals, "log10_l_q95"),
                "Tag": MISSING if r.zebra is None else r.zebra.tag,
            }
            for r in sr.reports
        ]
    )
    link = linkage_table({r.name: r for r in sr.reports}, *sr.distinctiveness())
    out["linkage"] = _text_frame(link, digits)
    with_sbls = {n: s for n, s in sbls.items() if s is not None}
    if with_sbls:
        out["sbls"] = pd.DataFrame(
            [
                {
                    "Condition": n,
                    "SBLS": _iv(s.sbls, sr.sbls_intervals.get(n), "sbls", digits),
                    "P_attr": _iv(s.p_attr, sr.sbls_intervals.get(n), "p_attr", digits),
                    "P_assoc": _iv(s.p_assoc, sr.sbls_intervals.get(n), "p_assoc", digits),
                    "P_subgroup": _iv(s.p_subgroup, sr.sbls_intervals.get(n), "p_subgroup", digits),
                }
                for n, s in with_sbls.items()
            ]
        )
        out["sbls_attributes"] = pd.DataFrame(
            [
                {
                    "Condition": n,
                    "Attribute": a.name,
                    "AUC": f(a.auc),
                    "Balanced accuracy": f(a.balanced_accuracy),
                    "Leakage L_a": f(a.leakage),
                    "NMI": f(a.nmi),
                }
                for n, s in with_sbls.items()
                for a in s.attributes
            ]
        )
    return out


def _ranking_text(sr: StudyReport, digits: int) -> pd.DataFrame:
    """The ranking as text, the rank's 95 % interval as "1–2" when bootstrapped."""
    frame = sr.ranking().frame(stability=True)
    if "Rank 95% low" in frame.columns:
        low, high = frame.pop("Rank 95% low"), frame.pop("Rank 95% high")
        p_rank1 = frame.pop("P(rank 1)")
        frame["Rank 95% interval"] = [
            MISSING if pd.isna(a) else f"{int(a)}–{int(b)}" for a, b in zip(low, high, strict=True)
        ]
        frame["P(rank 1)"] = p_rank1
    return _text_frame(frame, digits)


def _utility(report: Any, key: str, digits: int) -> str:
    """A utility number of a report with its interval, "–" when unknown."""
    u = report.utility
    v = None if u is None else u.value(key)
    if v is None:
        return MISSING
    low, high = u.intervals.get(key) or (None, None)
    return format_interval(v, low, high, digits=digits)


def _text_frame(
    df: pd.DataFrame, digits: int, specs: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Every cell of ``df`` as text; float cells of the columns in ``specs`` with that format."""
    specs = specs or {}

    def cell(v: Any, col: str) -> str:
        if col in specs and isinstance(v, float | np.floating) and not _missing(v):
            return format(float(v), specs[col])
        return format_value(v, digits)

    return pd.DataFrame(
        {col: [cell(v, col) for v in df[col].tolist()] for col in df.columns},
        columns=df.columns,
    )


# ---------------------------------------------------------------- LaTeX and Markdown

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "–": "--",
    "—": "---",
    "−": "$-$",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "λ": r"$\lambda$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIALS))
_MINUS_RE = re.compile(r"(?<![\w$-])-(?=\.?\d)")


def latex_escape(text: Any) -> str:
    r"""``text`` with every LaTeX special character escaped (safe in a tabular cell).

    Examples
    --------
    >>> print(latex_escape("anon_mild & 50% #1 {x} ~ ^ \\ $"))
    anon\_mild \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{} \$
    >>> print(latex_escape("LID− (bits), α – β"))
    LID$-$ (bits), $\alpha$ -- $\beta$
    """
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIALS[m.group(0)], str(text))


def _cells(df: pd.DataFrame, digits: int) -> list[list[str]]:
    return [[format_value(v, digits) for v in row] for row in df.itertuples(index=False)]


def _numeric_columns(df: pd.DataFrame, cells: list[list[str]]) -> list[bool]:
    """A column is right-aligned when every present cell reads as a number."""
    out = []
    for j in range(len(df.columns)):
        present = [row[j] for row in cells if row[j] != MISSING]
        out.append(bool(present) and all(_NUMBER.fullmatch(c) for c in present))
    return out


def _check(df: Any) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise VoxMetricsInputError(
            f"a table must be a pandas DataFrame, not {type(df).__name__}; e.g. one of "
            "results_tables(report)."
        )
    if len(df.columns) == 0:
        raise VoxMetricsInputError("the table has no columns to write.")
    return df


def table_latex(
    df: pd.DataFrame,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = 3,
    float_env: bool = True,
) -> str:
    r"""A table as LaTeX with booktabs rules (``\usepackage{booktabs}``).

    Parameters
    ----------
    df : DataFrame
        The table: text cells are escaped, numbers written with ``digits`` decimals, missing
        values as ``--``. Columns whose cells are all numbers are right-aligned.
    caption, label : str, optional
        ``\caption`` (escaped) and ``\label`` (as given) of the float.
    digits : int
        Decimals of float cells (text cells, e.g. from :func:`results_tables`, are kept).
    float_env : bool
        Wrap the tabular in a ``table`` float (default); False gives the tabular alone.

    Examples
    --------
    >>> df = pd.DataFrame({"Condition": ["anon_mild"], "EER": [0.4712], "ALID (bits)": [None]})
    >>> print(table_latex(df, float_env=False))
    \begin{tabular}{lrl}
      \toprule
      Condition & EER & ALID (bits) \\
      \midrule
      anon\_mild & 0.471 & -- \\
      \bottomrule
    \end{tabular}
    """
    df = _check(df)
    cells = _cells(df, digits)
    align = "".join("r" if n else "l" for n in _numeric_columns(df, cells))

    def row(values: list[str], number: bool) -> str:
        out = [latex_escape(re.sub(r"\s*[\r\n]+\s*", " ", v)) for v in values]
        if number:  # a minus sign, not a hyphen, before a number
            out = [_MINUS_RE.sub("$-$", v) for v in out]
        return "  " + " & ".join(out) + r" \\"

    tabular = [
        rf"\begin{{tabular}}{{{align}}}",
        r"  \toprule",
        row([str(c) for c in df.columns], False),
        r"  \midrule",
        *(row(r, True) for r in cells),
        r"  \bottomrule",
        r"\end{tabular}",
    ]
    if not float_env:
        return "\n".join(tabular)
    head = [r"\begin{table}[t]", r"  \centering"]
    if caption is not None:
        head.append(rf"  \caption{{{latex_escape(caption)}}}")
    if label is not None:
        head.append(rf"  \label{{{label}}}")
    return "\n".join([*head, *("  " + line for line in tabular), r"\end{table}"])


def _md_escape(text: str) -> str:
    text = re.sub(r"\s*[\r\n]+\s*", " ", text)
    return text.replace("\\", "\\\\").replace("|", "\\|")


def table_markdown(df: pd.DataFrame, *, digits: int = 3) -> str:
    r"""A table as a Markdown pipe table (GitHub, Pandoc, MkDocs).

    Columns whose cells are all numbers are right-aligned; ``|`` in a cell is escaped.

    Examples
    --------
    >>> df = pd.DataFrame({"Condition": ["a|b"], "EER": [0.4712], "Tag": ["C"]})
    >>> print(table_markdown(df))
    | Condition | EER | Tag |
    | :-- | --: | :-- |
    | a\|b | 0.471 | C |
    """
    df = _check(df)
    cells = _cells(df, digits)
    rules = [("--:" if n else ":--") for n in _numeric_columns(df, cells)]

    def row(values: list[str]) -> str:
        return "| " + " | ".join(_md_escape(v) for v in values) + " |"

    return "\n".join(
        [row([str(c) for c in df.columns]), "| " + " | ".join(rules) + " |", *map(row, cells)]
    )


def render_tables(
    sr: StudyReport, fmt: Literal["latex", "markdown"], *, digits: int = 3
) -> dict[str, str]:
    r"""Every table of :func:`results_tables` as LaTeX or Markdown text, by file name.

    The LaTeX tables carry their caption and the label ``tab:<name>`` (``<name>.tex``); the
    Markdown ones are bare tables (``<name>.md``). Each text ends with a newline.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> texts = render_tables(build_study_report(demo_study(n_speakers=6), bootstrap=0), "latex")
    >>> list(texts)[:3], texts["zebra.tex"].splitlines()[3]
    (['overview.tex', 'report_card.tex', 'ranking.tex'], '  \\label{tab:zebra}')
    """
    if fmt not in ("latex", "markdown"):
        raise VoxMetricsInputError(f"unknown table format {fmt!r}; use 'latex' or 'markdown'.")
    out = {}
    for name, df in results_tables(sr, digits=digits).items():
        if fmt == "latex":
            out[f"{name}.tex"] = (
                table_latex(df, caption=TABLE_CAPTIONS[name], label=f"tab:{name}") + "\n"
            )
        else:
            out[f"{name}.md"] = table_markdown(df) + "\n"
    return out


def write_tables(
    sr: StudyReport,
    folder: PathLike,
    fmt: Literal["latex", "markdown"],
    *,
    digits: int = 3,
) -> list[Path]:
    """Write every table of :func:`render_tables` into ``folder`` (created).

    Returns
    -------
    list of Path
        The files written, in report order.
    """
    texts = render_tables(sr, fmt, digits=digits)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
