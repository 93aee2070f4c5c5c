"""Literal aliases, callback types and display constants shared across the package."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Progress = Callable[[float, str], None]
"""A progress callback, ``progress(fraction, message)``: the fraction of the work done, in
[0, 1], and what is being done. Every long computation of the package takes one (optional);
the dashboard turns it into a progress bar and the command line into a bar on stderr."""

MISSING = "–"
"""The text of a missing value (an en dash) wherever a number is shown as text: the
dashboard's tables and metrics, the report's tables, card and page, the LaTeX and Markdown
tables (LaTeX: ``--``). Never Python's ``None`` or ``nan``."""

ScoreFormat = Literal["auto", "csv", "parquet", "npz", "kaldi"]
"""Score file formats understood by :func:`voxmetrics.read_scores`."""

SCORE_FORMAT_LABELS: dict[str, str] = {
    "auto": "auto (from the file)",
    "csv": "long CSV",
    "parquet": "long Parquet",
    "npz": "NPZ matrix",
    "kaldi": "Kaldi / VoicePrivacy",
}
"""What each score file format is, in words (the dashboard's choices)."""

Split = Literal["dev", "eval"]
"""The two halves of a condition: calibration (dev) and evaluation (eval)."""

Role = Literal["enrol", "trial"]
"""Role of an utterance in an :class:`~voxmetrics.EmbeddingSet`."""

Attacker = Literal["original", "ignorant", "lazy-informed", "semi-informed", "informed"]
"""Knowledge level of the attacker of a condition.

``original``: no anonymisation (the baseline row of Vauquier et al. 2025, figure 1);
``ignorant``: the attacker's model and enrolment use original speech; ``lazy-informed``: the
enrolment is anonymised with the same system but the model is not retrained (VoicePrivacy);
``semi-informed``: in VoicePrivacy, a model retrained on speech anonymised by the same system;
in Vauquier et al. 2025, a similar but not identical system; ``informed``: Vauquier et al.
2025's attacker with the same system (VoicePrivacy's semi-informed). The labels are stored as
given; older study files use the first three VoicePrivacy names and still load."""

ATTACKERS: tuple[Attacker, ...] = (
    "original",
    "ignorant",
    "lazy-informed",
    "semi-informed",
    "informed",
)

LIDVariant = Literal["maximum-likelihood", "reference-code"]
"""LID calibration variant (see :data:`voxmetrics.metrics.lid.LID_VARIANTS`)."""

LID_VARIANT_NAMES: tuple[LIDVariant, ...] = ("reference-code", "maximum-likelihood")
"""The LID calibration variants; the first is the default."""

DEFAULT_LID_VARIANT: LIDVariant = "reference-code"
"""The default LID calibration everywhere (library, CLI, studies, dashboard): the authors'
penalised recipe, which reproduces their tables and stays finite when the dev pools separate."""

LID_DISPLAY_FLOOR = -64.0
"""Lowest LID (bits) a display or export shows: LID values and their chance levels are shown
within [LID_DISPLAY_FLOOR, log2 N]; the JSON keeps the raw numbers and flags the clamp."""

DEFAULT_BOOTSTRAP = 200
"""Replicates of the speaker-level bootstrap by default (studies, the LID page, the report)."""

LID_VARIANT_ALIASES: dict[str, LIDVariant] = {"metrics": "maximum-likelihood"}
"""Old names still accepted (deprecated): "metrics" was the unpenalised fit."""

ScoreKind = Literal["similarity", "llr", "distance"]
"""What the scores of a condition are: similarities (higher = closer; the default), calibrated
natural-log LLRs (adds the actual DCF and APE curves), or distances (lower = closer), which are
negated on reading."""

SCORE_KINDS: tuple[ScoreKind, ...] = ("similarity", "llr", "distance")

SCORE_KIND_LABELS: dict[str, str] = {
    "similarity": "similarity",
    "llr": "llr",
    "distance": "distance (negated)",
}
"""How the reports name each kind (the JSON ``score_kind``)."""
