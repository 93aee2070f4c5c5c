"""Packaging: metadata, extras and requirements agree; LICENSE (issue 19)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from voxmetrics._version import __version__

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower()


def _requirements(path: Path) -> list[str]:
    lines = (ln.split("#", 1)[0].strip() for ln in path.read_text(encoding="utf-8").splitlines())
    return [ln.replace(" ", "") for ln in lines if ln and not ln.startswith("-")]


def test_core_is_the_scientific_stack_only():
    core = {_name(r) for r in PROJECT["dependencies"]}
    stack = {"numpy", "scipy", "scikit-learn", "pandas", "pyarrow", "plotly", "threadpoolctl"}
    assert core == stack


def test_extras_app_audio_all():
    extras = PROJECT["optional-dependencies"]
    assert {_name(r) for r in extras["app"]} == {"streamlit", "kaleido"}
    assert {_name(r) for r in extras["audio"]} == {
        "torch",
        "torchaudio",
        "speechbrain",
        "resemblyzer",
        "soundfile",
        "pyloudnorm",
    }
    assert "torch==2.11.0" in extras["audio"] and "torchaudio==2.11.0" in extras["audio"]
    assert {_name(r) for r in extras["vpc"]} == {"kaldiio", "h5py", "jiwer", "librosa"}
    assert extras["all"] == ["voxmetrics[app,audio,vpc]"]


def test_requirements_txt_is_core_plus_all_extras_with_the_same_pins():
    declared = [
        *PROJECT["dependencies"],
        *PROJECT["optional-dependencies"]["app"],
        *PROJECT["optional-dependencies"]["audio"],
        *PROJECT["optional-dependencies"]["vpc"],
    ]
    assert sorted(r.replace(" ", "") for r in declared) == sorted(
        _requirements(ROOT / "requirements.txt")
    )


def test_dev_requirements_include_the_runtime_ones():
    text = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    assert "-r requirements.txt" in text.splitlines()
    assert {"pytest", "hypothesis", "ruff", "hatchling", "editables"} <= {
        _name(r) for r in _requirements(ROOT / "requirements-dev.txt")
    }


def test_the_build_backend_is_hatchling_with_the_version_from_the_package():
    build = PYPROJECT["build-system"]
    assert build == {"requires": ["hatchling>=1.26"], "build-backend": "hatchling.build"}
    hatch = PYPROJECT["tool"]["hatch"]
    assert hatch["version"] == {"path": "voxmetrics/_version.py"}
    assert hatch["build"]["targets"]["wheel"]["packages"] == ["voxmetrics"]
    assert (ROOT / "voxmetrics" / "py.typed").is_file()  # a file of the package: in the wheel
    assert "setuptools" not in PYPROJECT["tool"]


def test_metadata_license_and_single_version():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert "VoxMetrics contributors" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "voxmetrics/_version.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert PROJECT["authors"] and PROJECT["requires-python"] == ">=3.11"
    assert not any("License ::" in c for c in PROJECT["classifiers"])  # the SPDX field says it


def _git(*args: str) -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing tracked to check")
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def test_the_repository_tracks_no_link_and_nothing_it_ignores():
    # A committed `.venv` link once made CI's `python3 -m venv .venv` fail on a clean clone.
    links = [
        line.split("\t", 1)[1]
        for line in _git("ls-files", "-s").splitlines()
        if line.startswith("120000 ")
    ]
    assert links == []
    assert _git("ls-files", "--cached", "--ignored", "--exclude-standard").split() == []
