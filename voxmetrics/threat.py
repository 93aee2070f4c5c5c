"""The threat model's names under their first path: :mod:`voxmetrics.evaluation.threat`.

The 1-to-1 vs 1-to-N threat model and the call-outs of a study live with the engine
(:mod:`voxmetrics.evaluation.threat`); this module re-exports its names for code that imports
``voxmetrics.threat``.
"""

from voxmetrics.evaluation.threat import *  # noqa: F403
from voxmetrics.evaluation.threat import __all__ as _threat_all

__all__ = [*_threat_all]
