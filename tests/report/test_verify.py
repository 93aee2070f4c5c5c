"""Re-checking a report against its study file (voxmetrics/report/verify.py), in the library.

The command line (``voxmetrics report --verify``) is tested in tests/test_cli_verify.py; here
each check of :func:`verify_report` is driven by hand: the study file's fingerprint, the inputs
it was built from, each condition's data digest, the versions and the recomputed numbers.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import warnings

import pytest

from voxmetrics.data.provenance import InputFile
from voxmetrics.data.study import StudySettings
from voxmetrics.data.studyfile import save_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.report import verify
from voxmetrics.report.html import json_safe
from voxmetrics.report.study import build_study_report
from voxmetrics.report.verify import STUDY_FILE_ROLE, Check, Verification, verify_report
from voxmetrics.synth import demo_study

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A small study saved as .vxm, one input file beside it, and its report's JSON."""
    folder = tmp_path_factory.mktemp("verify")
    scores = folder / "scores.txt"
    scores.write_bytes(b"a b 0.5\n")
    study = dataclasses.replace(
        demo_study(n_speakers=6),
        settings=StudySettings(bootstrap=0),
        inputs=(InputFile.of(scores, role="eval"),),
    )
    vxm = save_study(study, folder / "small.vxm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sr = build_study_report(study, inputs=[InputFile.of(vxm, role=STUDY_FILE_ROLE)])
    data = json.loads(json.dumps(json_safe(sr.to_dict()), allow_nan=False))
    return vxm, scores, data, sr


def _lines(v: Verification) -> dict[str, Check]:
    return {c.what: c for c in v.checks}


def test_check_and_verification_lines():
    good, bad = Check("a", True), Check("b", False, "why")
    assert good.line() == "ok: a" and bad.line() == "FAILED: b (why)"
    assert Verification((good,)).ok and not Verification((good, bad)).ok
    assert Verification((good, bad)).lines() == ["ok: a", "FAILED: b (why)"]
    assert Verification(()).ok


def test_an_untouched_report_verifies_number_for_number(written):
    vxm, _, data, _ = written
    v = verify_report(data, vxm)
    assert v.ok, v.lines()
    checks = _lines(v)
    assert checks[f"the study file {vxm.name} is the one the report read"].detail == (
        "sha256 matches"
    )
    assert checks["every number, computed again"].detail == "the same"
    assert checks["library versions"].detail == "the same as the report's"
    assert all(checks[f"the data of {n!r}"].ok for n in data["conditions"])


def test_a_changed_number_is_named_by_its_path(written, monkeypatch):
    vxm, _, data, sr = written
    # the recomputation is the report itself (computed once above, verified in full above)
    monkeypatch.setattr(verify, "build_study_report", lambda *args, **kwargs: sr)
    changed = copy.deepcopy(data)
    name = next(iter(changed["conditions"]))
    changed["conditions"][name]["eer"] += 0.25
    changed["created"] = "another day"  # not a number: never compared
    (last,) = [c for c in verify_report(changed, vxm).checks if c.what.startswith("every")]
    assert not last.ok
    eer = data["conditions"][name]["eer"]
    assert last.detail == (
        f"1 differ: conditions.{name}.eer: {eer + 0.25!r:.40} in the report, {eer!r:.40} recomputed"
    )
    changed["conditions"]["extra"] = {}
    changed["conditions"].pop(name)
    (last,) = [c for c in verify_report(changed, vxm).checks if c.what.startswith("every")]
    assert "conditions.extra (only in the report)" in last.detail
    assert f"conditions.{name} (only in the recomputed one)" in last.detail


def test_changed_inputs_and_versions_without_recomputing(written, tmp_path):
    vxm, scores, data, _ = written
    changed = copy.deepcopy(data)
    p = changed["provenance"]
    (eval_input,) = [f for f in p["inputs"] if f["role"] == "eval"]
    eval_input["sha256"] = "0" * 64  # as if the file had changed since
    p["inputs"].append({"path": str(tmp_path / "gone.txt"), "sha256": "1" * 64, "size": 1})
    p["numpy"] = None
    p["libraries"]["numpy"] = "0.0.1"
    v = verify_report(changed, vxm, recompute=False)
    checks = _lines(v)
    assert not v.ok and not checks[f"input {scores} (eval)"].ok
    assert "changed" in checks[f"input {scores} (eval)"].detail
    gone = checks[f"input {tmp_path / 'gone.txt'}"]
    assert gone.ok and gone.detail == "not found here: not checked"
    versions = checks["library versions"]
    assert versions.ok and "numpy 0.0.1 -> " in versions.detail  # a note, not a failure
    assert not any(c.what.startswith("every number") for c in v.checks)


def test_another_study_file_or_other_data_fails(written, tmp_path):
    vxm, _, data, _ = written
    other = save_study(demo_study(n_speakers=7), tmp_path / "other.vxm")
    v = verify_report(data, other, recompute=False)
    checks = _lines(v)
    study_check = checks["the study file other.vxm is the one the report read"]
    assert not study_check.ok and "is not the recorded" in study_check.detail
    assert any(c.what.startswith("the data of") and c.detail == "it changed" for c in v.checks)
    renamed = copy.deepcopy(data)
    renamed["provenance"]["data"] = {"nowhere": "x"}
    checks = _lines(verify_report(renamed, vxm, recompute=False))
    assert checks["condition 'nowhere'"].detail == "not in the study file"
    assert not checks["the study's conditions"].ok


def test_a_report_without_a_study_file_record_says_so(written):
    vxm, _, data, _ = written
    bare = copy.deepcopy(data)
    bare["provenance"]["inputs"] = []
    checks = _lines(verify_report(bare, vxm, recompute=False))
    assert checks["the study file"].ok
    assert checks["the study file"].detail == "the report records no study file"


def test_reports_that_cannot_be_verified_are_clear_errors(written, tmp_path):
    vxm, _, data, _ = written
    with pytest.raises(VoxMetricsInputError, match="records no provenance"):
        verify_report({k: v for k, v in data.items() if k != "provenance"}, vxm)
    damaged = tmp_path / "r.json"
    damaged.write_text("{not json", encoding="utf-8")
    with pytest.raises(VoxMetricsInputError, match="not a report's JSON"):
        verify_report(damaged, vxm)
    with pytest.raises(VoxMetricsInputError, match="not a report's JSON"):
        verify_report(tmp_path / "missing.json", vxm)


def test_the_report_can_be_read_from_its_file(written, tmp_path):
    vxm, _, data, _ = written
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert verify_report(path, vxm, recompute=False).ok
