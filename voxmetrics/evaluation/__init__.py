"""The engine: a condition's result, evaluate, compare, and the blockwise (Dask) executor.

- :mod:`~voxmetrics.evaluation.options`: what an evaluation is asked for: its options
  (:class:`EvaluationOptions`, validated once) and the parts of its report (:data:`PARTS`),
  each declaring the products and options it needs.
- :mod:`~voxmetrics.evaluation.result`: :class:`ConditionReport`, every metric of one
  condition (or of the parts asked for), and its JSON object.
- :mod:`~voxmetrics.evaluation.steps`: the intermediate products of an evaluation and the one
  step that turns them into a report, shared by both executors.
- :mod:`~voxmetrics.evaluation.engine`: the in-memory executor, :func:`evaluate`, and its
  condition- and study-wide forms. A page that shows fewer numbers asks it for fewer parts.
- :mod:`~voxmetrics.evaluation.blockwise`: the blockwise executor on a Dask cluster, reading
  scores from :mod:`~voxmetrics.evaluation.sources`.
- :mod:`~voxmetrics.evaluation.compare`: paired comparisons of two conditions.
- :mod:`~voxmetrics.evaluation.card`: the report card, which grades condition results.
- :mod:`~voxmetrics.evaluation.threat`: the 1-to-1 vs 1-to-N threat model and its call-outs.

The names of :mod:`~voxmetrics.evaluation.options`, :mod:`~voxmetrics.evaluation.result`,
:mod:`~voxmetrics.evaluation.engine` and :mod:`~voxmetrics.evaluation.compare` are importable
from here.
"""

from voxmetrics.evaluation.compare import *  # noqa: F403
from voxmetrics.evaluation.compare import __all__ as _compare_all
from voxmetrics.evaluation.engine import *  # noqa: F403
from voxmetrics.evaluation.engine import __all__ as _engine_all
from voxmetrics.evaluation.options import *  # noqa: F403
from voxmetrics.evaluation.options import __all__ as _options_all
from voxmetrics.evaluation.result import *  # noqa: F403
from voxmetrics.evaluation.result import __all__ as _result_all

__all__ = [*_options_all, *_result_all, *_engine_all, *_compare_all]
