"""The architecture: the import contracts, no streamlit in the library, short functions and modules.

The layers, the streamlit boundary and the independent families are import-linter contracts
(``.importlinter`` at the repository root), checked here by running ``lint-imports``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LIBRARY_MODULES = [
    "voxmetrics",
    "voxmetrics.report",
    "voxmetrics.report.card",
    "voxmetrics.evaluation",
    "voxmetrics.analysis.linkage",
    "voxmetrics.report.study",
    "voxmetrics.data.studyfile",
    "voxmetrics.synth",
    "voxmetrics.plots",
    "voxmetrics.cli",
    "voxmetrics.metrics",
    "voxmetrics.data",
    "voxmetrics.data.summary",
]


@pytest.mark.parametrize("module", LIBRARY_MODULES)
def test_library_does_not_import_streamlit(module):
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "bad = sorted(m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"{module} imports streamlit: {proc.stdout}{proc.stderr}"


def test_all_library_modules_together_do_not_import_streamlit():
    imports = "; ".join(f"import {m}" for m in LIBRARY_MODULES)
    code = f"import sys; {imports}; assert 'streamlit' not in sys.modules"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def _called_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


def test_plots_do_no_io_and_no_metric_calls():
    """Figure builders take result objects: no file access, no metric or reader calls."""
    for path in (ROOT / "voxmetrics" / "plots").glob("*.py"):
        called = _called_names(path)
        for forbidden in (
            "open",
            "read_scores",
            "read_embeddings",
            "baseline_metrics",
            "evaluate",
            "evaluate_condition",
            "score_histogram",
            "write_image",
        ):
            assert forbidden not in called, f"{path.name} calls {forbidden}"


FORBIDDEN_IN_PAGES = (
    "np.log",
    "np.exp",
    "np.sort",
    "np.argsort",
    "np.linalg",
    "np.cumsum",
    "np.searchsorted",
    "scipy.",
    "sklearn",
)


def test_pages_do_no_metric_math():
    scripts = [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]
    assert len(scripts) > 5
    for path in scripts:
        text = path.read_text(encoding="utf-8")
        for forbidden in FORBIDDEN_IN_PAGES:
            assert forbidden not in text, f"{path.name} uses {forbidden}"


def test_import_contracts_are_kept():
    """``lint-imports`` (the contracts of ``.importlinter``) passes from the repository root."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command())",
            "--no-cache",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"lint-imports failed:\n{proc.stdout}{proc.stderr}"


MAX_FUNCTION_LINES = 150


def test_no_function_is_longer_than_150_lines():
    """Every function and method in voxmetrics/ spans at most 150 lines (docstring included)."""
    long = []
    for path in sorted((ROOT / "voxmetrics").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    where = path.relative_to(ROOT).as_posix()
                    long.append(f"{where}:{node.lineno} {node.name} ({n} lines)")
    assert long == [], "functions longer than 150 lines:\n" + "\n".join(long)


MAX_MODULE_LINES = 1000


def test_no_module_is_longer_than_1000_lines():
    """Every module of voxmetrics/ has at most 1,000 lines (the wheel's _dashboard copy aside)."""
    long = []
    for path in sorted((ROOT / "voxmetrics").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if where.startswith("voxmetrics/_dashboard/"):
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            long.append(f"{where} ({n} lines)")
    assert long == [], "modules longer than 1,000 lines:\n" + "\n".join(long)
