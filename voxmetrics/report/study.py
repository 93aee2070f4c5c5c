"""Everything a study's report holds, computed once: the input of every export.

:func:`build_study_report` evaluates every condition with the study's settings, the SBLS of
the conditions with attribute-labelled embeddings, the report card and the threat call-outs
(each judging the strongest attacker tried on a system, :mod:`voxmetrics.analysis.strongest`).
:meth:`StudyReport.to_dict` is the JSON of every number; :meth:`StudyReport.tables` the CSVs.
The HTML page is drawn by :func:`voxmetrics.report.html.study_report_html`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from voxmetrics._types import Progress
from voxmetrics._version import __version__
from voxmetrics.analysis.anonymisers import anonymiser_of, voice_sources
from voxmetrics.analysis.exposure import ExposedSpeakers
from voxmetrics.analysis.lid import lid_trials
from voxmetrics.analysis.ranking import (
    RANKING_ATTACKER,
    RankingReplicates,
    UtilityCallout,
    VoicePrivacyRanking,
    report_callouts,
    report_ranking,
)
from voxmetrics.analysis.sbls import (
    Attack,
    SBLSOptions,
    attack_sbls,
    compare_sbls,
    default_attack,
    sbls_intervals,
)
from voxmetrics.analysis.strongest import StrongestAttackers, strongest_attackers
from voxmetrics.analysis.tradeoff import Tradeoff, has_utility, reference_condition, report_tradeoff
from voxmetrics.analysis.vpc import challenge_group_eers
from voxmetrics.data.provenance import InputFile, attacker_record, library_versions
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError, warnings_of
from voxmetrics.evaluation.card import ReportCard, report_card
from voxmetrics.evaluation.compare import LinkageInputs, compare_linkage, linkage_inputs
from voxmetrics.evaluation.engine import evaluate_condition, replicate_condition
from voxmetrics.evaluation.one_to_n import one_to_n_lists
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.evaluation.stability import ranking_replicates
from voxmetrics.evaluation.threat import Callout, study_exposure, threat_callouts
from voxmetrics.limits import check_count
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.embedding_intervals import similarity_intervals
from voxmetrics.metrics.paired import Comparison, compare_replicates
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools, check_ties
from voxmetrics.metrics.sbls import SBLSResult
from voxmetrics.metrics.similarity import SimilarityMatrix, VoiceDistinctiveness
from voxmetrics.metrics.uncertainty import SpeakerDraws
from voxmetrics.metrics.zebra import ECECurves, ece_curves_from_pools
from voxmetrics.report.frames import (
    OVERVIEW_COLUMNS,
    callouts_frame,
    intervals_frame,
    overview_frame,
    verification_frame,
)

__all__ = ["StudyReport", "build_study_report", "report_provenance"]

_LID_PER_TRIAL = ["condition", "trial_id", "speaker", "lid_bits", "p_target", "rank"]
"""Columns of the report's lid_per_trial.csv: :func:`~voxmetrics.analysis.lid.lid_trials`'s
with the condition first and the report's SRD ranks."""


@dataclass(frozen=True)
class StudyReport:
    """The evaluated study: condition reports, SBLS, report card and threat call-outs."""

    study: Study = field(repr=False)
    """The study evaluated."""
    reports: tuple[ConditionReport, ...]
    """One report per condition, in study order."""
    sbls: Mapping[str, SBLSResult | None]
    """SBLS per condition name (None without attribute-labelled embeddings)."""
    card: ReportCard
    """The report card."""
    callouts: tuple[Callout, ...]
    """Conditions that look private on the EER but are not (:mod:`voxmetrics.evaluation.threat`)."""
    created: str
    """When the report was computed (ISO 8601, UTC)."""
    settings: StudySettings = field(default_factory=StudySettings)
    """The settings the report was computed with (the study's, with any overrides)."""
    ece_curves: Mapping[str, ECECurves] = field(default_factory=dict)
    """ECE profiles of every condition's eval pools (ZEBRA figure), by condition name."""
    comparisons: Mapping[str, Mapping[str, Comparison]] = field(default_factory=dict)
    """Paired comparisons of every condition against :attr:`reference` ("B vs A" keys), when
    bootstrapped and sharing trial speakers with it (SBLS and its components included when
    both have an SBLS)."""
    reference: str | None = None
    """The condition every other one is compared against (A; the first unless chosen)."""
    original: str | None = None
    """The condition whose voices are the original ones for DeID and G_VD (the first, unless
    chosen)."""
    linkage: Mapping[str, LinkageInputs] = field(default_factory=dict, repr=False)
    """Singling out and voice similarity against :attr:`original` of every condition (with
    the reasons for what is missing)."""
    similarity_intervals: Mapping[str, Mapping[str, BootstrapInterval]] = field(
        default_factory=dict, repr=False
    )
    """Speaker-level intervals of DeID and G_VD (and the D_diag) of every condition with voice
    similarity, when bootstrapped."""
    sbls_intervals: Mapping[str, Mapping[str, BootstrapInterval]] = field(default_factory=dict)
    """Speaker-level bootstrap intervals of SBLS, P_attr, P_assoc and P_subgroup per
    condition name (when bootstrapped and the condition has an SBLS)."""
    notes: tuple[str, ...] = ()
    """The warnings raised evaluating the conditions, each once, each starting with its
    condition's name (e.g. "plain: the beta-binomial CLL fit did not converge ...")."""
    ranking_replicates: RankingReplicates | None = field(default=None, repr=False)
    """The ranked systems' EER, WER and UAR in paired bootstrap replicates (None without a
    bootstrap): how firm the ranking is."""
    exposure: ExposedSpeakers | None = field(default=None, repr=False)
    """The speakers ranked by how many conditions leave them exposed."""
    voice_sources: Mapping[str, str | None] = field(default_factory=dict)
    """Condition -> the condition whose embeddings are its anonymiser's voices (DeID, G_VD
    are the anonymiser's, shared by its attacker set-ups)."""
    provenance: Mapping[str, Any] = field(default_factory=dict)
    """What the numbers came from: versions, input fingerprints, settings, seed, attackers."""
    attackers: StrongestAttackers = field(default_factory=lambda: StrongestAttackers(()))
    """Which attacker each system is judged against: the strongest tried when a study holds
    several of one system and knowledge level (the card, the call-outs and the ranking judge
    it), with the weak-attacker warnings."""

    def similarity_values(self) -> dict[str, dict[str, BootstrapInterval]]:
        """DeID and G_VD of every condition with voice similarity, as intervals.

        Their ``estimate`` is the value; without a bootstrap ``low`` and ``high`` are None.
        The input of :func:`~voxmetrics.report.frames.intervals_frame`'s ``similarity``.
        """
        out = {}
        for name, li in self.linkage.items():
            if li.similarity is None:
                continue
            ivs = self.similarity_intervals.get(name) or {}
            out[name] = {
                k: ivs.get(k) or BootstrapInterval(li.estimates[k], None, None, 0.95, 0, 0)
                for k in ("deid", "g_vd")
            }
        return out

    def distinctiveness(
        self,
    ) -> tuple[dict[str, VoiceDistinctiveness], dict[str, Mapping[str, BootstrapInterval]]]:
        """DeID and G_VD of every condition with voice similarity, and their intervals.

        The ``distinctiveness`` and ``distinctiveness_intervals`` of
        :func:`~voxmetrics.analysis.linkage.linkage_table`.
        """
        values = {
            n: li.similarity.distinctiveness
            for n, li in self.linkage.items()
            if li.similarity is not None
        }
        return values, dict(self.similarity_intervals)

    def intervals(self) -> pd.DataFrame:
        """Every number of every condition with its interval and chance: the report's table.

        :func:`~voxmetrics.report.frames.intervals_frame` of the reports, with DeID and
        G_VD against :attr:`original`.
        """
        return intervals_frame(self.reports, similarity=self.similarity_values())

    def voice_similarity(self) -> dict[str, Any]:
        """The JSON's ``voice_similarity``: DeID and G_VD per anonymiser and per condition.

        ``anonymisers`` holds one value per anonymiser (shared by its attacker set-ups, from
        the embeddings of the condition named in ``voices_from``), ``conditions`` each
        condition's, with why when it has none.
        """
        return self._similarity_dict()

    def _similarity_dict(self) -> dict[str, Any]:
        conditions: dict[str, dict[str, Any]] = {}
        anonymisers: dict[str, dict[str, Any]] = {}
        for r in self.reports:
            li = self.linkage.get(r.name)
            who = {
                "anonymiser": anonymiser_of(r.name, r.attacker),
                "voices_from": self.voice_sources.get(r.name, r.name),
            }
            if li is None or li.similarity is None:
                why = None if li is None else li.reasons.get("deid")
                conditions[r.name] = {"deid": None, "g_vd": None, "reason": why, **who}
                continue
            ivs = self.similarity_intervals.get(r.name)
            conditions[r.name] = {
                **li.similarity.to_dict(),
                "intervals": None
                if ivs is None
                else {k: [iv.low, iv.high] for k, iv in ivs.items()},
                "reason": None,
                **who,
            }
            if r.attacker == "original":  # the original speech is no anonymiser
                continue
            entry = anonymisers.setdefault(
                anonymiser_of(r.name, r.attacker),
                {
                    "deid": conditions[r.name]["deid"],
                    "g_vd": conditions[r.name]["g_vd"],
                    "intervals": conditions[r.name]["intervals"],
                    "voices_from": who["voices_from"],
                    "conditions": [],
                },
            )
            entry["conditions"].append(r.name)
        return {
            "original": self.original,
            "rule": "DeID and G_VD describe the anonymiser: one value per anonymiser, from the "
            "embeddings of the condition named in voices_from, shared by its attacker set-ups",
            "anonymisers": anonymisers,
            "conditions": conditions,
        }

    def sbls_block(self, name: str) -> dict[str, Any] | None:
        """The ``sbls`` object of a condition in the JSON, with ``intervals`` when bootstrapped."""
        result = self.sbls.get(name)
        if result is None:
            return None
        block = result.to_dict()
        ivs = self.sbls_intervals.get(name)
        if ivs:
            block["intervals"] = {k: [iv.low, iv.high] for k, iv in ivs.items()}
        return block

    @property
    def utility_reference(self) -> str | None:
        """The original speech of the privacy-utility view.

        The first condition under attacker ``original``, else :attr:`original`.
        """
        return reference_condition(self.reports, self.original)

    @property
    def has_utility(self) -> bool:
        """Whether any condition has a utility number (WER, UAR or rho_F0)."""
        return has_utility(self.reports)

    def tradeoff(self, privacy: str = "eer", utility: str = "wer") -> Tradeoff:
        """``privacy`` against ``utility`` for every condition, with the Pareto front.

        See :func:`voxmetrics.analysis.tradeoff.privacy_utility_tradeoff`; SBLS comes from
        :attr:`sbls`, the original speech is :attr:`utility_reference`.
        """
        sbls = {k: (v.sbls if v is not None else None) for k, v in self.sbls.items()}
        ivs = {k: v.get("sbls") for k, v in self.sbls_intervals.items()}
        return report_tradeoff(
            self.reports,
            privacy=privacy,
            utility=utility,
            reference=self.utility_reference,
            sbls=sbls,
            sbls_intervals=ivs,
        )

    def ranking(self) -> VoicePrivacyRanking:
        """VoicePrivacy 2024's ranking by EER bands, with how firm each entry is.

        :func:`voxmetrics.analysis.ranking.voiceprivacy_ranking` of the reports, a VoicePrivacy
        tree's conditions banded on the EERs of the lists the challenge prints
        (:func:`voxmetrics.analysis.vpc.challenge_group_eers`), with the paired bootstrap
        replicates of :attr:`ranking_replicates` when bootstrapped.
        """
        return report_ranking(
            self.reports,
            reference=self.utility_reference,
            replicates=self.ranking_replicates,
            group_eers=self.group_eers,
            attackers=self.attackers,
        )

    @cached_property
    def group_eers(self) -> dict[str, dict[str, float]]:
        """The EER of each trial list the challenge prints, by condition (VoicePrivacy trees)."""
        return challenge_group_eers(self.study)

    def utility_callouts(self) -> list[UtilityCallout]:
        """Ranked systems that clear an EER band but still leak.

        :func:`voxmetrics.analysis.ranking.utility_callouts` of the reports.
        """
        return report_callouts(
            self.reports,
            reference=self.utility_reference,
            group_eers=self.group_eers,
            attackers=self.attackers,
        )

    @property
    def front_attacker(self) -> str | None:
        """The attacker whose front the report shows first: the ranking's when present."""
        attackers = self.tradeoff("eer", "wer").attackers
        if not attackers:
            return None
        return RANKING_ATTACKER if RANKING_ATTACKER in attackers else attackers[0]

    def _utility_dict(self) -> dict[str, Any]:
        return {
            "reference": self.utility_reference,
            "attackers": self.tradeoff("eer", "wer").attackers,
            "front_attacker": self.front_attacker,
            "eer_vs_wer": self.tradeoff("eer", "wer").to_dict(),
            "eer_vs_uar": self.tradeoff("eer", "uar").to_dict(),
            "ranking": self.ranking().to_dict(),
            "callouts": [c.to_dict() for c in self.utility_callouts()],
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON of every number of the report."""
        return {
            "voxmetrics": __version__,
            "created": self.created,
            "study": self.study.name,
            "settings": self.settings.to_dict(),
            "conditions": {
                r.name: {
                    "attacker": r.attacker,
                    "description": self.study.get(r.name).description,
                    **r.to_dict(),
                    "sbls": self.sbls_block(r.name),
                }
                for r in self.reports
            },
            "report_card": self.card.to_dict(),
            "attackers": self.attackers.to_dict(),
            "threat_callouts": [c.to_dict() for c in self.callouts],
            "voice_similarity": self._similarity_dict(),
            "privacy_vs_utility": self._utility_dict(),
            "comparisons": {
                pair: {k: c.to_dict() for k, c in comp.items()}
                for pair, comp in self.comparisons.items()
            },
            "comparison_reference": self.reference,
            "exposed_speakers": None if self.exposure is None else self.exposure.to_dict(),
            "provenance": dict(self.provenance),
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """The report's tables by CSV file name (overview, card, attackers, worst trials, LID)."""
        out = {
            "overview.csv": overview_frame(self.reports).rename(columns=OVERVIEW_COLUMNS),
            "report_card.csv": self.card.frame("text"),
            "report_card_levels.csv": self.card.frame("level"),
        }
        if self.attackers.choices:  # which attacker each system is judged against
            out["attackers.csv"] = self.attackers.frame()
        worst = [c.worst_trials.assign(condition=c.condition) for c in self.callouts]
        if worst:
            frame = pd.concat(worst, ignore_index=True)
            out["callout_worst_trials.csv"] = frame[["condition", *frame.columns[:-1]]]
        lid_rows = []
        for r in self.reports:
            if r.lid is not None:
                lists = one_to_n_lists(self.study.get(r.name).eval)  # LID's trials
                ranks = None if r.srd is None else r.srd.ranks
                trials = lid_trials(lists, r.lid, ranks=ranks)
                lid_rows.append(trials.assign(condition=r.name)[_LID_PER_TRIAL])
        if lid_rows:
            out["lid_per_trial.csv"] = pd.concat(lid_rows, ignore_index=True)
        verif = {r.name: r.verification for r in self.reports if r.verification is not None}
        if verif:
            eer = {r.name: r.baseline.eer for r in self.reports}
            out["verification.csv"] = verification_frame(verif, eer=eer)
        if self.has_utility:
            out["privacy_vs_utility.csv"] = self.tradeoff_frame()
            out["voiceprivacy_ranking.csv"] = self.ranking().frame(stability=True)
            out["utility_callouts.csv"] = callouts_frame(self.utility_callouts())
        return out

    def verdict_tables(self) -> dict[str, pd.DataFrame]:
        """The tables of how firm the verdicts are and of who stays exposed, by CSV file name.

        ``report_card_stability.csv`` (the share of replicates keeping each card cell's level,
        with a bootstrap), ``voiceprivacy_stability.csv`` and ``voiceprivacy_bands.csv`` (each
        ranked system's P(in band), rank interval and P(rank 1); every system's P of entering
        each band), ``exposed_speakers.csv`` (the speakers, most exposed first).
        """
        out = {}
        if self.settings.bootstrap:
            out["report_card_stability.csv"] = self.card.frame("stability")
        if self.has_utility and self.ranking_replicates is not None:
            ranking = self.ranking()
            out["voiceprivacy_stability.csv"] = ranking.stability_frame()
            out["voiceprivacy_bands.csv"] = ranking.band_frame()
        if self.exposure is not None and self.exposure.conditions:
            out["exposed_speakers.csv"] = self.exposure.frame()
        return out

    def all_tables(self) -> dict[str, pd.DataFrame]:
        """:meth:`tables` and :meth:`verdict_tables`: every CSV of the report."""
        return {**self.tables(), **self.verdict_tables()}

    def tradeoff_frame(self) -> pd.DataFrame:
        """Every privacy number beside every utility number, one row per condition."""
        base = self.tradeoff("eer", "wer").frame()
        for privacy in ("eer_rocch", "lid_max", "alid", "linkability", "d_ece", "sbls"):
            t = self.tradeoff(privacy, "wer").frame()
            base[t.columns[2]] = t[t.columns[2]]
        for utility in ("uar", "rho_f0"):
            t = self.tradeoff("eer", utility).frame()
            base[t.columns[5]] = t[t.columns[5]]
        return base.drop(columns="On the Pareto front")


@single_blas_thread()
def build_study_report(
    study: Study,
    *,
    progress: Progress | None = None,
    original: str | None = None,
    reference: str | None = None,
    evaluator: Callable[..., ConditionReport] = evaluate_condition,
    attack_of: Callable[[Condition], Attack | None] = default_attack,
    inputs: Sequence[InputFile] = (),
    subset: str | None = None,
    **options: Any,
) -> StudyReport:
    """Evaluate ``study`` for its report, with ``progress(fraction, message)`` per condition.

    ``options`` override the study's settings (see :func:`voxmetrics.evaluation.evaluate_study`).
    ``original`` names the condition holding the unprocessed voices, against which DeID and
    G_VD are measured (default: the first condition). ``reference`` names the condition every
    other one is compared against (A of each paired comparison; default: the first).
    ``evaluator(condition, **options)`` gives each condition's report and ``attack_of(condition)``
    the attack its SBLS is computed from: by default
    :func:`~voxmetrics.evaluation.engine.evaluate_condition` and
    :func:`~voxmetrics.analysis.sbls.default_attack`; a cache of them (the dashboard's, shared
    by its pages) gives the same report without computing a condition twice. ``inputs`` are
    the files the report reads besides the study's own (e.g. its ``.vxm`` file), recorded in
    its provenance with the files the study was built from; ``subset`` (``"ATTR=VALUE"``) says
    which subset of a study file ``study`` is, recorded there too.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> sr = build_study_report(demo_study(n_speakers=8), bootstrap=0)
    >>> sorted(sr.to_dict())[:4], len(sr.reports)
    (['attackers', 'comparison_reference', 'comparisons', 'conditions'], 5)
    """
    if len(study) == 0:
        raise VoxMetricsInputError("the study has no conditions to report on; add one first.")
    check_count("the study", "conditions", len(study), "max_conditions")
    opts = {**study.settings.evaluate_options(), **options}
    check_count("the study's bootstrap", "replicates", opts.get("bootstrap") or 0, "max_replicates")
    known = {f.name for f in dataclasses.fields(StudySettings)}
    settings = dataclasses.replace(
        study.settings, **{k: v for k, v in options.items() if k in known}
    )
    if original is None:
        original = study.conditions[0].name
    if reference is None:
        reference = study.conditions[0].name
    for role, name in (("original", original), ("reference", reference)):
        if name not in study.names:
            raise VoxMetricsInputError(
                f"{role} {name!r}: no such condition; the study's conditions are "
                f"{', '.join(study.names)}."
            )
    reports, sbls, curves, attacks, sbls_ivs = [], {}, {}, {}, {}
    notes: list[str] = []  # the warnings of the conditions, each naming its condition
    n = len(study)
    n_boot, seed = int(opts.get("bootstrap") or 0), int(opts.get("seed") or 0)
    for k, cond in enumerate(study.conditions):
        if progress is not None:
            progress(0.8 * k / n, f"Evaluating {cond.name}")
        with warnings_of(cond.name, into=notes):  # each warning names its condition
            report = evaluator(cond, **opts)
            if cond.input_warnings and not report.input_warnings:  # a cached evaluator's
                report = dataclasses.replace(report, input_warnings=cond.input_warnings)
            reports.append(report)
            # the SBLS of the page and the sbls command: the default attacker, its intervals
            attack = attack_of(cond)
            sbls[cond.name] = None if attack is None else attack_sbls(attack)
            if attack is not None:
                attacks[cond.name] = attack
                if n_boot > 0:
                    sbls_ivs[cond.name] = sbls_intervals(
                        attack, SBLSOptions(), n_boot=n_boot, seed=seed, result=sbls[cond.name]
                    )
        curves[cond.name] = ece_curves_from_pools(
            SortedPools.of(cond.eval.pairwise_view()), ties=opts.get("ties") or "reference"
        )
    scores = {k: (v.sbls if v is not None else None) for k, v in sbls.items()}
    attackers = strongest_attackers(study.conditions)  # the verdicts judge the strongest
    linkage, sim_ci, sources = _anonymiser_linkage(
        study, reports, original, n_boot=n_boot, seed=seed, progress=progress
    )
    if progress is not None:
        progress(0.95, "Paired comparisons")
    comparisons = _comparisons(study, reports, opts, linkage, attacks, reference=reference)
    replicates = ranking_replicates(
        study,
        reports,
        exclude=[reference_condition(reports, original) or ""],
        attacker=RANKING_ATTACKER,
        n_boot=n_boot,
        seed=seed,
        ties=opts.get("ties") or "reference",
        linkability_rule=opts.get("linkability_rule") or "code",
    )
    exposure = study_exposure(
        study, reports, exclude=[reference_condition(reports, original) or original]
    )
    if progress is not None:
        progress(1.0, "Done")
    return StudyReport(
        study=study,
        reports=tuple(reports),
        sbls=sbls,
        card=report_card(
            reports,
            sbls=scores,
            sbls_intervals={n: iv["sbls"] for n, iv in sbls_ivs.items()},
            attackers=attackers,
        ),
        callouts=tuple(threat_callouts(study, reports, attackers=attackers)),
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        settings=settings,
        ece_curves=curves,
        comparisons=comparisons,
        original=original,
        reference=reference,
        linkage=linkage,
        similarity_intervals=sim_ci,
        sbls_intervals=sbls_ivs,
        notes=tuple(notes),
        ranking_replicates=replicates,
        exposure=exposure,
        voice_sources=sources,
        attackers=attackers,
        provenance=report_provenance(
            study,
            settings,
            inputs=inputs,
            options={
                "original": original,
                "reference": reference,
                "by": opts.get("by"),
                "subset": subset,
            },
        ),
    )


def _anonymiser_linkage(
    study: Study,
    reports: list[ConditionReport],
    original: str,
    *,
    n_boot: int,
    seed: int,
    progress: Progress | None,
) -> tuple[
    dict[str, LinkageInputs],
    dict[str, dict[str, BootstrapInterval]],
    dict[str, str | None],
]:
    """Each condition's singling out and its anonymiser's voice similarity, and the sources.

    DeID and G_VD describe the anonymiser: every attacker set-up of one anonymiser shares the
    similarity of the condition :func:`~voxmetrics.analysis.anonymisers.voice_sources` picks
    (computed once, with its interval); the original voices are their own source.
    """
    sources = voice_sources(
        (c.name, c.attacker, c.embeddings is not None) for c in study.conditions
    )
    sources[original] = original
    sim_cache: dict[Any, SimilarityMatrix] = {}  # the original's M_oo once for all conditions
    linkage, sim_ci, by_source = {}, {}, {}
    for k, r in enumerate(reports):  # the voice similarity matrices can take a while
        if progress is not None:
            progress(0.8 + 0.15 * k / len(reports), f"Voice similarity of {r.name}")
        source = sources.get(r.name) or r.name
        linkage[r.name] = linkage_inputs(
            study.get(r.name), study.get(original), singled=r.singling_out,
            similarity_cache=sim_cache, voices=study.get(source),
        )  # fmt: skip
        sim = linkage[r.name].similarity
        if sim is not None and n_boot > 0:
            if source not in by_source:
                by_source[source] = similarity_intervals(sim, n_boot=n_boot, seed=seed)
            sim_ci[r.name] = by_source[source]
    return linkage, sim_ci, sources


def report_provenance(
    study: Study,
    settings: StudySettings,
    *,
    inputs: Sequence[InputFile] = (),
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block of a study report's JSON.

    ``voxmetrics`` and ``libraries`` (the versions that computed it,
    :func:`~voxmetrics.data.provenance.library_versions`), ``inputs`` (``inputs`` given, e.g.
    the ``.vxm`` file, then the files the study was built from: path, size, sha256, role),
    ``study_saved_by`` (the versions that wrote the study file), ``data`` (each condition's
    content digest: its score matrices and embeddings as evaluated), ``settings``, ``seed``,
    ``options`` (the original voices, the comparisons' reference, ``by``) and ``attackers``
    (each condition's attacker: :func:`~voxmetrics.data.provenance.attacker_record`).
    """
    versions = library_versions()
    return {
        "voxmetrics": versions.pop("voxmetrics"),
        "libraries": versions,
        "inputs": [f.to_dict() for f in (*inputs, *study.inputs)],
        "study_saved_by": dict(study.saved_by),
        "data": {c.name: c.content_hash for c in study.conditions},
        "settings": settings.to_dict(),
        "seed": settings.seed,
        "options": dict(options or {}),
        "attackers": {c.name: attacker_record(c) for c in study.conditions},
    }


def _comparisons(
    study: Study,
    reports: list[ConditionReport],
    opts: Mapping[str, Any],
    linkage: Mapping[str, LinkageInputs],
    attacks: Mapping[str, Attack] | None = None,
    *,
    reference: str | None = None,
) -> dict[str, dict[str, Comparison]]:
    """Every condition against ``reference`` (default: the first), Holm per pair.

    Pairs are made on the speakers the two conditions share.

    One set of replicate weights over every trial speaker of the study (and every predicate
    and similarity-matrix speaker) serves every pair, as in
    :func:`~voxmetrics.evaluation.compare.compare_conditions`; singling out, DeID and G_VD
    (from ``linkage``) with their own Holm family
    (:func:`~voxmetrics.evaluation.compare.compare_linkage`); SBLS (from ``attacks``, the
    default attacker of each condition) joins a pair when both have one, with its own Holm
    family (:func:`~voxmetrics.analysis.sbls.compare_sbls`).
    """
    n_boot = int(opts.get("bootstrap") or 0)
    if n_boot <= 0 or len(reports) < 2:
        return {}
    speakers = sorted(
        {str(s) for c in study.conditions for s in c.eval.all_trial_speakers}.union(
            *(li.speakers for li in linkage.values())
        )
    )
    draws = SpeakerDraws.draw(speakers, n_boot=n_boot, seed=int(opts.get("seed") or 0))
    ties = check_ties(opts.get("ties") or "reference")
    reps = {}
    for r in reports:
        cond = study.get(r.name)
        if not cond.eval.is_complete:
            # a sparse trial list: the joint replicates need a complete T x N matrix (see
            # evaluate), so a sparse condition is left out of the paired comparisons
            continue
        own = {str(s) for s in cond.eval.all_trial_speakers}
        if r.replicates is not None and len(own) == len(speakers):
            # the condition's own draws are the study's: same speakers, replicates and seed
            rep = r.replicates
        else:
            rep = replicate_condition(
                cond.eval,
                draws,
                r.lid,
                r.baseline,
                ties=ties,
                pools=SortedPools.of(cond.eval.pairwise_view()),
                linkability_rule=opts.get("linkability_rule") or "code",
            )
        reps[r.name] = rep
    first = reports[0].name if reference is None else reference
    if first not in reps:
        return {}
    spk_first = set(map(str, study.get(first).eval.all_trial_speakers))
    attacks = attacks or {}
    sbls_draws = draws
    attacked = {str(s) for att in attacks.values() for s in att.speakers}
    if not attacked <= set(speakers):
        sbls_draws = SpeakerDraws.draw(sorted(attacked), n_boot=n_boot, seed=draws.seed)
    out = {}
    sbls_cache: dict[Any, Any] = {}  # the first condition's SBLS numbers once for every pair
    for r in reports:
        if r.name == first:
            continue
        if r.name in reps and spk_first & set(map(str, study.get(r.name).eval.all_trial_speakers)):
            pair = compare_replicates(reps[first], reps[r.name])
            pair.update(compare_linkage(linkage[first], linkage[r.name], draws))
            if first in attacks and r.name in attacks:
                pair.update(
                    compare_sbls(attacks[first], attacks[r.name], sbls_draws, cache=sbls_cache)
                )
            out[f"{r.name} vs {first}"] = pair
    return out
