"""Utility of an anonymised condition: what the anonymisation costs the speech's other uses.

VoicePrivacy judges every anonymiser on privacy against utility: the word error rate of an
ASR system (WER), the unweighted average recall of speech emotion recognition (UAR) and the
pitch correlation between each original recording and its anonymised copy (rho_F0). Every
number is a fraction (VoicePrivacy's percent / 100), like the EER.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["UTILITY_METRICS", "Utility"]

UTILITY_METRICS: dict[str, str] = {
    "wer": "WER (lower is better)",
    "uar": "UAR (higher is better)",
    "rho_f0": "rho_F0 (higher is better)",
}
"""Utility numbers a condition may carry, with how to read them."""


@dataclass(frozen=True)
class Utility:
    """Utility numbers of one condition (each None when unknown).

    Examples
    --------
    >>> Utility(wer=0.0468, uar=0.6102).to_dict()["wer"]
    0.0468
    """

    wer: float | None = None
    """Word error rate of the ASR evaluation, a fraction (may exceed 1)."""
    uar: float | None = None
    """Unweighted average recall (macro recall) of emotion recognition, in [0, 1]."""
    rho_f0: float | None = None
    """Mean pitch correlation between original and anonymised recordings, in [-1, 1]."""
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Speaker-level bootstrap intervals (low, high) keyed like the numbers, where computed."""
    per_class: Mapping[str, float] = field(default_factory=dict)
    """Per-emotion accuracy (recall of each class), where known."""
    source: str = ""
    """Where the numbers came from (a results file, transcripts, predictions, audio)."""

    def value(self, metric: str) -> float | None:
        """The number called ``metric`` (one of :data:`UTILITY_METRICS`)."""
        return getattr(self, metric) if metric in UTILITY_METRICS else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the numbers, their intervals, per-class accuracy and source."""
        return {
            "wer": self.wer,
            "uar": self.uar,
            "rho_f0": self.rho_f0,
            "intervals": {k: [float(lo), float(hi)] for k, (lo, hi) in self.intervals.items()},
            "per_class": {k: float(v) for k, v in self.per_class.items()},
            "source": self.source,
        }
