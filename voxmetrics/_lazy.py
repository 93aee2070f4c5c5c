"""Imports on first use, so that ``import voxmetrics`` and each command load only what they use.

``import voxmetrics`` loads none of its subpackages, and ``python -m voxmetrics evaluate`` on an
NPZ file neither pandas nor the readers of every format:

- :func:`lazy_names`: a package's public names (PEP 562), each imported from its module the
  first time it is read (``vm.read_scores``, ``from voxmetrics.data import Study``), then kept
  in the package's namespace like any other name;
- :func:`lazy_module`: a library that a module uses in some of its functions only (pandas for
  tables), imported the first time one of its attributes is read.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_module", "lazy_names"]


def lazy_names(
    package: str, modules: Mapping[str, str], star: Sequence[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose names load lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : Mapping of str to str
        Each module (absolute, or relative to ``package`` with a leading dot; ``"."``: the
        package's own submodules) and the names, space-separated, read from it as
        ``from MODULE import NAME`` would: an attribute of the module, else its submodule.
    star : sequence of str
        Modules all of whose ``__all__`` the package also offers, as ``from MODULE import *``
        would; imported when a name that ``modules`` does not list is first read. When the
        package has no ``__all__`` of its own, reading it gives the names of ``modules`` and
        of every ``star`` module (which imports them).

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to be assigned at the package's top level.

    Examples
    --------
    >>> import types
    >>> pkg = sys.modules["demo_pkg"] = types.ModuleType("demo_pkg")
    >>> pkg.__getattr__, pkg.__dir__ = lazy_names("demo_pkg", {"math": "sqrt pi"})
    >>> pkg.sqrt(4.0), "sqrt" in vars(pkg), "pi" in vars(pkg)
    (2.0, True, False)
    >>> del sys.modules["demo_pkg"]
    """
    namespace = vars(sys.modules[package])
    names = {
        name: importlib.util.resolve_name(module, package) if module.startswith(".") else module
        for module, listed in modules.items()
        for name in listed.split()
    }

    def find(name: str) -> Any:
        module = names.get(name)
        if module == package:
            return importlib.import_module(f"{package}.{name}")
        if module is not None:
            source = importlib.import_module(module)
            try:
                return getattr(source, name)
            except AttributeError:
                return importlib.import_module(f"{module}.{name}")
        if name == "__all__" and star:
            return [*names, *(n for m in star for n in importlib.import_module(m).__all__)]
        for m in star:
            source = importlib.import_module(m)
            if name in source.__all__:
                return getattr(source, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __getattr__(name: str) -> Any:
        value = find(name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__


class _LazyModule:
    """Stands for a module until one of its attributes is read, then imports it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if attr in ("_name", "_module"):  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(attr)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str) -> Any:
    """``name`` (e.g. ``"pandas"``), imported the first time one of its attributes is read.

    ``pd = lazy_module("pandas")`` at the top of a module instead of ``import pandas as pd``:
    ``pd.DataFrame`` works as before, and a command whose work never reads an attribute of
    ``pd`` (``evaluate`` on an NPZ file) does not pay for importing pandas.

    Examples
    --------
    >>> m = lazy_module("fractions")
    >>> m.Fraction(1, 3) + m.Fraction(1, 6)
    Fraction(1, 2)
    """
    return _LazyModule(name)
