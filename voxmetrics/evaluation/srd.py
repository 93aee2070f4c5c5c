"""A condition's SRD numbers alone: what the dashboard's SRD page shows of a report.

:func:`evaluate_srd` computes, of :func:`~voxmetrics.evaluation.engine.evaluate`'s
:class:`~voxmetrics.evaluation.result.ConditionReport`, the SRD numbers only: the rank histogram
and its statistics, the CLL beta-binomial model, their chance levels, the speaker-level replicates
of the SRD statistics and of linkability, and the EER beside them. Each is computed by the same
steps on the same data with the same replicate draws and the same chance draws as in the full
report, so each equals it, bit for bit; what is left out (LID and its calibration, ZEBRA,
the pooled metrics' replicates, singling out) costs far more on a large study. A report already
evaluated in full gives the same :class:`SRDReport` with :meth:`SRDReport.of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition
from voxmetrics.evaluation.linkage import (
    LinkageBaseline,
    linkage_baseline,
    no_replicates,
    stepper,
)
from voxmetrics.evaluation.result import ConditionReport, Progress
from voxmetrics.evaluation.steps import check_options
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels, chance_levels
from voxmetrics.metrics.legal import (
    LinkabilityRule,
    check_linkability_rule,
    link_rank_ties,
)
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import Ties
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.srd import BetaBinomialFit, SRDResult, fit_beta_binomial, srd_from_ranks
from voxmetrics.metrics.uncertainty import ConditionReplicates, SpeakerDraws, one_to_n_replicates

__all__ = [
    "SRD_OPTIONS",
    "SRD_REPLICATE_KEYS",
    "SRDReport",
    "evaluate_srd",
    "evaluate_srd_condition",
]

SRD_OPTIONS = ("bootstrap", "seed", "ties", "linkability_rule")
"""The options of :func:`~voxmetrics.evaluation.engine.evaluate` that the SRD numbers depend
on (the others, e.g. LID's calibration, change none of them)."""

SRD_REPLICATE_KEYS = ("linkability", "mean_d", "idr", "max_d", "max_d_q95")
"""The replicate keys of the full report that the SRD numbers keep."""


@dataclass(frozen=True)
class SRDReport:
    """The SRD numbers of one condition, each equal to its full report's.

    It has the attributes of a :class:`~voxmetrics.evaluation.result.ConditionReport` that the
    SRD tables and figures read (``srd``, ``srd_model``, ``chance``, ``intervals``,
    ``baseline.eer``); those it leaves out (``lid``, ``zebra``, ``singling_out``) are None.
    """

    name: str
    """Condition label."""
    attacker: str
    """Attacker knowledge level."""
    baseline: LinkageBaseline
    """EER, linkability and the counts."""
    srd: SRDResult | None
    """The rank histogram and its statistics; None for a sparse list without a complete trial."""
    srd_model: BetaBinomialFit | None
    """The CLL beta-binomial model of the histogram (None without ``srd``)."""
    chance: ChanceLevels | None = field(default=None, repr=False)
    """Chance levels of the 1-to-N numbers (the full report's, without its LID part)."""
    replicates: ConditionReplicates | None = field(default=None, repr=False)
    """The SRD statistics, linkability and its curve in each speaker-level replicate."""
    ties: str = "reference"
    """Tie rule of the ranks and of the EER."""
    linkability_rule: str = "code"
    """When a trial is linked."""

    lid = None
    """No LID here (the tables read it as absent)."""
    zebra = None
    """No ZEBRA here."""
    singling_out = None
    """No singling out here."""
    singling_out_interval = None
    """No singling out here."""

    @property
    def intervals(self) -> dict[str, BootstrapInterval]:
        """The intervals of the SRD statistics and linkability by key (empty without one)."""
        return {} if self.replicates is None else self.replicates.intervals()

    @classmethod
    def of(cls, report: ConditionReport) -> SRDReport:
        """The SRD numbers of a full report (nothing is computed)."""
        b = report.baseline
        replicates = None
        if report.replicates is not None:
            r = report.replicates
            keep = [k for k in SRD_REPLICATE_KEYS if k in r.estimates]
            replicates = ConditionReplicates(
                {k: r.estimates[k] for k in keep},
                {k: r.reps[k] for k in keep},
                r.curve_n,
                r.curve,
                r.curve_reps,
            )
        chance = report.chance
        if chance is not None:
            chance = ChanceLevels(
                {k: v for k, v in chance.values.items() if k in _CHANCE_KEYS},
                chance.curve_n,
                chance.curve,
                chance.n_draws,
            )
        return cls(
            name=report.name,
            attacker=report.attacker,
            baseline=LinkageBaseline(b.n_trials, b.n_enrolled, b.eer, b.linkability),
            srd=report.srd,
            srd_model=report.srd_model,
            chance=chance,
            replicates=replicates,
            ties=report.ties,
            linkability_rule=report.linkability_rule,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the numbers under the full report's JSON keys."""
        iv = self.intervals
        return {
            **self.baseline.to_dict(),
            "srd": None if self.srd is None else self.srd.to_dict(),
            "srd_model": None if self.srd_model is None else self.srd_model.to_dict(),
            "chance": None if self.chance is None else self.chance.to_dict(),
            "ties": self.ties,
            "linkability_rule": self.linkability_rule,
            "intervals": None
            if self.replicates is None
            else {k: [iv[k].low, iv[k].high] for k in SRD_REPLICATE_KEYS if k in iv},
        }


_CHANCE_KEYS = ("linkability", "mean_d", "idr", "max_d", "max_d_q95")


@single_blas_thread()
def evaluate_srd(
    eval: ScoreMatrix,
    *,
    name: str = "condition",
    attacker: str = "semi-informed",
    bootstrap: int = 0,
    seed: int = 0,
    ties: Ties = "reference",
    linkability_rule: LinkabilityRule = "code",
    progress: Progress | None = None,
) -> SRDReport:
    """The SRD numbers of one condition, as :func:`~voxmetrics.evaluation.engine.evaluate`.

    The same options mean the same as there and give the same numbers: the EER of the pooled
    listed pairs, the rank histogram of the complete trials (ranks under ``ties``), its CLL
    model, the chance levels (``seed`` draws the identities), and the speaker-level replicates
    (``bootstrap`` replicates of the trial speakers, ``seed``). BLAS runs on one thread, as in
    ``evaluate``, so the replicate sums are the same floats.

    Parameters
    ----------
    eval : ScoreMatrix
        The evaluated scores.
    name, attacker : str
        Labels carried into the report.
    bootstrap : int
        Replicates of the speaker-level bootstrap (0 = none).
    seed : int
        Seed of the bootstrap and of the chance levels' draws.
    ties : {"reference", "attacker"}
        Tie rule of the SRD ranks and of the EER.
    linkability_rule : {"code", "strict"}
        When a trial is linked.
    progress : callable(fraction, message), optional
        Called as the steps advance.

    Returns
    -------
    SRDReport

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]],
    ...     trial_ids=["t0", "t1", "t2", "t3"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c", "d"])
    >>> r = evaluate_srd(sm)
    >>> r.baseline.eer, r.srd.histogram.tolist()
    (0.5, [4, 0, 0, 0])
    """
    check_options(ties, "similarity")
    check_linkability_rule(linkability_rule)

    step = stepper(progress)
    step(0.0, "ranks")
    full = eval.complete_rows()  # the trials of the 1-to-N metrics (eval itself if complete)
    link_ranks = ranks = None
    if full is not None:
        link_ties = link_rank_ties(linkability_rule)
        link_ranks = target_ranks(full.scores, full.targets, ties=link_ties)
        ranks = (
            link_ranks.copy()
            if ties == link_ties
            else target_ranks(full.scores, full.targets, ties=ties)
        )
    step(0.1, "EER")
    baseline = linkage_baseline(eval, link_ranks, ties)
    srd_result = model = chance = replicates = None
    if full is not None and ranks is not None and link_ranks is not None:
        step(0.2, "rank model")
        srd_result = srd_from_ranks(ranks, full.n_enrolled)
        model = fit_beta_binomial(srd_result.histogram, loss="CLL")
        step(0.4, "chance levels")
        chance = chance_levels(full.scores, calibration=None, seed=seed, ties=ties)
        chance = ChanceLevels(
            {k: v for k, v in chance.values.items() if k in _CHANCE_KEYS},
            chance.curve_n,
            chance.curve,
            chance.n_draws,
        )
    if bootstrap > 0:
        step(0.7, f"bootstrap {bootstrap}")
        draws = SpeakerDraws.draw(eval.trial_speakers, n_boot=bootstrap, seed=seed)
        if full is None or ranks is None or link_ranks is None:
            replicates = no_replicates(bootstrap)
        else:
            replicates = one_to_n_replicates(
                full.n_enrolled,
                full.trial_speakers,
                draws,
                ranks=(link_ranks, ranks),
            )
    step(1.0, "done")
    return SRDReport(
        name=name,
        attacker=attacker,
        baseline=baseline,
        srd=srd_result,
        srd_model=model,
        chance=chance,
        replicates=replicates,
        ties=ties,
        linkability_rule=linkability_rule,
    )


def evaluate_srd_condition(
    condition: Condition, *, progress: Progress | None = None, **options: Any
) -> SRDReport:
    """:func:`evaluate_srd` of a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are its keyword options (:data:`SRD_OPTIONS`); the numbers equal those of
    :func:`~voxmetrics.evaluation.engine.evaluate_condition` with the same options.
    """
    return evaluate_srd(
        condition.eval,
        name=condition.name,
        attacker=condition.attacker,
        progress=progress,
        **options,
    )
