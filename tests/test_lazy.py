"""``voxmetrics._lazy``: package names and libraries imported on first use.

The lazy packages (``voxmetrics``, ``voxmetrics.data``) offer the same names, resolving to the
same objects, as eager imports would; their ``if TYPE_CHECKING`` imports (what static tools see)
match the lazy table; and :func:`~voxmetrics._lazy.lazy_module` imports on first use and survives
copies and pickling.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_lazy_names_are_the_eager_ones():
    """Every public name of the lazy packages resolves, to what its module defines."""
    import voxmetrics
    import voxmetrics.data
    import voxmetrics.metrics

    for pkg in (voxmetrics, voxmetrics.data):
        for name in pkg.__all__:
            assert getattr(pkg, name) is not None, (pkg.__name__, name)
    assert voxmetrics.read_scores is voxmetrics.data.readers.read_scores
    assert voxmetrics.lid is voxmetrics.metrics.lid  # the function, not its module
    assert voxmetrics.threat is importlib.import_module("voxmetrics.evaluation.threat")
    assert voxmetrics.__version__ == importlib.import_module("voxmetrics._version").__version__
    assert set(voxmetrics.metrics.__all__) <= set(voxmetrics.__all__)
    assert set(voxmetrics.data.__all__) <= set(dir(voxmetrics.data))
    with pytest.raises(AttributeError):
        _ = voxmetrics.no_such_name
    with pytest.raises(AttributeError):
        _ = voxmetrics.data.no_such_name


@pytest.mark.parametrize("path", ["voxmetrics/__init__.py", "voxmetrics/data/__init__.py"])
def test_static_imports_match_the_lazy_table(path):
    """The ``if TYPE_CHECKING`` imports (what static tools see) name the lazy table's names."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    static = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for imp in node.body
        if isinstance(imp, ast.ImportFrom)
        for alias in imp.names
        if alias.name != "*"
    }
    module = importlib.import_module(path.removesuffix("/__init__.py").replace("/", "."))
    assert static <= set(dir(module)), sorted(static - set(dir(module)))


def test_lazy_module_imports_on_first_use_and_survives_copies():
    import copy
    import pickle

    from voxmetrics._lazy import lazy_module

    json_mod = lazy_module("json")
    assert json_mod.dumps([1]) == "[1]"
    assert copy.copy(lazy_module("json")).dumps([2]) == "[2]"
    assert pickle.loads(pickle.dumps(lazy_module("json"))).dumps([3]) == "[3]"
    with pytest.raises(AttributeError):
        _ = lazy_module("json").no_such_function
