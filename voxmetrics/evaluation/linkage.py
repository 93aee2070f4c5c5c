"""A condition's linkage numbers alone: what the dashboard's Linkage page shows of a report.

:func:`evaluate_linkage` computes, of :func:`~voxmetrics.evaluation.engine.evaluate`'s
:class:`~voxmetrics.evaluation.result.ConditionReport`, the linkage numbers only: linkability
and its curve against N', their speaker-level bootstrap interval and band, singling out and its
interval, and the EER beside them. Each is computed by the same steps on the same data with
the same replicate draws as in the full report, so each equals it, bit for bit; what is left
out is everything else (LID and its calibration, the SRD statistics and their model fit, ZEBRA,
the pooled metrics' replicates), which costs far more on a large study. A report already
evaluated in full gives the same :class:`LinkageReport` with :meth:`LinkageReport.of`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.evaluation.result import ConditionReport, Progress
from voxmetrics.evaluation.steps import check_options, singling_out_of
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.eer import eer_from_pools
from voxmetrics.metrics.embedding_intervals import singling_out_interval
from voxmetrics.metrics.legal import (
    LinkabilityCurve,
    LinkabilityRule,
    SinglingOutResult,
    check_linkability_rule,
    link_rank_ties,
    linkability_curve_from_ranks,
    linkability_from_ranks,
)
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, Ties
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.uncertainty import ConditionReplicates, SpeakerDraws, linkability_replicates

__all__ = [
    "LINKAGE_OPTIONS",
    "LinkageBaseline",
    "LinkageReport",
    "evaluate_linkage",
    "evaluate_linkage_condition",
]

LINKAGE_OPTIONS = ("bootstrap", "seed", "ties", "linkability_rule")
"""The options of :func:`~voxmetrics.evaluation.engine.evaluate` that the linkage numbers
depend on (the others, e.g. LID's calibration, change none of them)."""


@dataclass(frozen=True)
class LinkageBaseline:
    """The 1-to-1 and 1-to-N numbers shown beside linkage: a part of ``BaselineResult``."""

    n_trials: int
    """T, trials scored."""
    n_enrolled: int
    """N, enrolled identities."""
    eer: float
    """VPC 2024 / SpeechBrain EER of the mated vs non-mated pools (the 1-to-1 view)."""
    linkability: float | None
    """Fraction of trials whose own speaker scores at least as high as every other (the
    linkability rule's ties); None for a sparse trial list without a complete trial."""

    @property
    def chance_linkability(self) -> float:
        """Linkability of a random guess, 1/N."""
        return 1.0 / self.n_enrolled

    def to_dict(self) -> dict[str, float | int | None]:
        """JSON-safe dictionary of the fields."""
        return {
            "n_trials": self.n_trials,
            "n_enrolled": self.n_enrolled,
            "eer": self.eer,
            "linkability": self.linkability,
        }


@dataclass(frozen=True)
class LinkageReport:
    """The linkage numbers of one condition, each equal to its full report's."""

    name: str
    """Condition label."""
    attacker: str
    """Attacker knowledge level."""
    baseline: LinkageBaseline
    """EER, linkability and the counts."""
    linkability_curve: LinkabilityCurve | None
    """Linkability against N' enrolled candidates (exact expectation); None without a complete
    trial."""
    singling_out: SinglingOutResult | None = None
    """Singling out (needs utterance embeddings with several trials per speaker)."""
    singling_out_interval: BootstrapInterval | None = None
    """Speaker-level interval of singling out (predicate speakers resampled), when both."""
    replicates: ConditionReplicates | None = field(default=None, repr=False)
    """Linkability and its curve in each speaker-level replicate (with a bootstrap): the
    ``linkability`` key and the curve of the full report's replicates."""
    ties: str = "reference"
    """Tie rule of the pooled metrics (the EER)."""
    linkability_rule: str = "code"
    """When a trial is linked (the full report's ``linkability_rule``)."""

    @property
    def intervals(self) -> dict[str, BootstrapInterval]:
        """The interval of linkability by its key (empty without a bootstrap)."""
        return {} if self.replicates is None else self.replicates.intervals()

    @classmethod
    def of(cls, report: ConditionReport) -> LinkageReport:
        """The linkage numbers of a full report (nothing is computed)."""
        b = report.baseline
        replicates = None
        if report.replicates is not None:
            r = report.replicates
            keep = [k for k in ("linkability",) if k in r.estimates]
            replicates = ConditionReplicates(
                {k: r.estimates[k] for k in keep},
                {k: r.reps[k] for k in keep},
                r.curve_n,
                r.curve,
                r.curve_reps,
            )
        return cls(
            name=report.name,
            attacker=report.attacker,
            baseline=LinkageBaseline(b.n_trials, b.n_enrolled, b.eer, b.linkability),
            linkability_curve=report.linkability_curve,
            singling_out=report.singling_out,
            singling_out_interval=report.singling_out_interval,
            replicates=replicates,
            ties=report.ties,
            linkability_rule=report.linkability_rule,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the numbers under the full report's JSON keys."""
        iv = self.intervals.get("linkability")
        band = None
        if self.replicates is not None and self.replicates.curve_n.size:
            band = [[int(n), float(lo), float(hi)] for n, lo, hi in self.replicates.curve_band()]
        so_iv = self.singling_out_interval
        return {
            **self.baseline.to_dict(),
            "linkability_vs_n": (
                None if self.linkability_curve is None else self.linkability_curve.to_list()
            ),
            "singling_out": None if self.singling_out is None else self.singling_out.to_dict(),
            "ties": self.ties,
            "linkability_rule": self.linkability_rule,
            "intervals": None
            if self.replicates is None
            else {
                "linkability": None if iv is None else [iv.low, iv.high],
                "linkability_vs_n": band,
                **({} if so_iv is None else {"singling_out": [so_iv.low, so_iv.high]}),
            },
        }


def stepper(progress: Progress | None) -> Callable[[float, str], None]:
    """``progress`` as a step function (one that does nothing without a ``progress``)."""

    def step(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    return step


def linkage_baseline(
    eval: ScoreMatrix, link_ranks: NDArray[np.int64] | None, ties: Ties
) -> LinkageBaseline:
    """The EER of ``eval``'s pooled pairs and the linkability of its ranks (None: no ranks)."""
    return LinkageBaseline(
        n_trials=int(eval.n_trials),
        n_enrolled=int(eval.n_enrolled),
        eer=eer_from_pools(SortedPools.of(eval), ties=ties).eer,
        linkability=None if link_ranks is None else linkability_from_ranks(link_ranks),
    )


def no_replicates(n_boot: int) -> ConditionReplicates:
    """Replicates without complete trials: no 1-to-N numbers, an empty curve (as elsewhere)."""
    curve = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((n_boot, 0))
    return ConditionReplicates({}, {}, *curve)


@single_blas_thread()
def evaluate_linkage(
    eval: ScoreMatrix,
    *,
    name: str = "condition",
    attacker: str = "semi-informed",
    embeddings: EmbeddingSet | None = None,
    split: str = "eval",
    bootstrap: int = 0,
    seed: int = 0,
    ties: Ties = "reference",
    linkability_rule: LinkabilityRule = "code",
    progress: Progress | None = None,
) -> LinkageReport:
    """The linkage numbers of one condition, as :func:`~voxmetrics.evaluation.engine.evaluate`.

    The same options mean the same as there and give the same numbers: the EER of the pooled
    listed pairs, linkability and its curve of the complete trials (under the linkability
    rule), their speaker-level replicates (the same draws: ``bootstrap`` replicates of the
    trial speakers, ``seed``), singling out of ``split`` of ``embeddings`` and its interval.
    BLAS runs on one thread, as in ``evaluate``, so the replicate sums are the same floats.

    Parameters
    ----------
    eval : ScoreMatrix
        The evaluated scores.
    name, attacker : str
        Labels carried into the report.
    embeddings : EmbeddingSet, optional
        The utterance embeddings behind ``eval``; adds singling out (on ``split``).
    split : str
        Split of ``embeddings`` that ``eval`` was scored from.
    bootstrap : int
        Replicates of the speaker-level bootstrap (0 = none).
    seed : int
        Seed of the bootstrap.
    ties : {"reference", "attacker"}
        Tie rule of the pooled metrics (the EER).
    linkability_rule : {"code", "strict"}
        When a trial is linked.
    progress : callable(fraction, message), optional
        Called as the steps advance.

    Returns
    -------
    LinkageReport

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]],
    ...     trial_ids=["t0", "t1", "t2", "t3"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c", "d"])
    >>> r = evaluate_linkage(sm)
    >>> r.baseline.eer, r.baseline.linkability
    (0.5, 1.0)
    """
    check_options(ties, "similarity")
    check_linkability_rule(linkability_rule)

    step = stepper(progress)
    step(0.0, "ranks")
    full = eval.complete_rows()  # the trials of the 1-to-N metrics (eval itself if complete)
    ranks = None
    if full is not None:
        ranks = target_ranks(full.scores, full.targets, ties=link_rank_ties(linkability_rule))
    step(0.2, "EER")
    baseline = linkage_baseline(eval, ranks, ties)
    replicates = None
    if bootstrap > 0:
        step(0.4, f"bootstrap {bootstrap}")
        draws = SpeakerDraws.draw(eval.trial_speakers, n_boot=bootstrap, seed=seed)
        if full is None or ranks is None:  # no complete trial: no linkability, no curve
            replicates = no_replicates(bootstrap)
        else:
            replicates = linkability_replicates(ranks, full.n_enrolled, full.trial_speakers, draws)
    step(0.5, "singling out")
    singled = singling_out_of(embeddings, split)
    so_interval = None
    if bootstrap > 0 and singled is not None and singled.per_predicate is not None:
        so_interval = singling_out_interval(singled, n_boot=bootstrap, seed=seed)
    curve = None
    if ranks is not None and full is not None:
        curve = linkability_curve_from_ranks(ranks, full.n_enrolled)
    step(1.0, "done")
    return LinkageReport(
        name=name,
        attacker=attacker,
        baseline=baseline,
        linkability_curve=curve,
        singling_out=singled,
        singling_out_interval=so_interval,
        replicates=replicates,
        ties=ties,
        linkability_rule=linkability_rule,
    )


def evaluate_linkage_condition(
    condition: Condition, *, progress: Progress | None = None, **options: Any
) -> LinkageReport:
    """:func:`evaluate_linkage` of a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are its keyword options (:data:`LINKAGE_OPTIONS`); the numbers equal those of
    :func:`~voxmetrics.evaluation.engine.evaluate_condition` with the same options.
    """
    return evaluate_linkage(
        condition.eval,
        name=condition.name,
        attacker=condition.attacker,
        embeddings=condition.embeddings,
        progress=progress,
        **options,
    )
