"""VoicePrivacy's ranking of anonymisation systems by EER bands, and the auditors' call-out.

The numbers of each condition come in as :class:`~voxmetrics.analysis._numbers.ConditionNumbers`
(:func:`report_ranking` and :func:`report_callouts` read them off the condition reports);
nothing here computes a metric. The Pareto front of privacy against utility is
:mod:`voxmetrics.analysis.tradeoff`.

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
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "EER_BANDS",
    "EER_DECIMALS",
    "LEAK_LID_MAX",
    "LEAK_LINKABILITY_FACTOR",
    "RANKING_ATTACKER",
    "STABILITY_METHOD",
    "RankedSystem",
    "RankingReplicates",
    "RankingStability",
    "UtilityCallout",
    "VoicePrivacyRanking",
    "challenge_eer",
    "challenge_eer_replicates",
    "in_band",
    "report_callouts",
    "report_ranking",
    "utility_callouts",
    "voiceprivacy_ranking",
]

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
    pct = _rounded(np.asarray(groups, dtype=np.float64) * 100)
    return _rounded(pct.mean(axis=0)) / 100


def _rounded(percent: NDArray[np.float64]) -> NDArray[np.float64]:
    """Percentages rounded to 0.001 % as :func:`challenge_eer` rounds each, element-wise.

    Python's ``round`` of each value (correctly rounded), not :func:`numpy.round` (which scales,
    rounds half to even and scales back, so that 6.0745 % may go down where ``round`` goes up):
    a replicate is banded exactly as the point is.
    """
    a = np.asarray(percent, dtype=np.float64)
    return np.array([round(v, EER_DECIMALS) for v in a.ravel().tolist()]).reshape(a.shape)


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
    eer = _rounded(eer * 100)  # percent, as the challenge prints and bands it
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


def report_ranking(
    reports: Iterable[ConditionResult], *, reference: str | None = None, **options: Any
) -> VoicePrivacyRanking:
    """:func:`voiceprivacy_ranking` of condition reports.

    ``options`` (``bands``, ``attacker``, ``replicates``, ``group_eers``) go to it;
    ``reference`` is left out of it.
    """
    reports = list(reports)
    return voiceprivacy_ranking(
        [condition_numbers(r) for r in reports],
        reference=reference_condition(reports, reference),
        **options,
    )


def report_callouts(
    reports: Iterable[ConditionResult], *, reference: str | None = None, **options: Any
) -> list[UtilityCallout]:
    """:func:`utility_callouts` of condition reports."""
    reports = list(reports)
    return utility_callouts(
        [condition_numbers(r) for r in reports],
        reference=reference_condition(reports, reference),
        **options,
    )
