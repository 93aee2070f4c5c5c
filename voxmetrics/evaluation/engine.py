"""The in-memory executor: evaluate a condition (or each condition of a study) into its report.

:func:`evaluate` reads the score matrix in memory and produces the intermediate products of
:mod:`voxmetrics.evaluation.steps` (one sort of the pools, the target ranks, LID and the chance
levels in one pass over the rows, the sums of Cllr), adds the speaker-level bootstrap, and
assembles the :class:`~voxmetrics.evaluation.result.ConditionReport` with the step the
blockwise executor shares.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from voxmetrics._types import DEFAULT_LID_VARIANT, ScoreKind
from voxmetrics.analysis.lid import evaluate_lid_and_chance
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study, check_disjoint_speakers
from voxmetrics.errors import DegenerateDataWarning, warnings_of
from voxmetrics.evaluation.result import LID_KEYS, ZEBRA_KEYS, ConditionReport, Progress
from voxmetrics.evaluation.steps import (
    Products,
    assemble,
    baseline_of,
    check_options,
    evaluate_subsets,
    singling_out_of,
)
from voxmetrics.metrics.baseline import BaselineResult, matrix_cllr_sums, pairs_cllr_sums
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.dcf import DEFAULT_P_TARGETS
from voxmetrics.metrics.embedding_intervals import singling_out_interval
from voxmetrics.metrics.legal import LinkabilityRule, check_linkability_rule, link_rank_ties
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, Ties
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.uncertainty import ConditionReplicates, SpeakerDraws, condition_replicates

if TYPE_CHECKING:  # SBLS needs scikit-learn, imported only when SBLS is computed
    import numpy as np
    from numpy.typing import NDArray

    from voxmetrics.metrics.sbls import SBLSResult

__all__ = [
    "condition_products",
    "evaluate",
    "evaluate_baseline",
    "evaluate_condition",
    "evaluate_sbls",
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
    cross_calibrate: int | None = None,
    lid_variant: str = DEFAULT_LID_VARIANT,
    bootstrap: int = 0,
    seed: int = 0,
    progress: Progress | None = None,
    embeddings: EmbeddingSet | None = None,
    split: str = "eval",
    score_kind: ScoreKind = "similarity",
    p_targets: Sequence[float] = DEFAULT_P_TARGETS,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    ties: Ties = "reference",
    by: str | None = None,
    linkability_rule: LinkabilityRule = "code",
) -> ConditionReport:
    """Compute every metric of one condition.

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
    cross_calibrate : int, optional
        Without ``dev``: calibrate LID by speaker-disjoint k-fold cross-calibration on eval
        with this k (labelled as such). Ignored when ``dev`` is given.
    lid_variant : {"reference-code", "maximum-likelihood"}
        LID calibration (:data:`~voxmetrics.metrics.lid.LID_VARIANTS`): the authors' public
        code (sample sd, balanced, L2 penalty C = 1; default), the model of Šterns et al. 2025
        Table 3, Table 4 and Figure 4 solved exactly (docs, Methods > LID, on the published
        code's solver tolerance), finite on separable dev pools; or the unpenalised maximum
        likelihood on population-sd z-scores. Recorded in the JSON as ``lid.variant``.
    bootstrap : int
        Replicates of the speaker-level bootstrap of every headline number (0 = none): the
        report's ``replicates``, its ``intervals`` and the JSON's ``intervals`` mappings.
    seed : int
        Seed of the cross-calibration folds and of the bootstrap.
    progress : callable(fraction, message), optional
        Progress of the bootstrap.
    embeddings : EmbeddingSet, optional
        The utterance embeddings behind ``eval``; adds singling out (on ``split``).
    split : str
        Split of ``embeddings`` that ``eval`` was scored from.
    score_kind : {"similarity", "llr", "distance"}
        What the scores are (reported as ``score_kind``); "llr" adds the actual DCFs and
        "distance" says the matrices hold negated distances.
    p_targets, c_miss, c_fa :
        Target priors and costs of the normalised minDCF / actDCF (default 0.01 and 0.001,
        unit costs).
    ties : {"reference", "attacker"}
        Tie rule of the pooled metrics: "reference" makes each number equal its reference
        implementation (EER: SpeechBrain; ROCCH-EER, min Cllr: BOSARIS / PYLLR; ZEBRA: the
        ZEBRA code), "attacker" resolves every tie for the attacker. The SRD ranks and the
        linkability curve follow it too (:func:`~voxmetrics.metrics.srd.srd`,
        :func:`~voxmetrics.metrics.legal.linkability_curve`).
    linkability_rule : {"code", "strict"}
        When a trial is linked (linkability, its curve, their intervals): "code" (default) as
        the authors' code, "strict" as the paper's eq. 3 (``metrics.legal.linkability``).
    by : str, optional
        A per-trial attribute (e.g. ``"sex"``): also evaluate each of its values on its own
        trials and its own enrolled identities (:meth:`ScoreMatrix.subset_attribute`), as
        VoicePrivacy reports female and male speakers separately; ``dev`` is split likewise
        when it has that attribute. Subsets get no singling out (it needs the embeddings).

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
    """
    check_options(ties, score_kind)
    check_linkability_rule(linkability_rule)
    if dev is not None:
        check_disjoint_speakers(dev, eval)
    subsets = None
    if by is not None:  # validate the attribute before any work
        options = {
            "attacker": attacker, "cross_calibrate": cross_calibrate, "lid_variant": lid_variant,
            "bootstrap": bootstrap, "seed": seed, "ties": ties, "p_targets": p_targets,
            "c_miss": c_miss, "c_fa": c_fa, "score_kind": score_kind,
            "linkability_rule": linkability_rule,
        }  # fmt: skip
        subsets = evaluate_subsets(
            by,
            eval.attribute_values(by),
            lambda value: eval.subset_attribute(by, value),
            dev,
            name,
            lambda sub, **kw: evaluate(sub, **kw, **options),  # type: ignore[arg-type]
        )
    products, full = condition_products(
        eval, dev, cross_calibrate=cross_calibrate, lid_variant=lid_variant, seed=seed,
        ties=ties, linkability_rule=linkability_rule,
    )  # fmt: skip
    base = baseline_of(products, ties=ties)
    replicates = every = None
    if bootstrap > 0:
        replicates = _bootstrap(
            eval, products, base, full, n_boot=bootstrap, seed=seed, ties=ties,
            linkability_rule=linkability_rule,
        )  # fmt: skip
        every = replicates.intervals()
        if progress is not None:
            progress(1.0, f"Bootstrap {bootstrap}/{bootstrap}")
    singled = singling_out_of(embeddings, split)
    so_interval = None
    if bootstrap > 0 and singled is not None and singled.per_predicate is not None:
        so_interval = singling_out_interval(singled, n_boot=bootstrap, seed=seed)
    return assemble(
        replace(products, singling_out=singled),
        name=name,
        attacker=attacker,
        has_dev=dev is not None,
        ties=ties,
        linkability_rule=linkability_rule,
        score_kind=score_kind,
        p_targets=p_targets,
        c_miss=c_miss,
        c_fa=c_fa,
        baseline=base,
        by=None if subsets is None else {by: subsets},
        replicates=replicates,
        lid_intervals=_keys(every, LID_KEYS) if products.lid is not None else None,
        zebra_intervals=_keys(every, ZEBRA_KEYS),
        singling_out_interval=so_interval,
    )


def _bootstrap(
    eval: ScoreMatrix,
    products: Products,
    base: BaselineResult,
    full: ScoreMatrix | None,
    *,
    n_boot: int,
    seed: int,
    ties: Ties,
    linkability_rule: LinkabilityRule = "code",
) -> ConditionReplicates:
    """One set of speaker-level replicates for every headline number of ``eval``.

    A sparse trial list gives its pairwise numbers the listed pairs of the resampled trials
    and its 1-to-N numbers the resampled complete trials ``full`` (none: those stay null, as
    their values).
    """
    draws = SpeakerDraws.draw(eval.trial_speakers, n_boot=n_boot, seed=seed)
    ranks = None
    if products.ranks is not None and products.ranks_attacker is not None:
        ranks = (products.ranks_attacker, products.ranks)
    return replicate_condition(
        eval,
        draws,
        products.lid,
        base,
        ties=ties,
        pools=products.pools,
        complete=full,
        linkability_rule=linkability_rule,
        ranks=ranks,
    )


def _keys(
    every: dict[str, BootstrapInterval] | None, keys: Sequence[str]
) -> dict[str, BootstrapInterval] | None:
    """The intervals of ``keys`` among ``every`` (None without a bootstrap)."""
    return None if every is None else {k: every[k] for k in keys}


def condition_products(
    eval: ScoreMatrix,
    dev: ScoreMatrix | None,
    *,
    cross_calibrate: int | None,
    lid_variant: str,
    seed: int,
    ties: Ties,
    linkability_rule: LinkabilityRule = "code",
) -> tuple[Products, ScoreMatrix | None]:
    """The in-memory executor's products, and the complete trials of ``eval`` (None: none).

    Everything :func:`evaluate` derives its numbers from but singling out (the pools, the Cllr
    sums, the target ranks under both rules, LID and the chance levels); the identity numbers
    alone (:func:`~voxmetrics.evaluation.lid.evaluate_lid_report`) are read from them too.
    One sort of the pooled scores for every 1-to-1 metric, on its own thread while the 1-to-N
    metrics run (the sort takes one core, the row blocks the others).
    """
    with ThreadPoolExecutor(1, thread_name_prefix="voxmetrics-pools") as background:
        sorting = background.submit(SortedPools.of, eval)
        full = eval.complete_rows()  # the trials of the 1-to-N metrics (eval itself if complete)
        dev_full = None
        if dev is not None:
            dev_full = dev.complete_rows()
            if dev_full is None:  # e.g. female and male VoicePrivacy lists joined: per sex
                warnings.warn(
                    "the dev set has no trial listed against every enrolled identity, so "
                    "LID cannot be calibrated on it and is left out; evaluate "
                    "each subset whose dev trials are complete (e.g. --by sex) or give a dev "
                    "set with complete trials.",
                    DegenerateDataWarning,
                    stacklevel=3,
                )
        # LID and the chance levels of the 1-to-N metrics, on the trials they rank (null if none)
        lid_result = chance = None
        ranks = ranks_attacker = None
        if full is not None:
            lid_result, chance = evaluate_lid_and_chance(
                full,
                dev=dev_full,
                cross_calibrate=cross_calibrate,
                variant=lid_variant,
                seed=seed,
                ties=ties,
            )
            # the linkability ranks follow the linkability rule, the SRD ranks the tie rule
            link_ties = link_rank_ties(linkability_rule)
            ranks_attacker = target_ranks(full.scores, full.targets, ties=link_ties)
            ranks = (
                ranks_attacker.copy()
                if ties == link_ties
                else target_ranks(full.scores, full.targets, ties=ties)
            )
        if eval.is_complete:
            sums = matrix_cllr_sums(eval.scores, eval.targets)
        else:
            sums = pairs_cllr_sums(eval.tar, eval.non)
        pools = sorting.result()
    products = Products(
        pools=pools,
        cllr_sums=sums,
        n_trials=eval.n_trials,
        n_enrolled=eval.n_enrolled,
        n_pairs=eval.n_pairs,
        n_excluded_trials=eval.n_excluded_trials,
        ranks=ranks,
        ranks_attacker=ranks_attacker,
        one_to_n_enrolled=0 if full is None else full.n_enrolled,
        lid=lid_result,
        chance=chance,
    )
    return products, full


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
) -> ConditionReplicates:
    """Every headline number of ``eval`` under ``draws``, estimates equal to the reported ones.

    ``ranks`` are the 1-to-N trials' target ranks (the linkability rule's, then ``ties``) when the
    point estimate already has them.

    A sparse trial list resamples its trials with their listed pairs for the pairwise numbers
    and its complete trials (``complete``, by default :meth:`ScoreMatrix.complete_rows`) for
    the 1-to-N ones; ``lid_result`` is then the LID of those complete trials.
    """
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
    )


@single_blas_thread()
def evaluate_baseline(
    eval: ScoreMatrix, *, ties: Ties = "reference", linkability_rule: LinkabilityRule = "code"
) -> BaselineResult:
    """The ``baseline`` of :func:`evaluate`'s report alone (EER, Cllr, min Cllr, linkability).

    The same products and the same step as :func:`evaluate` (the sorted pools, the Cllr sums,
    the linkability rule's target ranks of the complete trials), so the same numbers; for a
    page that shows only these beside its own metric (the LID page), not LID, SRD, ZEBRA or
    singling out.
    """
    check_options(ties, "similarity")
    check_linkability_rule(linkability_rule)
    full = eval.complete_rows()
    ranks = (
        None
        if full is None
        else target_ranks(full.scores, full.targets, ties=link_rank_ties(linkability_rule))
    )
    if eval.is_complete:
        sums = matrix_cllr_sums(eval.scores, eval.targets)
    else:
        sums = pairs_cllr_sums(eval.tar, eval.non)
    products = Products(
        pools=SortedPools.of(eval),
        cllr_sums=sums,
        n_trials=eval.n_trials,
        n_enrolled=eval.n_enrolled,
        n_pairs=eval.n_pairs,
        n_excluded_trials=eval.n_excluded_trials,
        ranks=None,
        ranks_attacker=ranks,
    )
    return baseline_of(products, ties=ties)


def evaluate_condition(condition: Condition, **options: Any) -> ConditionReport:
    """:func:`evaluate` applied to a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are :func:`evaluate`'s keyword options (``cross_calibrate``, ``bootstrap``...);
    the report carries the condition's utility numbers (``condition.utility``, the JSON's
    ``utility`` block; the subsets of ``by`` get none) and the messages of its incomplete
    score files (``condition.input_warnings``, the JSON's ``input_warnings``).
    """
    report = evaluate(
        condition.eval,
        dev=condition.dev,
        name=condition.name,
        attacker=condition.attacker,
        embeddings=condition.embeddings,
        score_kind=condition.score_kind,
        **options,
    )
    if condition.input_warnings:  # its broken score files, evaluated on their listed pairs
        report = replace(report, input_warnings=condition.input_warnings)
    return report if condition.utility is None else replace(report, utility=condition.utility)


def evaluate_sbls(condition: Condition) -> SBLSResult | None:
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
    study: Study, *, progress: Progress | None = None, **options: Any
) -> list[ConditionReport]:
    """Evaluate every condition of a study, reporting ``progress(fraction, message)``.

    The study's :class:`~voxmetrics.data.study.StudySettings` give the options (bootstrap
    replicates, seed, cross-calibration); ``options`` override them.
    """
    opts = {**study.settings.evaluate_options(), **options}
    reports = []
    for k, cond in enumerate(study.conditions):
        if progress is not None:
            progress(k / max(1, len(study)), f"Evaluating {cond.name}")
        with warnings_of(cond.name):  # each warning says which condition it is about
            reports.append(evaluate_condition(cond, **opts))
    if progress is not None:
        progress(1.0, "Done")
    return reports
