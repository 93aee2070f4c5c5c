"""SciPy's submodules that the metrics use in some functions only, imported on first use.

``scipy.optimize`` (isotonic regression, assignment), ``scipy.special`` (log gamma, log beta,
logistic) and ``scipy.sparse`` cost about 1 s to import together: a Dask worker, which never
calls those functions, does not pay it. Static tools see the real modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voxmetrics._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize, sparse, special
else:
    optimize = lazy_module("scipy.optimize")
    sparse = lazy_module("scipy.sparse")
    special = lazy_module("scipy.special")

__all__ = ["optimize", "sparse", "special"]
