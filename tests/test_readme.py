"""README keeps exactly two set-up commands, and CI runs the second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_two_setup_commands_one_starts_the_dashboard_one_runs_the_tests():
    dashboard, tests = _setup_commands()
    assert "requirements.txt" in dashboard and "-e ." in dashboard
    assert dashboard.endswith(".venv/bin/voxmetrics app")
    assert "requirements-dev.txt" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _setup_commands()[1] in ci


def test_requirements_pin_torch_with_matching_torchaudio():
    req = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert "torch==2.11.0" in req and "torchaudio==2.11.0" in req and "speechbrain" in req
