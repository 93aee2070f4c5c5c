"""The in-memory executor: evaluate a condition (or each condition of a study) into its report.

:func:`evaluate` reads the score matrix in memory and produces the intermediate products of
:mod:`voxmetrics.evaluation.steps` that the asked-for parts need (one sort of the pools, the
target ranks, LID and the chance levels in one pass over the rows, the sums of Cllr), adds the
speaker-level bootstrap of those parts, and assembles the
:class:`~voxmetrics.evaluation.result.ConditionReport` with the step the blockwise executor
shares. A caller that shows fewer numbers asks for fewer parts; each number is the same float
whichever other parts are asked for with it.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from voxmetrics._types import Progress
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study, check_disjoint_speakers
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError, warnings_of
from voxmetrics.evaluation.one_to_n import (
    OneToN,
    check_group_calibration,
    complete_groups,
    dev_groups,
    one_to_n_of,
    pooled,
)
from voxmetrics.evaluation.options import ALL_PARTS, EvaluationOptions, check_parts
from voxmetrics.evaluation.result import LID_KEYS, ZEBRA_KEYS, ConditionReport
from voxmetrics.evaluation.steps import (
    Groups,
    Products,
    assemble,
    baseline_of,
    singling_out_of,
    subset_reports,
)
from voxmetrics.metrics.baseline import BaselineResult, matrix_cllr_sums, pairs_cllr_sums
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.embedding_intervals import singling_out_interval
from voxmetrics.metrics.legal import LinkabilityRule
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, Ties
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.srd import prefit_beta_binomials, rank_histogram
from voxmetrics.metrics.uncertainty import (
    REPLICATE_FAMILIES,
    ConditionReplicates,
    SpeakerDraws,
    condition_replicates,
    grouped_replicates,
)

if TYPE_CHECKING:  # SBLS needs scikit-learn, imported only when SBLS is computed
    from numpy.typing import NDArray

    from voxmetrics.metrics.sbls import SBLSResult

__all__ = [
    "condition_products",
    "condition_sbls",
    "evaluate",
    "evaluate_condition",
    "evaluate_study",
    "replicate_condition",
]


@single_blas_thread()
def evaluate(
    eval: ScoreMatrix,
    *,
    dev: ScoreMatrix | None = None,
    name: str = "condition",
    attacker: str = "semi-informed",
    embeddings: EmbeddingSet | None = None,
    split: str = "eval",
    parts: Collection[str] = ALL_PARTS,
    options: EvaluationOptions | None = None,
    progress: Progress | None = None,
    **overrides: Any,
) -> ConditionReport:
    """Compute the metrics of one condition: every part of its report, or those asked for.

    A sparse trial list (``eval.mask``) gives the pairwise metrics (EER, ROCCH-EER, Cllr,
    min Cllr, ZEBRA) on its listed pairs and the 1-to-N metrics (linkability, LID, SRD,
    linkability against N) on its complete trials (:meth:`ScoreMatrix.complete_rows`), or
    None when there are none; ``trials_used`` records which. A sparse ``dev`` calibrates LID on
    its complete trials. The speaker-level bootstrap resamples the trial speakers: the
    pairwise numbers of a replicate are those of the listed pairs of its trials, the 1-to-N
    numbers those of its complete trials (no interval where there is no value).

    Parameters
    ----------
    eval : ScoreMatrix
        The evaluated scores.
    dev : ScoreMatrix, optional
        Calibration scores of speakers disjoint from ``eval``; LID is calibrated on it.
    name, attacker : str
        Labels carried into the report.
    embeddings : EmbeddingSet, optional
        The utterance embeddings behind ``eval``; adds singling out (on ``split``).
    split : str
        Split of ``embeddings`` that ``eval`` was scored from.
    parts : collection of str
        The parts of the report to compute (:data:`~voxmetrics.evaluation.options.PARTS`:
        ``pairwise``, ``verification``, ``zebra``, ``linkability``, ``srd``, ``lid``,
        ``singling_out``; default every one). The EER and the counts are in every report; the
        fields of the other parts are None and the report's ``parts`` says which it holds.
        Each number equals the full report's, bit for bit.
    options : EvaluationOptions, optional
        The evaluation's options (default: the defaults), validated when made.
    progress : callable(fraction, message), optional
        Progress of the steps and of the bootstrap.
    **overrides
        Fields of :class:`~voxmetrics.evaluation.options.EvaluationOptions` by name, over
        ``options``: ``cross_calibrate`` (without ``dev``, calibrate LID by speaker-disjoint
        k-fold cross-calibration on eval, labelled as such), ``lid_variant``
        ("reference-code": the authors' public code, sample sd, balanced, L2 penalty C = 1,
        the model of Šterns et al. 2025 Table 3, Table 4 and Figure 4 solved exactly,
        finite on separable dev pools; or "maximum-likelihood": unpenalised on population-sd
        z-scores; recorded in the JSON as ``lid.variant``), ``bootstrap`` (replicates of the
        speaker-level bootstrap of every headline number, 0 = none), ``seed`` (of the folds,
        the chance levels and the bootstrap), ``score_kind`` ("similarity", "llr": adds the
        actual DCFs, "distance": negated distances), ``p_targets``, ``c_miss``, ``c_fa``
        (normalised minDCF / actDCF; default priors 0.01 and 0.001, unit costs), ``ties``
        ("reference": each number equals its reference implementation, EER: SpeechBrain,
        ROCCH-EER and min Cllr: BOSARIS / PYLLR, ZEBRA: the ZEBRA code; "attacker": every tie
        resolved for the attacker; the SRD ranks follow it), ``linkability_rule`` ("code": the
        authors' code, "strict": the paper's eq. 3) and ``by`` (a per-trial attribute, e.g.
        ``"sex"``: also evaluate each of its values on its own trials and enrolled
        identities, as VoicePrivacy reports female and male speakers separately; ``dev`` is
        split likewise when it has that attribute; subsets get no singling out).

    Returns
    -------
    ConditionReport

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[.9, .8, .8, .8], [.7, .6, .6, .6], [.4, .5, .4, .4], [.2, .2, .3, .2]],
    ...     trial_ids=["t0", "t1", "t2", "t3"], trial_speakers=["a", "a", "b", "c"],
    ...     enrol_speakers=["a", "b", "c", "d"])
    >>> r = evaluate(sm).to_dict()
    >>> r["eer"], r["linkability"]
    (0.5, 1.0)
    >>> r = evaluate(sm, parts=["zebra"])
    >>> r.zebra.tag, r.baseline.linkability, r.srd
    ('A', None, None)
    """
    opts = EvaluationOptions.of(options, **overrides)
    parts = check_parts(parts)
    if dev is not None:
        check_disjoint_speakers(dev, eval)
    subsets = None
    if opts.by is not None:  # validate the attribute before any work
        by, sub_options = opts.by, replace(opts, by=None)
        subsets = subset_reports(
            by,
            eval.attribute_values(by),
            lambda value: eval.subset_attribute(by, value),
            dev,
            name,
            lambda sub, **kw: evaluate(
                sub, **kw, attacker=attacker, parts=parts, options=sub_options
            ),
            prepare=lambda values: _prefit_subset_models(eval, by, values, opts.ties, parts),
        )
    step = _stepper(progress, opts.bootstrap)
    step(0.0, "scores")
    products, full = condition_products(eval, dev, opts, parts)
    base = baseline_of(products, ties=opts.ties, parts=parts)
    replicates = every = None
    if opts.bootstrap > 0:
        step(0.3, f"bootstrap {opts.bootstrap}")
        replicates = _bootstrap(eval, products, base, full, opts, parts, step)
        every = replicates.intervals()
    singled = singling_out_of(embeddings, split) if "singling_out" in parts else None
    so_interval = None
    if opts.bootstrap > 0 and singled is not None and singled.per_predicate is not None:
        so_interval = singling_out_interval(singled, n_boot=opts.bootstrap, seed=opts.seed)
    report = assemble(
        replace(products, singling_out=singled),
        name=name,
        attacker=attacker,
        has_dev=dev is not None,
        options=opts,
        parts=parts,
        baseline=base,
        by=None if subsets is None else {opts.by: subsets},  # type: ignore[dict-item]
        replicates=replicates,
        lid_intervals=_keys(every, LID_KEYS) if products.lid is not None else None,
        zebra_intervals=_keys(every, ZEBRA_KEYS) if "zebra" in parts else None,
        singling_out_interval=so_interval,
    )
    step(1.0, "done")
    return report


PREFIT_MAX_TRIALS = 1000
"""Subsets of ``by`` of at most this many trials have their SRD models fitted in one batch."""


def _prefit_subset_models(
    eval: ScoreMatrix, by: str, values: list[str], ties: Ties, parts: Collection[str]
) -> None:
    """Fit the SRD models of the small subsets of ``by`` in one batch, before their reports.

    A small subset's report takes a few milliseconds but for its SRD model's fit, which takes
    Nelder-Mead's 4,000 iterations (about 1 s) when the beta-binomial cannot represent the
    ranks, as with 2 speakers identified at rank 1; the fits of all the subsets run in lock
    step instead (:func:`~voxmetrics.metrics.srd.prefit_beta_binomials`), each equal to its
    own. The histograms are those :func:`evaluate` derives (the target ranks of the complete
    trials under ``ties``); a subset this cannot make (e.g. of one identity) is left to its
    report, which refuses it. Larger subsets, few and each with its own number of ranks, gain
    nothing from a batch and are fitted in their reports. Nothing without the ``srd`` part.
    """
    if "srd" not in parts:
        return
    labels, counts = np.unique(eval.attributes[by].astype(str), return_counts=True)
    small = set(labels[counts <= PREFIT_MAX_TRIALS].tolist())
    histograms = []
    for value in values:
        if str(value) not in small:
            continue
        try:
            full = eval.subset_attribute(by, value).complete_rows()
        except VoxMetricsInputError:
            continue
        if full is not None:
            ranks = target_ranks(full.scores, full.targets, ties=ties)
            histograms.append(rank_histogram(ranks, full.n_enrolled))
    prefit_beta_binomials(histograms, loss="CLL")


def _stepper(progress: Progress | None, n_boot: int) -> Progress:
    """``progress`` as a step function; the bootstrap's own progress fills [0.3, 0.95]."""

    def step(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    return step


def _bootstrap(
    eval: ScoreMatrix,
    products: Products,
    base: BaselineResult,
    full: ScoreMatrix | None,
    options: EvaluationOptions,
    parts: Collection[str],
    step: Progress,
) -> ConditionReplicates:
    """One set of speaker-level replicates for every headline number of ``parts`` of ``eval``.

    A sparse trial list gives its pairwise numbers the listed pairs of the resampled trials
    and its 1-to-N numbers the resampled complete trials ``full`` (none: those stay null, as
    their values). The trials of unenrolled speakers are resampled with the others: their
    pairs are pairs of the pairwise numbers (:meth:`ScoreMatrix.pairwise_view`).
    """
    pairwise = eval.pairwise_view()
    draws = SpeakerDraws.draw(pairwise.trial_speakers, n_boot=options.bootstrap, seed=options.seed)
    ranks = None
    if products.ranks is not None and products.ranks_attacker is not None:
        ranks = (products.ranks_attacker, products.ranks)
    elif products.ranks_attacker is not None:  # linkability without SRD: its ranks only
        ranks = (products.ranks_attacker, products.ranks_attacker)
    families = [f for f in REPLICATE_FAMILIES if f in parts]
    step_to = lambda f, message: step(0.3 + 0.65 * f, message)  # noqa: E731
    if products.groups is None:
        return replicate_condition(
            pairwise, draws, products.lid, base, ties=options.ties, pools=products.pools,
            complete=full, linkability_rule=options.linkability_rule, ranks=ranks,
            families=families, progress=step_to,
        )  # fmt: skip
    # pooled over complete groups: the pairwise numbers of every listed pair, the 1-to-N ones
    # of each group's trials, pooled (the same draws)
    pooled = replicate_condition(
        pairwise, draws, None, base, ties=options.ties, pools=products.pools,
        families=[f for f in families if f in ("pairwise", "zebra")], progress=step_to,
    )  # fmt: skip
    groups = products.groups[1]
    one = grouped_replicates(
        [
            (g.link_ranks, g.srd_ranks, g.n_enrolled, g.trial_speakers,
             None if g.lid is None or products.lid is None else g.lid.lid)
            for g in groups
        ],
        draws,
        families=[f for f in families if f in ("linkability", "srd", "lid")],
    )  # fmt: skip
    return ConditionReplicates(
        {**pooled.estimates, **one.estimates},
        {**pooled.reps, **one.reps},
        one.curve_n,
        one.curve,
        one.curve_reps,
    )


def _keys(
    every: dict[str, BootstrapInterval] | None, keys: Sequence[str]
) -> dict[str, BootstrapInterval] | None:
    """The intervals of ``keys`` among ``every`` (None without a bootstrap)."""
    return None if every is None else {k: every[k] for k in keys}


def condition_products(
    eval: ScoreMatrix,
    dev: ScoreMatrix | None,
    options: EvaluationOptions,
    parts: Collection[str] = ALL_PARTS,
) -> tuple[Products, ScoreMatrix | None]:
    """The in-memory executor's products for ``parts``, and the complete trials of ``eval``.

    Everything :func:`evaluate` derives the numbers of ``parts`` from but singling out (the
    pools, the Cllr sums, the target ranks under both rules, LID and the chance levels); the
    complete trials are None when there are none (or when the 1-to-N products are pooled over
    complete groups, :mod:`voxmetrics.evaluation.one_to_n`). One sort of the pooled scores for
    every 1-to-1 metric, on its own thread while the 1-to-N metrics run (the sort takes one
    core, the row blocks the others).
    """
    one_to_n = {"linkability", "srd", "lid"} & set(parts)
    pairwise = eval.pairwise_view()  # every listed pair, those of unenrolled speakers too
    with ThreadPoolExecutor(1, thread_name_prefix="voxmetrics-pools") as background:
        sorting = background.submit(SortedPools.of, pairwise)
        full = eval.complete_rows()  # the trials of the 1-to-N metrics (eval itself if complete)
        one, groups = _one_to_n(eval, full, dev, options, parts) if one_to_n else (None, None)
        sums = None
        if "pairwise" in parts:
            if pairwise.is_complete:
                sums = matrix_cllr_sums(pairwise.scores, pairwise.targets)
            else:
                sums = pairs_cllr_sums(pairwise.tar, pairwise.non)
        pools = sorting.result()
    products = Products(
        pools=pools,
        cllr_sums=sums,
        n_trials=pairwise.n_trials,
        n_enrolled=eval.n_enrolled,
        n_pairs=pairwise.n_pairs,
        n_excluded_trials=eval.n_excluded_trials,
        n_unenrolled_trials=int((~eval.trial_enrolled).sum()) + eval.n_other_trials,
        ranks=None if one is None else one.srd_ranks,
        ranks_attacker=None if one is None else one.link_ranks,
        one_to_n_enrolled=_one_to_n_enrolled(full, one, groups),
        one_to_n_trials=_one_to_n_trials(full, one, groups),
        lid=None if one is None else one.lid,
        chance=None if one is None else one.chance,
        groups=groups,
    )
    return products, None if groups is not None else full


def _one_to_n_enrolled(full: ScoreMatrix | None, one: OneToN | None, groups: Groups | None) -> int:
    if groups is not None and one is not None:
        return one.n_enrolled
    return 0 if full is None else full.n_enrolled


def _one_to_n_trials(full: ScoreMatrix | None, one: OneToN | None, groups: Groups | None) -> int:
    if groups is not None and one is not None:
        return one.n_trials
    return 0 if full is None else full.n_trials


def _one_to_n(
    eval: ScoreMatrix,
    full: ScoreMatrix | None,
    dev: ScoreMatrix | None,
    options: EvaluationOptions,
    parts: Collection[str],
) -> tuple[OneToN | None, Groups | None]:
    """The 1-to-N products: of the complete trials, or pooled over complete groups."""
    found = complete_groups(eval)
    if found is not None:  # e.g. a VoicePrivacy list: complete per gender
        attr, lists = found
        devs = dev_groups(dev, attr, list(lists)) if "lid" in parts else dict.fromkeys(lists)
        if "lid" in parts and dev is not None:
            check_group_calibration(lists, devs, with_lid=True)
        each = tuple(
            one_to_n_of(sub, devs[value], options, parts, label=value)
            for value, sub in lists.items()
        )
        return pooled(each, attr), (attr, each)
    if full is None:
        _dev_without_complete_trials(dev, parts)
        return None, None
    dev_full = None
    if dev is not None and "lid" in parts:
        dev_full = dev.complete_rows()
        _dev_without_complete_trials(dev, parts, dev_full)
    return one_to_n_of(full, dev_full, options, parts), None


def _dev_without_complete_trials(
    dev: ScoreMatrix | None, parts: Collection[str], dev_full: ScoreMatrix | None = None
) -> None:
    """Warn that LID has no calibration when ``dev`` has no complete trial."""
    if dev is None or "lid" not in parts:
        return
    if dev_full is None and dev.complete_rows() is None:
        warnings.warn(
            "the dev set has no trial listed against every enrolled identity, so "
            "LID cannot be calibrated on it and is left out; evaluate "
            "each subset whose dev trials are complete (e.g. each sex on its own) or give a "
            "dev set with complete trials.",
            DegenerateDataWarning,
            stacklevel=4,
        )


def replicate_condition(
    eval: ScoreMatrix,
    draws: SpeakerDraws,
    lid_result: LIDResult | None,
    base: BaselineResult,
    *,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
    complete: ScoreMatrix | None = None,
    linkability_rule: LinkabilityRule = "code",
    ranks: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    families: Collection[str] = tuple(REPLICATE_FAMILIES),
    progress: Progress | None = None,
) -> ConditionReplicates:
    """Every headline number of ``eval`` under ``draws``, estimates equal to the reported ones.

    ``ranks`` are the 1-to-N trials' target ranks (the linkability rule's, then ``ties``) when the
    point estimate already has them. ``families`` are the numbers to replicate
    (:data:`~voxmetrics.metrics.uncertainty.REPLICATE_FAMILIES`, default every one).

    A sparse trial list resamples its trials with their listed pairs for the pairwise numbers
    and its complete trials (``complete``, by default :meth:`ScoreMatrix.complete_rows`) for
    the 1-to-N ones; ``lid_result`` is then the LID of those complete trials.
    """
    eval = eval.pairwise_view()  # every listed pair (the view of a view is itself)
    if not eval.is_complete and complete is None:
        complete = eval.complete_rows()
    return condition_replicates(
        eval.scores,
        eval.targets,
        eval.trial_speakers,
        draws,
        lid=None if lid_result is None else lid_result.lid,
        ties=ties,
        linkability_rule=linkability_rule,
        pools=pools if pools is not None else SortedPools.of(eval),
        estimates={"eer": base.eer, "cllr": base.cllr, "min_cllr": base.min_cllr},
        mask=eval.mask,
        ranks=ranks,
        complete=(
            None
            if complete is None or eval.is_complete
            else (complete.scores, complete.targets, complete.trial_speakers)
        ),
        families=families,
        progress=progress,
    )


def evaluate_condition(
    condition: Condition,
    options: EvaluationOptions | None = None,
    *,
    parts: Collection[str] = ALL_PARTS,
    progress: Progress | None = None,
    **overrides: Any,
) -> ConditionReport:
    """:func:`evaluate` applied to a :class:`~voxmetrics.data.study.Condition`.

    ``options`` and ``overrides`` are :func:`evaluate`'s (``cross_calibrate``,
    ``bootstrap``...; the scores' kind is the condition's), ``parts`` the parts to compute;
    the report carries the condition's utility numbers (``condition.utility``, the JSON's
    ``utility`` block; the subsets of ``by`` get none), the messages of its incomplete
    score files (``condition.input_warnings``, the JSON's ``input_warnings``) and its attacker
    recipe (``condition.recipe``, the JSON's ``attacker`` block).
    """
    opts = EvaluationOptions.of(options, **overrides, score_kind=condition.score_kind)
    report = evaluate(
        condition.eval,
        dev=condition.dev,
        name=condition.name,
        attacker=condition.attacker,
        embeddings=condition.embeddings,
        parts=parts,
        options=opts,
        progress=progress,
    )
    if condition.input_warnings:  # its broken score files, evaluated on their listed pairs
        report = replace(report, input_warnings=condition.input_warnings)
    if condition.recipe is not None:  # the attacker whose scores these are
        report = replace(report, recipe=condition.recipe)
    return report if condition.utility is None else replace(report, utility=condition.utility)


def condition_sbls(condition: Condition) -> SBLSResult | None:
    """SBLS of a condition's eval embeddings under the default built-in attacker.

    The attacker is :data:`~voxmetrics.metrics.sbls.DEFAULT_ATTACKER` (informed), the same as
    the ``sbls`` command's and the dashboard page's default; the result names it
    (``attacker_trained_on``). It is :func:`voxmetrics.analysis.sbls.attack_sbls` of
    :func:`voxmetrics.analysis.sbls.default_attack`, the calls of the page and the command.

    The attacker is trained on the condition's own anonymised dev embeddings, so no original
    speech is needed; None when the condition has no embeddings or no attribute columns.
    """
    from voxmetrics.analysis.sbls import attack_sbls, default_attack

    attack = default_attack(condition)
    return None if attack is None else attack_sbls(attack)


def evaluate_study(
    study: Study,
    *,
    parts: Collection[str] = ALL_PARTS,
    progress: Progress | None = None,
    **options: Any,
) -> list[ConditionReport]:
    """Evaluate every condition of a study, reporting ``progress(fraction, message)``.

    The study's :class:`~voxmetrics.data.study.StudySettings` give the options (bootstrap
    replicates, seed, cross-calibration); ``options`` override them.
    """
    opts = EvaluationOptions.of(study.settings.evaluate_options(), **options)
    reports = []
    for k, cond in enumerate(study.conditions):
        if progress is not None:
            progress(k / max(1, len(study)), f"Evaluating {cond.name}")
        with warnings_of(cond.name):  # each warning says which condition it is about
            reports.append(evaluate_condition(cond, opts, parts=parts))
    if progress is not None:
        progress(1.0, "Done")
    return reports
