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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the thresholds, the stability rule and every cell."""
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
) -> ReportCard:
    """The report card of condition reports; ``sbls`` maps condition names to their SBLS.

    ``sbls_intervals`` maps condition names to the bootstrap interval of their SBLS
    (:func:`voxmetrics.analysis.sbls.sbls_intervals`), shown beside the value.

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
    return ReportCard(
        conditions=tuple(r.name for r in reports),
        cells=tuple(
            _cells(r, sbls.get(r.name), (sbls_intervals or {}).get(r.name)) for r in reports
        ),
    )
