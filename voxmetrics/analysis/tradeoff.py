"""Privacy against utility: the Pareto front, VoicePrivacy's ranking and the auditors' call-out.

Every condition (one anonymisation system under one attacker) is a point: one privacy number
(EER, ROCCH-EER, LIDmax, ALID, linkability, D_ECE or SBLS) against one utility number (WER, UAR
or ρF0). The numbers of each condition come in as :class:`ConditionNumbers`
(:func:`condition_numbers` reads them off the condition reports; :func:`report_tradeoff`,
:func:`report_ranking` and :func:`report_callouts` take the reports); nothing here computes a
metric.

**Directions.** A higher EER, ROCCH-EER or SBLS is more private; a lower LIDmax, ALID,
linkability or D_ECE is more private (:data:`PRIVACY_METRICS`). A lower WER and a higher UAR or
ρF0 is more useful (:data:`UTILITY_HIGHER_IS_BETTER`).

**Pareto front** (:func:`pareto_front`). A point dominates another when it is at least as
private and at least as useful, and strictly better on one of the two. The front is the set of
points no other point dominates; points with equal numbers do not dominate each other, so both
stay on it. Each attacker's conditions have their own front: a system is never dominated by
itself under a weaker attacker, and the attacker VoicePrivacy ranks on (the semi-informed one)
keeps a front of its own. The original speech (every condition under attacker ``original``,
and a reference condition chosen by name) is drawn for comparison in every attacker's plane and
never on a front: it is not an anonymisation system.

**VoicePrivacy ranking** (:func:`voiceprivacy_ranking`). The VoicePrivacy 2024 evaluation plan
(Tomashenko et al. 2024) ranks systems for four minimum privacy levels: the EER of the
semi-informed attacker (ASV retrained on anonymised speech, the only attacker used for the
ranking) at least 10, 20, 30 and 40 % (:data:`EER_BANDS`). The EER a system is banded on is the
one the challenge prints: each EER rounded to 0.001 % (:data:`EER_DECIMALS`), and, where the
challenge prints one EER per trial list (2024: the female and the male list; 2026 track 2: one
mixed list per language), the mean of those (``group_eers``; :func:`challenge_eer`,
:func:`in_band`). A system enters every band whose minimum its EER reaches; within a band
systems are ranked twice: by WER (lower first, UAR breaking ties) and by UAR (higher first, WER
breaking ties). A system without a WER is listed as unranked, with why.

**Auditors' call-out** (:func:`utility_callouts`). A ranked system whose EER reaches a band
while the 1-to-N metrics say its speakers are still found: LIDmax at least
:data:`LEAK_LID_MAX` (1 bit: the worst-exposed trial halves the attacker's uncertainty about its
speaker, Šterns et al. 2025) or linkability above :data:`LEAK_LINKABILITY_FACTOR` (2) times its
chance level 1/N. These are the thresholds of the report card's "risk" level and of the threat
call-outs; the EER band alone would rank such a system as private.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from voxmetrics.analysis._numbers import (
    REFERENCE_ATTACKER,
    ConditionNumbers,
    condition_numbers,
    has_utility,
    reference_condition,
)
from voxmetrics.analysis._result import ConditionResult
from voxmetrics.analysis.rank_stability import (
    band_ranks,
    kendall_tau_b,
    rank_interval,
    tau_summary,
)
from voxmetrics.analysis.strongest import StrongestAttackers
from voxmetrics.data.utility import UTILITY_METRICS
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "EER_BANDS",
    "EER_DECIMALS",
    "LEAK_LID_MAX",
    "LEAK_LINKABILITY_FACTOR",
    "NO_UTILITY_HELP",
    "PRIVACY_METRICS",
    "RANKING_ATTACKER",
    "REFERENCE_ATTACKER",
    "STABILITY_METHOD",
    "UTILITY_HIGHER_IS_BETTER",
    "UTILITY_LABELS",
    "ConditionNumbers",
    "PrivacyMetric",
    "RankedSystem",
    "RankingReplicates",
    "RankingStability",
    "Tradeoff",
    "TradeoffPoint",
    "UtilityCallout",
    "VoicePrivacyRanking",
    "challenge_eer",
    "challenge_eer_replicates",
    "condition_numbers",
    "has_utility",
    "in_band",
    "pareto_front",
    "privacy_utility_tradeoff",
    "reference_condition",
    "report_callouts",
    "report_ranking",
    "report_tradeoff",
    "utility_callouts",
    "voiceprivacy_ranking",
]


@dataclass(frozen=True)
class PrivacyMetric:
    """A privacy number the trade-off can use, with its direction."""

    key: str
    """Key of the number (as in the JSON)."""
    label: str
    """Display label."""
    higher_is_better: bool
    """Whether a higher value means more privacy."""


PRIVACY_METRICS: dict[str, PrivacyMetric] = {
    m.key: m
    for m in (
        PrivacyMetric("eer", "EER", True),
        PrivacyMetric("eer_rocch", "EER (ROCCH)", True),
        PrivacyMetric("lid_max", "LIDmax (bits)", False),
        PrivacyMetric("alid", "ALID (bits)", False),
        PrivacyMetric("linkability", "Linkability", False),
        PrivacyMetric("d_ece", "D_ECE (bits)", False),
        PrivacyMetric("sbls", "SBLS", True),
    )
}
"""The privacy numbers of the trade-off by key, with their directions (module docstring)."""

UTILITY_LABELS: dict[str, str] = {"wer": "WER", "uar": "UAR", "rho_f0": "ρF0"}
"""Display label of each utility number."""
UTILITY_HIGHER_IS_BETTER: dict[str, bool] = {"wer": False, "uar": True, "rho_f0": True}
"""Whether a higher value of each utility number is more useful."""

EER_BANDS: tuple[float, ...] = (0.10, 0.20, 0.30, 0.40)
"""The minimum EERs of VoicePrivacy 2024's ranking (10, 20, 30 and 40 %)."""
EER_DECIMALS = 3
"""Decimals of an EER in percent as the challenge prints and ranks it (``round(EER * 100, 3)``
in its ``evaluate_asv.py``): 0.001 %."""
RANKING_ATTACKER = "semi-informed"
"""The attacker whose EER places a system in a band (VoicePrivacy 2024)."""
LEAK_LID_MAX = 1.0
"""LIDmax (bits) from which a ranked system is called out as still leaking."""
LEAK_LINKABILITY_FACTOR = 2.0
"""Linkability above this many times chance (1/N) calls a ranked system out."""


def _check_metrics(privacy: str, utility: str) -> None:
    if privacy not in PRIVACY_METRICS:
        raise VoxMetricsInputError(
            f"privacy metric '{privacy}' is unknown; use one of {', '.join(PRIVACY_METRICS)}."
        )
    if utility not in UTILITY_METRICS:
        raise VoxMetricsInputError(
            f"utility metric '{utility}' is unknown; use one of {', '.join(UTILITY_METRICS)}."
        )


def pareto_front(
    privacy: ArrayLike,
    utility: ArrayLike,
    *,
    privacy_higher_is_better: bool = True,
    utility_higher_is_better: bool = True,
) -> NDArray[np.bool_]:
    """Which points no other point dominates (at least as good on both, better on one).

    Parameters
    ----------
    privacy, utility : array_like, shape (n,)
        The two numbers of each point (finite).
    privacy_higher_is_better, utility_higher_is_better : bool
        The directions of the two numbers.

    Returns
    -------
    ndarray of bool, shape (n,)
        True for the points on the front; equal points are both on it or both off it.

    Examples
    --------
    >>> pareto_front([0.5, 0.3, 0.2], [0.4, 0.1, 0.2], utility_higher_is_better=False)
    array([ True,  True, False])
    """
    p = np.asarray(privacy, dtype=np.float64).reshape(-1)
    u = np.asarray(utility, dtype=np.float64).reshape(-1)
    if p.shape != u.shape:
        raise VoxMetricsInputError(
            f"privacy and utility must have one value per point; got {p.size} and {u.size}."
        )
    if not (np.isfinite(p).all() and np.isfinite(u).all()):
        raise VoxMetricsInputError("the Pareto front needs finite numbers; drop the unknown ones.")
    if not privacy_higher_is_better:
        p = -p
    if not utility_higher_is_better:
        u = -u
    # dominated[i, j]: point j is at least as good as i on both and strictly better on one
    ge = (p[None, :] >= p[:, None]) & (u[None, :] >= u[:, None])
    gt = (p[None, :] > p[:, None]) | (u[None, :] > u[:, None])
    dominated: NDArray[np.bool_] = np.asarray((ge & gt).any(axis=1))
    return ~dominated


@dataclass(frozen=True)
class TradeoffPoint:
    """One condition in the privacy-utility plane."""

    condition: str
    """Condition name."""
    attacker: str
    """Attacker knowledge level."""
    privacy: float | None
    """The privacy number (None when unknown)."""
    utility: float | None
    """The utility number (None when unknown)."""
    privacy_interval: tuple[float, float] | None = None
    """Its 95 % interval, where known."""
    utility_interval: tuple[float, float] | None = None
    """Its 95 % interval, where known."""
    reference: bool = False
    """Whether this is the original speech (drawn as the reference, never on the front)."""
    on_front: bool = False
    """Whether no other anonymised condition under the same attacker dominates it (its
    attacker's front)."""

    @property
    def plotted(self) -> bool:
        """Whether both numbers are known."""
        return self.privacy is not None and self.utility is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {
            "condition": self.condition,
            "attacker": self.attacker,
            "privacy": self.privacy,
            "utility": self.utility,
            "privacy_interval": None if self.privacy_interval is None else [*self.privacy_interval],
            "utility_interval": None if self.utility_interval is None else [*self.utility_interval],
            "reference": self.reference,
            "on_front": self.on_front,
        }


@dataclass(frozen=True)
class Tradeoff:
    """One privacy number against one utility number for every condition, and the front."""

    privacy_metric: str
    """Key of the privacy number (:data:`PRIVACY_METRICS`)."""
    utility_metric: str
    """Key of the utility number (:data:`~voxmetrics.data.utility.UTILITY_METRICS`)."""
    points: tuple[TradeoffPoint, ...]
    """Every condition, in input order (with unknown numbers as None)."""

    @property
    def privacy_label(self) -> str:
        """Display label of the privacy number."""
        return PRIVACY_METRICS[self.privacy_metric].label

    @property
    def utility_label(self) -> str:
        """Display label of the utility number."""
        return UTILITY_LABELS[self.utility_metric]

    @property
    def privacy_higher_is_better(self) -> bool:
        """The privacy number's direction."""
        return PRIVACY_METRICS[self.privacy_metric].higher_is_better

    @property
    def utility_higher_is_better(self) -> bool:
        """The utility number's direction."""
        return UTILITY_HIGHER_IS_BETTER[self.utility_metric]

    @property
    def front(self) -> list[TradeoffPoint]:
        """The points on their attacker's front, from the most private to the most useful.

        With several attackers, each attacker's front in turn (:attr:`attackers` order).
        """
        return [p for a in self.attackers for p in self.front_of(a)]

    @property
    def attackers(self) -> list[str]:
        """The attackers of the anonymised conditions drawn, in input order."""
        return list(dict.fromkeys(p.attacker for p in self.points if p.plotted and not p.reference))

    def front_of(self, attacker: str) -> list[TradeoffPoint]:
        """The front of one attacker's conditions, from the most private to the most useful."""
        pts = [p for p in self.points if p.on_front and p.attacker == attacker]
        sign = -1.0 if self.privacy_higher_is_better else 1.0
        return sorted(pts, key=lambda p: (sign * (p.privacy or 0.0), p.condition))

    def of_attacker(self, attacker: str) -> Tradeoff:
        """The conditions of one attacker and the original speech: one attacker's plane."""
        return replace(
            self, points=tuple(p for p in self.points if p.reference or p.attacker == attacker)
        )

    @property
    def references(self) -> list[TradeoffPoint]:
        """The original speech's points.

        The reference and every condition under attacker ``original``.
        """
        return [p for p in self.points if p.reference]

    @property
    def reference(self) -> TradeoffPoint | None:
        """The first original speech's point (None when the study has none)."""
        return next((p for p in self.points if p.reference), None)

    @property
    def missing(self) -> list[TradeoffPoint]:
        """The points left out of the plane (a number unknown)."""
        return [p for p in self.points if not p.plotted]

    def frame(self) -> pd.DataFrame:
        """One row per condition: both numbers, their intervals, reference and front flags."""
        rows = []
        for p in self.points:
            piv, uiv = p.privacy_interval, p.utility_interval
            rows.append(
                {
                    "Condition": p.condition,
                    "Attacker": p.attacker,
                    self.privacy_label: p.privacy,
                    f"{self.privacy_label} 95% low": None if piv is None else piv[0],
                    f"{self.privacy_label} 95% high": None if piv is None else piv[1],
                    self.utility_label: p.utility,
                    f"{self.utility_label} 95% low": None if uiv is None else uiv[0],
                    f"{self.utility_label} 95% high": None if uiv is None else uiv[1],
                    "Original speech": p.reference,
                    "On the Pareto front": p.on_front,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the two metrics, their directions and every point."""
        return {
            "privacy": self.privacy_metric,
            "utility": self.utility_metric,
            "privacy_higher_is_better": self.privacy_higher_is_better,
            "utility_higher_is_better": self.utility_higher_is_better,
            "points": [p.to_dict() for p in self.points],
            "fronts": {a: [p.condition for p in self.front_of(a)] for a in self.attackers},
        }


def privacy_utility_tradeoff(
    numbers: Iterable[ConditionNumbers],
    *,
    privacy: str = "eer",
    utility: str = "wer",
    reference: str | None = None,
) -> Tradeoff:
    """Each condition's ``privacy`` number against its ``utility`` number, and the front.

    Parameters
    ----------
    numbers : iterable of ConditionNumbers
        The conditions.
    privacy : str
        A key of :data:`PRIVACY_METRICS`.
    utility : str
        A key of :data:`~voxmetrics.data.utility.UTILITY_METRICS`.
    reference : str, optional
        The condition of the original speech; by default the first one whose attacker is
        ``original``. It, and every condition under attacker ``original``, is marked as the
        original speech and left off the front.

    Returns
    -------
    Tradeoff

    Examples
    --------
    >>> cs = [ConditionNumbers("orig", "original", {"eer": 0.02, "wer": 0.018}),
    ...       ConditionNumbers("a", "semi-informed", {"eer": 0.30, "wer": 0.05}),
    ...       ConditionNumbers("b", "semi-informed", {"eer": 0.20, "wer": 0.08}),
    ...       ConditionNumbers("c", "semi-informed", {"eer": 0.40, "wer": 0.30})]
    >>> [p.condition for p in privacy_utility_tradeoff(cs).front]
    ['c', 'a']
    """
    _check_metrics(privacy, utility)
    numbers = list(numbers)
    if reference is None:
        reference = next((c.condition for c in numbers if c.attacker == REFERENCE_ATTACKER), None)
    points = [
        TradeoffPoint(
            condition=c.condition,
            attacker=c.attacker,
            privacy=c.value(privacy),
            utility=c.value(utility),
            privacy_interval=c.interval(privacy),
            utility_interval=c.interval(utility),
            reference=c.condition == reference or c.attacker == REFERENCE_ATTACKER,
        )
        for c in numbers
    ]
    candidates = [k for k, p in enumerate(points) if p.plotted and not p.reference]
    for attacker in dict.fromkeys(points[k].attacker for k in candidates):
        group = [k for k in candidates if points[k].attacker == attacker]
        # every one (candidates are plotted: both numbers known)
        xs = [x for k in group if (x := points[k].privacy) is not None]
        ys = [y for k in group if (y := points[k].utility) is not None]
        mask = pareto_front(
            xs,
            ys,
            privacy_higher_is_better=PRIVACY_METRICS[privacy].higher_is_better,
            utility_higher_is_better=UTILITY_HIGHER_IS_BETTER[utility],
        )
        for k, on in zip(group, mask, strict=True):
            if on:
                points[k] = replace(points[k], on_front=True)
    return Tradeoff(privacy_metric=privacy, utility_metric=utility, points=tuple(points))


@dataclass(frozen=True)
class RankedSystem:
    """One system in one band of the VoicePrivacy ranking."""

    band: float
    """The band's minimum EER."""
    rank: int
    """Its rank within the band (1 = best; equal WER and UAR share a rank)."""
    condition: str
    """The system's condition (under the ranking attacker)."""
    eer: float
    """Its EER."""
    wer: float | None
    """Its WER (fraction); None only in the UAR ranking, for a system without one."""
    uar: float | None
    """Its UAR (fraction), None when unknown."""
    p_band: float | None = None
    """Share of the bootstrap replicates in which its EER reaches the band (None without
    replicates)."""
    rank_interval: tuple[int, int] | None = None
    """95 % interval of its rank over the replicates where it is in the band (holds
    :attr:`rank`; None without replicates)."""
    p_rank1: float | None = None
    """Share of all the replicates in which it ranks first in the band (None without)."""
    judged_attacker: str | None = None
    """The attacker its EER is of, when known: its back-end and how it was chosen as the
    strongest tried (None: the scores' making is unknown)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (``rank_interval`` as ``[low, high]``)."""
        out = dict(self.__dict__)
        out["rank_interval"] = None if self.rank_interval is None else list(self.rank_interval)
        return out


@dataclass(frozen=True, eq=False)
class RankingReplicates:
    """The ranking's numbers (EER, WER, UAR) of each system in each of B paired replicates.

    Replicate b of every system is one joint draw: the trial speakers of the ASV (one draw
    shared by the systems evaluated on the same speakers with the same seed) and, independently,
    the speakers of each utility number (:mod:`voxmetrics.evaluation.stability` builds it). A
    number without replicates (e.g. a utility read from a results summary) is taken as fixed at
    its value.
    """

    values: Mapping[str, Mapping[str, NDArray[np.float64]]]
    """Condition -> key ("eer", "wer", "uar") -> (B,) its value in each replicate."""
    n_replicates: int
    """B."""
    notes: tuple[str, ...] = ()
    """How the replicates were drawn and paired (shown with the ranking)."""

    def of(self, condition: str, key: str) -> NDArray[np.float64] | None:
        """The (B,) replicates of one number, None when it has none."""
        r = self.values.get(condition, {}).get(key)
        return None if r is None else np.asarray(r, dtype=np.float64)[: self.n_replicates]


STABILITY_METHOD = (
    "speaker-bootstrap replicates of the EER (trial speakers) and of the WER and UAR (their "
    "own speakers), paired across systems; each replicate ranked by the same rule "
    "(Maier-Hein et al. 2018; challengeR): p_band = share of replicates whose EER reaches the "
    "band, rank_interval = 2.5 and 97.5 percentiles of the rank over the replicates in the "
    "band (widened to hold the point rank), p_rank1 = share of replicates ranked first, "
    "Kendall's tau-b between the point ranking and each replicate's (systems outside the band "
    "tied last)"
)
"""How the ranking's stability is computed, for tables, pages and the JSON."""


@dataclass(frozen=True)
class RankingStability:
    """How firm VoicePrivacy's ranking is under resampling of speakers."""

    n_replicates: int
    """Replicates ranked."""
    p_band: Mapping[str, Mapping[float, float]]
    """System -> band -> share of replicates whose EER reaches the band (every system under
    the ranking attacker with an EER, ranked or not)."""
    kendall_tau: Mapping[float, Mapping[str, float | None]]
    """Band -> median, low, high (95 %) and n of Kendall's τ-b between the point ranking and
    each replicate's."""
    fixed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """System -> the numbers taken as fixed (no replicates, e.g. a utility known only as a
    number)."""
    notes: tuple[str, ...] = ()
    """How the replicates were drawn and paired."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe (band keys as text, e.g. ``"0.4"``)."""
        return {
            "n_replicates": self.n_replicates,
            "method": STABILITY_METHOD,
            "p_band": {s: {str(b): p for b, p in v.items()} for s, v in self.p_band.items()},
            "kendall_tau": {str(b): dict(v) for b, v in self.kendall_tau.items()},
            "fixed": {s: list(v) for s, v in self.fixed.items()},
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class VoicePrivacyRanking:
    """VoicePrivacy 2024's ranking: systems by EER band, ranked by WER then UAR."""

    bands: tuple[float, ...]
    """The bands' minimum EERs, ascending."""
    attacker: str
    """The attacker whose EER places a system in a band."""
    rows: tuple[RankedSystem, ...]
    """Every (band, system) entry of the WER ranking, by band then rank."""
    unranked: Mapping[str, str] = field(default_factory=dict)
    """Systems left out of every band, with why (EER below the lowest band, WER unknown)."""
    stability: RankingStability | None = None
    """How firm each entry is under resampling of speakers (None without replicates)."""
    uar_rows: tuple[RankedSystem, ...] = ()
    """Every (band, system) entry of the UAR ranking (the plan's second ranking: UAR higher
    first, WER breaking ties), by band then rank; systems without a UAR are not in it."""
    eer_rule: str = "the EER of the condition's trials, rounded to 0.001 %"
    """Which EER placed each system in a band (:func:`challenge_eer`)."""

    def band(self, minimum: float) -> list[RankedSystem]:
        """The entries of the band with minimum EER ``minimum``."""
        return [r for r in self.rows if r.band == minimum]

    def frame(self, *, stability: bool = False) -> pd.DataFrame:
        """The ranking as a table: band, rank, system, EER, WER, UAR.

        With ``stability`` and replicates, also P(in band), the rank's 95 % interval (Rank 95%
        low, Rank 95% high) and P(rank 1) of each entry.
        """
        columns = ["EER band", "Rank", "System", "EER", "WER", "UAR"]
        if any(r.judged_attacker for r in self.rows):  # which attacker, when known
            columns.append("Attacker")
        extra = ["P(in band)", "Rank 95% low", "Rank 95% high", "P(rank 1)"]
        with_stability = stability and self.stability is not None
        rows = []
        for r in self.rows:
            row: dict[str, Any] = {
                "EER band": f"EER >= {r.band:.0%}",
                "Rank": r.rank,
                "System": r.condition,
                "EER": r.eer,
                "WER": r.wer,
                "UAR": r.uar,
                "Attacker": r.judged_attacker,
            }
            if with_stability:
                iv = r.rank_interval or (None, None)
                row.update(dict(zip(extra, (r.p_band, iv[0], iv[1], r.p_rank1), strict=True)))
            rows.append(row)
        return pd.DataFrame(rows, columns=columns + (extra if with_stability else []))

    def stability_frame(self) -> pd.DataFrame:
        """How firm each entry is: band, point rank, system, P(in band), rank interval, P(rank 1).

        Empty without replicates. The rank interval reads "1–2" (1 to 2).
        """
        columns = ["EER band", "Rank", "System", "P(in band)", "Rank 95% interval", "P(rank 1)"]
        if self.stability is None:
            return pd.DataFrame(columns=columns)
        return pd.DataFrame(
            [
                {
                    "EER band": f"EER >= {r.band:.0%}",
                    "Rank": r.rank,
                    "System": r.condition,
                    "P(in band)": r.p_band,
                    "Rank 95% interval": None
                    if r.rank_interval is None
                    else f"{r.rank_interval[0]}–{r.rank_interval[1]}",
                    "P(rank 1)": r.p_rank1,
                }
                for r in self.rows
            ],
            columns=columns,
        )

    def band_frame(self) -> pd.DataFrame:
        """P(EER reaches the band) of every system with an EER, one column per band.

        Ranked or not (a system whose EER is just below a band gets its chance of entering
        it); empty without replicates.
        """
        if self.stability is None:
            return pd.DataFrame(columns=["System"])
        return pd.DataFrame(
            [
                {"System": s, **{f"P(EER >= {b:.0%})": p.get(b) for b in self.bands}}
                for s, p in self.stability.p_band.items()
            ],
            columns=["System", *(f"P(EER >= {b:.0%})" for b in self.bands)],
        )

    def uar_frame(self) -> pd.DataFrame:
        """The UAR ranking as a table: band, rank, system, EER, WER, UAR."""
        return VoicePrivacyRanking(self.bands, self.attacker, self.uar_rows).frame()

    def unranked_frame(self) -> pd.DataFrame:
        """The systems left out, with why."""
        return pd.DataFrame(
            {"System": list(self.unranked), "Not ranked because": list(self.unranked.values())},
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the rule, every entry and the systems left out."""
        return {
            "bands": list(self.bands),
            "attacker": self.attacker,
            "rule": "EER >= band at 0.001 %; ranked by WER (lower first, then UAR higher first) "
            "and, separately, by UAR (higher first, then WER lower first)",
            "eer_rule": self.eer_rule,
            "rows": [r.to_dict() for r in self.rows],
            "uar_rows": [r.to_dict() for r in self.uar_rows],
            "unranked": dict(self.unranked),
            "stability": None if self.stability is None else self.stability.to_dict(),
        }


def _ranked_systems(
    numbers: Iterable[ConditionNumbers],
    attacker: str,
    reference: str | None,
    attackers: StrongestAttackers | None = None,
    left_out: dict[str, str] | None = None,
) -> list[ConditionNumbers]:
    """The systems under ``attacker``: the strongest attacker's condition of each.

    The weaker attackers' conditions go into ``left_out``, with why.
    """
    out = []
    for c in numbers:
        if c.attacker != attacker or c.attacker == REFERENCE_ATTACKER or c.condition == reference:
            continue
        if attackers is not None and not attackers.judged(c.condition):
            if left_out is not None:
                left_out[c.condition] = attackers.left_out()[c.condition]
            continue
        out.append(c)
    return out


def _or_minus_inf(v: float | None) -> float:
    return -math.inf if v is None else v


def challenge_eer(eer: float, groups: Sequence[float] = ()) -> float:
    """The EER the challenge bands: rounded to 0.001 %, the mean of its lists' when given.

    ``groups`` are the EERs of the trial lists the challenge prints one EER for (2024: the
    female and the male list); each is rounded to 0.001 % as printed, their mean rounded
    again. Without ``groups``, ``eer`` rounded to 0.001 %.

    Examples
    --------
    >>> challenge_eer(0.29999999999999993)
    0.3
    >>> challenge_eer(0.0, [0.074736, 0.046754])
    0.06075
    """
    if len(groups):
        mean = sum(round(float(g) * 100, EER_DECIMALS) for g in groups) / len(groups)
        return round(mean, EER_DECIMALS) / 100
    return round(float(eer) * 100, EER_DECIMALS) / 100


def challenge_eer_replicates(groups: ArrayLike) -> NDArray[np.float64]:
    """:func:`challenge_eer` of each of B replicates.

    ``groups`` (G, B) holds the EER of each of the G lists in B replicates; the result (B,) is
    the mean of the lists' EERs, each rounded to 0.001 % as printed, rounded again.

    Examples
    --------
    >>> challenge_eer_replicates([[0.074736, 0.1], [0.046754, 0.2]]).tolist()
    [0.06075, 0.15]
    """
    pct = np.round(np.asarray(groups, dtype=np.float64) * 100, EER_DECIMALS)
    return np.round(pct.mean(axis=0), EER_DECIMALS) / 100


def in_band(eer: float, band: float) -> bool:
    """Whether ``eer`` reaches the band of minimum ``band``, both compared at 0.001 %.

    Examples
    --------
    >>> in_band(0.29999999999999993, 0.30), in_band(0.299994, 0.30), in_band(0.299995, 0.30)
    (True, False, True)
    """
    return round(eer * 100, EER_DECIMALS) >= round(band * 100, EER_DECIMALS)


def _banded_eers(
    systems: Sequence[ConditionNumbers], group_eers: Mapping[str, Mapping[str, float]] | None
) -> dict[str, float | None]:
    """Each system's EER as the challenge bands it (:func:`challenge_eer`)."""
    out: dict[str, float | None] = {}
    for c in systems:
        groups = list((group_eers or {}).get(c.condition, {}).values())
        eer = c.value("eer")
        out[c.condition] = None if eer is None and not groups else challenge_eer(eer or 0, groups)
    return out


def _uar_ranking(
    eligible: Sequence[ConditionNumbers],
    banded: Mapping[str, float | None],
    levels: Sequence[float],
    attackers: StrongestAttackers | None = None,
) -> tuple[RankedSystem, ...]:
    """The plan's second ranking: UAR higher first, WER lower first breaking ties."""
    rows = []
    for band in levels:
        inside = [c for c in eligible if c.value("uar") is not None]
        inside = [c for c in inside if in_band(banded[c.condition], band)]  # type: ignore[arg-type]
        keyed = sorted(
            ((-c.value("uar"), _or_inf(c.value("wer")), c.condition, c) for c in inside),  # type: ignore[operator]
            key=lambda t: t[:3],
        )
        rank, previous = 0, None
        for k, (neg_uar, wer, _, c) in enumerate(keyed):
            if (neg_uar, wer) != previous:
                rank, previous = k + 1, (neg_uar, wer)
            judged = (attackers.label(c.condition) or None) if attackers else None
            eer = banded[c.condition]
            assert eer is not None  # every system in a band has its banded EER
            rows.append(
                RankedSystem(
                    band, rank, c.condition, eer, c.value("wer"), -neg_uar, judged_attacker=judged
                )
            )
    return tuple(rows)


def _or_inf(v: float | None) -> float:
    return math.inf if v is None else v


def voiceprivacy_ranking(
    numbers: Iterable[ConditionNumbers],
    *,
    bands: Sequence[float] = EER_BANDS,
    attacker: str = RANKING_ATTACKER,
    reference: str | None = None,
    replicates: RankingReplicates | None = None,
    group_eers: Mapping[str, Mapping[str, float]] | None = None,
    attackers: StrongestAttackers | None = None,
) -> VoicePrivacyRanking:
    """Systems grouped by minimum EER and ranked by WER and by UAR (VoicePrivacy 2024).

    Parameters
    ----------
    numbers : iterable of ConditionNumbers
        The conditions; those under ``attacker`` are the systems (the original speech and
        ``reference`` are left out).
    bands : sequence of float
        Minimum EERs (fractions); a system enters every band whose minimum its EER reaches.
    attacker : str
        The attacker whose EER counts (VoicePrivacy 2024: the semi-informed one).
    reference : str, optional
        The original speech's condition, left out.
    replicates : RankingReplicates, optional
        The systems' banded EER, WER and UAR in paired bootstrap replicates: every entry then
        says how firm it is (``p_band``, ``rank_interval``, ``p_rank1``; Kendall's τ per band;
        see :mod:`voxmetrics.analysis.rank_stability`), each replicate banded at 0.001 % as the
        point is.
    group_eers : mapping, optional
        Condition -> the EER of each trial list the challenge prints one EER for (2024:
        ``{"F": ..., "M": ...}``); a system is then banded on their mean
        (:func:`challenge_eer`), else on its EER. Every EER is compared at 0.001 %.
        The systems' EER, WER and UAR in paired bootstrap replicates: every entry then says
        how firm it is (``p_band``, ``rank_interval``, ``p_rank1``; Kendall's τ per band; see
        :mod:`voxmetrics.analysis.rank_stability`).
    attackers : StrongestAttackers, optional
        Which attacker each system is judged against
        (:func:`~voxmetrics.analysis.strongest.strongest_attackers` of the study): a system
        tried by several ``attacker`` back-ends is banded on the strongest (lowest dev EER),
        each entry names it, and the weaker ones are listed as unranked with why.

    Returns
    -------
    VoicePrivacyRanking
        The WER ranking (``rows``), the UAR ranking (``uar_rows``), the systems left out and
        which EER placed them.

    Examples
    --------
    >>> cs = [ConditionNumbers("a", "semi-informed", {"eer": 0.25, "wer": 0.05, "uar": 0.6}),
    ...       ConditionNumbers("b", "semi-informed", {"eer": 0.45, "wer": 0.09, "uar": 0.5})]
    >>> [(r.band, r.rank, r.condition) for r in voiceprivacy_ranking(cs).rows]
    [(0.1, 1, 'a'), (0.1, 2, 'b'), (0.2, 1, 'a'), (0.2, 2, 'b'), (0.3, 1, 'b'), (0.4, 1, 'b')]
    """
    levels = sorted(float(b) for b in bands)
    if not levels or any(not (0.0 <= b <= 1.0) for b in levels):
        raise VoxMetricsInputError(
            f"EER bands must be fractions in [0, 1] (10 % is 0.10); got {list(bands)}."
        )
    unranked: dict[str, str] = {}
    systems = _ranked_systems(numbers, attacker, reference, attackers, unranked)
    banded = _banded_eers(systems, group_eers)  # as the challenge prints and bands it
    eligible, in_a_band = [], []
    for c in systems:
        eer, wer = banded[c.condition], c.value("wer")
        if eer is None:
            unranked[c.condition] = "EER unknown"
        elif not in_band(eer, levels[0]):
            unranked[c.condition] = f"EER {eer:.3f} below the lowest band ({levels[0]:.0%})"
        elif wer is None:
            in_a_band.append(c)
            unranked[c.condition] = "WER unknown (add its utility numbers)"
        else:
            in_a_band.append(c)
            eligible.append(c)
    rows = []
    for band in levels:
        inside = [c for c in eligible if in_band(banded[c.condition], band)]  # type: ignore[arg-type]
        # WER ascending, then UAR descending (unknown UAR after every known one), then name
        keyed = sorted(
            ((c.value("wer"), -_or_minus_inf(c.value("uar")), c.condition, c) for c in inside),
            key=lambda t: t[:3],
        )
        rank, previous = 0, None
        for k, (wer, neg_uar, _, c) in enumerate(keyed):
            if (wer, neg_uar) != previous:
                rank, previous = k + 1, (wer, neg_uar)
            rows.append(
                RankedSystem(
                    band=band,
                    rank=rank,
                    condition=c.condition,
                    eer=banded[c.condition],  # type: ignore[arg-type]
                    wer=wer,
                    uar=c.value("uar"),
                    judged_attacker=(attackers.label(c.condition) or None) if attackers else None,
                )
            )
    stability = None
    if replicates is not None and replicates.n_replicates > 0:
        rows, stability = _with_stability(rows, systems, levels, replicates, banded)
    grouped = any((group_eers or {}).get(c.condition) for c in systems)
    return VoicePrivacyRanking(
        bands=tuple(levels),
        attacker=attacker,
        rows=tuple(rows),
        unranked=unranked,
        stability=stability,
        uar_rows=_uar_ranking(in_a_band, banded, levels, attackers),
        eer_rule=(
            "the mean of the EERs of the trial lists the challenge prints (each rounded to 0.001 %)"
            if grouped
            else VoicePrivacyRanking.eer_rule
        ),
    )


def _replicated(
    c: ConditionNumbers,
    key: str,
    replicates: RankingReplicates,
    fixed: dict[str, list[str]],
    point: float | None = None,
) -> NDArray[np.float64]:
    """(B,) replicates of one number; without any, ``point`` (default its value) repeated.

    A number repeated so is noted as fixed.
    """
    reps = replicates.of(c.condition, key)
    point = c.value(key) if point is None else point
    if reps is not None and reps.size == replicates.n_replicates:
        return reps
    if point is not None:
        fixed.setdefault(c.condition, []).append(key)
    return np.full(replicates.n_replicates, np.nan if point is None else point)


def _with_stability(
    rows: list[RankedSystem],
    systems: list[ConditionNumbers],
    levels: list[float],
    replicates: RankingReplicates,
    banded: Mapping[str, float | None],
) -> tuple[list[RankedSystem], RankingStability]:
    """The entries with their p_band, rank interval and P(rank 1), and the stability.

    Each replicate's EER is the one the challenge bands (``replicates``' ``eer``: the mean of
    the lists' EERs where the point is banded so), compared with the bands at 0.001 %.
    """
    with_eer = [c for c in systems if banded.get(c.condition) is not None]
    fixed: dict[str, list[str]] = {}
    eer = np.column_stack(
        [_replicated(c, "eer", replicates, fixed, banded[c.condition]) for c in with_eer]
    )
    eer = np.round(eer * 100, EER_DECIMALS)  # percent, as the challenge prints and bands it
    wer = np.column_stack([_replicated(c, "wer", replicates, fixed) for c in with_eer])
    uar = np.column_stack([_replicated(c, "uar", replicates, fixed) for c in with_eer])
    neg_uar = np.where(np.isnan(uar), np.inf, -uar)
    ranked = np.array([c.value("wer") is not None for c in with_eer])
    index = {c.condition: i for i, c in enumerate(with_eer)}
    minimum = {b: round(b * 100, EER_DECIMALS) for b in levels}
    p_band = {
        c.condition: {b: float(np.mean(eer[:, i] >= minimum[b])) for b in levels}
        for i, c in enumerate(with_eer)
    }
    taus, out = {}, []
    for band in levels:
        inside = (eer >= minimum[band]) & ranked[None, :]
        ranks = band_ranks(inside, wer, neg_uar)
        point = {r.condition: r.rank for r in rows if r.band == band}
        last = len(with_eer) + 1.0  # outside the band: tied after every system in it
        x = np.array([point.get(c.condition, last) for c in with_eer])[ranked]
        y = np.where(np.isnan(ranks), last, ranks)[:, ranked]
        taus[band] = tau_summary(kendall_tau_b(x, y)) if ranked.sum() > 1 else tau_summary([])
        for r in (r for r in rows if r.band == band):
            i = index[r.condition]
            out.append(
                replace(
                    r,
                    p_band=p_band[r.condition][band],
                    rank_interval=rank_interval(ranks[:, i], r.rank),
                    p_rank1=float(np.mean(ranks[:, i] == 1)),
                )
            )
    stability = RankingStability(
        n_replicates=replicates.n_replicates,
        p_band=p_band,
        kendall_tau=taus,
        fixed={k: tuple(v) for k, v in fixed.items()},
        notes=replicates.notes,
    )
    return out, stability


@dataclass(frozen=True)
class UtilityCallout:
    """A system whose EER reaches a band while LIDmax or linkability say it still leaks."""

    condition: str
    """The system's condition."""
    attacker: str
    """Its attacker."""
    eer: float
    """Its EER."""
    band: float
    """The highest band its EER reaches."""
    lid_max: float | None
    """Its LIDmax (bits), None without LID."""
    linkability: float | None
    """Its linkability, None without complete trials."""
    chance_linkability: float | None
    """Linkability's chance level 1/N."""
    reasons: tuple[str, ...]
    """Why it is called out, one sentence per metric."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {**self.__dict__, "reasons": list(self.reasons)}


def utility_callouts(
    numbers: Iterable[ConditionNumbers],
    *,
    bands: Sequence[float] = EER_BANDS,
    attacker: str = RANKING_ATTACKER,
    reference: str | None = None,
    lid_max_min: float = LEAK_LID_MAX,
    linkability_factor: float = LEAK_LINKABILITY_FACTOR,
    group_eers: Mapping[str, Mapping[str, float]] | None = None,
    attackers: StrongestAttackers | None = None,
) -> list[UtilityCallout]:
    """The ranked systems whose EER reaches a band although they still leak (module docstring).

    Called out: EER >= the lowest band and (LIDmax >= ``lid_max_min`` bits or linkability
    above ``linkability_factor`` x chance 1/N), for the systems under ``attacker``, the EER
    banded as the ranking bands it (``group_eers``, :func:`voiceprivacy_ranking`). A number
    with a note (:attr:`ConditionNumbers.notes`: the report card reads it as "≈ chance" or
    "uninformative at N = n") is not cited: the card and the call-out say the same thing.
    With ``attackers``, a system is judged under its strongest attacker only, as in
    :func:`voiceprivacy_ranking`.

    Examples
    --------
    >>> cs = [ConditionNumbers("leaky", "semi-informed",
    ...                        {"eer": 0.42, "lid_max": 3.1, "linkability": 0.05},
    ...                        chance_linkability=0.025)]
    >>> c = utility_callouts(cs)[0]
    >>> c.band, len(c.reasons)
    (0.4, 1)
    """
    levels = sorted(float(b) for b in bands)
    out = []
    systems = _ranked_systems(numbers, attacker, reference, attackers)
    banded = _banded_eers(systems, group_eers)
    for c in systems:
        eer = banded[c.condition]
        if eer is None or not levels or not in_band(eer, levels[0]):
            continue
        band = max(b for b in levels if in_band(eer, b))
        lid, link, chance = c.value("lid_max"), c.value("linkability"), c.chance_linkability
        reasons = []
        notes = c.notes
        if lid is not None and lid >= lid_max_min and not notes.get("lid_max"):
            reasons.append(
                f"LIDmax {lid:.2f} bits (at least {lid_max_min:g}): its worst-exposed trial "
                "still points to its speaker"
            )
        if (
            link is not None
            and chance is not None
            and link > linkability_factor * chance
            and not notes.get("linkability")
        ):
            reasons.append(
                f"linkability {link:.1%} is {link / chance:.1f}x its chance of {chance:.1%} "
                f"(above {linkability_factor:g}x)"
            )
        if reasons:
            out.append(
                UtilityCallout(
                    condition=c.condition,
                    attacker=c.attacker,
                    eer=eer,
                    band=band,
                    lid_max=lid,
                    linkability=link,
                    chance_linkability=chance,
                    reasons=tuple(reasons),
                )
            )
    return out


# ---------------------------------------------------------------- condition reports

NO_UTILITY_HELP = (
    "No condition has utility numbers (WER, UAR, ρF0), so privacy cannot be weighed against "
    "what the anonymisation costs. Add them when building the study: a VoicePrivacy (2024, 2026) "
    "evaluation tree brings its results files' WER and UAR (voxmetrics study build OUT.vxm "
    "ROOT, or the Data page's VoicePrivacy upload), or give transcripts, emotion predictions "
    "or audio for each condition (study build --wer / --uar / --rho-f0, or the Data page's "
    "Utility tab). The demo study has them (Load demo study)."
)
"""What the Privacy vs utility page and report section say when no condition has a utility
number: how to add them."""


def _numbers(
    reports: Iterable[ConditionResult],
    sbls: Mapping[str, float | None] | None,
    sbls_intervals: Mapping[str, Any] | None,
) -> list[ConditionNumbers]:
    sbls, sbls_intervals = sbls or {}, sbls_intervals or {}
    return [
        condition_numbers(r, sbls=sbls.get(r.name), sbls_interval=sbls_intervals.get(r.name))
        for r in reports
    ]


def report_tradeoff(
    reports: Iterable[ConditionResult],
    *,
    privacy: str = "eer",
    utility: str = "wer",
    reference: str | None = None,
    sbls: Mapping[str, float | None] | None = None,
    sbls_intervals: Mapping[str, Any] | None = None,
) -> Tradeoff:
    """:func:`privacy_utility_tradeoff` of condition reports.

    ``reference`` names the original speech's condition (default: the first under attacker
    ``original``); ``sbls`` maps condition names to their SBLS, ``sbls_intervals`` to its
    interval.
    """
    reports = list(reports)
    return privacy_utility_tradeoff(
        _numbers(reports, sbls, sbls_intervals),
        privacy=privacy,
        utility=utility,
        reference=reference_condition(reports, reference),
    )


def report_ranking(
    reports: Iterable[ConditionResult], *, reference: str | None = None, **options: Any
) -> VoicePrivacyRanking:
    """:func:`voiceprivacy_ranking` of condition reports.

    ``options`` (``bands``, ``attacker``, ``replicates``, ``group_eers``) go to it;
    ``reference`` is left out of it.
    """
    reports = list(reports)
    return voiceprivacy_ranking(
        _numbers(reports, None, None), reference=reference_condition(reports, reference), **options
    )


def report_callouts(
    reports: Iterable[ConditionResult], *, reference: str | None = None, **options: Any
) -> list[UtilityCallout]:
    """:func:`utility_callouts` of condition reports."""
    reports = list(reports)
    return utility_callouts(
        _numbers(reports, None, None), reference=reference_condition(reports, reference), **options
    )
