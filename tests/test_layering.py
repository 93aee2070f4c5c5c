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
    "voxmetrics.evaluation.card",
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
    "voxmetrics.dashboard",
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


def test_the_dashboard_does_not_import_the_command_line():
    """``voxmetrics.ui`` and the pages load without ``voxmetrics.cli``: the shells are siblings.

    What both need (the server settings of ``voxmetrics app``) is in ``voxmetrics.dashboard``.
    """
    pages = sorted(str(p) for p in (ROOT / "pages").glob("*.py"))
    for path in [ROOT / "app.py", *map(Path, pages), *(ROOT / "voxmetrics" / "ui").glob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            bad = [n for n in names if n == "voxmetrics.cli" or n.startswith("voxmetrics.cli.")]
            assert not bad, f"{path.name} imports {bad[0]}"
    code = (
        "import sys, voxmetrics.ui, voxmetrics.ui.uploads; "
        "bad = sorted(m for m in sys.modules if m.startswith('voxmetrics.cli')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"voxmetrics.ui imports the CLI: {proc.stdout}{proc.stderr}"


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


EXECUTORS = {
    "evaluation/engine.py": {"evaluate", "evaluate_condition", "evaluate_study"},
    "evaluation/blockwise.py": {"evaluate_blockwise"},
}
"""The executors: the only functions named ``evaluate*``."""


def _module_functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_names_follow_the_rule_of_the_house():
    """``evaluate*`` only for executors; public ``*_frame`` and ``*_table`` return frames.

    The rule (docs, Library > Where things live): ``evaluate*`` for the executors,
    ``condition_*`` for the analysis of one condition, ``*_frame`` for numbers, ``*_table``
    for display text; both of the last return a ``pd.DataFrame``.
    """
    wrong = []
    for path in sorted((ROOT / "voxmetrics").rglob("*.py")):
        where = path.relative_to(ROOT / "voxmetrics").as_posix()
        if where.startswith("_dashboard/"):
            continue
        for fn in _module_functions(path):
            if fn.name.startswith("evaluate") and fn.name not in EXECUTORS.get(where, set()):
                wrong.append(f"{where}: {fn.name} is named like an executor")
            public = not fn.name.startswith("_") and not where.startswith("ui/")
            if public and fn.name.endswith(("_frame", "_table")):
                returns = ast.unparse(fn.returns) if fn.returns is not None else ""
                if returns != "pd.DataFrame":
                    wrong.append(f"{where}: {fn.name} returns {returns or 'nothing declared'}")
    assert wrong == [], "\n".join(wrong)


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


def _test_files_of(module: Path) -> list[str]:
    """Where the unit tests of ``voxmetrics/a/b/c.py`` may live (leading ``_`` dropped)."""
    *packages, name = module.relative_to(ROOT / "voxmetrics").with_suffix("").parts
    name = name.lstrip("_")
    return [
        "/".join(["tests", *packages, f"test_{name}.py"]),
        "/".join(["tests", *packages[:-1], f"test_{'_'.join([*packages[-1:], name])}.py"]),
        f"tests/test_{'_'.join([*packages, name])}.py",
    ]


def test_every_module_has_its_test_file_by_name():
    """A successor finds a module's tests by its name: tests/<package>/test_<module>.py.

    Or ``tests/<package>/test_<subpackage>_<module>.py`` or ``tests/test_<package>_<module>.py``;
    the dashboard's page tests are in tests/app/, the command line's in tests/cli/.
    """
    missing = []
    for path in sorted((ROOT / "voxmetrics").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if path.name in ("__init__.py", "__main__.py") or where.startswith(
            "voxmetrics/_dashboard/"
        ):
            continue
        candidates = _test_files_of(path)
        if not any((ROOT / c).is_file() for c in candidates):
            missing.append(f"{where}: none of {', '.join(candidates)}")
    assert missing == [], "modules without a test file by name:\n" + "\n".join(missing)
