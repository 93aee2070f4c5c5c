"""Paired bootstrap replicates of a study's ranking numbers: how firm its verdicts are.

What this is: :func:`ranking_replicates` gathers each ranked system's EER, WER and UAR in the
same B replicates, so that VoicePrivacy's ranking can be recomputed replicate by replicate
(:func:`voxmetrics.analysis.ranking.voiceprivacy_ranking`, ``replicates=``). What this is not:
the ranking's rule or its stability arithmetic (the analysis layer), nor a second bootstrap of
the card (each card cell reads its own condition's replicates).

How the replicates are paired. A condition's report draws its trial speakers with
:class:`~voxmetrics.metrics.uncertainty.SpeakerDraws` (``draw(trial speakers, n_boot, seed)``),
so two conditions with the same trial speakers and seed share replicate b. Those replicates are
reused; a condition whose trial speakers differ from the study's is resampled again on one draw
over every ranked condition's trial speakers (same B and seed), so replicate b is one draw of
the speakers for every system. A utility number carries its own replicates, drawn over its own
speakers (LibriSpeech's for the WER, IEMOCAP's for the UAR) independently of the ASV's: its
replicate b is paired with the ASV's replicate b as an independent draw, and the utilities of
two systems are paired replicate by replicate when they were drawn over the same speakers with
the same seed (else independently, which the notes say). A utility known only as a number (a
VoicePrivacy results summary) has no replicates and is taken as fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.analysis.ranking import RankingReplicates, challenge_eer_replicates
from voxmetrics.analysis.tradeoff import REFERENCE_ATTACKER
from voxmetrics.analysis.vpc import challenge_list_views, challenge_lists
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.engine import replicate_condition
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.bootstrap import draws_key
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.uncertainty import SpeakerDraws, condition_replicates

__all__ = ["RANKED_UTILITY", "ranking_replicates"]

RANKED_UTILITY = ("wer", "uar")
"""The utility numbers the ranking reads (WER first, UAR to break ties)."""


def _eer_replicates(
    study: Study,
    reports: Sequence[ConditionReport],
    n_boot: int,
    seed: int,
    options: dict[str, Any],
) -> tuple[dict[str, NDArray[np.float64]], list[str]]:
    """Each system's EER in the study's B replicates, and how they were drawn.

    A system the challenge bands on the mean of its lists' EERs (a VoicePrivacy tree's,
    :func:`~voxmetrics.analysis.vpc.challenge_lists`) gets that mean in each replicate, each
    list's EER rounded as the challenge prints it.
    """
    conds = [study.get(r.name) for r in reports]
    every = sorted({str(s) for c in conds for s in c.eval.all_trial_speakers})
    study_key = draws_key(every, n_boot=n_boot, seed=seed)
    lists = challenge_lists(study)
    draws: SpeakerDraws | None = None
    out: dict[str, NDArray[np.float64]] = {}
    redrawn: list[str] = []
    for r, cond in zip(reports, conds, strict=True):
        own = r.replicates.reps.get("eer") if r.replicates is not None else None
        same = draws_key(cond.eval.all_trial_speakers, n_boot=n_boot, seed=seed) == study_key
        if r.name not in lists and own is not None and own.size == n_boot and same:
            out[r.name] = np.asarray(own, dtype=np.float64)
            continue
        if draws is None:
            draws = SpeakerDraws.draw(every, n_boot=n_boot, seed=seed)
        try:
            if r.name in lists:
                out[r.name] = _banded_replicates(cond.eval, lists[r.name], draws, options)
                continue
            reps = replicate_condition(
                cond.eval, draws, None, r.baseline, families=("pairwise",), **options
            )
        except VoxMetricsInputError:  # no replicate of its EER: the ranking takes it as fixed
            continue
        out[r.name] = np.asarray(reps.reps["eer"], dtype=np.float64)
        redrawn.append(r.name)
    notes = [
        f"EER: {len(every)} trial speakers drawn with replacement, {n_boot} replicates, "
        f"seed {seed}; one draw for every system"
    ]
    banded = [r.name for r in reports if r.name in lists and r.name in out]
    if banded:
        notes.append(
            "the mean of the EERs of the challenge's trial lists in each replicate (each list's "
            "EER rounded to 0.001 %, as the ranking bands the point): " + ", ".join(banded)
        )
    if redrawn:
        notes.append(
            "resampled again on the study's draw (their trial speakers differ from the "
            "others'): " + ", ".join(redrawn)
        )
    return out, notes


def _banded_replicates(
    sm: ScoreMatrix, attribute: str, draws: SpeakerDraws, options: dict[str, Any]
) -> NDArray[np.float64]:
    """(B,) the challenge's banded EER (the mean of its lists' EERs) in each replicate."""
    per_list = []
    for view in challenge_list_views(sm, attribute).values():
        reps = condition_replicates(
            view.scores,
            view.targets,
            view.trial_speakers,
            draws,
            ties=options["ties"],
            pools=SortedPools.of(view),
            mask=view.mask,
            families=("pairwise",),
        )
        per_list.append(np.asarray(reps.reps["eer"], dtype=np.float64))
    return challenge_eer_replicates(np.vstack(per_list))


def _utility_replicates(
    reports: Sequence[ConditionReport],
) -> tuple[dict[str, dict[str, NDArray[np.float64]]], list[str]]:
    """Each system's WER and UAR replicates (where it has them), and how they were drawn."""
    out: dict[str, dict[str, NDArray[np.float64]]] = {}
    notes = []
    for key in RANKED_UTILITY:
        keys, fixed = set(), []
        for r in reports:
            u = r.utility
            if u is None or u.value(key) is None:
                continue
            reps = u.replicates.get(key)
            if reps is None:
                fixed.append(r.name)
                continue
            out.setdefault(r.name, {})[key] = np.asarray(reps, dtype=np.float64)
            keys.add(u.draws.get(key, ""))
        label = key.upper()
        if keys:
            paired = "paired across systems" if len(keys) == 1 else "drawn independently"
            notes.append(
                f"{label}: resampled over its own speakers, independently of the ASV's; {paired}"
            )
        if fixed:
            notes.append(
                f"{label} known only as a number (no replicates), taken as fixed: "
                + ", ".join(fixed)
            )
    return out, notes


def ranking_replicates(
    study: Study,
    reports: Iterable[ConditionReport],
    *,
    n_boot: int,
    seed: int = 0,
    ties: str = "reference",
    linkability_rule: str = "code",
    exclude: Sequence[str] = (),
    attacker: str | None = None,
) -> RankingReplicates | None:
    """Every system's EER, WER and UAR in B paired replicates (module docstring).

    Parameters
    ----------
    study : Study
        The study the reports are of (their trial speakers decide the pairing).
    reports : iterable of ConditionReport
        Its conditions' reports, bootstrapped with ``n_boot`` replicates and ``seed`` (those
        of the original speech are left out).
    n_boot, seed : int
        The study's bootstrap replicates and seed (0 replicates: None).
    ties, linkability_rule : str
        The reports' rules, for a condition resampled again.
    exclude : sequence of str
        Conditions left out (the original speech chosen as the reference).
    attacker : str, optional
        Only the conditions of this attacker (the ranking's); default: every attacker's.

    Returns
    -------
    RankingReplicates or None
        None without a bootstrap. When a utility number has fewer replicates than ``n_boot``
        the first ones of every number are kept.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> s = demo_study(n_speakers=6)
    >>> reps = ranking_replicates(s, evaluate_study(s, bootstrap=20), n_boot=20)
    >>> reps.n_replicates, reps.of("random", "eer").shape, reps.of("random", "wer") is None
    (20, (20,), True)
    """
    if n_boot <= 0:
        return None
    ranked = [
        r
        for r in reports
        if r.attacker != REFERENCE_ATTACKER
        and r.name in study.names
        and r.name not in exclude
        and (attacker is None or r.attacker == attacker)
    ]
    if not ranked:
        return None
    options = {"ties": ties, "linkability_rule": linkability_rule}
    eer, notes = _eer_replicates(study, ranked, n_boot, seed, options)
    utility, more = _utility_replicates(ranked)
    sizes = [n_boot, *(v.size for u in utility.values() for v in u.values())]
    n = min(sizes)
    if n < n_boot:
        more.append(f"the utility has {n} replicates: the first {n} of every number are used")
    values: dict[str, dict[str, NDArray[np.float64]]] = {}
    for r in ranked:
        v = {k: a[:n] for k, a in utility.get(r.name, {}).items()}
        if r.name in eer:
            v["eer"] = eer[r.name][:n]
        values[r.name] = v
    return RankingReplicates(values=values, n_replicates=n, notes=(*notes, *more))
