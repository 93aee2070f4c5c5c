"""Write a study's report to files: HTML, JSON, CSVs and a PDF printed by Chromium (issue 9).

The layer that does the I/O; the page is :mod:`voxmetrics.report.html`'s. :func:`write_report`
is what ``python -m voxmetrics report`` runs; :func:`report_zip` is the dashboard's one-click
download.

The PDF is the HTML page printed by headless Chromium (:func:`html_to_pdf`);
:func:`find_chromium` is the one place that looks for it (``BROWSER_PATH``, then ``chromium``,
``chromium-browser``, ``google-chrome`` on ``PATH``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report.html import json_safe, study_report_html
from voxmetrics.report.study import StudyReport
from voxmetrics.report.tables import render_tables, write_tables

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "CHROMIUM_NAMES",
    "VERDICTS_FOLDER",
    "PngExporter",
    "find_chromium",
    "html_to_pdf",
    "report_html",
    "report_json",
    "report_pdf",
    "report_zip",
    "require_chromium",
    "tables_zip",
    "write_report",
]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Executables searched on ``PATH`` after ``BROWSER_PATH``, in this order."""
VERDICTS_FOLDER = "verdicts"
"""The folder (of the CSV folder and of the zip) holding the tables of how firm the verdicts
are and of who stays exposed (:meth:`~voxmetrics.report.study.StudyReport.verdict_tables`)."""

_NO_CHROMIUM = (
    "a PDF needs Chromium, and none was found: install it (Debian / Ubuntu: apt-get install "
    "chromium) or set BROWSER_PATH to a Chromium or Chrome executable. The HTML report "
    "prints to PDF from any browser too."
)

PathLike = str | os.PathLike[str]


def find_chromium() -> str | None:
    """The Chromium to print with: ``BROWSER_PATH`` if executable, else one on ``PATH``.

    Returns
    -------
    str or None
        The executable's path, or None when there is none.
    """
    env = os.environ.get("BROWSER_PATH")
    if env and os.path.isfile(env) and os.access(env, os.X_OK):
        return env
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    return None


def require_chromium(chromium: str | None = None) -> str:
    """``chromium`` if given, else :func:`find_chromium`; raises a how-to-fix error if none.

    Raises
    ------
    VoxMetricsInputError
        When there is no Chromium: how to install one or set ``BROWSER_PATH``.
    """
    exe = chromium or find_chromium()
    if exe is None:
        raise VoxMetricsInputError(_NO_CHROMIUM)
    return exe


def report_html(sr: StudyReport, *, title: str | None = None) -> str:
    """The self-contained HTML report, ZEBRA profiles included.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> page = report_html(build_study_report(demo_study(n_speakers=6), bootstrap=0))
    >>> 'data-figure="ece_profiles"' in page
    True
    """
    return study_report_html(sr, title=title)


def report_json(sr: StudyReport, *, indent: int | None = 2) -> str:
    """:meth:`StudyReport.to_dict` as strict JSON (NaN and infinities written as null).

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> text = report_json(build_study_report(demo_study(n_speakers=6), bootstrap=0))
    >>> sorted(json.loads(text)["conditions"])[:2]
    ['anon-leaky', 'anon-mild']
    """
    return json.dumps(json_safe(sr.to_dict()), indent=indent, allow_nan=False, ensure_ascii=False)


def _csv_bytes(frame: Any) -> bytes:
    from voxmetrics.data.writers import spreadsheet_safe

    return spreadsheet_safe(frame).to_csv(index=False).encode("utf-8")  # no live formulas


def _stem(sr: StudyReport) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", sr.study.name or "study").strip("._") or "study"
    return f"{stem}_report"


def report_zip(sr: StudyReport, *, title: str | None = None) -> bytes:
    """The HTML report, its JSON and its tables (CSV, LaTeX, Markdown) in one zip archive.

    Members: ``<study>_report.html``, ``<study>_report.json``, ``csv/<table>.csv`` for every
    table of :meth:`StudyReport.tables`, and ``latex/<table>.tex`` and ``markdown/<table>.md``
    for every results table of :func:`voxmetrics.report.tables.results_tables`.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> data = report_zip(build_study_report(demo_study(n_speakers=6), bootstrap=0))
    >>> sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())[:2]
    ['csv/lid_per_trial.csv', 'csv/overview.csv']
    """
    stem = _stem(sr)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{stem}.html", report_html(sr, title=title))
        zf.writestr(f"{stem}.json", report_json(sr) + "\n")
        for name, frame in sr.tables().items():
            zf.writestr(f"csv/{name}", _csv_bytes(frame))
        for name, frame in sr.verdict_tables().items():
            zf.writestr(f"{VERDICTS_FOLDER}/{name}", _csv_bytes(frame))
        for fmt in ("latex", "markdown"):
            for name, text in render_tables(sr, fmt).items():
                zf.writestr(f"{fmt}/{name}", text)
    return buf.getvalue()


def tables_zip(sr: StudyReport, fmt: Literal["latex", "markdown"]) -> bytes:
    """Every results table as LaTeX (``<table>.tex``) or Markdown (``<table>.md``), zipped.

    Examples
    --------
    >>> from voxmetrics.report.study import build_study_report
    >>> from voxmetrics.synth import demo_study
    >>> data = tables_zip(build_study_report(demo_study(n_speakers=6), bootstrap=0), "markdown")
    >>> sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())[:2]
    ['lid.md', 'linkage.md']
    """
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, text in render_tables(sr, fmt).items():
            zf.writestr(name, text)
    return buf.getvalue()


def html_to_pdf(
    html_path: PathLike,
    pdf_path: PathLike,
    *,
    chromium: str | None = None,
    timeout: float = 120,
) -> Path:
    """Print an HTML file to PDF with headless Chromium.

    Parameters
    ----------
    html_path : path
        The page to print (opened as a ``file://`` URL; the report loads nothing else).
    pdf_path : path
        Where to write the PDF (its folder is created).
    chromium : str, optional
        The executable; default :func:`find_chromium`.
    timeout : float
        Seconds to wait for Chromium.

    Returns
    -------
    Path
        ``pdf_path``.

    Raises
    ------
    VoxMetricsInputError
        When there is no Chromium, the page is missing, or Chromium did not write a PDF.
    """
    exe = require_chromium(chromium)
    src = Path(html_path).resolve()
    if not src.is_file():
        raise VoxMetricsInputError(f"{html_path}: no such file to print.")
    out = Path(pdf_path).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="voxmetrics-chromium-") as profile:
        cmd = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-pdf-header-footer",
            "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=15000",
            f"--user-data-dir={profile}",
            f"--print-to-pdf={out}",
            src.as_uri(),
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise VoxMetricsInputError(
                f"Chromium ({exe}) did not print {src.name} within {timeout:g} s; try again "
                "with a longer timeout, or print the HTML report from a browser."
            ) from None
        except OSError as exc:
            raise VoxMetricsInputError(
                f"Chromium ({exe}) could not be started: {exc.strerror or exc}. {_NO_CHROMIUM}"
            ) from None
    if not out.is_file() or out.stat().st_size == 0 or out.read_bytes()[:5] != b"%PDF-":
        tail = " ".join((proc.stderr or "").strip().splitlines()[-2:])[-300:]
        raise VoxMetricsInputError(
            f"Chromium ({exe}) did not write a PDF of {src.name} (exit status "
            f"{proc.returncode}{': ' + tail if tail else ''}); print the HTML report from a "
            "browser instead."
        )
    return Path(pdf_path)


def write_report(
    sr: StudyReport,
    *,
    html: PathLike | None = None,
    json: PathLike | None = None,
    csv_dir: PathLike | None = None,
    pdf: PathLike | None = None,
    latex_dir: PathLike | None = None,
    markdown_dir: PathLike | None = None,
    chromium: str | None = None,
    title: str | None = None,
    verdicts_dir: PathLike | None = None,
) -> list[Path]:
    """Write the report's HTML, JSON, tables and PDF (each only when its path is given).

    Parameters
    ----------
    sr : StudyReport
        The evaluated study.
    html, json, pdf : path, optional
        Output files. The PDF is printed from the HTML (from a temporary copy when ``html``
        is not given).
    csv_dir : path, optional
        Folder for the tables of :meth:`StudyReport.tables` (``overview.csv``,
        ``report_card.csv``...); created.
    latex_dir, markdown_dir : path, optional
        Folders for the paper-ready results tables as LaTeX (booktabs, ``<table>.tex``) and
        Markdown (``<table>.md``), see :mod:`voxmetrics.report.tables`; created.
    chromium : str, optional
        Chromium for the PDF (default :func:`find_chromium`); checked before anything is
        written, so a missing browser leaves no partial output.
    title : str, optional
        Title of the HTML page.
    verdicts_dir : path, optional
        Folder for :meth:`StudyReport.verdict_tables` (how firm the card's levels and the
        ranking are, the most exposed speakers); created.

    Returns
    -------
    list of Path
        The files written, in the order HTML, JSON, CSVs, verdict CSVs, LaTeX, Markdown, PDF.

    Raises
    ------
    VoxMetricsInputError
        When nothing is asked for, or a PDF is asked for and there is no Chromium.
    """
    if all(p is None for p in (html, json, csv_dir, pdf, latex_dir, markdown_dir, verdicts_dir)):
        raise VoxMetricsInputError(
            "nothing to write: give an HTML, JSON, CSV, LaTeX, Markdown or PDF output."
        )
    exe = require_chromium(chromium) if pdf is not None else None
    written: list[Path] = []
    page = report_html(sr, title=title) if (html is not None or pdf is not None) else None
    if html is not None and page is not None:
        path = Path(html)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
        written.append(path)
    if json is not None:
        path = Path(json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report_json(sr) + "\n", encoding="utf-8")
        written.append(path)
    if csv_dir is not None:
        folder = Path(csv_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in sr.tables().items():
            path = folder / name
            path.write_bytes(_csv_bytes(frame))
            written.append(path)
    if verdicts_dir is not None:
        folder = Path(verdicts_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, frame in sr.verdict_tables().items():
            path = folder / name
            path.write_bytes(_csv_bytes(frame))
            written.append(path)
    if latex_dir is not None:
        written += write_tables(sr, latex_dir, "latex")
    if markdown_dir is not None:
        written += write_tables(sr, markdown_dir, "markdown")
    if pdf is not None and page is not None:
        if html is not None:
            written.append(html_to_pdf(html, pdf, chromium=exe))
        else:
            out = Path(pdf)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(_print_page(page, exe))
            written.append(out)
    return written


def _print_page(page: str, chromium: str | None) -> bytes:
    with tempfile.TemporaryDirectory(prefix="voxmetrics-report-") as tmp:
        source = Path(tmp) / "report.html"
        source.write_text(page, encoding="utf-8")
        return html_to_pdf(source, Path(tmp) / "report.pdf", chromium=chromium).read_bytes()


def report_pdf(sr: StudyReport, *, chromium: str | None = None, title: str | None = None) -> bytes:
    """The report printed to PDF by headless Chromium, as bytes (the dashboard's download).

    Raises
    ------
    VoxMetricsInputError
        When there is no Chromium or it did not print (see :func:`html_to_pdf`).
    """
    return _print_page(report_html(sr, title=title), require_chromium(chromium))


class PngExporter:
    """A kaleido server (one headless Chromium) that renders figures; exports are serialised.

    The dashboard keeps one for every session. Starting Chromium takes a couple of seconds;
    later exports take a fraction of a second.
    """

    def __init__(self) -> None:
        import kaleido

        self._kaleido = kaleido
        self._lock = threading.Lock()
        # mathjax=False: no CDN fetch, so it works offline
        kaleido.start_sync_server(mathjax=False, silence_warnings=True)

    def __call__(
        self, fig: go.Figure, *, format: str = "png", width: int = 1000, scale: float = 2
    ) -> bytes:
        """Render ``fig`` as an image (png, svg or pdf) of ``width`` layout pixels."""
        height = fig.layout.height or 500
        with self._lock:
            return self._kaleido.calc_fig_sync(
                fig.to_dict(),
                opts={"format": format, "width": width, "height": height, "scale": scale},
            )
