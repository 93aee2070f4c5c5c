"""``voxmetrics.metrics._scipy``: SciPy's optimize, special and sparse, imported on first use."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

USERS = (
    "voxmetrics.metrics.pools",
    "voxmetrics.metrics.sbls",
    "voxmetrics.metrics.similarity",
    "voxmetrics.metrics.srd",
    "voxmetrics.metrics.zebra",
    "voxmetrics.metrics.legal.linking",
)


def test_importing_the_metrics_imports_none_until_a_function_uses_one():
    code = (
        "import json, sys\n"
        f"for m in {list(USERS)!r}: __import__(m)\n"
        "heavy = ('scipy.optimize', 'scipy.special', 'scipy.sparse')\n"
        "before = [m for m in heavy if m in sys.modules]\n"
        "from voxmetrics.metrics._scipy import special\n"
        "value = float(special.gammaln(5.0))\n"
        "print(json.dumps([before, 'scipy.special' in sys.modules, value]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    before, imported, value = json.loads(proc.stdout.strip().splitlines()[-1])
    assert before == [] and imported and value == math.log(24.0)


def test_each_name_is_the_scipy_module():
    import scipy.optimize
    import scipy.sparse
    import scipy.special

    from voxmetrics.metrics import _scipy

    assert _scipy.special.expit is scipy.special.expit
    assert _scipy.optimize.linear_sum_assignment is scipy.optimize.linear_sum_assignment
    assert _scipy.sparse.csr_matrix is scipy.sparse.csr_matrix
    fit = _scipy.optimize.isotonic_regression(np.array([2.0, 1.0]))
    assert fit.x.tolist() == [1.5, 1.5]
