"""Writing a study's report (issue 9): files, strict JSON, the zip, Chromium and its absence."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report import export
from voxmetrics.report.export import (
    find_chromium,
    html_to_pdf,
    report_json,
    report_pdf,
    report_zip,
    require_chromium,
    write_report,
)
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def sr():
    return build_study_report(demo_study(n_speakers=8), bootstrap=0)


def _strict(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_write_report_writes_html_json_and_csvs(sr, tmp_path):
    written = write_report(
        sr,
        html=tmp_path / "out" / "r.html",
        json=tmp_path / "r.json",
        csv_dir=tmp_path / "tables",
    )
    csvs = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert csvs == sorted(sr.tables())
    assert {"overview.csv", "report_card.csv", "report_card_levels.csv"} <= set(csvs)
    assert written[:2] == [tmp_path / "out" / "r.html", tmp_path / "r.json"]
    assert sorted(p.name for p in written[2:]) == csvs
    page = (tmp_path / "out" / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and 'id="voxmetrics-data"' in page
    data = _strict((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert list(data["conditions"]) == sr.study.names
    overview = (tmp_path / "tables" / "overview.csv").read_text(encoding="utf-8")
    assert overview.splitlines()[0].startswith("Condition,EER,")
    assert len(overview.splitlines()) == 1 + len(sr.reports)


def test_json_is_strict_even_with_nan(sr, monkeypatch):
    original = type(sr).to_dict

    def with_nan(self):
        return {**original(self), "extra": [float("nan"), float("-inf")]}

    monkeypatch.setattr(type(sr), "to_dict", with_nan)
    assert _strict(report_json(sr))["extra"] == [None, None]


def test_report_zip_holds_html_json_and_csvs(sr):
    zf = zipfile.ZipFile(io.BytesIO(report_zip(sr)))
    names = set(zf.namelist())
    assert {"demo_report.html", "demo_report.json"} <= names
    assert {f"csv/{n}" for n in sr.tables()} == {n for n in names if n.startswith("csv/")}
    assert _strict(zf.read("demo_report.json"))["study"] == "demo"
    assert b"* plotly.js v" in zf.read("demo_report.html")


def test_nothing_to_write_is_an_error(sr):
    with pytest.raises(VoxMetricsInputError, match="nothing to write"):
        write_report(sr)


def test_missing_chromium_is_a_clear_error_and_writes_nothing(sr, tmp_path, monkeypatch):
    monkeypatch.setattr(export, "find_chromium", lambda: None)
    with pytest.raises(VoxMetricsInputError, match="BROWSER_PATH") as exc:
        write_report(sr, html=tmp_path / "r.html", pdf=tmp_path / "r.pdf")
    assert "apt-get install chromium" in str(exc.value)
    assert list(tmp_path.iterdir()) == []  # checked before anything is written
    with pytest.raises(VoxMetricsInputError, match="BROWSER_PATH"):
        html_to_pdf(tmp_path / "r.html", tmp_path / "r.pdf")


def test_find_chromium_prefers_browser_path(tmp_path, monkeypatch):
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert find_chromium() == str(fake)
    assert require_chromium() == str(fake)
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "missing"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_chromium() is None
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "chromium").symlink_to(fake)
    assert find_chromium() == str(tmp_path / "chromium")


def test_a_browser_that_writes_no_pdf_is_reported(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<!doctype html><p>hi</p>")
    fake = tmp_path / "not-chrome"
    fake.write_text("#!/bin/sh\necho 'cannot print' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(VoxMetricsInputError, match="did not write a PDF") as exc:
        html_to_pdf(page, tmp_path / "p.pdf", chromium=str(fake))
    assert "exit status 3" in str(exc.value) and "cannot print" in str(exc.value)
    with pytest.raises(VoxMetricsInputError, match="no such file"):
        html_to_pdf(tmp_path / "missing.html", tmp_path / "p.pdf", chromium=str(fake))


@needs_chromium
def test_html_to_pdf_with_chromium(sr, tmp_path):
    written = write_report(
        sr, html=tmp_path / "r.html", pdf=tmp_path / "pdf" / "r.pdf", chromium=CHROMIUM
    )
    pdf = tmp_path / "pdf" / "r.pdf"
    assert written == [tmp_path / "r.html", pdf]
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and len(data) > 50_000
    assert data.count(b"/Type /Page") + data.count(b"/Type/Page") >= 5  # one page per section


@needs_chromium
def test_pdf_without_html_prints_a_temporary_copy(sr, tmp_path):
    written = write_report(sr, pdf=tmp_path / "only.pdf", chromium=CHROMIUM)
    assert written == [tmp_path / "only.pdf"]
    assert (tmp_path / "only.pdf").read_bytes().startswith(b"%PDF-")
    assert sorted(os.listdir(tmp_path)) == ["only.pdf"]


@needs_chromium
def test_report_pdf_bytes_for_the_dashboard(sr):
    data = report_pdf(sr, chromium=CHROMIUM)
    assert data.startswith(b"%PDF-") and len(data) > 50_000


def test_report_pdf_without_chromium_is_explained(sr, monkeypatch):
    monkeypatch.setattr(export, "find_chromium", lambda: None)
    with pytest.raises(VoxMetricsInputError, match="apt-get install chromium"):
        report_pdf(sr)
