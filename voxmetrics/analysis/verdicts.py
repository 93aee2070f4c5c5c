"""One verdict per number: the levels of the report card, read by one rule everywhere.

What this is: the thresholds of the report card (:data:`REPORT_CARD_THRESHOLDS`), the one rule
that turns a number, its 95 % interval and its chance level into a level (:func:`judge`), the
verdicts of a condition's privacy numbers (:func:`condition_verdicts`) and how often each
level holds under resampling of speakers (:func:`replicate_stability`). The card
(:mod:`voxmetrics.evaluation.card`), the threat call-outs (:mod:`voxmetrics.evaluation.threat`)
and the auditors' call-out of the ranking (:mod:`voxmetrics.analysis.ranking`) all read their
levels here, so a number never gets two verdicts. What this is not: the thresholds' rationale
and the card's layout (the card module) or any metric (computed below).

**The rule** (:func:`judge`). A number is first read against its thresholds. With a 95 %
speaker-bootstrap interval and a chance level (the number's value when the scores carry no
speaker information, on the condition's own scores):

1. A number whose interval is not beyond its chance level reads "≈ chance". It is "ok" only
   when chance at this N is safe: the number's chance level is in the ok band and below its
   ceiling (LIDmax's log2 N), and so is the chance level of every 1-to-N number ranked against
   the same N identities (LIDmax and linkability rank the same trials against the same N: when
   LIDmax's chance says the N is too small, linkability's "≈ chance" says nothing either).
   Otherwise it is "uninformative at N = n": the data cannot tell this condition from chance,
   and chance itself is not safe.
2. A number beyond chance (or without a chance level) whose interval, with its point
   estimate, reaches from the ok band into the risk band cannot tell ok from risk:
   "uninformative at N = n", whatever its point estimate.
3. A number whose ceiling at this N is not in the risk band (linkability at N = 2 is at most
   2x chance) can never say "risk", so it cannot say "ok" either: "uninformative at N = n".

Otherwise the level is the point estimate's. Without an interval only rule 3 applies.

**Stability** (:func:`replicate_stability`). The share of the speaker-bootstrap replicates in
which the number (recomputed on the replicate) has the cell's level; a cell that fewer than
:data:`FLIP_SHARE` of the replicates keep "flips often". An "uninformative" or "n/a" cell has no
stability (no level to keep).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.analysis._result import ConditionResult
from voxmetrics.metrics.lid import clamp_lid_bits

__all__ = [
    "FLIP_MARK",
    "FLIP_SHARE",
    "LEVELS",
    "REPORT_CARD_THRESHOLDS",
    "ZEBRA_TAGS",
    "CardThreshold",
    "Level",
    "Verdict",
    "condition_verdicts",
    "judge",
    "replicate_levels",
    "replicate_stability",
    "zebra_tag_index",
]

Level = Literal["ok", "caution", "risk", "uninformative", "n/a"]
LEVELS: tuple[Level, ...] = ("ok", "caution", "risk", "uninformative", "n/a")
"""The levels of a card cell, safest first; "uninformative" when the number cannot say whether
this condition is safe at this N (module docstring); "n/a" when the metric is not available."""
ZEBRA_TAGS = ("0", "A", "B", "C", "D", "E", "F")
"""ZEBRA's categorical tags in increasing order of worst-case disclosure (docs, Methods > ZEBRA)."""
FLIP_SHARE = 0.8
"""A cell whose level fewer than this share of the bootstrap replicates keep "flips often"."""
FLIP_MARK = "⇅"
"""The mark a verdict's text ends with when its level flips often."""

_ZEBRA_BOUNDS = np.array([0.0, 1.0, 2.0, 4.0, 5.0, 6.0])
"""Upper ends of the tags 0, A..E (a tag X holds lo < |log10 l| <= hi; above 6: F)."""


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

    def levels(self, values: ArrayLike) -> NDArray[np.str_]:
        """:meth:`level` of every value (vectorised; NaN is "n/a").

        Examples
        --------
        >>> REPORT_CARD_THRESHOLDS["eer"].levels([0.5, 0.45, 0.3, 0.1, np.nan]).tolist()
        ['ok', 'ok', 'caution', 'risk', 'n/a']
        """
        v = np.asarray(values, dtype=np.float64)
        sign = 1.0 if self.higher_is_safer else -1.0
        s, caution, risk = sign * v, sign * self.caution, sign * self.risk
        if self.boundary_is_worse:
            is_risk, is_caution = s <= risk, s <= caution
        else:
            is_risk, is_caution = s < risk, s < caution
        out = np.where(is_risk, "risk", np.where(is_caution, "caution", "ok")).astype("<U13")
        out[np.isnan(v)] = "n/a"
        return out


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
"""The card's columns and thresholds (the card module's docstring says why)."""


def zebra_tag_index(log10_l: ArrayLike) -> NDArray[np.float64]:
    """Position of each worst case's ZEBRA tag in :data:`ZEBRA_TAGS` (NaN stays NaN).

    Examples
    --------
    >>> zebra_tag_index([0.0, 0.6, 1.0, 1.5, 4.0, 6.0, 7.0]).tolist()
    [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 6.0]
    """
    v = np.abs(np.asarray(log10_l, dtype=np.float64))
    out = np.searchsorted(_ZEBRA_BOUNDS, v, side="left").astype(np.float64)
    out[np.isnan(v)] = np.nan
    return out


# ---------------------------------------------------------------- the one rule


def _beyond_chance(t: CardThreshold, interval: tuple[float, float], chance: float) -> bool:
    """Whether the interval lies on the unsafe side of chance (the number is not chance)."""
    lo, hi = interval
    return hi < chance if t.higher_is_safer else lo > chance


def judge(
    t: CardThreshold,
    value: float | None,
    *,
    interval: tuple[float, float] | None = None,
    chance: float | None = None,
    ceiling: float | None = None,
    n: int | None = None,
    small_n: str | None = None,
) -> tuple[Level, str]:
    """The level of a number and, when not read off its thresholds, why (module docstring).

    Parameters
    ----------
    t : CardThreshold
        The number's thresholds.
    value : float or None
        The point estimate (None or NaN: "n/a").
    interval : (float, float), optional
        Its 95 % interval, in the threshold's units.
    chance : float, optional
        Its chance level, in the same units.
    ceiling : float, optional
        The most unsafe value it can take at this N (log2 N for LIDmax, N for linkability
        against chance).
    n : int, optional
        The number of enrolled identities, named in the verdict.
    small_n : str, optional
        Why chance at this N says nothing about the 1-to-N numbers ranked against the same N
        (another of them has an unsafe chance level); a number at chance is then
        "uninformative at N = n" too.

    Returns
    -------
    (level, note)
        ``note`` is empty when the level is the point estimate's, else it starts with
        "≈ chance" or "uninformative at N = n" and says why.

    Examples
    --------
    >>> t = REPORT_CARD_THRESHOLDS["linkability_ratio"]
    >>> judge(t, 3.0, interval=(2.5, 3.5), chance=1.0, ceiling=40, n=40)
    ('risk', '')
    >>> judge(t, 1.1, interval=(0.6, 1.4), chance=1.0, ceiling=40, n=40)
    ('ok', '≈ chance')
    >>> judge(t, 1.4, interval=(0.6, 2.0), chance=1.0, ceiling=5, n=5,
    ...       small_n="LIDmax's chance is 0.52 bits, in the caution band")[1]
    "≈ chance, uninformative at N = 5: LIDmax's chance is 0.52 bits, in the caution band"
    >>> judge(t, 2.0, ceiling=2, n=2)[0]
    'uninformative'
    """
    level = t.level(value)
    if level == "n/a":
        return "n/a", ""
    at = f"uninformative at N = {n}" if n is not None else "uninformative at this N"
    if ceiling is not None and t.level(ceiling) != "risk":
        return "uninformative", f"{at}: even its ceiling {ceiling:.2f} is not in the risk band"
    if interval is None or any(x is None or not math.isfinite(x) for x in interval):
        return level, ""
    lo, hi = float(interval[0]), float(interval[1])
    if chance is not None and math.isfinite(chance) and not _beyond_chance(t, (lo, hi), chance):
        if ceiling is not None and chance >= ceiling - 1e-3:
            why = "chance is at the ceiling"
        elif t.level(chance) != "ok":
            why = f"chance itself is {chance:.2f}, in the {t.level(chance)} band"
        elif small_n:
            why = small_n
        else:
            return "ok", "≈ chance"
        return "uninformative", f"≈ chance, {at}: {why}"
    if {level, t.level(lo), t.level(hi)} >= {"ok", "risk"}:
        return "uninformative", f"{at}: its interval [{lo:.2f}, {hi:.2f}] spans ok to risk"
    return level, ""


def replicate_levels(t: CardThreshold, reps: ArrayLike) -> NDArray[np.str_]:
    """The threshold level of each replicate of a number (NaN: "n/a")."""
    return t.levels(reps)


def replicate_stability(
    t: CardThreshold, level: str, reps: ArrayLike | None
) -> tuple[float | None, int]:
    """The share of replicates whose level is ``level``, and how many replicates were defined.

    None when ``level`` is not a threshold level (uninformative, n/a) or no replicate is
    defined.

    Examples
    --------
    >>> replicate_stability(REPORT_CARD_THRESHOLDS["eer"], "caution", [0.31, 0.35, 0.29, 0.4])
    (0.75, 4)
    """
    if reps is None or level not in ("ok", "caution", "risk"):
        return None, 0
    r = np.asarray(reps, dtype=np.float64).ravel()
    r = r[np.isfinite(r)]
    if r.size == 0:
        return None, 0
    return float(np.mean(t.levels(r) == level)), int(r.size)


@dataclass(frozen=True)
class Verdict:
    """One number judged: its text, level, why, and how often its level holds."""

    key: str
    """The card column (a key of :data:`REPORT_CARD_THRESHOLDS`)."""
    value: float | str | None
    """The number (the tag for ZEBRA; None when not available)."""
    text: str
    """How it is shown: the number, its interval or ratio, "≈ chance" or "uninformative at
    N = n" when the rule says so, and :data:`FLIP_MARK` when the level flips often."""
    level: Level
    """ok, caution, risk, uninformative or n/a."""
    note: str = ""
    """Why the level is not the point estimate's (empty when it is)."""
    stability: float | None = None
    """Share of the bootstrap replicates with the same level (None without replicates, or for
    an uninformative or n/a cell)."""
    n_replicates: int = 0
    """Replicates behind :attr:`stability`."""

    def __post_init__(self) -> None:
        if self.flips and not self.text.endswith(FLIP_MARK):
            object.__setattr__(self, "text", f"{self.text} {FLIP_MARK}")

    @property
    def flips(self) -> bool:
        """Whether fewer than :data:`FLIP_SHARE` of the replicates keep the level."""
        return self.stability is not None and self.stability < FLIP_SHARE

    @property
    def leaks(self) -> bool:
        """Whether the number says the condition leaks (its level is "risk")."""
        return self.level == "risk"


def _iv(iv: Any) -> tuple[float, float] | None:
    if iv is None or iv.low is None or iv.high is None:
        return None
    return float(iv.low), float(iv.high)


def _reps(report: ConditionResult, key: str) -> NDArray[np.float64] | None:
    reps = report.replicates
    if reps is None or key not in reps.reps:
        return None
    return np.asarray(reps.reps[key], dtype=np.float64)


def _with_note(text: str, note: str) -> str:
    """The cell's text with the verdict's first words ("≈ chance", "uninformative at N = n")."""
    if not note:
        return text
    return f"{text} {note.split(':', 1)[0]}"


def eer_verdict(report: ConditionResult) -> Verdict:
    """The EER judged by the rule (its interval; the EER has no chance level here)."""
    t = REPORT_CARD_THRESHOLDS["eer"]
    b = report.baseline
    level, note = judge(t, b.eer, interval=_iv(report.intervals.get("eer")), n=b.n_enrolled)
    share, n_rep = replicate_stability(t, level, _reps(report, "eer"))
    return Verdict("eer", b.eer, _with_note(f"{b.eer:.3f}", note), level, note, share, n_rep)


def lid_max_verdict(report: ConditionResult, *, sparse: bool = False) -> Verdict:
    """LIDmax judged by the rule: its q95's interval and chance level, its ceiling log2 N."""
    t = REPORT_CARD_THRESHOLDS["lid_max"]
    if report.lid is None:
        why = "– (no complete trial)" if sparse else "– (no dev set)"
        return Verdict("lid_max", None, why, "n/a")
    n = report.lid.n_enrolled  # shown within [-64 bits, log2 N]
    v = report.lid.lid_max
    text = f"{clamp_lid_bits(v, n):.2f}"
    iv = report.intervals.get("lid_q95")
    q_iv = _iv(iv)
    if iv is not None and q_iv is not None:
        q, lo, hi = (clamp_lid_bits(x, n) for x in (iv.estimate, iv.low, iv.high))
        text += f" (q95 {q:.2f} [{lo:.2f}, {hi:.2f}])"
    chance = None
    if report.replicates is not None and report.chance is not None:
        chance = report.chance.values.get("lid_q95")
    level, note = judge(
        t, v, interval=q_iv, chance=chance, ceiling=math.log2(n) if n > 1 else None, n=n
    )
    # the level read off the q95 (at chance) is held by the q95's replicates, else the maximum's
    reps = _reps(report, "lid_q95" if note.startswith("≈") else "lid_max")
    share, n_rep = replicate_stability(t, level, reps)
    return Verdict("lid_max", v, _with_note(text, note), level, note, share, n_rep)


def _lid_chance_unsafe(report: ConditionResult) -> str | None:
    """Why LIDmax's chance level says the N is too small (None when it does not, or no LID).

    LIDmax and linkability rank the same trials against the same N: a chance level of LIDmax
    at its ceiling log2 N or outside the ok band makes "≈ chance" meaningless for both.
    """
    if report.lid is None or report.chance is None or report.replicates is None:
        return None
    chance = report.chance.values.get("lid_q95")
    if chance is None or not math.isfinite(chance):
        return None
    n = report.lid.n_enrolled
    t = REPORT_CARD_THRESHOLDS["lid_max"]
    if n > 1 and chance >= math.log2(n) - 1e-3:
        return "LIDmax's chance is at its ceiling log2 N"
    if t.level(chance) != "ok":
        return f"LIDmax's chance is {chance:.2f} bits, in the {t.level(chance)} band"
    return None


def linkability_verdict(report: ConditionResult) -> Verdict:
    """Linkability against chance 1/N judged by the rule (ratio to chance; ceiling N)."""
    t = REPORT_CARD_THRESHOLDS["linkability_ratio"]
    link, chance = report.baseline.linkability, report.chance_linkability
    if link is None or chance is None:
        return Verdict("linkability_ratio", None, "– (no complete trial)", "n/a")
    ratio = link / chance
    n = round(1.0 / chance)
    text = f"{link:.1%} ({ratio:.1f}x chance {chance:.1%})"
    liv = _iv(report.intervals.get("linkability"))
    if liv is not None:
        text += f" [{liv[0]:.1%}, {liv[1]:.1%}]"
    ratio_iv = None if liv is None else (liv[0] / chance, liv[1] / chance)
    with_chance = report.replicates is not None and report.chance is not None
    level, note = judge(
        t,
        ratio,
        interval=ratio_iv,
        chance=1.0 if with_chance else None,
        ceiling=float(n),
        n=n,
        small_n=_lid_chance_unsafe(report),
    )
    reps = _reps(report, "linkability")
    share, n_rep = replicate_stability(t, level, None if reps is None else reps / chance)
    return Verdict("linkability_ratio", ratio, _with_note(text, note), level, note, share, n_rep)


def zebra_verdict(report: ConditionResult) -> Verdict:
    """The ZEBRA tag by its thresholds (a worst case: no interval of its own)."""
    t = REPORT_CARD_THRESHOLDS["zebra_tag"]
    if report.zebra is None:
        return Verdict("zebra_tag", None, "–", "n/a")
    tag = report.zebra.tag
    level = t.level(float(ZEBRA_TAGS.index(tag))) if tag in ZEBRA_TAGS else "n/a"
    reps = _reps(report, "log10_l")
    share, n_rep = replicate_stability(t, level, None if reps is None else zebra_tag_index(reps))
    text = f"{tag} (log10 l = {report.zebra.log10_l:.2f})"
    return Verdict("zebra_tag", tag, text, level, "", share, n_rep)


def sbls_verdict(sbls: float | None, interval: Any = None) -> Verdict:
    """SBLS judged by the rule (its interval; no chance level, no replicates kept)."""
    t = REPORT_CARD_THRESHOLDS["sbls"]
    if sbls is None:
        return Verdict("sbls", None, "–", "n/a")
    text = f"{sbls:.3f}"
    iv = _iv(interval)
    if iv is not None:
        text += f" [{iv[0]:.3f}, {iv[1]:.3f}]"
    level, note = judge(t, sbls, interval=iv)
    return Verdict("sbls", sbls, _with_note(text, note), level, note)


UTILITY_UNKNOWN = "utility unknown"
"""The text of a utility cell of a condition without that number."""


def utility_verdict(report: ConditionResult, key: str) -> Verdict:
    """WER or UAR judged by the rule (its interval over its own speakers, where known)."""
    t = REPORT_CARD_THRESHOLDS[key]
    u = report.utility
    v = None if u is None else u.value(key)
    if v is None or math.isnan(v):
        return Verdict(key, None, UTILITY_UNKNOWN, "n/a")
    text = f"{v:.3f}"
    iv = None if u is None else u.intervals.get(key)
    if iv is not None:
        text += f" [{iv[0]:.3f}, {iv[1]:.3f}]"
    level, note = judge(t, float(v), interval=None if iv is None else (iv[0], iv[1]))
    reps = None if u is None else u.replicates.get(key)
    share, n_rep = replicate_stability(t, level, reps)
    return Verdict(key, float(v), _with_note(text, note), level, note, share, n_rep)


def condition_verdicts(
    report: ConditionResult,
    *,
    sbls: float | None = None,
    sbls_interval: Any = None,
) -> dict[str, Verdict]:
    """Every card number of one condition judged by the rule, by card key.

    ``sbls`` is the condition's SBLS (not part of the report) and ``sbls_interval`` its
    interval. The keys are those of :data:`REPORT_CARD_THRESHOLDS`, in order.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_condition
    >>> from voxmetrics.synth import demo_study
    >>> v = condition_verdicts(evaluate_condition(demo_study(n_speakers=6).get("plain")))
    >>> v["eer"].level, v["linkability_ratio"].leaks
    ('risk', True)
    """
    used = report.trials_used
    sparse = used is not None and used.reason is not None
    out = {
        "eer": eer_verdict(report),
        "lid_max": lid_max_verdict(report, sparse=sparse),
        "zebra_tag": zebra_verdict(report),
        "linkability_ratio": linkability_verdict(report),
        "sbls": sbls_verdict(sbls, sbls_interval),
        "wer": utility_verdict(report, "wer"),
        "uar": utility_verdict(report, "uar"),
    }
    return {k: out[k] for k in REPORT_CARD_THRESHOLDS}


def verdict_levels(verdicts: Mapping[str, Verdict]) -> dict[str, str]:
    """The level of each verdict by key."""
    return {k: v.level for k, v in verdicts.items()}
