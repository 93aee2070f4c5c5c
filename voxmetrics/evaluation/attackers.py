"""Every attacker of one condition side by side: the sweep, each back-end evaluated, the check.

What this module is: the attackers of one condition's embeddings compared on every number, as
the dashboard's Attackers page shows them. :func:`compare_attackers` runs the sweep of
:func:`~voxmetrics.analysis.attackers.condition_attackers` (every back-end trained on the
attacker's own data, the strongest chosen on dev), evaluates each back-end's condition on
eval through the engine (EER, ROCCH-EER, min Cllr, the TAR at FAR 1 % and 0.1 %,
linkability, LID: :data:`BACKEND_PARTS`) and runs the weak-attacker checks
(:func:`~voxmetrics.analysis.weak_attacker.check_attacker`); :class:`AttackerComparison` holds
them, with the table of every number per back-end (:meth:`AttackerComparison.frame`) and the
conditions to add to a study (:meth:`AttackerComparison.conditions`). What it is not: the
sweep or the back-ends themselves, nor the choice across a study's conditions
(:mod:`voxmetrics.analysis.strongest`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from voxmetrics._types import Progress
from voxmetrics.analysis.attacker_conditions import INFORMED
from voxmetrics.analysis.attackers import SELECT_METRICS, AttackerSweep, condition_attackers
from voxmetrics.analysis.weak_attacker import WeakAttackerCheck, check_attacker
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Condition
from voxmetrics.embeddings.backends import BACKENDS
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.engine import evaluate_condition
from voxmetrics.evaluation.options import EvaluationOptions
from voxmetrics.evaluation.result import ConditionReport

__all__ = [
    "BACKEND_COLUMNS",
    "BACKEND_PARTS",
    "AttackerComparison",
    "backend_condition_name",
    "compare_attackers",
]

BACKEND_PARTS = ("pairwise", "verification", "linkability", "lid")
"""The parts of each back-end's report the comparison computes (no SRD model, ZEBRA or
singling out: they describe the scores' distribution, not which attacker is stronger)."""

BACKEND_COLUMNS: dict[str, str] = {
    "Back-end": "The scoring back-end (docs, Methods > Attackers).",
    "Strongest": "Chosen on dev: the back-end with the best dev figure (the rule of the sweep); "
    "its eval numbers are the ones reported.",
    "Dev EER": "Its EER on dev (out of sample), the figure the strongest is chosen by.",
    "EER": "On eval: 1-to-1 verification equal error rate (0.5 = chance).",
    "ROCCH-EER": "On eval: the EER of the ROC convex hull.",
    "min Cllr": "On eval: Cllr after optimal calibration (discrimination only, bits).",
    "TAR @ FAR 1 %": "On eval: the highest true-accept rate at a false-accept rate of at "
    "most 1 %: an attacker who needs only a few confident links.",
    "TAR @ FAR 0.1 %": "On eval: the same at a false-accept rate of at most 0.1 %.",
    "Linkability": "On eval: share of trials whose own speaker scores highest among the N.",
    "Chance (1/N)": "Linkability of a random guess.",
    "ALID (bits)": "On eval: average local information disclosure (LID calibrated on the "
    "back-end's dev scores).",
    "LIDmax (bits)": "On eval: the worst trial's disclosure (at most log2 N).",
    "Trained on": "The attacker's own data it was trained on: the train split, else dev "
    "(its dev scores then cross-fitted over speaker folds); none for cosine and max.",
    "Skipped": "Why a back-end could not be tried here.",
}
"""The columns of :meth:`AttackerComparison.frame` (after the dev figure of a metric other than
the EER, when the strongest is chosen by one), with what each means."""


def backend_condition_name(condition: str, backend: str) -> str:
    """The name of a back-end's condition: ``"<condition> [<back-end>]"``.

    Examples
    --------
    >>> backend_condition_name("anon-mild", "plda")
    'anon-mild [plda]'
    """
    return f"{condition} [{backend}]"


def _tar(report: ConditionReport | None, level: float) -> float | None:
    v = None if report is None else report.verification
    if v is None or v.tar_at_far is None:
        return None
    for f, t in zip(v.tar_at_far.far_levels, v.tar_at_far.tar, strict=True):
        if float(f) == level:
            return float(t)
    return None


@dataclass(frozen=True, eq=False)
class AttackerComparison:
    """The back-ends tried on one condition, each evaluated on eval, and the weak-attacker check."""

    condition: Condition = field(repr=False)
    """The condition attacked (its embeddings scored by every back-end)."""
    sweep: AttackerSweep = field(repr=False)
    """Every back-end tried, and the one chosen on dev."""
    reports: Mapping[str, ConditionReport] = field(repr=False)
    """Each tried back-end's report of :data:`BACKEND_PARTS` on eval, by back-end."""
    check: WeakAttackerCheck
    """The weak-attacker checks of the chosen attacker."""
    notes: tuple[str, ...] = ()
    """What was left out, and why (e.g. the mapping attack for an ignorant attacker)."""

    @property
    def name(self) -> str:
        """The condition's name."""
        return self.condition.name

    @property
    def strongest(self) -> str:
        """The back-end chosen on dev (or the only one tried)."""
        return self.sweep.chosen

    @property
    def select_by(self) -> str:
        """The dev metric of the choice (``eer`` when a single back-end was named)."""
        return self.sweep.select_by or "eer"

    def frame(self) -> pd.DataFrame:
        """Every number per back-end (:data:`BACKEND_COLUMNS`), one row each, in sweep order.

        The dev figure the strongest is chosen by follows the dev EER when it is another
        metric (``Dev <metric>``); a skipped back-end has empty numbers and its reason.
        """
        rows = []
        for o in self.sweep.outcomes:
            r = self.reports.get(o.name)
            lid = None if r is None else r.lid
            row: dict[str, Any] = {
                "Back-end": o.name,
                "Strongest": o.name == self.strongest,
                "Trained on": "" if o.recipe is None else o.recipe.trained_on,
                "Dev EER": o.dev_eer,
                f"Dev {self.select_by}": o.dev_value,
                "EER": None if r is None else r.baseline.eer,
                "ROCCH-EER": None if r is None else r.baseline.eer_rocch,
                "min Cllr": None if r is None else r.baseline.min_cllr,
                "TAR @ FAR 1 %": _tar(r, 0.01),
                "TAR @ FAR 0.1 %": _tar(r, 0.001),
                "Linkability": None if r is None else r.baseline.linkability,
                "Chance (1/N)": None if r is None else r.chance_linkability,
                "ALID (bits)": None if lid is None else lid.alid,
                "LIDmax (bits)": None if lid is None else lid.lid_max,
                "Skipped": o.skipped or "",
            }
            rows.append(row)
        columns = list(BACKEND_COLUMNS)
        if self.select_by != "eer":
            columns.insert(columns.index("Dev EER") + 1, f"Dev {self.select_by}")
        text = ("Back-end", "Strongest", "Trained on", "Skipped")
        return pd.DataFrame(rows, columns=columns).astype(
            {c: float for c in columns if c not in text}
        )

    def conditions(self, backends: Sequence[str] | None = None) -> list[Condition]:
        """The conditions of ``backends`` (default: the strongest), to add to a study.

        Each is named :func:`backend_condition_name`, keeps the condition's knowledge level,
        embeddings, description and utility, and carries its attacker recipe with the
        weak-attacker findings (the strongest's also how it was chosen).
        """
        c = self.condition
        out = []
        for b in backends or [self.strongest]:
            made = self.sweep.condition(
                backend_condition_name(c.name, b),
                backend=b,
                attacker=c.attacker,
                embeddings=c.embeddings,
                description=c.description,
                cautions=self.check.reasons,
            )
            out.append(dataclasses.replace(made, utility=c.utility))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the sweep, the check and every back-end's numbers."""
        frame = self.frame()
        return {
            "condition": self.name,
            "attacker": self.condition.attacker,
            "sweep": self.sweep.to_dict(),
            "check": self.check.to_dict(),
            "notes": list(self.notes),
            "backends": frame.astype(object).where(frame.notna(), None).to_dict("records"),
        }


def _tried(condition: Condition, backends: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The back-ends to try and the notes of those left out (a mapping needs an informed one)."""
    names = list(dict.fromkeys(backends or BACKENDS))
    if condition.attacker in INFORMED or "procrustes" not in names:
        return names, []
    note = (
        f"{condition.name}: procrustes left out: a mapping attack needs an attacker who knows "
        "the anonymiser (lazy-informed, semi-informed)"
    )
    return [b for b in names if b != "procrustes"], [note]


def compare_attackers(
    condition: Condition,
    *,
    backends: Sequence[str] | None = None,
    select_by: str = "eer",
    calibrate: bool = False,
    original: EmbeddingSet | None = None,
    reference_eer: float | None = None,
    options: EvaluationOptions | Mapping[str, Any] | None = None,
    evaluator: Callable[..., ConditionReport] = evaluate_condition,
    seed: int = 0,
    progress: Progress | None = None,
) -> AttackerComparison:
    """Try the back-ends on ``condition``'s embeddings, evaluate each on eval, check the attacker.

    Parameters
    ----------
    condition : Condition
        A condition with utterance embeddings (its dev split is where the strongest is
        chosen; its ``train`` split, else dev, is what the back-ends are trained on).
    backends : sequence of str, optional
        The back-ends (default: every one; ``procrustes`` only for an attacker who knows the
        anonymiser).
    select_by : str
        The dev metric the strongest is chosen by (default ``eer``).
    calibrate : bool
        Calibrate the strongest's scores to LLRs on its dev scores.
    original : EmbeddingSet, optional
        Original (unprotected) embeddings: the mapping attack's pairs (same ``utt_id``) and
        the weak-attacker check on original speech.
    reference_eer : float, optional
        What a well-trained verifier reaches on ``original`` (default: its cosine scoring).
    options : EvaluationOptions or mapping, optional
        The evaluation options of each back-end's report (e.g. the study's, without the
        bootstrap).
    evaluator : callable
        ``evaluator(condition, options, parts=...)`` gives each back-end's report (default
        :func:`~voxmetrics.evaluation.engine.evaluate_condition`; the dashboard passes its
        cached one).
    seed : int
        Seed of the cross-fitting folds and the fusion.
    progress : callable, optional
        ``progress(fraction, message)``: the sweep, then each back-end's evaluation.

    Returns
    -------
    AttackerComparison

    Raises
    ------
    VoxMetricsInputError
        A condition without embeddings, or without the dev split the choice needs; an
        unknown back-end or metric.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> c = demo_study(n_speakers=8).get("anon-mild")
    >>> cmp = compare_attackers(c, backends=["cosine", "lda"])
    >>> list(cmp.frame()["Back-end"]), cmp.strongest in ("cosine", "lda")
    (['cosine', 'lda'], True)
    """
    if condition.embeddings is None:
        raise VoxMetricsInputError(
            f"{condition.name}: no utterance embeddings, so no attacker back-end can score it "
            "(they work on embeddings); load its embeddings (Data page, or study build with "
            "embeddings), or extract them from audio (Embeddings page)."
        )
    if select_by not in SELECT_METRICS:
        raise VoxMetricsInputError(
            f"the strongest attacker is chosen by one of {', '.join(SELECT_METRICS)}, not "
            f"'{select_by}'."
        )
    tried, notes = _tried(condition, backends)
    informed = condition.attacker in INFORMED

    def sweep_progress(fraction: float, message: str) -> None:
        if progress is not None:
            progress(0.5 * fraction, message)

    sweep = condition_attackers(
        condition.embeddings,
        backends=tried,
        select_by=select_by,
        originals=original if informed else None,
        calibrate=calibrate,
        seed=seed,
        progress=sweep_progress,
    )
    check = check_attacker(
        sweep,
        original=original if condition.attacker != "original" else None,
        reference_eer=reference_eer,
        matched=condition.attacker != "ignorant",
    )
    shell = AttackerComparison(condition, sweep, {}, check, tuple(notes))
    ok = [o.name for o in sweep.outcomes if o.ok]
    made = dict(zip(ok, shell.conditions(ok), strict=True))
    opts = EvaluationOptions.of(options)
    reports = {}
    for k, (backend, cond) in enumerate(made.items()):
        if progress is not None:
            progress(0.5 + 0.5 * k / len(made), f"evaluating {backend}")
        reports[backend] = evaluator(cond, opts, parts=BACKEND_PARTS)
    return dataclasses.replace(shell, reports=reports)
