"""The ZEBRA page's call that fetches each condition's ZEBRA numbers (:func:`zebra_reports`).

No computation: the numbers are the ``zebra`` part of each condition's report
(:func:`voxmetrics.evaluation.evaluate_condition`, or a full report another page already
computed), run through :func:`voxmetrics.ui.compute`.
"""

from __future__ import annotations

from collections.abc import Sequence

from voxmetrics.data.study import Study
from voxmetrics.evaluation import ConditionReport
from voxmetrics.ui.widgets import part_reports

__all__ = ["ZEBRA_PARTS", "zebra_reports"]

ZEBRA_PARTS = ("zebra",)
"""The parts of a condition's report the ZEBRA page shows (with the EER every report has)."""


def zebra_reports(
    study: Study, names: Sequence[str], *, n_boot: int, seed: int
) -> dict[str, ConditionReport]:
    """The ZEBRA numbers and EER of each chosen condition, by name, in study order.

    ``n_boot`` replicates drawn with ``seed`` give the intervals (0: none); the tie rule is the
    study's. When these are the study's own settings, a condition that another page has
    already evaluated in full (the Overview's reports) gives that report; the others are
    evaluated for :data:`ZEBRA_PARTS` alone (:func:`~voxmetrics.ui.widgets.part_reports`, a
    progress bar each): the same numbers. Their warnings about ZEBRA go to the page's notes; a
    condition whose input is bad shows its message and is left out.
    """
    return part_reports(
        study,
        names,
        parts=ZEBRA_PARTS,
        label="ZEBRA",
        topic="ZEBRA",
        overrides={"bootstrap": int(n_boot), "seed": int(seed)},
    )
