"""The result of evaluating one condition: :class:`ConditionReport` and its JSON object.

The JSON object of one condition follows the documented command-line contract: ``n_trials,
n_enrolled, n_excluded_trials, eer, eer_rocch, cllr, min_cllr, linkability``, the ``lid``
block (null without a dev set or cross-calibration), the ``srd`` block (empirical rank
statistics), ``srd_model`` (the CLL beta-binomial fit), the ``zebra`` block (d_ece,
log10_l, tag, odds), ``linkability_vs_n``, ``singling_out`` (null without embeddings),
``ties``, the tie rule of the pooled metrics, ``intervals`` (with a bootstrap: the 95 %
intervals of the top-level numbers, ``[low, high]``, and the band of ``linkability_vs_n``,
``[[n, low, high], ...]``; the ``lid``, ``srd`` and ``zebra`` blocks carry their own) and
``chance`` (chance levels of linkability and its curve; the ``lid`` and ``srd`` blocks carry
theirs), see :mod:`voxmetrics.metrics.uncertainty`; later metric families add theirs. The
``utility`` block holds the condition's utility numbers (``wer``, ``uar``, ``rho_f0`` as
fractions, their ``intervals``, ``per_class`` accuracy, ``source`` and ``uar_method``), null
when none are known (:class:`~voxmetrics.data.utility.Utility`). ``tar_at_far`` is the
true-accept rate at low false-accept rates (``{"0.01": ..., "0.001": ...}``, with the
``verification`` part), and the ``attacker`` block, present when the scores' making is
known, the attacker recipe (:class:`~voxmetrics.data.recipe.AttackerRecipe`: back-end,
training data, how it was chosen, the weak-attacker findings).

A report asked for some parts only (``evaluate(parts=...)``,
:data:`~voxmetrics.evaluation.options.PARTS`) has its other numbers null and lists its
``parts``; a full report has no ``parts`` key.

``n_pairs`` and ``trials_used`` say which trials each family used: the pairwise metrics (EER,
ROCCH-EER, Cllr, min Cllr, ZEBRA) every listed (trial, enrolled) pair, the 1-to-N metrics
(linkability, LID, SRD, linkability against N) the complete trials of
:meth:`~voxmetrics.data.model.ScoreMatrix.complete_rows`; for a sparse trial list without any,
those are null and ``trials_used.one_to_n.reason`` says why. With ``by``, the ``by`` block
holds one such object per value of a per-trial attribute (``{"by": {"sex": {"F": {...}}}}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from voxmetrics._types import LID_DISPLAY_FLOOR, SCORE_KIND_LABELS, ScoreKind
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.utility import Utility
from voxmetrics.evaluation.options import ALL_PARTS, subset_parts
from voxmetrics.metrics.baseline import BaselineResult
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.chance import ChanceLevels
from voxmetrics.metrics.dcf import VerificationResult
from voxmetrics.metrics.legal import LinkabilityCurve, SinglingOutResult
from voxmetrics.metrics.lid import LIDResult, beyond_display_range
from voxmetrics.metrics.srd import BetaBinomialFit, SRDResult
from voxmetrics.metrics.uncertainty import ConditionReplicates
from voxmetrics.metrics.zebra import ZebraResult

__all__ = ["NO_COMPLETE_TRIAL", "ConditionReport", "TrialsUsed"]

TOP_KEYS = ("eer", "eer_rocch", "cllr", "min_cllr", "linkability")
"""The numbers of the top-level ``intervals`` block."""
LID_KEYS = ("alid", "pdr", "ndr", "lid_plus", "lid_minus", "lid_max", "lid_q95")
"""The numbers of the ``lid`` block that carry an interval or a chance level."""
SRD_KEYS = ("mean_d", "idr", "max_d", "max_d_q95")
"""The numbers of the ``srd`` block that carry an interval or a chance level."""
ZEBRA_KEYS = ("d_ece", "log10_l", "log10_l_q95")
"""The numbers of the ``zebra`` block that carry an interval."""


NO_COMPLETE_TRIAL = (
    "no trial is listed against every enrolled identity (a sparse trial list), so the 1-to-N "
    "metrics have no trial to rank; evaluate each subset whose trials are complete (e.g. each "
    "sex on its own) or score every trial against every enrolled identity"
)
"""Why the 1-to-N metrics of a sparse trial list without complete trials are null.

Shown in reports, on the command line and on dashboard pages alike, so it names no control of
either (``report --by`` / ``--subset``, the pages' Subset selector)."""


@dataclass(frozen=True)
class TrialsUsed:
    """Which trials each metric family used (the ``trials_used`` block of the JSON).

    Examples
    --------
    >>> TrialsUsed(12, 3, 9, 3, 4, 3, 4).to_dict()["one_to_n"]["left_out"]
    {'speaker_not_enrolled': 0, 'not_listed_against_all': 0}
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
    n_unenrolled: int = 0
    """Trials whose speaker is not enrolled: their pairs count for the pairwise metrics, all
    non-mated; the 1-to-N metrics leave them out (the attacker has no identity to find)."""
    groups: dict[str, Any] | None = None
    """When the 1-to-N metrics were pooled over complete groups (a VoicePrivacy list, complete
    per gender): ``{"by": attribute, "groups": {value: {"n_trials", "n_enrolled"}}}``;
    ``one_to_n_enrolled`` is then the largest group's N."""
    chance_linkability: float | None = None
    """Linkability of a random guess when pooled over groups (the mean over trials of 1 / its
    group's N); None for one list (1 / ``one_to_n_enrolled``)."""

    @property
    def one_to_n_left_out(self) -> dict[str, int]:
        """Trials the 1-to-N metrics left out: of unenrolled speakers, and incomplete ones.

        An incomplete trial is one of an enrolled speaker not listed against every enrolled
        identity of its group (a sparse trial list).
        """
        incomplete = self.n_trials - self.n_unenrolled - self.one_to_n_trials
        return {"speaker_not_enrolled": self.n_unenrolled, "not_listed_against_all": incomplete}

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
                "left_out": self.one_to_n_left_out,
                **({} if self.groups is None else {"pooled": self.groups}),
            },
        }


@dataclass(frozen=True)
class ConditionReport:
    """Every metric of one condition computed so far.

    ``parts`` says which parts of the report were asked for
    (:data:`~voxmetrics.evaluation.options.PARTS`); the fields of the others are None (the EER
    and the counts are in every report).
    """

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
    zebra: ZebraResult | None
    """ZEBRA: expected (D_ECE) and worst-case (log10 l, tag) disclosure of the pools (None
    without the ``zebra`` part)."""
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
    linkability_rule: str = "code"
    """When a trial is linked: "code" (a tie for the top score is a link, the authors' code)
    or "strict" (the paper's eq. 3)."""
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
    utility: Utility | None = None
    """The condition's utility numbers (WER, UAR, rho_F0 as fractions), None when unknown."""
    input_warnings: tuple[str, ...] = ()
    """What was left out of broken input files read with ``allow_incomplete`` (the JSON's
    ``input_warnings``, present only when there are some)."""
    parts: frozenset[str] = ALL_PARTS
    """The parts of the report that were computed (every one by default)."""
    recipe: AttackerRecipe | None = None
    """The attacker whose scores these are (back-end, training data, how it was chosen, the
    weak-attacker findings): the JSON's ``attacker`` block; None for imported scores of
    unknown making (no such block)."""

    @property
    def chance_linkability(self) -> float | None:
        """1/N of the identities the 1-to-N metrics ranked against (None when they are null).

        Pooled over complete groups: the mean over trials of 1 / its group's N.
        """
        u = self.trials_used
        if u is not None and u.chance_linkability is not None:
            return u.chance_linkability
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

    def zebra_block(self) -> dict[str, Any] | None:
        """The ``zebra`` block of the JSON contract, with intervals when bootstrapped."""
        if self.zebra is None:  # not asked for
            return None
        block: dict[str, Any] = self.zebra.to_dict()
        if self.replicates is not None and "log10_l_q95" in self.replicates.estimates:
            block["log10_l_q95"] = self.replicates.estimates["log10_l_q95"]
            block["intervals"] = self._block_intervals(ZEBRA_KEYS)
        elif self.zebra_intervals is not None:  # intervals given without joint replicates
            block["intervals"] = _interval_lists(self.zebra_intervals)
        return block

    def srd_block(self) -> dict[str, Any] | None:
        """The ``srd`` block: the statistics, their intervals and their chance levels."""
        if self.srd is None:  # a sparse trial list without complete trials
            return None
        block: dict[str, Any] = {**self.srd.to_dict(), "sparse": self.srd.sparse}
        if self.replicates is not None and "max_d_q95" in self.replicates.estimates:
            block["max_d_q95"] = self.replicates.estimates["max_d_q95"]
            block["intervals"] = self._block_intervals(SRD_KEYS)
        chance = self._chance(SRD_KEYS)
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
            block["intervals"] = self._block_intervals(LID_KEYS)
        elif self.lid_intervals is not None:  # intervals given without joint replicates
            block["intervals"] = _interval_lists(self.lid_intervals)
        chance = self._chance(LID_KEYS)
        if chance is not None:
            block["chance"] = chance
        block.update(self.lid_display_range())
        return block

    def lid_display_range(self) -> dict[str, Any]:
        """The LID block's display range and the numbers beyond it (raw in the JSON).

        ``display_range`` is [-64 bits, log2 N]: displays and exports (tables, report card,
        HTML, PDF, LaTeX, figures) show LID numbers and their chance levels clamped to it;
        the JSON keeps the raw numbers and lists those beyond it in ``beyond_display_range``
        (chance levels as ``chance.<key>``). Empty without LID.
        """
        if self.lid is None:
            return {}
        n = self.lid.n_enrolled
        values: dict[str, float | None] = {
            k: getattr(self.lid, k) for k in ("alid", "lid_plus", "lid_minus", "lid_max")
        }
        if self.replicates is not None:
            values["lid_q95"] = self.replicates.estimates.get("lid_q95")
        beyond = beyond_display_range(values, n)
        beyond += [f"chance.{k}" for k in beyond_display_range(self._chance(LID_KEYS) or {}, n)]
        return {
            "display_range": [LID_DISPLAY_FLOOR, self.lid.ceiling],
            "beyond_display_range": beyond,
        }

    def top_intervals(self) -> dict[str, Any] | None:
        """The top-level ``intervals``: the baselines, linkability and its band against N'."""
        if self.replicates is None:
            return None
        iv = self.intervals
        # a sparse trial list without complete trials: the 1-to-N ones are null, as their values
        out: dict[str, Any] = {k: [iv[k].low, iv[k].high] if k in iv else None for k in TOP_KEYS}
        out["linkability_vs_n"] = (
            [[int(n), float(lo), float(hi)] for n, lo, hi in self.replicates.curve_band()]
            if self.replicates.curve_n.size
            else None
        )
        so = self.singling_out_interval
        if so is not None:
            out["singling_out"] = [so.low, so.high]
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

    def tar_at_far_block(self) -> dict[str, float] | None:
        """The true-accept rate at each low FAR, ``{"0.01": tar, ...}`` (None: not asked for)."""
        v = self.verification
        if v is None or v.tar_at_far is None:
            return None
        return v.tar_at_far.to_dict()

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
            "tar_at_far": self.tar_at_far_block(),
            "ties": self.ties,
            "linkability_rule": self.linkability_rule,
            "trials_used": None if self.trials_used is None else self.trials_used.to_dict(),
            "intervals": self.top_intervals(),
            "chance": self.top_chance(),
            "utility": None if self.utility is None else self.utility.to_dict(),
        }
        if self.recipe is not None:  # the attacker these numbers hold against
            out["attacker"] = self.recipe.to_dict()
        if self.input_warnings:  # a broken file evaluated on its listed pairs only, as asked
            out["input_warnings"] = list(self.input_warnings)
        if self.parts != ALL_PARTS:  # some parts only: say which (their numbers, the others null)
            out["parts"] = list(subset_parts(self.parts))
        if self.by is not None:
            out["by"] = {
                attr: {value: r.to_dict() for value, r in reports.items()}
                for attr, reports in self.by.items()
            }
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)


def _interval_lists(ivs: Mapping[str, BootstrapInterval]) -> dict[str, list[float | None]]:
    return {k: [iv.low, iv.high] for k, iv in ivs.items()}
