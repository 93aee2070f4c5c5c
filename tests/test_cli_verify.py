"""``report --verify`` and ``--verdicts``, and the input fingerprints of ``study build``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voxmetrics.cli import main
from voxmetrics.data import load_study
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def _run(argv, capsys):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


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


def test_study_build_fingerprints_its_inputs(tmp_path, capsys):
    demo = demo_study(n_speakers=6)
    root = tmp_path / "root"
    for cond in demo.conditions[:2]:
        folder = root / cond.name / "semi-informed"
        folder.mkdir(parents=True)
        sm = cond.eval
        with (folder / "eval.csv").open("w") as fh:
            fh.write("trial_id,trial_speaker,enrol_speaker,score\n")
            for i, t in enumerate(sm.trial_ids):
                for j, e in enumerate(sm.enrol_speakers):
                    fh.write(f"{t},{sm.trial_speakers[i]},{e},{float(sm.scores[i, j])!r}\n")
    status, _, err = _run(["study", "build", tmp_path / "s.vxm", root], capsys)
    assert status == 0, err
    study = load_study(tmp_path / "s.vxm")
    assert sorted(Path(f.path).parent.parent.name for f in study.inputs) == sorted(demo.names[:2])
    assert all(f.role == "study source" and len(f.sha256) == 64 for f in study.inputs)
    assert study.saved_by["numpy"] == np.__version__
