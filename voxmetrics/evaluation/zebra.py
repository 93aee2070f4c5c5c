"""A condition's ZEBRA numbers alone: what the dashboard's ZEBRA page shows of a report.

:func:`evaluate_zebra` computes, of :func:`~voxmetrics.evaluation.engine.evaluate`'s
:class:`~voxmetrics.evaluation.result.ConditionReport`, the ZEBRA numbers only (Nautsch et al.
2020): the expected disclosure D_ECE, the worst case log10 l and its tag, their speaker-level
intervals (the same replicate draws: the report's ``zebra_intervals``), and the EER beside them.
Each equals the full report's, bit for bit; what is left out (LID and its calibration, the SRD
fits, the 1-to-N numbers, singling out) costs far more on a large study. A report already
evaluated in full gives the same :class:`ZebraReport` with :meth:`ZebraReport.of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.evaluation.result import ZEBRA_KEYS, ConditionReport, Progress
from voxmetrics.evaluation.steps import check_options
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.eer import eer_from_pools
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, Ties
from voxmetrics.metrics.zebra import ZebraResult, zebra_bootstrap, zebra_from_pools

__all__ = ["ZEBRA_OPTIONS", "ZebraReport", "evaluate_zebra", "evaluate_zebra_condition"]

ZEBRA_OPTIONS = ("bootstrap", "seed", "ties")
"""The options of :func:`~voxmetrics.evaluation.engine.evaluate` that the ZEBRA numbers depend
on (the others change none of them)."""


@dataclass(frozen=True)
class ZebraReport:
    """The ZEBRA numbers of one condition and its EER, each equal to its full report's."""

    name: str
    """Condition label."""
    eer: float
    """VPC 2024 / SpeechBrain EER of the listed pairs (the 1-to-1 view beside ZEBRA)."""
    zebra: ZebraResult
    """D_ECE, log10 l, the tag and the worst comparison."""
    intervals: dict[str, BootstrapInterval] | None = None
    """Speaker-level intervals of ``d_ece``, ``log10_l`` (none: a maximum) and
    ``log10_l_q95``; None without a bootstrap."""
    ties: str = "reference"
    """Tie rule of the pooled metrics."""

    @classmethod
    def of(cls, report: ConditionReport) -> ZebraReport:
        """The ZEBRA numbers of a full report (nothing is computed)."""
        intervals = None
        if report.replicates is not None:
            every = report.intervals
            intervals = {k: every[k] for k in ZEBRA_KEYS}
        return cls(report.name, report.baseline.eer, report.zebra, intervals, report.ties)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the numbers under the full report's JSON keys."""
        iv = self.intervals
        return {
            "eer": self.eer,
            "zebra": self.zebra.to_dict(),
            "ties": self.ties,
            "intervals": None if iv is None else {k: [iv[k].low, iv[k].high] for k in iv},
        }


@single_blas_thread()
def evaluate_zebra(
    eval: ScoreMatrix,
    *,
    name: str = "condition",
    bootstrap: int = 0,
    seed: int = 0,
    ties: Ties = "reference",
    progress: Progress | None = None,
) -> ZebraReport:
    """The ZEBRA numbers of one condition, as :func:`~voxmetrics.evaluation.engine.evaluate`.

    The same options mean the same as there and give the same numbers: ZEBRA and the EER of
    the pooled listed pairs under ``ties``, and their speaker-level intervals (``bootstrap``
    replicates of the trial speakers drawn with ``seed``, the report's draws; each replicate
    reweights the label runs of the sorted pools and refits PAV).

    Parameters
    ----------
    eval : ScoreMatrix
        The evaluated scores.
    name : str
        Label carried into the report.
    bootstrap : int
        Replicates of the speaker-level bootstrap (0 = none).
    seed : int
        Seed of the bootstrap.
    ties : {"reference", "attacker"}
        Tie rule of the pooled metrics.
    progress : callable(fraction, message), optional
        Called as the replicates advance.

    Returns
    -------
    ZebraReport

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]],
    ...     trial_ids=["t0", "t1", "t2", "t3"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c", "d"])
    >>> r = evaluate_zebra(sm)
    >>> r.eer, r.zebra.tag, r.intervals is None
    (0.5, 'A', True)
    """
    check_options(ties, "similarity")
    pools = SortedPools.of(eval)
    result = zebra_from_pools(pools, ties=ties)
    eer = eer_from_pools(pools, ties=ties).eer
    intervals = None
    if bootstrap > 0:
        intervals = zebra_bootstrap(
            eval.scores,
            eval.targets,
            eval.trial_speakers,
            n_boot=int(bootstrap),
            seed=int(seed),
            progress=progress,
            ties=ties,
            pools=pools,
            mask=eval.mask,
        )
    elif progress is not None:
        progress(1.0, "done")
    return ZebraReport(name, eer, result, intervals, ties)


def evaluate_zebra_condition(
    condition: Condition, *, progress: Progress | None = None, **options: Any
) -> ZebraReport:
    """:func:`evaluate_zebra` of a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are its keyword options (:data:`ZEBRA_OPTIONS`); the numbers equal those of
    :func:`~voxmetrics.evaluation.engine.evaluate_condition` with the same options.
    """
    return evaluate_zebra(condition.eval, name=condition.name, progress=progress, **options)
