"""The library never imports streamlit (design.md Layers, style.md 7)."""

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
    "voxmetrics.threat",
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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


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


def test_only_ui_imports_streamlit():
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "voxmetrics").rglob("*.py")
        if "ui" not in p.relative_to(ROOT / "voxmetrics").parts and "streamlit" in _imports(p)
    ]
    assert offenders == []


def _runtime_imports(path: Path) -> set[str]:
    """Modules imported by ``path`` outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(node)
    }
    names = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", ["lid", "srd", "sbls", "linkage"])
def test_analysis_sits_below_the_report_the_figures_and_the_dashboard(module):
    path = ROOT / "voxmetrics" / "analysis" / f"{module}.py"
    above = ("voxmetrics.report", "voxmetrics.plots", "voxmetrics.ui", "voxmetrics.cli")
    bad = sorted(m for m in _runtime_imports(path) if m.startswith(above))
    assert bad == [], f"analysis/{module}.py imports {bad}"
