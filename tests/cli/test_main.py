"""What each entry point loads: the heavy libraries only where a command needs them.

``import voxmetrics`` loads none of its subpackages, ``python -m voxmetrics --version`` neither
pandas nor SciPy, and ``evaluate`` of an NPZ score file no pandas, scikit-learn, Matplotlib or
Plotly (SciPy it needs: the PAV fit and the SRD model fit). Each case runs in a fresh
interpreter, as a user's command does. And the CLI (``voxmetrics.cli.main``, ``python -m
voxmetrics``) keeps the memory its row passes free for their next chunks, runs without huge-page
compaction unless the user chose it, and ends without a traceback.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from voxmetrics.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "plotly", "streamlit", "dask")

_REPORT = """
import json, sys
{setup}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))))
"""


def _heavy_after(setup: str) -> list[str]:
    """The heavy top-level packages in ``sys.modules`` after running ``setup`` in a child."""
    code = _REPORT.format(setup=setup, heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cli(*argv: str) -> str:
    """Python code that runs ``python -m voxmetrics ARGV`` in the child (stdout silenced)."""
    return (
        "import contextlib, io, runpy\n"
        f"sys.argv = ['voxmetrics', *{list(argv)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        runpy.run_module('voxmetrics', run_name='__main__')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, exc.code\n"
    )


@pytest.fixture(scope="module")
def npz_files(tmp_path_factory) -> tuple[Path, Path]:
    """A small eval and dev NPZ score file of disjoint speakers."""
    d = tmp_path_factory.mktemp("lazy")
    paths = []
    for name, t, n, seed in (("eval", 60, 12, 0), ("dev", 40, 8, 1)):
        rng = np.random.default_rng(seed)
        scores = rng.normal(0.0, 0.1, (t, n)).astype(np.float32)
        targets = np.arange(t) % n
        scores[np.arange(t), targets] += 0.3
        speakers = np.array([f"{name}{j}" for j in range(n)])
        path = d / f"{name}.npz"
        np.savez(
            path,
            scores=scores,
            trial_ids=np.array([f"{name}_u{i}" for i in range(t)]),
            trial_speakers=speakers[targets],
            enrol_speakers=speakers,
        )
        paths.append(path)
    return paths[0], paths[1]


def test_import_voxmetrics_loads_no_heavy_library():
    assert _heavy_after("import voxmetrics") == []


def test_import_voxmetrics_loads_none_of_its_subpackages():
    code = (
        "import sys, voxmetrics\n"
        "print(sorted(m for m in sys.modules if m.startswith('voxmetrics.')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert ast.literal_eval(proc.stdout.strip()) == ["voxmetrics._lazy"]


def test_version_loads_no_heavy_library():
    assert _heavy_after(_cli("--version")) == []


def test_evaluate_npz_loads_no_pandas_sklearn_or_figures(npz_files):
    eval_path, dev_path = npz_files
    loaded = _heavy_after(_cli("evaluate", str(eval_path), "--dev", str(dev_path)))
    assert loaded == ["scipy"]  # the PAV and SRD fits need it; nothing else heavy


def test_cli_keeps_freed_memory_for_reuse(monkeypatch):
    """On Linux the CLI asks glibc to keep freed chunks (no page faults on each reuse)."""
    import voxmetrics.cli as cli

    calls = []

    class FakeLibc:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(cli.ctypes, "CDLL", lambda name: FakeLibc())
    monkeypatch.setattr(cli.sys, "platform", "linux")
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    cli._keep_freed_memory()
    assert calls == [(-3, 32 << 20), (-1, 128 << 20)]
    calls.clear()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "0")  # the user's setting wins
    cli._keep_freed_memory()
    assert calls == []


def test_module_entry_point_has_no_traceback(tmp_path):
    garbage = tmp_path / "x.npz"
    garbage.write_bytes(b"PK\x03\x04 broken zip")
    proc = subprocess.run(
        [sys.executable, "-m", "voxmetrics", "evaluate", str(garbage)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    help_text = subprocess.run(
        [sys.executable, "-m", "voxmetrics", "evaluate", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    for flag in ("--trials", "--dev", "--dev-trials", "--format", "--json", "--html", "--fail-on"):
        assert flag in help_text


def test_commands_run_without_huge_page_compaction_unless_the_user_chose(monkeypatch):
    from numpy._core.multiarray import _get_madvise_hugepage, _set_madvise_hugepage

    from voxmetrics.cli import demo

    seen = []
    monkeypatch.setattr(demo, "run", lambda args: seen.append(_get_madvise_hugepage()) or 0)
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    before = _get_madvise_hugepage()
    try:
        _set_madvise_hugepage(True)
        assert main(["demo", "unused"]) == 0
        assert seen == [False] and _get_madvise_hugepage() is True  # restored afterwards
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        assert main(["demo", "unused"]) == 0
        assert seen == [False, True]
    finally:
        _set_madvise_hugepage(before)
