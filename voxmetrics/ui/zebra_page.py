"""The ZEBRA page's call that fetches each condition's ZEBRA numbers (:func:`zebra_reports`).

No computation: the numbers come from :mod:`voxmetrics.evaluation.zebra` (or from a full
condition report another page already computed), run through :func:`voxmetrics.ui.compute`.
"""

from __future__ import annotations

from collections.abc import Sequence

from voxmetrics.data.study import Study
from voxmetrics.evaluation.zebra import ZEBRA_OPTIONS, ZebraReport, evaluate_zebra_condition
from voxmetrics.ui.widgets import partial_reports

__all__ = ["zebra_reports"]


def zebra_reports(
    study: Study, names: Sequence[str], *, n_boot: int, seed: int
) -> dict[str, ZebraReport]:
    """The ZEBRA numbers and EER of each chosen condition, by name, in study order.

    ``n_boot`` replicates drawn with ``seed`` give the intervals (0: none); the tie rule is the
    study's. When these are the study's own settings, a condition that another page has
    already evaluated in full (the Overview's reports) gives them from that report
    (:meth:`ZebraReport.of`); the others are evaluated for ZEBRA alone
    (:func:`~voxmetrics.evaluation.zebra.evaluate_zebra`, a progress bar each): the same
    numbers. Their warnings about ZEBRA go to the page's notes; a condition whose input is bad
    shows its message and is left out.
    """
    return partial_reports(
        study,
        names,
        evaluate_one=evaluate_zebra_condition,
        of_report=ZebraReport.of,
        keys=ZEBRA_OPTIONS,
        label="ZEBRA",
        topic="ZEBRA",
        overrides={"bootstrap": int(n_boot), "seed": int(seed)},
    )
