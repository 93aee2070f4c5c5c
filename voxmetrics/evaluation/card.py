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

Chance first: with a bootstrap, linkability and LIDmax are coloured by their thresholds only
when their excess over the chance level of the condition's own scores is beyond the interval
(the interval's lower bound is above chance); otherwise the cell reads "≈ chance" and is "ok"
only when the chance level itself is ok. A number whose chance level sits at its ceiling (e.g.
LIDmax's chance at log2 N, as with few enrolled speakers and a steep calibration) or in the
caution or risk band cannot say "safe": its cell is "uninformative" ("uninformative at N = 5"),
never green. An unprotected condition therefore never gets an "ok" cell from the chance test.
A sample maximum has no sound percentile interval (a resampled maximum never exceeds the
observed one), so LIDmax is shown with its 0.95 quantile and that quantile's 95 % interval, and
the chance test uses that quantile.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from voxmetrics._types import MISSING
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.bootstrap import bounds_text
from voxmetrics.metrics.lid import clamp_lid_bits

__all__ = [
    "LEVELS",
    "REPORT_CARD_THRESHOLDS",
    "UTILITY_UNKNOWN",
    "ZEBRA_TAGS",
    "CardCell",
    "CardThreshold",
    "ReportCard",
    "report_card",
]

Level = Literal["ok", "caution", "risk", "uninformative", "n/a"]
LEVELS: tuple[Level, ...] = ("ok", "caution", "risk", "uninformative", "n/a")
"""The levels of a card cell, safest first; "uninformative" when the number cannot tell this
condition from chance because chance itself is not ok (e.g. at its ceiling log2 N); "n/a" when
the metric is not available."""
ZEBRA_TAGS = ("0", "A", "B", "C", "D", "E", "F")
"""ZEBRA's categorical tags in increasing order of worst-case disclosure (docs, Methods > ZEBRA)."""


@dataclass(frozen=True)
class CardThreshold:
    """How one card metric is coloured."""

    key: str
    """Column key of the card."""
    label: str
    """Column label."""
    higher_is_safer: bool
    """Direction of the metric."""
    caution: float
    """Boundary between ok and caution."""
    risk: float
    """Boundary between caution and risk."""
    boundary_is_worse: bool = True
    """Whether a value exactly on a boundary takes the worse level."""
    explanation: str = ""
    """The threshold in words, for tables and tooltips."""

    def level(self, value: float | None) -> Level:
        """The level of ``value`` (n/a for None or NaN).

        Examples
        --------
        >>> REPORT_CARD_THRESHOLDS["lid_max"].level(1.0), REPORT_CARD_THRESHOLDS["eer"].level(0.46)
        ('risk', 'ok')
        """
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"

        def at_least_as_bad_as(bound: float) -> bool:
            if value == bound:
                return self.boundary_is_worse
            return value < bound if self.higher_is_safer else value > bound

        if at_least_as_bad_as(self.risk):
            return "risk"
        if at_least_as_bad_as(self.caution):
            return "caution"
        return "ok"


REPORT_CARD_THRESHOLDS: dict[str, CardThreshold] = {
    t.key: t
    for t in (
        CardThreshold(
            "eer",
            "EER",
            higher_is_safer=True,
            caution=0.45,
            risk=0.30,
            boundary_is_worse=False,
            explanation="ok >= 0.45, caution 0.30-0.45, risk < 0.30 (higher is safer)",
        ),
        CardThreshold(
            "lid_max",
            "LIDmax (bits)",
            higher_is_safer=False,
            caution=0.5,
            risk=1.0,
            explanation="ok < 0.5, caution 0.5-1, risk >= 1 bit (lower is safer)",
        ),
        CardThreshold(
            "zebra_tag",
            "ZEBRA tag",
            higher_is_safer=False,
            caution=2,
            risk=4,
            explanation="ok 0 or A, caution B or C, risk D, E or F (lower is safer)",
        ),
        CardThreshold(
            "linkability_ratio",
            "Linkability vs chance",
            higher_is_safer=False,
            caution=1.5,
            risk=2.0,
            boundary_is_worse=False,
            explanation="ok <= 1.5x chance, caution up to 2x, risk above 2x (lower is safer)",
        ),
        CardThreshold(
            "sbls",
            "SBLS",
            higher_is_safer=True,
            caution=0.9,
            risk=0.75,
            boundary_is_worse=False,
            explanation="ok >= 0.9, caution 0.75-0.9, risk < 0.75 (higher is safer)",
        ),
        CardThreshold(
            "wer",
            "WER",
            higher_is_safer=False,
            caution=0.10,
            risk=0.30,
            explanation="ok < 0.10, caution 0.10-0.30, risk >= 0.30 (lower is more useful)",
        ),
        CardThreshold(
            "uar",
            "UAR",
            higher_is_safer=True,
            caution=0.50,
            risk=0.35,
            boundary_is_worse=False,
            explanation="ok >= 0.50, caution 0.35-0.50, risk < 0.35 (higher is more useful)",
        ),
    )
}
"""The card's columns and thresholds (module docstring)."""


@dataclass(frozen=True)
class CardCell:
    """One coloured number of the card."""

    value: float | str | None
    """The number (the tag for ZEBRA; None when not available)."""
    text: str
    """How it is shown (with its interval or ratio)."""
    level: Level
    """ok, caution, risk or n/a."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {"value": self.value, "text": self.text, "level": self.level}


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

    def frame(self, what: Literal["text", "level", "value"] = "text") -> pd.DataFrame:
        """The card as a table of texts, levels or values, one row per condition."""
        labels = [t.label for t in REPORT_CARD_THRESHOLDS.values()]
        rows = [[getattr(c, what) for c in row] for row in self.cells]
        df = pd.DataFrame(rows, columns=labels)
        df.insert(0, "Condition", list(self.conditions))
        return df

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the thresholds and every cell."""
        return {
            "thresholds": {k: t.explanation for k, t in REPORT_CARD_THRESHOLDS.items()},
            "conditions": {
                name: {k: c.to_dict() for k, c in zip(self.keys, row, strict=True)}
                for name, row in zip(self.conditions, self.cells, strict=True)
            },
        }


def _beyond_chance(report: ConditionReport, key: str) -> bool | None:
    """Whether ``key``'s interval lies above its chance level (None without both)."""
    if report.replicates is None or report.chance is None:
        return None
    iv = report.intervals.get(key)
    chance = report.chance.values.get(key)
    if iv is None or iv.low is None or chance is None:
        return None
    return iv.low > chance


def _at_chance(
    report: ConditionReport, key: str, threshold: CardThreshold, text: str
) -> tuple[Level, str]:
    """The level and text of a number that is not beyond its chance level.

    "≈ chance" is "ok" only when the chance level itself is ok; a chance level at the ceiling
    log2 N (or in the caution or risk band) makes the number "uninformative" at this N.
    """
    chance = None if report.chance is None else report.chance.values.get(key)
    if chance is None:  # not reached: _beyond_chance gave False, so both exist
        return "ok", text + " ≈ chance"
    n = report.lid.n_enrolled if report.lid is not None else report.baseline.n_enrolled
    at_ceiling = chance >= math.log2(n) - 1e-3
    if threshold.level(chance) == "ok" and not at_ceiling:
        return "ok", text + " ≈ chance"
    why = "at the ceiling log2 N" if at_ceiling else f"{chance:.2f} bits"
    return "uninformative", f"{text} ≈ chance ({why}): uninformative at N = {n}"


def _cells(
    report: ConditionReport, sbls: float | None, sbls_interval: Any = None
) -> tuple[CardCell, ...]:
    t = REPORT_CARD_THRESHOLDS
    b = report.baseline
    eer = CardCell(b.eer, f"{b.eer:.3f}", t["eer"].level(b.eer))
    sparse = report.trials_used is not None and report.trials_used.reason is not None
    if report.lid is None:
        why = "no complete trial" if sparse else "no dev set"
        lid = CardCell(None, f"{MISSING} ({why})", "n/a")
    else:
        n = report.lid.n_enrolled  # shown within [-64 bits, log2 N]
        v = report.lid.lid_max
        text = f"{clamp_lid_bits(v, n):.2f}"
        iv = report.intervals.get("lid_q95")
        if iv is not None and iv.low is not None and iv.high is not None:
            text += f" (q95 {iv.map(lambda x: clamp_lid_bits(x, n)):.2f})"
        level = t["lid_max"].level(v)
        if _beyond_chance(report, "lid_q95") is False:
            level, text = _at_chance(report, "lid_q95", t["lid_max"], text)
        lid = CardCell(v, text, level)
    tag = report.zebra.tag
    zeb = CardCell(
        tag,
        f"{tag} (log10 l = {report.zebra.log10_l:.2f})",
        t["zebra_tag"].level(float(ZEBRA_TAGS.index(tag))) if tag in ZEBRA_TAGS else "n/a",
    )
    chance = report.chance_linkability
    if b.linkability is None or chance is None:
        link = CardCell(None, f"{MISSING} (no complete trial)", "n/a")
    else:
        ratio = b.linkability / chance
        text = f"{b.linkability:.1%} ({ratio:.1f}x chance {chance:.1%})"
        level = t["linkability_ratio"].level(ratio)
        liv = report.intervals.get("linkability")
        if liv is not None and liv.low is not None and liv.high is not None:
            text += f" {liv.bounds_text('.1%')}"
        if _beyond_chance(report, "linkability") is False:
            level, text = "ok", text + " ≈ chance"  # chance is 1x chance: always in the ok band
        link = CardCell(ratio, text, level)
    if sbls is None:
        sb = CardCell(None, MISSING, "n/a")
    else:
        text = f"{sbls:.3f}"
        siv = sbls_interval
        if siv is not None and siv.low is not None and siv.high is not None:
            text += f" {siv.bounds_text('.3f')}"
        sb = CardCell(sbls, text, t["sbls"].level(sbls))
    return (eer, lid, zeb, link, sb, *_utility_cells(report))


UTILITY_UNKNOWN = "utility unknown"
"""The text of a utility cell of a condition without that number."""


def _utility_cells(report: ConditionReport) -> tuple[CardCell, CardCell]:
    """The WER and UAR cells, with their intervals where known ("utility unknown" without)."""
    u = report.utility
    out = []
    for key in ("wer", "uar"):
        v = None if u is None else u.value(key)
        if v is None or math.isnan(v):
            out.append(CardCell(None, UTILITY_UNKNOWN, "n/a"))
            continue
        text = f"{v:.3f}"
        iv = None if u is None else u.intervals.get(key)
        if iv is not None:
            text += f" {bounds_text(*iv, '.3f')}"
        out.append(CardCell(float(v), text, REPORT_CARD_THRESHOLDS[key].level(float(v))))
    return out[0], out[1]


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
