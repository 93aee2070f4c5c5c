"""The package version (voxmetrics._version): one place, read by the build and the package."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import voxmetrics
from voxmetrics._version import __version__


def test_the_version_is_one_pep440_release_read_by_the_build_and_the_package():
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__), __version__
    assert voxmetrics.__version__ == __version__
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "voxmetrics/_version.py"
