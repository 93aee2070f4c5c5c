"""Utility of an anonymised condition: what the anonymisation costs the speech's other uses.

VoicePrivacy judges every anonymiser on privacy against utility: the word error rate of an
ASR system (WER), the unweighted average recall of speech emotion recognition (UAR) and the
pitch correlation between each original recording and its anonymised copy (rho_F0). Every
number is a fraction (VoicePrivacy's percent / 100), like the EER.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.errors import VoxMetricsInputError

__all__ = ["UAR_METHODS", "UTILITY_METRICS", "Utility"]

UTILITY_METRICS: dict[str, str] = {
    "wer": "WER (lower is better)",
    "uar": "UAR (higher is better)",
    "rho_f0": "rho_F0 (higher is better)",
}
"""Utility numbers a condition may carry, with how to read them."""

UAR_METHODS: dict[str, str] = {
    "fold_mean": "mean of the per-fold UARs (as the VoicePrivacy challenge computes it)",
    "pooled": "macro recall of all utterances pooled",
}
"""How a UAR was computed. VoicePrivacy's speech emotion recognition on IEMOCAP runs one
classifier per fold (speaker) and prints the mean of the per-fold UARs; one pooled macro
recall over every utterance is another number. ``""``: not said (older study files)."""


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
    uar_method: str = ""
    """How :attr:`uar` was computed: a key of :data:`UAR_METHODS` (``fold_mean``, the
    challenge's mean of per-fold UARs, or ``pooled``), ``""`` when not said."""
    replicates: Mapping[str, NDArray[np.float64]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The number in each speaker-bootstrap replicate (over its own speakers: LibriSpeech's for
    the WER, IEMOCAP's for the UAR), keyed like the numbers, where computed from files. A number
    known only as a value (a results summary) has none: the verdicts take it as fixed."""
    draws: Mapping[str, str] = field(default_factory=dict, compare=False)
    """How each number's replicates were drawn (``"<speakers digest>:<B>:<seed>"``): two
    conditions' replicates of one number are paired replicate by replicate when these match."""

    def __post_init__(self) -> None:
        reps = {}
        for k, v in self.replicates.items():
            if k not in UTILITY_METRICS:
                raise VoxMetricsInputError(
                    f"utility replicates '{k}' are not of one of {', '.join(UTILITY_METRICS)}."
                )
            a = np.array(v, dtype=np.float64).ravel()
            a.flags.writeable = False
            reps[k] = a
        object.__setattr__(self, "replicates", reps)
        object.__setattr__(self, "draws", {str(k): str(v) for k, v in self.draws.items()})
        if self.uar_method not in ("", *UAR_METHODS):
            raise VoxMetricsInputError(
                f"utility: uar_method '{self.uar_method}' is unknown; use one of "
                f"{', '.join(UAR_METHODS)}."
            )
        for metric, (low, high) in _RANGES.items():
            _check_number(metric, getattr(self, metric), low, high)
        for k, acc in self.per_class.items():
            _check_number(f"per-class accuracy '{k}'", acc, 0.0, 1.0)
        for k, pair in self.intervals.items():
            if k not in UTILITY_METRICS or len(pair) != 2:
                raise VoxMetricsInputError(
                    f"utility interval '{k}' must be a (low, high) pair of one of "
                    f"{', '.join(UTILITY_METRICS)}."
                )
            lo, hi = (float(x) for x in pair)
            if not lo <= hi:
                raise VoxMetricsInputError(
                    f"utility interval '{k}' is ({lo}, {hi}); its low end must not exceed its "
                    "high end."
                )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Utility:
        """The utility of a :meth:`to_dict` dictionary (as a ``.vxm`` file stores it).

        Raises
        ------
        VoxMetricsInputError
            Unknown keys, or numbers that are not fractions in range.

        Examples
        --------
        >>> u = Utility(wer=0.05, intervals={"wer": (0.04, 0.06)})
        >>> Utility.from_dict(u.to_dict()) == u
        True
        """
        known = {"wer", "uar", "rho_f0", "intervals", "per_class", "source", "uar_method"}
        known |= {"replicates", "draws"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise VoxMetricsInputError(
                f"utility has unknown field(s) {', '.join(map(str, unknown))}; the fields are "
                f"{', '.join(sorted(known))}."
            )
        try:
            return cls(
                wer=_optional(values.get("wer")),
                uar=_optional(values.get("uar")),
                rho_f0=_optional(values.get("rho_f0")),
                intervals={
                    str(k): (float(v[0]), float(v[1]))
                    for k, v in (values.get("intervals") or {}).items()
                },
                per_class={str(k): float(v) for k, v in (values.get("per_class") or {}).items()},
                source=str(values.get("source") or ""),
                replicates={
                    str(k): np.asarray(v, dtype=np.float64)
                    for k, v in (values.get("replicates") or {}).items()
                },
                draws={str(k): str(v) for k, v in (values.get("draws") or {}).items()},
                uar_method=str(values.get("uar_method") or ""),
            )
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            if isinstance(exc, VoxMetricsInputError):
                raise
            raise VoxMetricsInputError(f"utility is malformed ({exc}).") from None

    def value(self, metric: str) -> float | None:
        """The number called ``metric`` (one of :data:`UTILITY_METRICS`)."""
        return getattr(self, metric) if metric in UTILITY_METRICS else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the numbers, their intervals, per-class accuracy, source and UAR method."""
        return {
            "wer": self.wer,
            "uar": self.uar,
            "rho_f0": self.rho_f0,
            "intervals": {k: [float(lo), float(hi)] for k, (lo, hi) in self.intervals.items()},
            "per_class": {k: float(v) for k, v in self.per_class.items()},
            "source": self.source,
            "uar_method": self.uar_method,
        }

    def to_file_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` with the replicates and their draws, as a ``.vxm`` file stores it.

        Examples
        --------
        >>> u = Utility(wer=0.05, replicates={"wer": [0.04, 0.06]}, draws={"wer": "x:2:0"})
        >>> back = Utility.from_dict(u.to_file_dict())
        >>> back.replicates["wer"].tolist(), back.draws
        ([0.04, 0.06], {'wer': 'x:2:0'})
        """
        out = self.to_dict()
        if self.replicates:
            out["replicates"] = {
                k: [None if not np.isfinite(x) else float(x) for x in v]
                for k, v in self.replicates.items()
            }
            out["draws"] = dict(self.draws)
        return out


_RANGES: dict[str, tuple[float, float]] = {
    "wer": (0.0, math.inf),
    "uar": (0.0, 1.0),
    "rho_f0": (-1.0, 1.0),
}


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _check_number(what: str, value: float | None, low: float, high: float) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise VoxMetricsInputError(f"utility: {what} is {value!r}; give a finite number.")
    if not low <= value <= high:
        span = f"at least {low:g}" if math.isinf(high) else f"in [{low:g}, {high:g}]"
        raise VoxMetricsInputError(
            f"utility: {what} is {value:g}; it must be a fraction {span} (a percentage / 100)."
        )
