"""The provenance section (voxmetrics/report/html/provenance.py): inputs, versions, checks."""

from __future__ import annotations

import html

import pytest

from voxmetrics.report.html import REPORT_SECTIONS, json_safe, study_report_html
from voxmetrics.report.study import build_study_report

from .page_cases import rows_of, section_of

pytestmark = pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")


def test_provenance_and_how_to_check_it(tmp_path):
    from verdict_cases import two_system_study

    from voxmetrics.data.provenance import InputFile

    f = tmp_path / "my study.vxm"
    f.write_bytes(b"not read")
    sr = build_study_report(
        two_system_study(), bootstrap=0, inputs=[InputFile.of(f, role="study file")]
    )
    p = json_safe(sr.to_dict())["provenance"]
    section = section_of(study_report_html(sr), "provenance")
    (rec,) = p["inputs"]
    assert [rec["role"], rec["path"], str(rec["size"]), rec["sha256"]] in rows_of(section)
    for name, version in p["libraries"].items():
        assert f"<td>{name}</td><td>{html.escape(version or 'not installed')}</td>" in section
    assert f"<td>voxmetrics</td><td>{p['voxmetrics']}</td>" in section
    assert f"<dt>Seed</dt><dd>{p['seed']}</dd>" in section
    assert "linkability_rule: code" in section and "original: original" in section
    for name, rec in p["attackers"].items():
        assert f"<td>{html.escape(name)}</td><td>{rec['attacker']}</td>" in section
        assert f'title="{p["data"][name]}"' in section
    assert html.escape(f"report '{f}' --verify 'two systems_report.json'") in section
    assert REPORT_SECTIONS["provenance"] == "Provenance"
