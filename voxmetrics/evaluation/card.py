"""The report card: one line per condition, each number coloured by a documented threshold.

It grades condition results (:class:`~voxmetrics.evaluation.result.ConditionReport`); the
report and the dashboard show it (:mod:`voxmetrics.plots.card`).

The thresholds (:data:`REPORT_CARD_THRESHOLDS`) are VoxMetrics' reading aids, not legal limits:

============================  ==========================  ==================  ==============
Metric                        ok                          caution             risk
============================  ==========================  ==================  ==============
EER (higher is safer)         >= 0.45                     0.30 to < 0.45      < 0.30
LIDmax, bits (lower)          < 0.5                       0.5 to < 1          >= 1
ZEBRA tag (lower)             0, A                        B, C                D, E, F
Linkability / chance (lower)  <= 1.5x                     1.5x to 2x          > 2x
SBLS (higher is safer)        >= 0.9                      0.75 to < 0.9       < 0.75
WER (lower is more useful)    < 0.10                      0.10 to < 0.30      >= 0.30
UAR (higher is more useful)   >= 0.50                     0.35 to < 0.50      < 0.35
============================  ==========================  ==================  ==============

Why these values: an EER within 0.05 of chance is what a 1-to-1 evaluation calls private
(VoicePrivacy); one bit of LIDmax halves the attacker's uncertainty about the worst-exposed
trial's speaker (Šterns et al. 2025); ZEBRA tags D and above mean a likelihood ratio of 10^4 or more
for some trial, "very strong" evidence on forensic verbal scales (Nautsch et al. 2020); linkability
above twice chance is the call-out level of :mod:`voxmetrics.evaluation.threat`; the SBLS bands
bracket the systems of Seo et al.'s (2025) Table 3 (0.90 for the best, 0.72 for the weakest).

Utility beside privacy, so that no system looks good for free: a system that destroys the speech
is private at no merit. WER and UAR (fractions) are graded by how much of the speech's use is
left, "risk" meaning that little is: the original LibriSpeech test speech has a WER near 0.02
and VoicePrivacy 2024's baselines stay under 0.10 (Tomashenko et al. 2024), while a WER of 0.30
garbles about one word in three; the UAR of four emotions is 0.25 at chance and near 0.70 on the
original IEMOCAP speech, so 0.50 keeps twice chance and 0.35 little more than chance. A
condition without utility numbers reads "utility unknown" (level n/a): its privacy was bought at
an unknown price.

One verdict per number, one rule for every cell (:mod:`voxmetrics.analysis.verdicts`, which
the threat call-outs and the ranking's call-out read too). With a bootstrap, a number whose 95 %
interval is not beyond its chance level (the value of the condition's own scores with the
speaker information removed) reads "≈ chance", and is "ok" only when chance and the whole
interval are in the ok band and chance is below its ceiling (LIDmax's log2 N); a number whose
interval reaches from the ok band into the risk band cannot tell ok from risk; a number whose
ceiling at this N is not in the risk band can never say "risk". Each of these cells is
"uninformative at N = n" (the N of enrolled identities), never green, whatever the metric, so
linkability and LIDmax of one row agree at small N. A sample maximum has no sound percentile
interval (a resampled maximum never exceeds the observed one), so LIDmax is shown with its 0.95
quantile and that quantile's 95 % interval, and the rule uses that quantile.

Each cell also says how firm its level is: the share of the speaker-bootstrap replicates whose
number has the same level (utility resampled over its own speakers; a utility known only as a
number has no replicates and is taken as fixed). A cell that fewer than 80 % of the replicates
keep is marked as flipping often.

A verdict holds only against the attackers tried. When a study holds several attackers (scoring
back-ends, each condition with its attacker recipe) of one system at one knowledge level, the
card judges the strongest, the one with the lowest dev EER (the rule of the sweep: chosen on
dev, reported on eval), names it, and lists the weaker ones as left off
(:mod:`voxmetrics.analysis.strongest`). A row whose attacker may be too weak (a weak-attacker
finding in its recipe) says so with its reasons: its privacy may be overestimated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from voxmetrics.analysis.strongest import StrongestAttackers, weak_attacker_message
from voxmetrics.analysis.verdicts import (
    FLIP_MARK,
    FLIP_SHARE,
    LEVELS,
    REPORT_CARD_THRESHOLDS,
    UTILITY_UNKNOWN,
    ZEBRA_TAGS,
    CardThreshold,
    Level,
    Verdict,
    condition_verdicts,
)
from voxmetrics.evaluation.result import ConditionReport

__all__ = [
    "FLIP_MARK",
    "FLIP_SHARE",
    "LEVELS",
    "REPORT_CARD_THRESHOLDS",
    "UTILITY_UNKNOWN",
    "ZEBRA_TAGS",
    "CardCell",
    "CardThreshold",
    "ReportCard",
    "report_card",
]


@dataclass(frozen=True)
class CardCell:
    """One coloured number of the card."""

    value: float | str | None
    """The number (the tag for ZEBRA; None when not available)."""
    text: str
    """How it is shown (with its interval or ratio, and "≈ chance" or "uninformative at N = n"
    when the rule says so)."""
    level: Level
    """ok, caution, risk, uninformative or n/a."""
    note: str = ""
    """Why the level is not read off the thresholds (empty when it is)."""
    stability: float | None = None
    """Share of the speaker-bootstrap replicates with the same level (None without
    replicates, or for an uninformative or n/a cell)."""
    n_replicates: int = 0
    """Replicates behind :attr:`stability`."""

    @property
    def flips(self) -> bool:
        """Whether fewer than :data:`FLIP_SHARE` of the replicates keep the level."""
        return self.stability is not None and self.stability < FLIP_SHARE

    @classmethod
    def of(cls, verdict: Verdict) -> CardCell:
        """The cell of one verdict."""
        return cls(
            verdict.value,
            verdict.text,
            verdict.level,
            verdict.note,
            verdict.stability,
            verdict.n_replicates,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the number, its text and level, why, and how firm it is."""
        return {
            "value": self.value,
            "text": self.text,
            "level": self.level,
            "note": self.note,
            "stability": self.stability,
            "n_replicates": self.n_replicates,
            "flips": self.flips,
        }


@dataclass(frozen=True)
class ReportCard:
    """One row of :class:`CardCell` per condition, in the order of the thresholds."""

    conditions: tuple[str, ...]
    """Condition names, in row order."""
    cells: tuple[tuple[CardCell, ...], ...]
    """``cells[i][k]``: condition i, metric k of :data:`REPORT_CARD_THRESHOLDS`."""
    attackers: Mapping[str, str] = field(default_factory=dict)
    """Condition -> the attacker its row is judged against (its back-end, and how it was chosen
    as the strongest tried), for the rows whose attacker is known (an attacker recipe)."""
    not_judged: Mapping[str, str] = field(default_factory=dict)
    """Conditions left off the card as weaker attackers of a system than the one judged, each
    with why (:mod:`voxmetrics.analysis.strongest`)."""
    weak_attackers: Mapping[str, str] = field(default_factory=dict)
    """Condition -> the weak-attacker warning with its reasons, for the rows it holds for."""

    @property
    def keys(self) -> list[str]:
        """Metric keys, in column order."""
        return list(REPORT_CARD_THRESHOLDS)

    def frame(
        self, what: Literal["text", "level", "value", "note", "stability"] = "text"
    ) -> pd.DataFrame:
        """The card as a table of texts, levels, values, notes or stabilities, one row each."""
        labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
        rows = [[getattr(c, what) for c in row] for row in self.cells]
        df = pd.DataFrame(rows, columns=labels)
        df.insert(0, "Condition", list(self.conditions))
        return df

    def flipping(self) -> list[tuple[str, str, CardCell]]:
        """(condition, column label, cell) of every cell whose level flips often."""
        labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
        return [
            (name, label, cell)
            for name, row in zip(self.conditions, self.cells, strict=True)
            for label, cell in zip(labels, row, strict=True)
            if cell.flips
        ]

    def notes(self) -> list[tuple[str, str, str]]:
        """(condition, column label, why) of every cell whose level is not its point's."""
        labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
        return [
            (name, label, cell.note)
            for name, row in zip(self.conditions, self.cells, strict=True)
            for label, cell in zip(labels, row, strict=True)
            if cell.note
        ]

    def attacker_notes(self) -> list[tuple[str, str, str]]:
        """(condition, kind, text) of the attackers: judged, weak, or left off the card.

        ``judged``: the attacker a row is judged against; ``weak``: its weak-attacker warning;
        then ``not judged``: a weaker attacker of a system, left off the card, with why.
        """
        out = []
        for name in self.conditions:
            if name in self.attackers:
                out.append((name, "judged", self.attackers[name]))
            if name in self.weak_attackers:
                out.append((name, "weak", self.weak_attackers[name]))
        out += [(name, "not judged", why) for name, why in self.not_judged.items()]
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the thresholds, the stability rule, every cell and the attackers judged."""
        return {
            "thresholds": {k: t.explanation for k, t in REPORT_CARD_THRESHOLDS.items()},
            "stability": {
                "flip_share": FLIP_SHARE,
                "rule": "stability: the share of speaker-bootstrap replicates whose number "
                "has the cell's level; a cell fewer than flip_share of them keep flips",
            },
            "conditions": {
                name: {k: c.to_dict() for k, c in zip(self.keys, row, strict=True)}
                for name, row in zip(self.conditions, self.cells, strict=True)
            },
            "attackers": dict(self.attackers),
            "not_judged": dict(self.not_judged),
            "weak_attackers": dict(self.weak_attackers),
        }


def _cells(
    report: ConditionReport, sbls: float | None, sbls_interval: Any = None
) -> tuple[CardCell, ...]:
    verdicts = condition_verdicts(report, sbls=sbls, sbls_interval=sbls_interval)
    return tuple(CardCell.of(v) for v in verdicts.values())


def report_card(
    reports: Iterable[ConditionReport],
    *,
    sbls: Mapping[str, float | None] | None = None,
    sbls_intervals: Mapping[str, Any] | None = None,
    attackers: StrongestAttackers | None = None,
) -> ReportCard:
    """The report card of condition reports; ``sbls`` maps condition names to their SBLS.

    ``sbls_intervals`` maps condition names to the bootstrap interval of their SBLS
    (:func:`voxmetrics.analysis.sbls.sbls_intervals`), shown beside the value. ``attackers``
    (:func:`~voxmetrics.analysis.strongest.strongest_attackers` of the study's conditions)
    says which attacker each system is judged against: when several were tried on one
    system and knowledge level, the card judges the strongest (lowest dev EER), names it,
    and leaves the weaker ones off with why (:attr:`ReportCard.not_judged`). A row whose
    recipe holds a weak-attacker finding carries the warning
    (:attr:`ReportCard.weak_attackers`).

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> card = report_card(evaluate_study(demo_study(n_speakers=8), bootstrap=0))
    >>> card.frame("level").loc[0].tolist()
    ['plain', 'risk', 'risk', 'caution', 'risk', 'n/a', 'ok', 'ok']
    """
    reports = list(reports)
    sbls = sbls or {}
    left_out: dict[str, str] = {}
    if attackers is not None:
        names = {r.name for r in reports}
        left_out = {n: why for n, why in attackers.left_out().items() if n in names}
        reports = [r for r in reports if r.name not in left_out]
    labels = {} if attackers is None else {r.name: attackers.label(r.name) for r in reports}
    return ReportCard(
        conditions=tuple(r.name for r in reports),
        cells=tuple(
            _cells(r, sbls.get(r.name), (sbls_intervals or {}).get(r.name)) for r in reports
        ),
        attackers={n: label for n, label in labels.items() if label},
        not_judged=left_out,
        weak_attackers={
            r.name: weak_attacker_message(r.recipe)
            for r in reports
            if weak_attacker_message(r.recipe)
        },
    )
