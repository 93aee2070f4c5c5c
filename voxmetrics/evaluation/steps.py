"""The steps every executor of an evaluation shares: from intermediate products to the report.

An executor (the in-memory :func:`~voxmetrics.evaluation.engine.evaluate`, the blockwise
:func:`~voxmetrics.evaluation.blockwise.evaluate_blockwise` on Dask) reads the scores its own
way and produces the :class:`Products` that the asked-for parts need
(:data:`~voxmetrics.evaluation.options.PARTS`): the sorted pools, the target ranks under both
tie rules, LID and the chance levels, the sums of Cllr, singling out and the counts.
:func:`assemble` derives every number of those parts of the
:class:`~voxmetrics.evaluation.result.ConditionReport` from them, so a metric that follows from
these products is wired once, here, and both executors report it, equal bit for bit, whichever
other parts are asked for with it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.utility import Utility
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.evaluation.one_to_n import (
    OneToN,
    pooled_chance_linkability,
    pooled_curve,
    pooled_srd,
)
from voxmetrics.evaluation.options import ALL_PARTS, EvaluationOptions
from voxmetrics.evaluation.result import NO_COMPLETE_TRIAL, ConditionReport, TrialsUsed
from voxmetrics.limits import check_count
from voxmetrics.metrics.baseline import BaselineResult, cllr_from_sums
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels
from voxmetrics.metrics.cllr import min_cllr_from_pools
from voxmetrics.metrics.dcf import verification_from_pools
from voxmetrics.metrics.eer import eer_from_pools, eer_rocch_from_pools
from voxmetrics.metrics.legal import (
    SinglingOutResult,
    linkability_curve_from_ranks,
    linkability_from_ranks,
    singling_out_embeddings,
)
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.pools import SortedPools, Ties
from voxmetrics.metrics.srd import fit_beta_binomial, shared_beta_binomial_fits, srd_from_ranks
from voxmetrics.metrics.uncertainty import ConditionReplicates
from voxmetrics.metrics.zebra import zebra_from_pools

__all__ = [
    "Groups",
    "Products",
    "assemble",
    "baseline_of",
    "singling_out_of",
    "subset_reports",
]


Groups = tuple[str, tuple[OneToN, ...]]
"""The attribute of complete groups and each group's 1-to-N products
(:func:`~voxmetrics.evaluation.one_to_n.complete_groups`)."""


@dataclass(frozen=True)
class Products:
    """What an executor produces for one condition, before any number of its report.

    The pairwise products (pools, Cllr sums) cover every listed (trial, enrolled) pair; the
    1-to-N ones (ranks, LID, chance levels) the complete trials, and are None when there are
    none (a sparse trial list). A product that no asked-for part needs is None too.
    """

    pools: SortedPools
    """The sorted mated and non-mated pools of the listed pairs."""
    cllr_sums: tuple[float, float] | None
    """Sums of ln(1 + e^-s) over the mated and of ln(1 + e^s) over the non-mated scores
    (:func:`~voxmetrics.metrics.baseline.cllr_from_sums`); None without the ``pairwise``
    part."""
    n_trials: int
    """Trials with at least one listed pair."""
    n_enrolled: int
    """Enrolled identities."""
    n_pairs: int
    """Listed (trial, enrolled) pairs."""
    n_excluded_trials: int
    """Trials dropped because their speaker is not enrolled."""
    ranks: NDArray[np.int64] | None
    """Target rank of each complete trial under the report's tie rule (SRD)."""
    ranks_attacker: NDArray[np.int64] | None
    """Target rank of each complete trial under the linkability rule (linkability and its
    curve): ties go to the target under the code's rule (the default), against it under the
    strict rule (:func:`~voxmetrics.metrics.legal.link_rank_ties`)."""
    one_to_n_enrolled: int = 0
    """Enrolled identities the complete trials were ranked against (0: no complete trial)."""
    one_to_n_trials: int = 0
    """Complete trials (0: none)."""
    n_unenrolled_trials: int = 0
    """Trials whose speaker is not enrolled (their pairs all non-mated; no 1-to-N trial)."""
    lid: LIDResult | None = None
    """LID of the complete trials (None without a calibration)."""
    chance: ChanceLevels | None = None
    """Chance levels of the 1-to-N metrics."""
    singling_out: SinglingOutResult | None = None
    """Singling out (from utterance embeddings)."""
    groups: Groups | None = None
    """The complete groups the 1-to-N products were pooled over (None: one list); ``ranks``,
    ``lid`` and ``chance`` are then the pooled ones."""


MISSING_VALUES = frozenset({"", "nan", "none", "<na>", "nat", "null"})
"""Texts of a per-trial attribute that mean its value is missing (refused by ``by``)."""


def subset_reports(
    by: str,
    values: Iterable[str],
    subset: Callable[[str], Any],
    dev: ScoreMatrix | None,
    name: str,
    run: Callable[..., ConditionReport],
    *,
    prepare: Callable[[list[str]], None] | None = None,
) -> dict[str, ConditionReport]:
    """The report of each value of the per-trial attribute ``by`` (the ``by`` block).

    ``subset(value)`` is the executor's eval data of that value, ``run(data, dev=, name=)``
    its evaluation; ``dev`` is split likewise when it has the attribute. The subsets share
    their SRD models' fits (:func:`~voxmetrics.metrics.srd.shared_beta_binomial_fits`: a
    histogram met again is not fitted again); ``prepare(values)``, called first within that
    sharing, may fit the models to come in one batch.
    """
    values = list(values)
    missing = [v for v in values if str(v).strip().lower() in MISSING_VALUES]
    if missing:  # never a group called "" or "nan"
        shown = "empty" if not missing[0].strip() else f"empty (read as '{missing[0]}')"
        raise VoxMetricsInputError(
            f"--by {by}: the value of '{by}' is missing for some trials ({shown}), and a "
            "missing value is not a group; fill it in (e.g. 'unknown', which then is a group "
            "of its own) or remove those trials, then evaluate again."
        )
    check_count(f"--by {by}", f"values of '{by}', a subset each", len(values), "max_subsets")
    out = {}
    with shared_beta_binomial_fits():
        if prepare is not None:
            prepare(values)
        for value in values:
            sub_dev = dev
            if dev is not None and by in dev.attributes:
                sub_dev = dev.subset_attribute(by, value)
            out[value] = run(subset(value), dev=sub_dev, name=f"{name} [{by}={value}]")
    return out


def singling_out_of(
    embeddings: EmbeddingSet | None, split: str, **options: Any
) -> SinglingOutResult | None:
    """Singling out of ``split`` of ``embeddings``, None without them.

    None too, with a warning, when they cannot give it (too few trial embeddings per speaker).
    ``options`` go to :func:`~voxmetrics.metrics.legal.singling_out_embeddings` (the blockwise
    executor's ``map_blocks``).
    """
    if embeddings is None:
        return None
    try:
        return singling_out_embeddings(embeddings, split=split, **options)
    except VoxMetricsInputError as exc:
        warnings.warn(f"singling out skipped: {exc}", DegenerateDataWarning, stacklevel=3)
        return None


def baseline_of(
    products: Products, *, ties: Ties = "reference", parts: Collection[str] = ALL_PARTS
) -> BaselineResult:
    """EER, ROCCH-EER, Cllr, min Cllr (the listed pairs) and linkability (complete trials).

    The EER always; ROCCH-EER, Cllr and min Cllr with the ``pairwise`` part, linkability with
    the ``linkability`` part (and a complete trial); None otherwise.
    """
    pools = products.pools
    e = eer_from_pools(pools, ties=ties)
    ranks = products.ranks_attacker if "linkability" in parts else None
    sums = products.cllr_sums if "pairwise" in parts else None
    pairwise = sums is not None
    return BaselineResult(
        n_trials=int(products.n_trials),
        n_enrolled=int(products.n_enrolled),
        eer=e.eer,
        eer_threshold=e.threshold,
        eer_rocch=eer_rocch_from_pools(pools, ties=ties) if pairwise else None,
        cllr=None if sums is None else cllr_from_sums(sums[0], sums[1], pools.n_tar, pools.n_non),
        min_cllr=min_cllr_from_pools(pools, ties=ties) if pairwise else None,
        linkability=None if ranks is None else linkability_from_ranks(ranks),
    )


def assemble(
    products: Products,
    *,
    name: str,
    attacker: str,
    has_dev: bool,
    options: EvaluationOptions,
    parts: Collection[str] = ALL_PARTS,
    baseline: BaselineResult | None = None,
    by: dict[str, dict[str, ConditionReport]] | None = None,
    replicates: ConditionReplicates | None = None,
    lid_intervals: dict[str, BootstrapInterval] | None = None,
    zebra_intervals: dict[str, BootstrapInterval] | None = None,
    singling_out_interval: BootstrapInterval | None = None,
    utility: Utility | None = None,
) -> ConditionReport:
    """The :class:`ConditionReport` of ``products``: every number of ``parts`` derived from them.

    ``baseline`` is :func:`baseline_of` ``products`` when already computed; ``by``, the
    bootstrap's ``replicates`` and intervals and the condition's ``utility`` numbers are carried
    into the report as they are. The fields of the parts not asked for are None.
    """
    ties = options.ties
    pools = products.pools
    ranks, ranks_attacker = products.ranks, products.ranks_attacker
    n_one_to_n = products.one_to_n_enrolled
    groups = None if products.groups is None else products.groups[1]
    srd_result = curve = None
    if "srd" in parts and ranks is not None:
        srd_result = srd_from_ranks(ranks, n_one_to_n) if groups is None else pooled_srd(groups)
    if "linkability" in parts and ranks_attacker is not None:
        curve = (
            linkability_curve_from_ranks(ranks_attacker, n_one_to_n)
            if groups is None
            else pooled_curve(groups)
        )
    report = ConditionReport(
        name=name,
        attacker=attacker,
        n_excluded_trials=products.n_excluded_trials,
        has_dev=has_dev,
        baseline=(
            baseline if baseline is not None else baseline_of(products, ties=ties, parts=parts)
        ),
        srd=srd_result,
        srd_model=(  # pooled over groups of different N: each group has its own model
            None
            if srd_result is None or groups is not None
            else fit_beta_binomial(srd_result.histogram, loss="CLL")
        ),
        zebra=zebra_from_pools(pools, ties=ties) if "zebra" in parts else None,
        linkability_curve=curve,
        singling_out=products.singling_out if "singling_out" in parts else None,
        lid=products.lid if "lid" in parts else None,
        lid_intervals=lid_intervals,
        zebra_intervals=zebra_intervals,
        verification=(
            verification_from_pools(
                pools,
                p_targets=options.p_targets,
                c_miss=options.c_miss,
                c_fa=options.c_fa,
                scores_are_llrs=options.score_kind == "llr",
            )
            if "verification" in parts
            else None
        ),
        score_kind=options.score_kind,
        ties=ties,
        linkability_rule=options.linkability_rule,
        trials_used=TrialsUsed(
            n_pairs=products.n_pairs,
            n_tar=pools.n_tar,
            n_non=pools.n_non,
            n_trials=products.n_trials,
            n_enrolled=products.n_enrolled,
            one_to_n_trials=products.one_to_n_trials,
            one_to_n_enrolled=n_one_to_n,
            reason=NO_COMPLETE_TRIAL if products.one_to_n_trials == 0 else None,
            n_unenrolled=products.n_unenrolled_trials,
            groups=None if products.groups is None else _group_counts(products.groups),
            chance_linkability=None if groups is None else pooled_chance_linkability(groups),
        ),
        by=by,
        replicates=replicates,
        chance=products.chance if {"srd", "lid"} & set(parts) else None,
        singling_out_interval=singling_out_interval,
        utility=utility,
        parts=frozenset(parts),
    )
    warn_beyond_display_range(report)
    return report


def _group_counts(groups: Groups) -> dict[str, Any]:
    """``{"by": attribute, "groups": {value: {"n_trials", "n_enrolled"}}}`` of pooled groups."""
    attr, each = groups
    return {
        "by": attr,
        "groups": {g.label: {"n_trials": g.n_trials, "n_enrolled": g.n_enrolled} for g in each},
    }


def warn_beyond_display_range(report: ConditionReport) -> None:
    """Warn when displays clamp the LID numbers to [-64 bits, log2 N] (callers name the condition).

    The JSON keeps the raw numbers and lists them in ``lid.beyond_display_range``.
    """
    shown = report.lid_display_range()
    beyond = shown.get("beyond_display_range")
    if not beyond:
        return
    low, high = shown["display_range"]
    lid = report.lid
    if lid is None:  # a display range exists only with LID
        return
    variant = lid.calibration.variant
    cause = (
        " (its calibration did not converge: separable dev pools; the default "
        '"reference-code" calibration stays finite)'
        if not lid.calibration.converged
        else ""
    )
    warnings.warn(
        f"LID numbers beyond the display range [{low:g}, "
        f"{high:.2f}] bits ({', '.join(beyond)}; ALID {lid.alid:.4g} bits, LID variant "
        f"{variant}){cause}. Tables, figures and reports show them clamped to that range; "
        "the JSON keeps the raw numbers.",
        DegenerateDataWarning,
        stacklevel=3,
    )
