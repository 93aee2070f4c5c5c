"""Paired comparisons of two conditions sharing speakers: every headline number, B - A.

:func:`compare_conditions` draws one set of speaker-level replicate weights and applies it to
both conditions (identity numbers, LID, SBLS, singling out, DeID and G_VD), so each
difference carries a percentile interval and a bootstrap p-value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from voxmetrics._types import DEFAULT_LID_VARIANT, Progress
from voxmetrics.analysis.anonymisers import voice_sources
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.engine import evaluate, replicate_condition
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.steps import singling_out_of
from voxmetrics.metrics.embedding_intervals import similarity_replicates, singling_out_replicates
from voxmetrics.metrics.legal import LinkabilityRule, SinglingOutResult
from voxmetrics.metrics.paired import Comparison, compare_replicates
from voxmetrics.metrics.pools import Ties, check_ties
from voxmetrics.metrics.similarity import (
    Calibration,
    SimilarityMatrix,
    SimilarityResult,
    voice_similarity,
)
from voxmetrics.metrics.uncertainty import ConditionReplicates, SpeakerDraws

if TYPE_CHECKING:
    from voxmetrics.analysis.sbls import Attack

__all__ = [
    "LINKAGE_COMPARE_KEYS",
    "SIMILARITY_MAX_UTTERANCES",
    "LinkageInputs",
    "compare_conditions",
    "compare_conditions_sbls",
    "compare_linkage",
    "linkage_inputs",
    "voice_conditions",
]


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
    voices: Condition | None = None,
) -> LinkageInputs:
    """Singling out and the voice similarity (against ``original``) of one condition.

    ``voices`` is the condition whose embeddings are the anonymised voices of DeID and G_VD:
    by default the condition itself; the condition of its anonymiser that
    :func:`voxmetrics.analysis.anonymisers.voice_sources` picks, so that every attacker
    set-up of one anonymiser shares its DeID and G_VD.

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
        singled = singling_out_of(condition.embeddings, split)
    if singled is None or singled.per_predicate is None:
        singled = None
        reasons["singling_out"] = f"singling out could not be computed for {condition.name}"
    similarity = None
    voices = condition if voices is None else voices
    if original is None:
        why = (
            "no original voices chosen: DeID and G_VD compare each condition's voices with "
            "the unprocessed ones (give the condition that holds them)"
        )
    elif original.embeddings is None:
        why = f"the original voices, {original.name}, have no utterance embeddings"
    elif voices.embeddings is None:
        why = f"the anonymised voices, {voices.name}, have no utterance embeddings"
    elif max_utterances is not None and _largest_set(original, voices, split) > max_utterances:
        size = _largest_set(original, voices, split)
        why = (
            f"{size:,} utterances in a set, more than the {max_utterances:,} whose every pair "
            "is compared here; run `python -m voxmetrics similarity` for DeID and G_VD"
        )
    else:
        why = ""
        try:
            similarity = voice_similarity(
                original.embeddings,
                voices.embeddings,
                split=split,
                calibration=calibration,
                cache=similarity_cache,
            )
        except VoxMetricsInputError as exc:
            why = f"no voice similarity of {voices.name} against {original.name}: {exc}"
    if similarity is None:
        reasons.update(deid=why, g_vd=why)
    return LinkageInputs(singled, similarity, reasons)


def voice_conditions(study: Study) -> dict[str, Condition]:
    """Each condition's anonymiser's voices: the condition whose embeddings stand for them.

    :func:`voxmetrics.analysis.anonymisers.voice_sources` of the study's conditions, as
    conditions (those whose anonymiser has no embeddings are left out); pass them as
    :func:`linkage_inputs`' and :func:`compare_conditions`' ``voices``.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> voice_conditions(demo_study(n_speakers=4))["anon-mild"].name
    'anon-mild'
    """
    conds = study.conditions
    sources = voice_sources((c.name, c.attacker, c.embeddings is not None) for c in conds)
    return {n: study.get(v) for n, v in sources.items() if v is not None}


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
    lid_variant: str = DEFAULT_LID_VARIANT,
    ties: Ties = "reference",
    original: Condition | None = None,
    calibration: Calibration = "pav",
    sbls: bool = True,
    linkability_rule: LinkabilityRule = "code",
    reports: tuple[ConditionReport, ConditionReport] | None = None,
    attacks: tuple[Attack | None, Attack | None] | None = None,
    progress: Progress | None = None,
    voices: tuple[Condition | None, Condition | None] | None = None,
) -> dict[str, Comparison]:
    """Paired comparison B - A of every headline number of two conditions sharing speakers.

    The same speaker-level replicate weights (drawn over the union of both conditions' trial
    speakers) are applied to both, so each difference carries a percentile interval and a
    two-sided bootstrap p-value; ``p_adjusted`` is Holm's adjustment over all numbers compared
    (family-wise error control). LID numbers are compared when both conditions have LID
    (calibrated as :func:`evaluate` does, with ``cross_calibrate`` and ``lid_variant``);
    linkability and its curve follow ``linkability_rule`` ("code" or "strict", as
    :func:`evaluate`). With ``sbls`` (default) and embeddings with attribute labels in both
    conditions, SBLS and its components are compared too (:func:`compare_conditions_sbls`;
    their Holm family is their own four numbers, so they leave the identity numbers'
    adjustment as it was).

    Singling out, DeID and G_VD (:data:`LINKAGE_COMPARE_KEYS`) are always in the result: with
    utterance embeddings, resampled with the same weights (a drawn speaker brings its
    predicate and its rows and columns of the similarity matrices, which are held fixed, as in
    :func:`~voxmetrics.metrics.embedding_intervals.similarity_intervals`); without, null with a
    ``reason``; their Holm family is their own three numbers (:func:`compare_linkage`). DeID
    and G_VD need ``original``, the condition holding the unprocessed voices (``calibration``
    is :func:`~voxmetrics.metrics.similarity.voice_similarity`'s).

    ``reports`` are the two conditions' :func:`~voxmetrics.evaluation.evaluate_condition`
    reports when already computed, with the same ``seed``, ``cross_calibrate``,
    ``lid_variant``, ``ties`` and ``linkability_rule``: their LID, baseline and singling out
    are taken instead of computed again, and so are their bootstrap replicates when the
    comparison draws the same replicates (the same speakers, ``n_boot`` and ``seed``); the
    numbers are the same. ``voices`` are the conditions whose embeddings are A's and B's
    anonymised voices for DeID and G_VD (default: A and B; the conditions
    :func:`voxmetrics.analysis.anonymisers.voice_sources` picks share them across the attacker
    set-ups of one anonymiser). ``attacks`` are the two conditions' default SBLS attacks
    (:func:`~voxmetrics.analysis.sbls.default_attack`) when already trained. ``progress``, if
    given, is called with (fraction done, message) between the steps.

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
    spk_a = set(map(str, a.eval.all_trial_speakers))
    spk_b = set(map(str, b.eval.all_trial_speakers))
    if not spk_a & spk_b:
        raise VoxMetricsInputError(
            f"conditions {a.name!r} and {b.name!r} share no trial speaker; a paired comparison "
            "needs the same speakers in both (two anonymisers or two attackers on one set)."
        )
    given: tuple[ConditionReport | None, ConditionReport | None] = reports or (None, None)
    step = progress or (lambda fraction, message: None)
    cache: dict[Any, SimilarityMatrix] = {}
    links = []
    sources = voices or (None, None)
    for k, (cond, report) in enumerate(zip((a, b), given, strict=True)):
        step(0.5 * k, f"singling out and voice similarity of {cond.name}")
        links.append(
            linkage_inputs(
                cond,
                original,
                singled=None if report is None else report.singling_out,
                calibration=calibration,
                similarity_cache=cache,
                voices=sources[k],
            )
        )
    speakers = spk_a | spk_b | links[0].speakers | links[1].speakers
    draws = SpeakerDraws.draw(sorted(speakers), n_boot=n_boot, seed=seed)
    step(0.9, "paired bootstrap")
    reps = [
        _replicates(cond, report, draws, cross_calibrate, lid_variant, ties, linkability_rule)
        for cond, report in zip((a, b), given, strict=True)
    ]
    out = compare_replicates(reps[0], reps[1], confidence=confidence)
    out.update(compare_linkage(links[0], links[1], draws, confidence=confidence))
    if sbls:
        step(0.95, "soft-biometric leakage")
        out.update(compare_conditions_sbls(a, b, draws, confidence=confidence, attacks=attacks))
    step(1.0, "done")
    return out


def _replicates(
    cond: Condition,
    report: ConditionReport | None,
    draws: SpeakerDraws,
    cross_calibrate: int | None,
    lid_variant: str,
    ties: Ties,
    linkability_rule: LinkabilityRule,
) -> ConditionReplicates:
    """Every headline number of ``cond`` under ``draws``: its report's when that has them.

    A report's own replicates are the comparison's when it was bootstrapped with ``draws``
    (the same distinct trial speakers, replicates and seed), under the same rules.
    """
    if report is not None and report.replicates is not None:
        own = report.replicates
        trial_speakers = np.unique(np.asarray(cond.eval.all_trial_speakers).astype(str))
        sizes = {int(r.size) for r in own.reps.values()}
        if (
            report.ties == ties
            and report.linkability_rule == linkability_rule
            and sizes == {draws.n_boot}
            and np.array_equal(draws.speakers, trial_speakers)
        ):
            return own
    if report is None:  # its LID and baselines, as the engine computes them
        report = evaluate(
            cond.eval,
            dev=cond.dev,
            parts=("pairwise", "lid"),
            cross_calibrate=cross_calibrate,
            lid_variant=lid_variant,
            seed=draws.seed,
            ties=ties,
        )
    lid_result, base = report.lid, report.baseline
    return replicate_condition(
        cond.eval, draws, lid_result, base, ties=ties, linkability_rule=linkability_rule
    )


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
    a: Condition,
    b: Condition,
    draws: SpeakerDraws,
    *,
    confidence: float = 0.95,
    attacks: tuple[Attack | None, Attack | None] | None = None,
) -> dict[str, Comparison]:
    """The SBLS part of :func:`compare_conditions`, paired on ``draws``.

    ``sbls``, ``p_attr``, ``p_assoc`` and ``p_subgroup`` under the default attacker (empty
    when either condition has no SBLS).
    The attackers are trained once; each replicate reweights the eval utterances by their
    speakers' draws (:func:`voxmetrics.analysis.sbls.compare_sbls`). When the attacked
    speakers are not all among ``draws``' speakers, both attacks share new draws over the
    union of their speakers (same seed). ``p_adjusted`` is Holm's adjustment over these four
    numbers, their own family. ``attacks`` are the two default attacks when already trained.
    """
    from voxmetrics.analysis.sbls import compare_sbls, default_attack

    attack_a, attack_b = attacks if attacks is not None else (default_attack(a), default_attack(b))
    if attack_a is None or attack_b is None:
        return {}
    spk = {str(s) for s in (*attack_a.speakers, *attack_b.speakers)}
    if not spk <= set(map(str, draws.speakers)):
        draws = SpeakerDraws.draw(sorted(spk), n_boot=draws.n_boot, seed=draws.seed)
    return compare_sbls(attack_a, attack_b, draws, confidence=confidence)
