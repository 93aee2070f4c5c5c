"""Evaluate conditions and studies into result objects; JSON, CSV and HTML export.

The JSON object of one condition follows the documented command-line contract: ``n_trials,
n_enrolled, n_excluded_trials, eer, eer_rocch, cllr, min_cllr, linkability``, the ``lid``
block (null without a dev set or cross-calibration), the ``srd`` block (empirical rank
statistics), ``srd_model`` (the CLL beta-binomial fit), the ``zebra`` block (d_ece,
log10_l, tag, odds), ``linkability_vs_n``, ``singling_out`` (null without embeddings),
``ties``, the tie rule of the pooled metrics, ``intervals`` (with a bootstrap: the 95 %
intervals of the top-level numbers, ``[low, high]``, and the band of ``linkability_vs_n``,
``[[n, low, high], ...]``; the ``lid``, ``srd`` and ``zebra`` blocks carry their own) and
``chance`` (chance levels of linkability and its curve; the ``lid`` and ``srd`` blocks carry
theirs), see :mod:`voxmetrics.metrics.uncertainty`; later metric families add theirs.

``n_pairs`` and ``trials_used`` say which trials each family used: the pairwise metrics (EER,
ROCCH-EER, Cllr, min Cllr, ZEBRA) every listed (trial, enrolled) pair, the 1-to-N metrics
(linkability, LID, SRD, linkability against N) the complete trials of
:meth:`~voxmetrics.data.model.ScoreMatrix.complete_rows`; for a sparse trial list without any,
those are null and ``trials_used.one_to_n.reason`` says why. With ``by``, the ``by`` block
holds one such object per value of a per-trial attribute (``{"by": {"sex": {"F": {...}}}}``).
"""

from __future__ import annotations

import html
import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from voxmetrics._types import SCORE_KIND_LABELS, SCORE_KINDS, ScoreKind
from voxmetrics._version import __version__
from voxmetrics.analysis.lid import evaluate_lid, evaluate_lid_and_chance
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study, check_disjoint_speakers
from voxmetrics.errors import DegenerateDataWarning, VoxMetricsInputError
from voxmetrics.metrics.baseline import BaselineResult, baseline_metrics, pairs_baseline
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.dcf import DEFAULT_P_TARGETS, VerificationResult, verification_from_pools
from voxmetrics.metrics.legal import (
    LinkabilityCurve,
    SinglingOutResult,
    linkability,
    linkability_curve,
    singling_out_embeddings,
)
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, Ties, check_ties
from voxmetrics.metrics.similarity import (
    Calibration,
    SimilarityMatrix,
    SimilarityResult,
    voice_similarity,
)
from voxmetrics.metrics.srd import BetaBinomialFit, SRDResult, fit_beta_binomial, srd
from voxmetrics.metrics.uncertainty import (
    ChanceLevels,
    Comparison,
    ConditionReplicates,
    SpeakerDraws,
    compare_replicates,
    condition_replicates,
    similarity_replicates,
    singling_out_interval,
    singling_out_replicates,
)
from voxmetrics.metrics.zebra import ZebraResult, zebra_from_pools

if TYPE_CHECKING:  # SBLS needs scikit-learn, imported only when SBLS is computed
    from voxmetrics.metrics.sbls import SBLSResult

__all__ = [
    "COMPARISON_COLUMNS",
    "INTERVALS_COLUMNS",
    "INTERVAL_LABELS",
    "LINKAGE_COMPARE_KEYS",
    "OVERVIEW_COLUMNS",
    "SIMILARITY_MAX_UTTERANCES",
    "ConditionReport",
    "LinkageInputs",
    "TrialsUsed",
    "compare_conditions",
    "compare_conditions_sbls",
    "compare_linkage",
    "comparison_frame",
    "evaluate",
    "evaluate_condition",
    "evaluate_lid",
    "evaluate_sbls",
    "evaluate_study",
    "headline_values",
    "intervals_frame",
    "labelled",
    "linkage_inputs",
    "overview_frame",
    "replicate_condition",
    "report_html",
    "verification_frame",
]

Progress = Callable[[float, str], None]


NO_COMPLETE_TRIAL = (
    "no trial is listed against every enrolled identity (a sparse trial list), so the 1-to-N "
    "metrics have no trial to rank; evaluate subsets whose trials are complete (e.g. by sex: "
    "--by sex) or score every trial against every enrolled identity"
)
"""Why the 1-to-N metrics of a sparse trial list without complete trials are null."""


@dataclass(frozen=True)
class TrialsUsed:
    """Which trials each metric family used (the ``trials_used`` block of the JSON).

    Examples
    --------
    >>> TrialsUsed(12, 3, 9, 3, 4, 3, 4).to_dict()["one_to_n"]
    {'n_trials': 3, 'n_enrolled': 4, 'reason': None}
    """

    n_pairs: int
    """Listed (trial, enrolled) pairs, the pairwise metrics' input (T x N when complete)."""
    n_tar: int
    """Listed mated pairs."""
    n_non: int
    """Listed non-mated pairs."""
    n_trials: int
    """Trials with at least one listed pair."""
    n_enrolled: int
    """Enrolled identities."""
    one_to_n_trials: int
    """Complete trials the 1-to-N metrics ranked (0 when none)."""
    one_to_n_enrolled: int
    """Enrolled identities they were ranked against (0 when none)."""
    reason: str | None = None
    """Why the 1-to-N metrics are null (None when they are computed)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"pairwise": {...}, "one_to_n": {...}}``."""
        return {
            "pairwise": {
                "n_pairs": self.n_pairs,
                "n_tar": self.n_tar,
                "n_non": self.n_non,
                "n_trials": self.n_trials,
                "n_enrolled": self.n_enrolled,
            },
            "one_to_n": {
                "n_trials": self.one_to_n_trials,
                "n_enrolled": self.one_to_n_enrolled,
                "reason": self.reason,
            },
        }


@dataclass(frozen=True)
class ConditionReport:
    """Every metric of one condition computed so far."""

    name: str
    """Condition label."""
    attacker: str
    """Attacker knowledge level."""
    n_excluded_trials: int
    """Trials dropped because their speaker is not enrolled."""
    has_dev: bool
    """Whether a dev (calibration) set was given."""
    baseline: BaselineResult
    """EER, ROCCH-EER, Cllr, min Cllr, linkability."""
    srd: SRDResult | None
    """Similarity rank disclosure: target ranks, histogram, MeanD, IdR, StDD, MaxD, Spread
    (None for a sparse trial list without complete trials, as every 1-to-N metric)."""
    srd_model: BetaBinomialFit | None
    """The beta-binomial model of the rank distribution fitted with the CLL loss."""
    zebra: ZebraResult
    """ZEBRA: expected (D_ECE) and worst-case (log10 l, tag) disclosure of the pools."""
    linkability_curve: LinkabilityCurve | None
    """Linkability against N' enrolled candidates (exact expectation)."""
    singling_out: SinglingOutResult | None = None
    """Singling out (needs utterance embeddings with several trials per speaker)."""
    lid: LIDResult | None = None
    """LID (None without a dev set or cross-calibration)."""
    lid_intervals: dict[str, BootstrapInterval] | None = None
    """Speaker-level bootstrap intervals of the LID numbers (when asked for)."""
    zebra_intervals: dict[str, BootstrapInterval] | None = None
    """Speaker-level bootstrap intervals of D_ECE, log10 l and log10 l q95 (when asked for)."""
    verification: VerificationResult | None = None
    """Standard ASV outputs: minDCF / actDCF, DET and APE curves, d'."""
    score_kind: ScoreKind = "similarity"
    """What the scores were: similarity, llr, or distance (negated on reading)."""
    ties: str = "reference"
    """Tie rule of the pooled metrics ("reference" or "attacker")."""
    trials_used: TrialsUsed | None = None
    """Which trials each metric family used."""
    by: dict[str, dict[str, ConditionReport]] | None = None
    """Per-subset reports: attribute -> value -> the report of that subset (``evaluate(by=)``)."""

    replicates: ConditionReplicates | None = None
    """Every headline number in each speaker-level bootstrap replicate (when asked for)."""
    chance: ChanceLevels | None = None
    """Chance levels of linkability, the SRD statistics and LID on these scores."""
    singling_out_interval: BootstrapInterval | None = None
    """Speaker-level interval of singling out (predicate speakers resampled), when both."""

    @property
    def chance_linkability(self) -> float | None:
        """1/N of the identities the 1-to-N metrics ranked against (None when they are null)."""
        u = self.trials_used
        if u is None or (u.reason is None and u.one_to_n_enrolled == self.baseline.n_enrolled):
            return self.baseline.chance_linkability
        return 1.0 / u.one_to_n_enrolled if u.one_to_n_enrolled else None

    @property
    def intervals(self) -> dict[str, BootstrapInterval]:
        """Interval of every headline number by key (empty without a bootstrap)."""
        if self.replicates is None:
            return {**(self.lid_intervals or {}), **(self.zebra_intervals or {})}
        return self.replicates.intervals()

    def _block_intervals(self, keys: Iterable[str]) -> dict[str, list[float | None]] | None:
        if self.replicates is None:
            return None
        iv = self.intervals
        return {k: [iv[k].low, iv[k].high] for k in keys if k in iv}

    def _chance(self, keys: Iterable[str]) -> dict[str, float | None] | None:
        if self.chance is None:
            return None
        return {k: self.chance.values.get(k) for k in keys if k in self.chance.values}

    def worst_quantiles(self) -> dict[str, float | None]:
        """The 0.95 quantiles reported beside the maxima (LIDmax, MaxD, log10 l)."""
        if self.replicates is not None:
            est = self.replicates.estimates
            return {k: est.get(k) for k in ("lid_q95", "max_d_q95", "log10_l_q95")}
        return {}

    def zebra_block(self) -> dict[str, Any]:
        """The ``zebra`` block of the JSON contract, with intervals when bootstrapped."""
        block: dict[str, Any] = self.zebra.to_dict()
        if self.replicates is not None:
            block["log10_l_q95"] = self.replicates.estimates["log10_l_q95"]
            block["intervals"] = self._block_intervals(_ZEBRA_KEYS)
        elif self.zebra_intervals is not None:  # intervals given without joint replicates
            block["intervals"] = _interval_lists(self.zebra_intervals)
        return block

    def srd_block(self) -> dict[str, Any] | None:
        """The ``srd`` block: the statistics, their intervals and their chance levels."""
        if self.srd is None:  # a sparse trial list without complete trials
            return None
        block: dict[str, Any] = {**self.srd.to_dict(), "sparse": self.srd.sparse}
        if self.replicates is not None:
            block["max_d_q95"] = self.replicates.estimates["max_d_q95"]
            block["intervals"] = self._block_intervals(_SRD_KEYS)
        chance = self._chance(_SRD_KEYS)
        if chance is not None:
            block["chance"] = chance
        return block

    def lid_block(self) -> dict[str, Any] | None:
        """The ``lid`` block of the JSON contract, with how it was calibrated and intervals."""
        if self.lid is None:
            return None
        block: dict[str, Any] = {
            **self.lid.to_dict(),
            "calibration": self.lid.label,
            "variant": self.lid.calibration.variant,
            "converged": self.lid.calibration.converged,
            "n_degenerate": self.lid.n_degenerate,
        }
        if self.replicates is not None:
            block["lid_q95"] = self.replicates.estimates.get("lid_q95")
            block["intervals"] = self._block_intervals(_LID_KEYS)
        elif self.lid_intervals is not None:  # intervals given without joint replicates
            block["intervals"] = _interval_lists(self.lid_intervals)
        chance = self._chance(_LID_KEYS)
        if chance is not None:
            block["chance"] = chance
        return block

    def top_intervals(self) -> dict[str, Any] | None:
        """The top-level ``intervals``: the baselines, linkability and its band against N'."""
        if self.replicates is None:
            return None
        iv = self.intervals
        # a sparse trial list without complete trials: the 1-to-N ones are null, as their values
        out: dict[str, Any] = {k: [iv[k].low, iv[k].high] if k in iv else None for k in _TOP_KEYS}
        out["linkability_vs_n"] = (
            [[int(n), float(lo), float(hi)] for n, lo, hi in self.replicates.curve_band()]
            if self.replicates.curve_n.size
            else None
        )
        if self.singling_out_interval is not None:
            iv = self.singling_out_interval
            out["singling_out"] = [iv.low, iv.high]
        return out

    def top_chance(self) -> dict[str, Any] | None:
        """The top-level ``chance``: linkability and its curve against N'."""
        if self.chance is None:
            return None
        return {
            "linkability": self.chance.values["linkability"],
            "linkability_vs_n": [
                [int(n), float(c)]
                for n, c in zip(self.chance.curve_n, self.chance.curve, strict=True)
            ],
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the command-line contract."""
        b = self.baseline
        out: dict[str, Any] = {
            "n_trials": b.n_trials,
            "n_enrolled": b.n_enrolled,
            "n_excluded_trials": self.n_excluded_trials,
            "n_pairs": None if self.trials_used is None else self.trials_used.n_pairs,
            "eer": b.eer,
            "eer_rocch": b.eer_rocch,
            "cllr": b.cllr,
            "min_cllr": b.min_cllr,
            "linkability": b.linkability,
            "lid": self.lid_block(),
            "srd": self.srd_block(),
            "srd_model": None if self.srd_model is None else self.srd_model.to_dict(),
            "zebra": self.zebra_block(),
            "linkability_vs_n": (
                None if self.linkability_curve is None else self.linkability_curve.to_list()
            ),
            "singling_out": None if self.singling_out is None else self.singling_out.to_dict(),
            "score_kind": SCORE_KIND_LABELS[self.score_kind],
            **(
                self.verification.to_dict()
                if self.verification is not None
                else {"dcf": None, "d_prime": None}
            ),
            "ties": self.ties,
            "trials_used": None if self.trials_used is None else self.trials_used.to_dict(),
            "intervals": self.top_intervals(),
            "chance": self.top_chance(),
        }
        if self.by is not None:
            out["by"] = {
                attr: {value: r.to_dict() for value, r in reports.items()}
                for attr, reports in self.by.items()
            }
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)


@single_blas_thread()
def evaluate(
    eval: ScoreMatrix,
    *,
    dev: ScoreMatrix | None = None,
    name: str = "condition",
    attacker: str = "semi-informed",
    cross_calibrate: int | None = None,
    lid_variant: str = "maximum-likelihood",
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
    lid_variant : {"maximum-likelihood", "reference-code"}
        LID calibration (:data:`~voxmetrics.metrics.lid.LID_VARIANTS`): unpenalised maximum
        likelihood on population-sd z-scores (default), or the authors' public code
        (sample sd, balanced, L2-penalised with C = 1), which reproduces
        Šterns et al. 2025 Table 3, Table 4 and Figure 4. Recorded in the JSON as ``lid.variant``.
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
    check_ties(ties)
    if score_kind not in SCORE_KINDS:
        raise VoxMetricsInputError(
            f"score_kind '{score_kind}' is unknown; use one of {', '.join(SCORE_KINDS)}."
        )
    if dev is not None:
        check_disjoint_speakers(dev, eval)
    subsets = None
    if by is not None:  # validate the attribute before any work
        values = eval.attribute_values(by)
        subsets = {}
        for value in values:
            sub_dev = dev
            if dev is not None and by in dev.attributes:
                sub_dev = dev.subset_attribute(by, value)
            subsets[value] = evaluate(
                eval.subset_attribute(by, value),
                dev=sub_dev,
                name=f"{name} [{by}={value}]",
                attacker=attacker,
                cross_calibrate=cross_calibrate,
                lid_variant=lid_variant,
                bootstrap=bootstrap,
                seed=seed,
                ties=ties,
                p_targets=p_targets,
                c_miss=c_miss,
                c_fa=c_fa,
                score_kind=score_kind,
            )
    # one sort of the pooled scores for every 1-to-1 metric, on its own thread while the 1-to-N
    # metrics run (the sort takes one core, the row blocks the others)
    with ThreadPoolExecutor(1, thread_name_prefix="voxmetrics-pools") as background:
        sorting = background.submit(SortedPools.of, eval)
        full = eval.complete_rows()  # the trials of the 1-to-N metrics (eval itself if complete)
        dev_full = None
        if dev is not None:
            dev_full = dev.complete_rows()
            if dev_full is None:
                raise VoxMetricsInputError(
                    f"{dev.source or 'dev'}: no dev trial is listed against every enrolled "
                    "identity, so LID cannot be calibrated on it; give a dev set with complete "
                    "trials."
                )
        # LID and the chance levels of the 1-to-N metrics, on the trials they rank (null if none)
        lid_result = chance = None
        if full is not None:
            lid_result, chance = evaluate_lid_and_chance(
                full,
                dev=dev_full,
                cross_calibrate=cross_calibrate,
                variant=lid_variant,
                seed=seed,
                ties=ties,
            )
        pools = sorting.result()
    if eval.is_complete:
        base = baseline_metrics(eval.scores, eval.targets, ties=ties, pools=pools)
    else:
        base = pairs_baseline(
            pools,
            eval.tar,
            eval.non,
            n_trials=eval.n_trials,
            n_enrolled=eval.n_enrolled,
            linkability=None if full is None else linkability(full.scores, full.targets),
            ties=ties,
        )
    replicates = None
    intervals = zebra_intervals = None
    if bootstrap > 0:
        # one set of speaker-level replicates for every headline number; a sparse trial list
        # gives its pairwise numbers the listed pairs of the resampled trials and its 1-to-N
        # numbers the resampled complete trials (none: those stay null, as their values)
        draws = SpeakerDraws.draw(eval.trial_speakers, n_boot=bootstrap, seed=seed)
        replicates = replicate_condition(
            eval, draws, lid_result, base, ties=ties, pools=pools, complete=full
        )
        every = replicates.intervals()
        if lid_result is not None:
            intervals = {k: every[k] for k in _LID_KEYS}
        zebra_intervals = {k: every[k] for k in _ZEBRA_KEYS}
        if progress is not None:
            progress(1.0, f"Bootstrap {bootstrap}/{bootstrap}")
    ranks = None if full is None else srd(full.scores, full.targets, ties=ties)
    used = TrialsUsed(
        n_pairs=eval.n_pairs,
        n_tar=pools.n_tar,
        n_non=pools.n_non,
        n_trials=eval.n_trials,
        n_enrolled=eval.n_enrolled,
        one_to_n_trials=0 if full is None else full.n_trials,
        one_to_n_enrolled=0 if full is None else full.n_enrolled,
        reason=NO_COMPLETE_TRIAL if full is None else None,
    )
    singled = _singling_out(embeddings, split)
    so_interval = None
    if bootstrap > 0 and singled is not None and singled.per_predicate is not None:
        so_interval = singling_out_interval(singled, n_boot=bootstrap, seed=seed)
    return ConditionReport(
        name=name,
        attacker=attacker,
        n_excluded_trials=eval.n_excluded_trials,
        has_dev=dev is not None,
        baseline=base,
        srd=ranks,
        srd_model=None if ranks is None else fit_beta_binomial(ranks.histogram, loss="CLL"),
        zebra=zebra_from_pools(pools, ties=ties),
        linkability_curve=(
            None if full is None else linkability_curve(full.scores, full.targets, ties=ties)
        ),
        singling_out=singled,
        lid=lid_result,
        lid_intervals=intervals,
        zebra_intervals=zebra_intervals,
        verification=verification_from_pools(
            pools,
            p_targets=p_targets,
            c_miss=c_miss,
            c_fa=c_fa,
            scores_are_llrs=score_kind == "llr",
        ),
        score_kind=score_kind,
        ties=ties,
        trials_used=used,
        by=None if subsets is None else {by: subsets},
        replicates=replicates,
        chance=chance,
        singling_out_interval=so_interval,
    )


def _interval_lists(ivs: Mapping[str, BootstrapInterval]) -> dict[str, list[float | None]]:
    return {k: [iv.low, iv.high] for k, iv in ivs.items()}


_TOP_KEYS = ("eer", "eer_rocch", "cllr", "min_cllr", "linkability")
_LID_KEYS = ("alid", "pdr", "ndr", "lid_plus", "lid_minus", "lid_max", "lid_q95")
_SRD_KEYS = ("mean_d", "idr", "max_d", "max_d_q95")
_ZEBRA_KEYS = ("d_ece", "log10_l", "log10_l_q95")


def replicate_condition(
    eval: ScoreMatrix,
    draws: SpeakerDraws,
    lid_result: LIDResult | None,
    base: BaselineResult,
    *,
    ties: Ties = "reference",
    pools: SortedPools | None = None,
    complete: ScoreMatrix | None = None,
) -> ConditionReplicates:
    """Every headline number of ``eval`` under ``draws``, estimates equal to the reported ones.

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
        pools=pools if pools is not None else SortedPools.of(eval),
        estimates={"eer": base.eer, "cllr": base.cllr, "min_cllr": base.min_cllr},
        mask=eval.mask,
        complete=(
            None
            if complete is None or eval.is_complete
            else (complete.scores, complete.targets, complete.trial_speakers)
        ),
    )


SIMILARITY_MAX_UTTERANCES = 5000
"""Most utterances of one set (in the split) whose similarity matrices the report and the
comparisons compute: every utterance pair is scored, about 50 bytes a pair."""

LINKAGE_COMPARE_KEYS = ("singling_out", "deid", "g_vd")
"""The numbers of a paired comparison that need utterance embeddings: singling out (each
condition's own), DeID and G_VD (each condition's voices against the original voices)."""


@dataclass(frozen=True)
class LinkageInputs:
    """What a condition brings to the embedding-based numbers of a paired comparison."""

    singling_out: SinglingOutResult | None
    """Its singling out with per-predicate rates (None: see :attr:`reasons`)."""
    similarity: SimilarityResult | None
    """Its voice similarity matrices against the original voices (None: see :attr:`reasons`)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Key of :data:`LINKAGE_COMPARE_KEYS` -> why that number is missing."""

    @property
    def speakers(self) -> set[str]:
        """The predicate speakers and the speakers of the similarity matrices."""
        out: set[str] = set()
        if self.singling_out is not None and self.singling_out.predicates is not None:
            out |= set(map(str, self.singling_out.predicates))
        if self.similarity is not None:
            out |= set(map(str, self.similarity.oo.speakers))
        return out

    @property
    def estimates(self) -> dict[str, float | None]:
        """The values of the numbers it has (a non-finite G_VD is None)."""
        out: dict[str, float | None] = {}
        if self.singling_out is not None:
            out["singling_out"] = float(self.singling_out.value)
        if self.similarity is not None:
            d = self.similarity.distinctiveness
            for k in ("deid", "g_vd"):
                v = float(getattr(d, k))
                out[k] = v if math.isfinite(v) else None
        return out

    def replicates(self, rep: ConditionReplicates, draws: SpeakerDraws) -> ConditionReplicates:
        """``rep`` with these numbers and their values in each replicate of ``draws`` added."""
        est, reps = dict(rep.estimates), dict(rep.reps)
        if self.singling_out is not None:
            est["singling_out"] = self.estimates["singling_out"]
            reps["singling_out"] = singling_out_replicates(self.singling_out, draws)
        if self.similarity is not None:
            sim = similarity_replicates(self.similarity, draws)
            for k in ("deid", "g_vd"):
                est[k] = self.estimates[k]
                reps[k] = np.where(np.isfinite(sim[k]), sim[k], np.nan)
        return replace(rep, estimates=est, reps=reps)


def linkage_inputs(
    condition: Condition,
    original: Condition | None,
    *,
    singled: SinglingOutResult | None = None,
    calibration: Calibration = "pav",
    split: str = "eval",
    max_utterances: int | None = SIMILARITY_MAX_UTTERANCES,
    similarity_cache: MutableMapping[Any, SimilarityMatrix] | None = None,
) -> LinkageInputs:
    """Singling out and the voice similarity (against ``original``) of one condition.

    ``singled`` is the condition's singling out when already computed (its report's); it is
    computed otherwise. A number that cannot be computed gets a reason instead (no embeddings,
    no original voices, a set of more than ``max_utterances`` utterances in the split, or the
    library's message), never an error. ``similarity_cache`` is passed to
    :func:`~voxmetrics.metrics.similarity.voice_similarity` (one dict for every condition of a
    study computes the original's matrix once).

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> st = demo_study(n_speakers=6)
    >>> li = linkage_inputs(st.get("anon-mild"), None)
    >>> sorted(li.estimates), li.reasons["deid"][:25]
    (['singling_out'], 'no original voices chosen')
    """
    if condition.embeddings is None:
        why = (
            f"{condition.name} has no utterance embeddings (singling out and the voice "
            "similarity matrices need them)"
        )
        return LinkageInputs(None, None, dict.fromkeys(LINKAGE_COMPARE_KEYS, why))
    reasons: dict[str, str] = {}
    if singled is None:
        singled = _singling_out(condition.embeddings, split)
    if singled is None or singled.per_predicate is None:
        singled = None
        reasons["singling_out"] = f"singling out could not be computed for {condition.name}"
    similarity = None
    if original is None:
        why = (
            "no original voices chosen: DeID and G_VD compare each condition's voices with "
            "the unprocessed ones (give the condition that holds them)"
        )
    elif original.embeddings is None:
        why = f"the original voices, {original.name}, have no utterance embeddings"
    elif max_utterances is not None and _largest_set(original, condition, split) > max_utterances:
        size = _largest_set(original, condition, split)
        why = (
            f"{size:,} utterances in a set, more than the {max_utterances:,} whose every pair "
            "is compared here; run `python -m voxmetrics similarity` for DeID and G_VD"
        )
    else:
        why = ""
        try:
            similarity = voice_similarity(
                original.embeddings,
                condition.embeddings,
                split=split,
                calibration=calibration,
                cache=similarity_cache,
            )
        except VoxMetricsInputError as exc:
            why = f"no voice similarity of {condition.name} against {original.name}: {exc}"
    if similarity is None:
        reasons.update(deid=why, g_vd=why)
    return LinkageInputs(singled, similarity, reasons)


def _largest_set(original: Condition, condition: Condition, split: str) -> int:
    """Utterances of ``split`` in the larger of the two conditions' embedding sets."""
    return max(
        int((c.embeddings.meta["split"] == split).sum())  # type: ignore[union-attr]
        for c in (original, condition)
    )


def _linkage_rows(
    out: Mapping[str, Comparison], a: LinkageInputs, b: LinkageInputs
) -> dict[str, Comparison]:
    """``out`` with every key of :data:`LINKAGE_COMPARE_KEYS` it lacks, null with a reason."""
    full = dict(out)
    ea, eb = a.estimates, b.estimates
    for k in LINKAGE_COMPARE_KEYS:
        if k in full:
            continue
        why = "; ".join(dict.fromkeys(r for r in (a.reasons.get(k), b.reasons.get(k)) if r))
        full[k] = Comparison(ea.get(k), eb.get(k), None, (None, None), None, None, why or None)
    return full


def compare_conditions(
    a: Condition,
    b: Condition,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    cross_calibrate: int | None = None,
    lid_variant: str = "maximum-likelihood",
    ties: Ties = "reference",
    original: Condition | None = None,
    calibration: Calibration = "pav",
    sbls: bool = True,
) -> dict[str, Comparison]:
    """Paired comparison B - A of every headline number of two conditions sharing speakers.

    The same speaker-level replicate weights (drawn over the union of both conditions' trial
    speakers) are applied to both, so each difference carries a percentile interval and a
    two-sided bootstrap p-value; ``p_adjusted`` is Holm's adjustment over all numbers compared
    (family-wise error control). LID numbers are compared when both conditions have LID
    (calibrated as :func:`evaluate` does, with ``cross_calibrate`` and ``lid_variant``).
    With ``sbls`` (default) and embeddings with attribute labels in both conditions, SBLS and
    its components are compared too (:func:`compare_conditions_sbls`; their Holm family is
    their own four numbers, so they leave the identity numbers' adjustment as it was).

    Singling out, DeID and G_VD (:data:`LINKAGE_COMPARE_KEYS`) are always in the result: with
    utterance embeddings, resampled with the same weights (a drawn speaker brings its
    predicate and its rows and columns of the similarity matrices, which are held fixed, as in
    :func:`~voxmetrics.metrics.uncertainty.similarity_intervals`); without, null with a
    ``reason``; their Holm family is their own three numbers (:func:`compare_linkage`). DeID
    and G_VD need ``original``, the condition holding the unprocessed voices (``calibration``
    is :func:`~voxmetrics.metrics.similarity.voice_similarity`'s).

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> st = demo_study(n_speakers=8)
    >>> c = compare_conditions(st.get("plain"), st.get("random"), n_boot=50)
    >>> c["linkability"].difference < 0, sorted(c["linkability"].to_dict())[:3]
    (True, ['a', 'b', 'difference'])
    >>> c = compare_conditions(st.get("plain"), st.get("random"), n_boot=50,
    ...                        original=st.get("plain"))
    >>> c["deid"].a, c["deid"].difference > 0.5, c["singling_out"].difference < 0
    (0.0, True, True)
    """
    check_ties(ties)
    spk_a = set(map(str, a.eval.trial_speakers))
    spk_b = set(map(str, b.eval.trial_speakers))
    if not spk_a & spk_b:
        raise VoxMetricsInputError(
            f"conditions {a.name!r} and {b.name!r} share no trial speaker; a paired comparison "
            "needs the same speakers in both (two anonymisers or two attackers on one set)."
        )
    cache: dict[Any, SimilarityMatrix] = {}
    links = [
        linkage_inputs(c, original, calibration=calibration, similarity_cache=cache) for c in (a, b)
    ]
    speakers = spk_a | spk_b | links[0].speakers | links[1].speakers
    draws = SpeakerDraws.draw(sorted(speakers), n_boot=n_boot, seed=seed)
    reps = []
    for cond in (a, b):
        lid_result = evaluate_lid(
            cond.eval,
            dev=cond.dev,
            cross_calibrate=cross_calibrate,
            variant=lid_variant,
            seed=seed,
        )
        base = baseline_metrics(cond.eval.scores, cond.eval.targets, ties=ties)
        reps.append(replicate_condition(cond.eval, draws, lid_result, base, ties=ties))
    out = compare_replicates(reps[0], reps[1], confidence=confidence)
    out.update(compare_linkage(*links, draws, confidence=confidence))
    if sbls:
        out.update(compare_conditions_sbls(a, b, draws, confidence=confidence))
    return out


def compare_linkage(
    a: LinkageInputs, b: LinkageInputs, draws: SpeakerDraws, *, confidence: float = 0.95
) -> dict[str, Comparison]:
    """The singling-out, DeID and G_VD part of :func:`compare_conditions`, paired on ``draws``.

    Every key of :data:`LINKAGE_COMPARE_KEYS`, null with a ``reason`` where either condition
    lacks it. ``p_adjusted`` is Holm's adjustment over these three numbers, their own family,
    so they leave the other numbers' adjustment as it was.

    Examples
    --------
    >>> d = SpeakerDraws(np.array(["a"]), np.ones((3, 1), np.int64))
    >>> why = dict.fromkeys(LINKAGE_COMPARE_KEYS, "x has no utterance embeddings")
    >>> c = compare_linkage(LinkageInputs(None, None, why), LinkageInputs(None, None, why), d)
    >>> c["deid"].difference, c["deid"].reason
    (None, 'x has no utterance embeddings')
    """
    empty = ConditionReplicates(
        {}, {}, np.zeros(0, np.int64), np.zeros(0), np.zeros((draws.n_boot, 0))
    )
    out = compare_replicates(
        a.replicates(empty, draws), b.replicates(empty, draws), confidence=confidence
    )
    return _linkage_rows(out, a, b)


def compare_conditions_sbls(
    a: Condition, b: Condition, draws: SpeakerDraws, *, confidence: float = 0.95
) -> dict[str, Comparison]:
    """The SBLS part of :func:`compare_conditions`, paired on ``draws``.

    ``sbls``, ``p_attr``, ``p_assoc`` and ``p_subgroup`` under the default attacker (empty
    when either condition has no SBLS).
    The attackers are trained once; each replicate reweights the eval utterances by their
    speakers' draws (:func:`voxmetrics.analysis.sbls.compare_sbls`). When the attacked
    speakers are not all among ``draws``' speakers, both attacks share new draws over the
    union of their speakers (same seed). ``p_adjusted`` is Holm's adjustment over these four
    numbers, their own family.
    """
    from voxmetrics.analysis.sbls import compare_sbls, default_attack

    attack_a, attack_b = default_attack(a), default_attack(b)
    if attack_a is None or attack_b is None:
        return {}
    spk = {str(s) for s in (*attack_a.speakers, *attack_b.speakers)}
    if not spk <= set(map(str, draws.speakers)):
        draws = SpeakerDraws.draw(sorted(spk), n_boot=draws.n_boot, seed=draws.seed)
    return compare_sbls(attack_a, attack_b, draws, confidence=confidence)


def _singling_out(embeddings: EmbeddingSet | None, split: str) -> SinglingOutResult | None:
    if embeddings is None:
        return None
    try:
        return singling_out_embeddings(embeddings, split=split)
    except VoxMetricsInputError as exc:
        warnings.warn(f"singling out skipped: {exc}", DegenerateDataWarning, stacklevel=3)
        return None


def evaluate_condition(condition: Condition, **options: Any) -> ConditionReport:
    """:func:`evaluate` applied to a :class:`~voxmetrics.data.study.Condition`.

    ``options`` are :func:`evaluate`'s keyword options (``cross_calibrate``, ``bootstrap``...).
    """
    return evaluate(
        condition.eval,
        dev=condition.dev,
        name=condition.name,
        attacker=condition.attacker,
        embeddings=condition.embeddings,
        score_kind=condition.score_kind,
        **options,
    )


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
        reports.append(evaluate_condition(cond, **opts))
    if progress is not None:
        progress(1.0, "Done")
    return reports


OVERVIEW_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "eer": "EER",
    "linkability": "Linkability",
    "chance_linkability": "Chance (1/N)",
    "alid": "ALID (bits)",
    "lid_max": "LIDmax (bits)",
    "mean_d": "MeanD (bits)",
    "idr": "IdR",
    "d_ece": "D_ECE (bits)",
    "zebra_tag": "ZEBRA tag",
    "singling_out": "Singling out",
    "eer_rocch": "EER (ROCCH)",
    "min_cllr": "min Cllr",
    "cllr": "Cllr",
    "n_trials": "T",
    "n_enrolled": "N",
    "n_pairs": "Pairs",
    "n_trials_one_to_n": "T (1-to-N)",
    "n_excluded_trials": "Excluded",
    "attacker": "Attacker",
}
"""Overview table columns and their display labels: the EER beside the 1-to-N metrics first,
the other 1-to-1 baselines and the counts after (``Pairs``: the listed pairs of the pairwise
metrics; ``T (1-to-N)``: the complete trials of the 1-to-N metrics, T unless the trial list is
sparse)."""


def overview_frame(reports: Iterable[ConditionReport]) -> pd.DataFrame:
    """One row per condition with every metric available so far (keys of OVERVIEW_COLUMNS).

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> df = overview_frame(evaluate_study(demo_study(n_speakers=6)))
    >>> list(df["condition"])
    ['plain', 'random', 'anon-mild', 'anon-strong', 'anon-leaky']
    """
    rows = []
    for r in reports:
        rows.append(
            {
                "condition": r.name,
                "attacker": r.attacker,
                **r.to_dict(),
                "chance_linkability": r.chance_linkability,
                "alid": r.lid.alid if r.lid is not None else None,
                "lid_max": r.lid.lid_max if r.lid is not None else None,
                "mean_d": None if r.srd is None else r.srd.stats.mean_d,
                "idr": None if r.srd is None else r.srd.stats.idr,
                "d_ece": r.zebra.d_ece,
                "zebra_tag": r.zebra.tag,
                "singling_out": None if r.singling_out is None else r.singling_out.value,
                "n_trials_one_to_n": (
                    None if r.trials_used is None else r.trials_used.one_to_n_trials
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(OVERVIEW_COLUMNS))


INTERVAL_LABELS: dict[str, str] = {
    "eer": "EER",
    "eer_rocch": "EER (ROCCH)",
    "cllr": "Cllr",
    "min_cllr": "min Cllr",
    "linkability": "Linkability",
    "alid": "ALID (bits)",
    "pdr": "PDR",
    "ndr": "NDR",
    "lid_plus": "LID+ (bits)",
    "lid_minus": "LID− (bits)",
    "lid_max": "LIDmax (bits)",
    "lid_q95": "LID q95 (bits)",
    "mean_d": "MeanD (bits)",
    "idr": "IdR",
    "max_d": "MaxD (bits)",
    "max_d_q95": "SRD disclosure q95 (bits)",
    "d_ece": "D_ECE (bits)",
    "log10_l": "log10 l",
    "log10_l_q95": "|log10 LR| q95",
    "singling_out": "Singling out",
    "deid": "DeID",
    "g_vd": "G_VD (dB)",
}
"""Display label of every number that carries an interval, in table order."""


def headline_values(report: ConditionReport) -> dict[str, float | None]:
    """Every headline number of a report by key (the q95 quantiles only when bootstrapped)."""
    b, z = report.baseline, report.zebra
    st = None if report.srd is None else report.srd.stats  # None: a sparse list, no complete trial
    out: dict[str, float | None] = {
        "eer": b.eer,
        "eer_rocch": b.eer_rocch,
        "cllr": b.cllr,
        "min_cllr": b.min_cllr,
        "linkability": b.linkability,
        "mean_d": None if st is None else st.mean_d,
        "idr": None if st is None else st.idr,
        "max_d": None if st is None else st.max_d,
        "d_ece": z.d_ece,
        "log10_l": z.log10_l,
    }
    if report.lid is not None:
        x = report.lid
        out.update(
            alid=x.alid,
            pdr=x.pdr,
            ndr=x.ndr,
            lid_plus=x.lid_plus,
            lid_minus=x.lid_minus,
            lid_max=x.lid_max,
        )
    if report.replicates is not None:
        est = report.replicates.estimates
        out.update({k: est[k] for k in ("lid_q95", "max_d_q95", "log10_l_q95") if k in est})
    return out


INTERVALS_COLUMNS: dict[str, str] = {
    "condition": "Condition",
    "number": "Number",
    "value": "Value",
    "low": "95% low",
    "high": "95% high",
    "chance": "Chance",
    "excess": "Excess over chance",
}
"""Display labels of the columns of :func:`intervals_frame` (all but ``key``)."""

COMPARISON_COLUMNS: dict[str, str] = {
    "number": "Number",
    "a": "A",
    "b": "B",
    "difference": "B − A",
    "low": "95% low",
    "high": "95% high",
    "p_value": "p",
    "p_adjusted": "p (Holm)",
    "reason": "Not compared because",
}
"""Display labels of the columns of :func:`comparison_frame` (all but ``key``)."""


def labelled(df: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """``df`` with the columns of ``labels`` only, in its order, under their display labels.

    Examples
    --------
    >>> labelled(pd.DataFrame({"key": ["eer"], "number": ["EER"]}), {"number": "Number"})
      Number
    0    EER
    """
    return df[list(labels)].rename(columns=dict(labels))


def intervals_frame(
    reports: Iterable[ConditionReport],
    *,
    keys: Iterable[str] | None = None,
    similarity: Mapping[str, Mapping[str, BootstrapInterval]] | None = None,
) -> pd.DataFrame:
    """Every headline number of every condition with its interval, chance and excess.

    One row per condition and number: ``condition, key, number, value, low, high, chance,
    excess`` (value - chance; None where no chance level is defined). Without a bootstrap
    ``low`` and ``high`` are None; a maximum never has them (read its q95 row). ``keys``
    restricts the numbers (in the order of :data:`INTERVAL_LABELS`). ``similarity`` adds DeID
    and G_VD rows (no chance level): condition name -> ``deid`` and ``g_vd`` intervals (their
    ``estimate`` is the value), from
    :func:`~voxmetrics.metrics.uncertainty.similarity_intervals`.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> df = intervals_frame(evaluate_study(demo_study(n_speakers=6), bootstrap=20))
    >>> ok = df.dropna(subset=["low", "high"])  # maxima have no interval
    >>> list(df.columns)[:4], bool((ok["low"] <= ok["high"]).all())
    (['condition', 'key', 'number', 'value'], True)
    >>> sorted(set(df["key"]) - set(ok["key"]))
    ['lid_max', 'log10_l', 'max_d']
    """
    wanted = set(INTERVAL_LABELS if keys is None else keys)
    rows = []
    for r in reports:
        iv = r.intervals
        values = headline_values(r)
        chance = r.chance.values if r.chance is not None else {}
        for key, label in INTERVAL_LABELS.items():
            if key not in values or key not in wanted:
                continue
            c = chance.get(key)
            v = values[key]
            rows.append(
                {
                    "condition": r.name,
                    "key": key,
                    "number": label,
                    "value": v,
                    "low": iv[key].low if key in iv else None,
                    "high": iv[key].high if key in iv else None,
                    "chance": c,
                    "excess": None if c is None or v is None else v - c,
                }
            )
        so, so_iv = r.singling_out, r.singling_out_interval
        if so is not None and (keys is None or "singling_out" in wanted):
            rows.append(
                {
                    "condition": r.name,
                    "key": "singling_out",
                    "number": "Singling out",
                    "value": so.value,
                    "low": None if so_iv is None else so_iv.low,
                    "high": None if so_iv is None else so_iv.high,
                    "chance": so.chance,
                    "excess": so.value - so.chance,
                }
            )
        for key in ("deid", "g_vd"):
            sim = (similarity or {}).get(r.name) or {}
            if key in sim and key in wanted:
                rows.append(
                    {
                        "condition": r.name,
                        "key": key,
                        "number": INTERVAL_LABELS[key],
                        "value": sim[key].estimate,
                        "low": sim[key].low,
                        "high": sim[key].high,
                        "chance": None,
                        "excess": None,
                    }
                )
    columns = ["condition", "key", "number", "value", "low", "high", "chance", "excess"]
    return pd.DataFrame(rows, columns=columns)


_SBLS_LABELS = {
    "sbls": "SBLS",
    "p_attr": "P_attr",
    "p_assoc": "P_assoc",
    "p_subgroup": "P_subgroup",
}
"""Labels of the SBLS numbers of a comparison (:func:`compare_conditions_sbls`)."""


def comparison_frame(comparison: Mapping[str, Comparison]) -> pd.DataFrame:
    """A paired comparison as a table: one row per number (B - A, interval, p-values).

    ``reason`` says why a number could not be compared (None when it was).
    """
    rows = [
        {
            "key": k,
            "number": INTERVAL_LABELS.get(k, _SBLS_LABELS.get(k, k)),
            "a": c.a,
            "b": c.b,
            "difference": c.difference,
            "low": c.interval[0],
            "high": c.interval[1],
            "p_value": c.p_value,
            "p_adjusted": c.p_adjusted,
            "reason": c.reason,
        }
        for k, c in comparison.items()
    ]
    columns = [
        "key", "number", "a", "b", "difference", "low", "high", "p_value", "p_adjusted", "reason",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def verification_frame(results: Mapping[str, VerificationResult]) -> pd.DataFrame:
    """The standard ASV numbers of each condition: minDCF / actDCF per prior and d'.

    Columns: ``Condition``, ``minDCF (P=p)`` and ``actDCF (P=p)`` for each target prior p
    (NaN unless the scores are LLRs), ``d'`` (NaN when infinite), ``C_miss``, ``C_fa``,
    ``Scores``.

    Examples
    --------
    >>> from voxmetrics.metrics.dcf import verification
    >>> df = verification_frame({"x": verification([1.0, 3.0], [0.0, 2.0], p_targets=[0.5])})
    >>> df.columns.tolist()
    ['Condition', 'minDCF (P=0.5)', 'actDCF (P=0.5)', "d'", 'C_miss', 'C_fa', 'Scores']
    >>> df.iloc[0, 1:4].tolist()
    [0.5, nan, 1.0]
    """
    rows = []
    for name, v in results.items():
        row: dict[str, Any] = {"Condition": name}
        for key, d in v.dcf.to_dict().items():
            row[f"minDCF (P={key})"] = d["min_dcf"]
            row[f"actDCF (P={key})"] = d["act_dcf"]
        row["d'"] = v.d_prime if math.isfinite(v.d_prime) else None
        row["C_miss"], row["C_fa"] = v.dcf.c_miss, v.dcf.c_fa
        row["Scores"] = "LLRs" if v.scores_are_llrs else "as given (not LLRs)"
        rows.append(row)
    df = pd.DataFrame(rows)
    numeric = [c for c in df.columns if c not in ("Condition", "Scores")]
    df[numeric] = df[numeric].apply(pd.to_numeric).astype(float)  # empty cells: NaN
    return df


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return "null" if math.isnan(v) else f"{v:.4f}"
    return html.escape(str(v))


def report_html(reports: Iterable[ConditionReport], *, title: str = "VoxMetrics report") -> str:
    """A self-contained HTML page with the overview table of the reports."""
    df = overview_frame(reports)
    head = "".join(f"<th>{html.escape(OVERVIEW_COLUMNS[c])}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1><table><tr>{head}</tr>{body}</table>"
        "<p>EER: VoicePrivacy 2024 definition. Cllr is meaningful only when the scores are "
        "log-likelihood ratios. Linkability: share of trials whose own speaker scores highest "
        "(chance 1/N). Definitions: the VoxMetrics documentation, Methods.</p>"
        f"<p><small>VoxMetrics {__version__}</small></p></body></html>"
    )
