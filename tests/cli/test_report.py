"""``python -m voxmetrics report STUDY.vxm`` (issue 9): every output, bad study files, and
``report --verify`` / ``--verdicts`` (the report records its study file and checks it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from voxmetrics.cli import main
from voxmetrics.metrics.dcf import dcf
from voxmetrics.report import export
from voxmetrics.synth import demo_study

from .cli_cases import kaldi_files as _kaldi
from .cli_cases import run as _run

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]


@pytest.fixture(scope="module")
def demo_vxm(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(out), "--format", "vxm"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["demo.vxm"]  # only the study file
    return out / "demo.vxm"


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


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    assert main(["demo", str(out), "--format", "vxm"]) == 0
    vxm = out / "demo.vxm"
    args = ["report", vxm, "--json", out / "r.json", "--bootstrap", "20", "--verdicts", out / "v"]
    assert main([str(a) for a in args]) == 0
    return vxm, out


def test_the_report_records_the_study_file_and_verifies(report, capsys):
    vxm, out = report
    data = json.loads((out / "r.json").read_text())
    (study_file,) = [f for f in data["provenance"]["inputs"] if f["role"] == "study file"]
    assert study_file["path"] == str(vxm) and len(study_file["sha256"]) == 64
    status, stdout, err = _run(["report", vxm, "--verify", out / "r.json"], capsys)
    assert status == 0, stdout + err
    lines = stdout.splitlines()
    assert lines[0].startswith("ok: the study file demo.vxm is the one the report read")
    assert lines[-1] == "ok: every number, computed again (the same)"
    assert not any(line.startswith("FAILED") for line in lines)


def test_a_changed_number_or_study_file_fails_the_verification(report, tmp_path, capsys):
    vxm, out = report
    data = json.loads((out / "r.json").read_text())
    data["conditions"]["random"]["eer"] = 0.1
    (tmp_path / "bad.json").write_text(json.dumps(data))
    status, stdout, _ = _run(["report", vxm, "--verify", tmp_path / "bad.json"], capsys)
    assert status == 1
    assert "FAILED: every number, computed again (1 differ: conditions.random.eer" in stdout
    other = tmp_path / "other.vxm"
    assert main(["demo", str(tmp_path), "--format", "vxm", "--seed", "1"]) == 0
    (tmp_path / "demo.vxm").rename(other)
    status, stdout, _ = _run(["report", other, "--verify", out / "r.json"], capsys)
    assert status == 1 and "FAILED: the study file other.vxm" in stdout


def test_a_report_without_provenance_is_a_clear_error(report, tmp_path, capsys):
    vxm, out = report
    data = json.loads((out / "r.json").read_text())
    del data["provenance"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    status, _, err = _run(["report", vxm, "--verify", tmp_path / "old.json"], capsys)
    assert status == 2 and "records no provenance" in err and "Traceback" not in err


def test_verdicts_dir_holds_the_stability_and_exposure_tables(report):
    _, out = report
    names = sorted(p.name for p in (out / "v").iterdir())
    assert names == [
        "exposed_speakers.csv",
        "report_card_stability.csv",
        "voiceprivacy_bands.csv",
        "voiceprivacy_stability.csv",
    ]


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=8, seed=3)


def test_report_of_a_built_study_has_the_verification_section(demo, tmp_path, capsys):
    root = tmp_path / "vpc"
    for cond in demo.conditions[:2]:
        folder = root / cond.name / "semi-informed"
        folder.mkdir(parents=True)
        _kaldi(cond.eval, folder, "eval", negate=True)
    assert _run(["study", "build", tmp_path / "s.vxm", root, "--distance", "--bootstrap", "0"],
                capsys)[0] == 0  # fmt: skip
    status, _, err = _run(
        ["report", tmp_path / "s.vxm", "--html", tmp_path / "r.html", "--json", tmp_path / "r.json",
         "--csv", tmp_path / "csv"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    page = (tmp_path / "r.html").read_text()
    assert 'id="verification"' in page and "distance scores, negated on reading" in page
    assert 'data-figure="det_curves"' in page and 'data-figure="ape_plot"' in page
    data = json.loads((tmp_path / "r.json").read_text())
    name = demo.conditions[0].name
    assert data["conditions"][name]["score_kind"] == "distance (negated)"
    sm = demo.get(name).eval
    assert data["conditions"][name]["dcf"]["0.01"]["min_dcf"] == pytest.approx(
        dcf(sm.tar, sm.non).min_dcf[0]
    )
    table = pd.read_csv(tmp_path / "csv" / "verification.csv")
    assert table["Condition"].tolist() == sorted(c.name for c in demo.conditions[:2])
