"""``python -m voxmetrics report STUDY.vxm`` and ``demo --format vxm`` (issue 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from voxmetrics.cli import main
from voxmetrics.data.studyfile import load_study
from voxmetrics.report import export

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


@pytest.fixture(scope="module")
def demo_vxm(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "vxm"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["demo.vxm"]  # only the study file
    return out / "demo.vxm"


def _run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_demo_vxm_is_the_demo_study(demo_vxm):
    study = load_study(demo_vxm)
    assert study.names == DEMO_NAMES
    assert all(c.dev is not None and c.embeddings is not None for c in study.conditions)


def test_report_writes_every_output(demo_vxm, tmp_path, capsys):
    pdf = tmp_path / "r.pdf" if Path(CHROMIUM).exists() else None
    argv = ["report", demo_vxm, "--html", tmp_path / "r.html", "--json", tmp_path / "r.json"]
    argv += ["--csv", tmp_path / "csv", "--bootstrap", "20", "--seed", "3", "--ties", "attacker"]
    if pdf is not None:
        argv += ["--pdf", pdf]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    assert "Evaluating anon-leaky" in err and "Traceback" not in err  # progress on stderr
    listed = [Path(line) for line in out.splitlines()]
    assert listed[:2] == [tmp_path / "r.html", tmp_path / "r.json"]
    assert all(p.is_file() for p in listed)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert list(data["conditions"]) == DEMO_NAMES
    assert data["settings"]["bootstrap"] == 20 and data["settings"]["seed"] == 3
    assert data["settings"]["ties"] == "attacker"
    assert {c["ties"] for c in data["conditions"].values()} == {"attacker"}
    assert [c["condition"] for c in data["threat_callouts"]] == ["anon-leaky"]
    leaky = data["conditions"]["anon-leaky"]
    assert leaky["lid"]["intervals"]["lid_max"] == [None, None]  # a maximum: see its q95
    assert leaky["lid"]["intervals"]["lid_q95"][0] is not None
    assert leaky["intervals"]["eer"][0] <= leaky["eer"] <= leaky["intervals"]["eer"][1]
    assert set(data["comparisons"]) == {f"{n} vs plain" for n in DEMO_NAMES[1:]}
    assert "p_value" in data["comparisons"]["random vs plain"]["linkability"]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    for name in DEMO_NAMES:
        assert name in page
    assert 'id="threat"' in page and "bootstrap 20 replicates" in page
    csvs = {p.name for p in (tmp_path / "csv").iterdir()}
    assert {"overview.csv", "report_card.csv", "callout_worst_trials.csv"} <= csvs
    if pdf is not None:
        assert pdf in listed and pdf.read_bytes().startswith(b"%PDF-")


def test_report_needs_an_output(demo_vxm, capsys):
    status, out, err = _run(["report", demo_vxm], capsys)
    assert status == 2 and out == ""
    assert err.startswith("voxmetrics: error: nothing to write") and "--html" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"not a zip archive at all", ".vxm"),
        (b"", ".vxm"),
    ],
)
def test_bad_study_file_is_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.vxm"
    if content is not None:
        path.write_bytes(content)
    status, out, err = _run(["report", path, "--html", tmp_path / "r.html"], capsys)
    assert status == 2 and out == ""
    assert err.startswith("voxmetrics: error:") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_a_study_file_cut_short_is_damaged_or_truncated(demo_vxm, tmp_path, capsys, cut):
    data = demo_vxm.read_bytes()
    path = tmp_path / "cut.vxm"
    path.write_bytes(data[: int(len(data) * cut)])
    status, out, err = _run(["report", path, "--html", tmp_path / "r.html"], capsys)
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"voxmetrics: error: {path}: damaged or truncated study file: ")
    assert "Copy the file whole again" in err and "not a zip archive" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r.html").exists()


def test_tampered_study_file_in_a_real_process(demo_vxm, tmp_path):
    data = bytearray(demo_vxm.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\0" * 64  # damage a member
    bad = tmp_path / "tampered.vxm"
    bad.write_bytes(bytes(data))
    proc = subprocess.run(
        [sys.executable, "-m", "voxmetrics", "report", str(bad), "--json", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("voxmetrics: error:") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_pdf_without_chromium_fails_before_evaluating(demo_vxm, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(export, "find_chromium", lambda: None)
    argv = ["report", demo_vxm, "--html", tmp_path / "r.html", "--pdf", tmp_path / "r.pdf"]
    status, _, err = _run(argv, capsys)
    assert status == 2
    assert "BROWSER_PATH" in err and "Evaluating" not in err
    assert list(tmp_path.iterdir()) == []


def test_bad_settings_override_is_exit_2(demo_vxm, tmp_path, capsys):
    status, _, err = _run(
        ["report", demo_vxm, "--json", tmp_path / "o", "--bootstrap", "-1"], capsys
    )
    assert status == 2 and "bootstrap" in err


def test_help_describes_report(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in (
        "STUDY.vxm",
        "--html",
        "--pdf",
        "--json",
        "--csv",
        "--bootstrap",
        "--seed",
        "--ties",
    ):
        assert flag in text
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert "vxm" in capsys.readouterr().out
