"""The 1-to-N products of a condition: one complete trial list, or complete groups pooled.

The 1-to-N metrics (linkability and its curve, SRD, LID and their chance levels) rank each
trial among the enrolled identities it is listed against. A complete matrix is one list; a
sparse list uses its complete trials (:meth:`~voxmetrics.data.model.ScoreMatrix.complete_rows`).
A VoicePrivacy trial list joins complete lists per gender (each female trial listed against
every enrolled female speaker, and likewise for males; the 2026 mixed list is complete within
each gender as its script writes it): no trial is listed against every enrolled identity, but
within each group of a per-trial attribute (``sex``, ``language``) every trial is. Then each
trial is ranked within its group and the numbers are pooled over the groups
(:func:`complete_groups`, :func:`pooled`): linkability and the SRD statistics as the
trial-weighted mean over groups, the linkability curve as the mean over trials of each trial's
own expectation (on N' up to the smallest group's N), LID calibrated per group on that group's
dev trials (its own N) with ALID, PDR, NDR and LID+/- pooled over trials and LIDmax the
maximum; the pairwise numbers (EER, ZEBRA, ...) use every listed pair as always.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.errors import DegenerateDataWarning, ExcludedTrialsWarning, VoxMetricsInputError
from voxmetrics.evaluation.options import EvaluationOptions
from voxmetrics.metrics.chance import ChanceLevels, chance_levels, lid_with_chance
from voxmetrics.metrics.legal import LinkabilityCurve, link_rank_ties, linkability_grid
from voxmetrics.metrics.legal.linking import prob_no_beater
from voxmetrics.metrics.lid import (
    CalibrationCurve,
    LIDResult,
    calibrate_lid,
    lid_cross_calibrated,
    pooled_calibration_curve,
)
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.metrics.srd import SRDResult, SRDStats, srd_from_ranks

__all__ = [
    "GROUP_ATTRIBUTES",
    "CalibrationView",
    "OneToN",
    "OneToNViews",
    "calibration_lists",
    "complete_groups",
    "condition_calibration_curve",
    "one_to_n_lists",
    "one_to_n_of",
    "one_to_n_views",
    "pooled",
]

GROUP_ATTRIBUTES = ("sex", "gender", "language")
"""Per-trial attributes tried first when looking for complete groups (then the others)."""

_MAX_GROUPS = 64
"""An attribute with more values than this is not tried as a grouping."""


@dataclass(frozen=True, eq=False)
class OneToN:
    """The 1-to-N products of one complete trial list (a group, or the whole list)."""

    label: str
    """The group's value ("" for the whole list)."""
    n_enrolled: int
    """N of the list: the identities each trial is ranked against."""
    trial_speakers: NDArray[np.str_] = field(repr=False)
    """Speaker of each of its trials."""
    link_ranks: NDArray[np.int64] | None = field(default=None, repr=False)
    """Target ranks under the linkability rule (None: not asked for)."""
    srd_ranks: NDArray[np.int64] | None = field(default=None, repr=False)
    """Target ranks under the tie rule (None: not asked for)."""
    lid: LIDResult | None = None
    """LID (None without a calibration, or not asked for)."""
    chance: ChanceLevels | None = None
    """Chance levels (None: not asked for)."""

    @property
    def n_trials(self) -> int:
        """Its trials."""
        return int(self.trial_speakers.size)


def one_to_n_of(
    full: ScoreMatrix,
    dev: ScoreMatrix | None,
    options: EvaluationOptions,
    parts: Collection[str],
    *,
    label: str = "",
) -> OneToN:
    """The 1-to-N products of the complete list ``full`` for ``parts``.

    ``dev`` is its complete dev list (None: none, or none complete). LID and the chance levels
    come in one pass over the rows with a dev calibration
    (:func:`~voxmetrics.metrics.chance.lid_with_chance`); otherwise the chance levels use the
    cross-calibrated calibration, or have no LID part without one. ``seed`` draws the folds
    and the chance levels' identities; ``ties`` is the SRD ranks'.
    """
    lid = chance = None
    if {"srd", "lid"} & set(parts):
        lid, chance = _lid_and_chance(full, dev, options, "lid" in parts)
    link_ties = link_rank_ties(options.linkability_rule)
    link_ranks = srd_ranks = None
    if "linkability" in parts:
        link_ranks = target_ranks(full.scores, full.targets, ties=link_ties)
    if "srd" in parts:  # the SRD ranks follow the tie rule
        srd_ranks = (
            link_ranks.copy()
            if options.ties == link_ties and link_ranks is not None
            else target_ranks(full.scores, full.targets, ties=options.ties)
        )
    return OneToN(
        label=label,
        n_enrolled=full.n_enrolled,
        trial_speakers=full.trial_speakers,
        link_ranks=link_ranks,
        srd_ranks=srd_ranks,
        lid=lid,
        chance=chance,
    )


def _lid_and_chance(
    full: ScoreMatrix, dev: ScoreMatrix | None, options: EvaluationOptions, with_lid: bool
) -> tuple[LIDResult | None, ChanceLevels]:
    """LID of ``full`` (``with_lid``) and the chance levels of its 1-to-N metrics."""
    seed, ties = options.seed, options.ties
    if with_lid and dev is not None:
        cal = calibrate_lid(dev.scores, dev.targets, variant=options.lid_variant)
        return lid_with_chance(full.scores, full.targets, cal, seed=seed, ties=ties)
    result = None
    if with_lid and options.cross_calibrate:
        result = lid_cross_calibrated(
            full.scores,
            full.targets,
            full.trial_speakers,
            k=options.cross_calibrate,
            variant=options.lid_variant,
            seed=seed,
        )
    calibration = None if result is None else result.calibration
    return result, chance_levels(full.scores, calibration=calibration, seed=seed, ties=ties)


# ---------------------------------------------------------------- complete groups


def complete_groups(eval: ScoreMatrix) -> tuple[str, dict[str, ScoreMatrix]] | None:
    """A per-trial attribute whose groups are complete lists, and each group's complete list.

    Only for a sparse list whose complete trials
    (:meth:`~voxmetrics.data.model.ScoreMatrix.complete_rows`) are fewer than those of the
    groups: the attribute (of :data:`GROUP_ATTRIBUTES` first, then the others by name, each
    with at most 64 values) whose groups' complete trials, each ranked against its own group's
    enrolled identities, are the most; None when no attribute gives more. Each group is
    :meth:`~voxmetrics.data.model.ScoreMatrix.subset_attribute` restricted to its complete
    trials; a group without a complete trial is left out.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays(
    ...     [[0.9, 0.1, np.nan, np.nan], [0.2, 0.8, np.nan, np.nan],
    ...      [np.nan, np.nan, 0.7, 0.3], [np.nan, np.nan, 0.1, 0.6]],
    ...     trial_ids=["t1", "t2", "t3", "t4"], trial_speakers=["a", "b", "c", "d"],
    ...     enrol_speakers=["a", "b", "c", "d"], attributes={"sex": ["f", "f", "m", "m"]},
    ...     nan_missing=True)
    >>> attr, groups = complete_groups(sm)
    >>> attr, {v: g.n_enrolled for v, g in groups.items()}
    ('sex', {'f': 2, 'm': 2})
    """
    if eval.is_complete:
        return None
    full = eval.complete_rows()
    best, best_n = None, 0 if full is None else full.n_trials
    names = [a for a in GROUP_ATTRIBUTES if a in eval.attributes]
    names += sorted(a for a in eval.attributes if a not in GROUP_ATTRIBUTES)
    for attr in names:
        try:
            values = eval.attribute_values(attr)
        except VoxMetricsInputError:  # pragma: no cover - the attribute is there
            continue
        if not 2 <= len(values) <= _MAX_GROUPS:
            continue
        groups = _groups_of(eval, attr, values)
        n = sum(g.n_trials for g in groups.values())
        if n > best_n:
            best, best_n = (attr, groups), n
    return best


def _groups_of(eval: ScoreMatrix, attr: str, values: Sequence[str]) -> dict[str, ScoreMatrix]:
    """The complete list of each group of ``attr`` that has one.

    Empty when ``attr`` does not split the list: some trial of a group is listed against an
    identity outside it (it is then ranked among every identity, not within a group).
    """
    out = {}
    labels = eval.attributes[attr].astype(str)
    with warnings.catch_warnings():  # the unenrolled trials were counted on reading
        warnings.simplefilter("ignore", ExcludedTrialsWarning)
        for value in values:
            try:
                sub = eval.subset_attribute(attr, value)
            except VoxMetricsInputError:  # fewer than two identities in that group
                continue
            if eval.mask is not None:
                outside = ~np.isin(eval.enrol_speakers, sub.enrol_speakers)
                if eval.mask[np.ix_(labels == value, outside)].any():
                    return {}  # not a partition of the list: rank among all identities
            full = sub.complete_rows()
            if full is not None:
                out[value] = full
    return out


def one_to_n_lists(eval: ScoreMatrix) -> list[ScoreMatrix]:
    """The complete lists whose trials the 1-to-N numbers rank, in the order they pool them.

    Each complete group's (:func:`complete_groups`), else the complete trials, else none: the
    rows of a report's ``srd.ranks`` and ``lid.lid``, one list after the other.
    """
    found = complete_groups(eval)
    if found is not None:
        return list(found[1].values())
    full = eval.complete_rows()
    return [] if full is None else [full]


@dataclass(frozen=True)
class OneToNViews:
    """What the views of the 1-to-N metrics show of a study (:func:`one_to_n_views`)."""

    study: Study
    """The conditions shown, in the study's order."""
    left_out: tuple[str, ...]
    """Sparse lists without a complete trial or complete groups: nothing to rank."""
    partial: tuple[str, ...]
    """Sparse lists shown on their complete trials."""
    grouped: dict[str, str] = field(default_factory=dict)
    """Sparse lists complete within the groups of an attribute (shown whole): name -> attribute."""


def one_to_n_views(study: Study) -> OneToNViews:
    """The study the views of the 1-to-N metrics show (LID, SRD, linkage, threat model).

    Each condition as its 1-to-N numbers are computed: a sparse list complete within the groups
    of a per-trial attribute (:func:`complete_groups`) whole, each trial ranked within its
    group; another sparse list on its complete trials
    (:meth:`~voxmetrics.data.study.Condition.complete_rows`); a sparse list with neither left
    out.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> v = one_to_n_views(demo_study(n_speakers=8))
    >>> len(v.study), v.left_out, v.partial, v.grouped
    (5, (), (), {})
    """
    kept, left_out, partial, grouped = [], [], [], {}
    for c in study.conditions:
        found = complete_groups(c.eval)  # None for a complete list
        if found is not None:
            grouped[c.name] = found[0]
            kept.append(c)
            continue
        full = c.complete_rows()
        if full is None:
            left_out.append(c.name)
            continue
        if not c.eval.is_complete:
            partial.append(c.name)
        kept.append(full)
    return OneToNViews(
        replace(study, conditions=tuple(kept)), tuple(left_out), tuple(partial), grouped
    )


def dev_groups(
    dev: ScoreMatrix | None, attr: str, values: Collection[str]
) -> dict[str, ScoreMatrix | None]:
    """The complete dev list of each group (None where the dev set has none)."""
    if dev is None or attr not in dev.attributes:
        return dict.fromkeys(values)
    found = _groups_of(dev, attr, [v for v in dev.attribute_values(attr) if v in values])
    return {v: found.get(v) for v in values}


@dataclass(frozen=True)
class CalibrationView:
    """A condition's LID calibration curve and what it was binned on."""

    curve: CalibrationCurve
    matrix: str
    """``"dev"``, or ``"eval"`` for a cross-calibrated condition."""
    group: str | None = None
    """The attribute whose groups were each calibrated on their own (e.g. ``"sex"``), or None."""


def calibration_lists(condition: Condition) -> tuple[list[ScoreMatrix], str, str | None]:
    """The complete lists a condition's LID calibration is learned on, as the engine learns it.

    ``(lists, matrix, group)``: a list complete within the groups of an attribute
    (:func:`complete_groups`) is calibrated per group, on the dev set's list of that group
    (:func:`dev_groups`) or, cross-calibrated, on the group's own trials; another list on the
    complete trials of dev (or of eval). ``lists`` is empty when there is none.
    """
    found = complete_groups(condition.eval)
    if condition.dev is None:  # cross-calibrated on eval
        if found is not None:
            return list(found[1].values()), "eval", found[0]
        full = condition.eval.complete_rows()
        return ([] if full is None else [full]), "eval", None
    if found is not None:
        devs = dev_groups(condition.dev, found[0], list(found[1]))
        return [d for d in devs.values() if d is not None], "dev", found[0]
    full = condition.dev.complete_rows()
    return ([] if full is None else [full]), "dev", None


def condition_calibration_curve(
    condition: Condition, result: LIDResult, *, bins: int = 30
) -> CalibrationView:
    """The calibration curve of a condition's LID, binned on the lists it was learned on.

    Dev-calibrated conditions are binned on their dev matrix; cross-calibrated ones on eval,
    with the mean of the folds' calibrations. A condition calibrated per group pools the
    groups' pairs (:func:`calibration_lists`), against the trial-weighted mean of the groups'
    calibrations (``result.calibration``).
    """
    lists, matrix, group = calibration_lists(condition)
    if not lists:
        raise VoxMetricsInputError(
            f"the {matrix} set of this condition has no trial listed against every enrolled "
            "identity (nor complete groups), so there is no calibration curve to draw."
        )
    pairs = [(m.scores, m.targets) for m in lists]
    curve = pooled_calibration_curve(pairs, result.calibration, bins=bins)
    return CalibrationView(curve, matrix, group)


# ---------------------------------------------------------------- pooling


def pooled(groups: Sequence[OneToN], attr: str) -> OneToN:
    """The 1-to-N products of ``groups`` pooled over them (module docstring).

    Trials are concatenated in group order; ``n_enrolled`` is the largest group's N.
    """
    speakers = np.concatenate([g.trial_speakers for g in groups])
    links = [g.link_ranks for g in groups if g.link_ranks is not None]
    srds = [g.srd_ranks for g in groups if g.srd_ranks is not None]
    link = np.concatenate(links) if len(links) == len(groups) else None
    srd = np.concatenate(srds) if len(srds) == len(groups) else None
    return OneToN(
        label=f"pooled over {attr}",
        n_enrolled=max(g.n_enrolled for g in groups),
        trial_speakers=speakers,
        link_ranks=link,
        srd_ranks=srd,
        lid=_pooled_lid(groups, attr),
        chance=_pooled_chance(groups),
    )


def group_sizes(groups: Sequence[OneToN]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each trial's group N and its group index, in the pooled order."""
    n = np.concatenate([np.full(g.n_trials, g.n_enrolled, dtype=np.int64) for g in groups])
    idx = np.concatenate([np.full(g.n_trials, k, dtype=np.int64) for k, g in enumerate(groups)])
    return n, idx


def pooled_srd(groups: Sequence[OneToN]) -> SRDResult:
    """The SRD of the groups: statistics as the trial-weighted mean over groups.

    ``ranks`` are the groups' concatenated, ``histogram`` their histograms added rank by rank
    (over 1..the largest N): a display of where the targets rank, not the source of the
    statistics.
    """
    results = [srd_from_ranks(g.srd_ranks, g.n_enrolled) for g in groups]  # type: ignore[arg-type]
    weights = np.array([r.n_trials for r in results], dtype=np.float64)
    weights /= weights.sum()
    stats = SRDStats(
        **{
            k: float(sum(w * getattr(r.stats, k) for w, r in zip(weights, results, strict=True)))
            for k in ("mean_d", "idr", "std_d", "max_d", "spread")
        }
    )
    n_max = max(r.n_enrolled for r in results)
    hist = np.zeros(n_max, dtype=np.int64)
    for r in results:
        hist[: r.n_enrolled] += r.histogram
    ranks = np.concatenate([r.ranks for r in results])
    return replace(results[0], ranks=_ro(ranks), histogram=_ro(hist), stats=stats)


def pooled_curve(groups: Sequence[OneToN]) -> LinkabilityCurve:
    """Linkability against N', up to the smallest group's N.

    The mean over every trial of its own exact expectation, each trial drawing its N' - 1
    others from its own group.
    """
    n_min = min(g.n_enrolled for g in groups)
    grid = linkability_grid(n_min)
    total = np.zeros(grid.size)
    n_trials = 0
    for g in groups:
        beaters = g.link_ranks - 1  # type: ignore[operator]
        values, counts = np.unique(beaters, return_counts=True)
        for k, m in enumerate(grid):
            total[k] += (counts * prob_no_beater(values, g.n_enrolled, int(m))).sum()
        n_trials += g.n_trials
    return LinkabilityCurve(n=grid, expected=total / n_trials, chance=1.0 / grid)


def pooled_chance_linkability(groups: Sequence[OneToN]) -> float:
    """The chance of linkability: the mean over trials of 1 / (its group's N)."""
    n_trials = sum(g.n_trials for g in groups)
    return float(sum(g.n_trials / g.n_enrolled for g in groups) / n_trials)


def _pooled_chance(groups: Sequence[OneToN]) -> ChanceLevels | None:
    """Chance levels of the pooled numbers: the trial-weighted mean of the groups'."""
    chances = [g.chance for g in groups if g.chance is not None]
    if len(chances) < len(groups):
        return None
    weights = np.array([g.n_trials for g in groups], dtype=np.float64)
    weights /= weights.sum()
    values: dict[str, float | None] = {}
    for key in chances[0].values:
        each = [c.values.get(key) for c in chances]
        known = [v for v in each if v is not None]
        if len(known) < len(each):
            values[key] = None
        elif key == "lid_max":  # the maximum over trials: the largest group's chance maximum
            values[key] = max(known)
        else:
            values[key] = float(sum(w * v for w, v in zip(weights, known, strict=True)))
    grid = linkability_grid(min(g.n_enrolled for g in groups))
    return ChanceLevels(values, grid, 1.0 / grid, min(c.n_draws for c in chances))


def _pooled_lid(groups: Sequence[OneToN], attr: str) -> LIDResult | None:
    """LID pooled over trials: each trial's LID as its group calibrated it."""
    results = [g.lid for g in groups if g.lid is not None]
    if len(results) < len(groups):
        return None
    weights = np.array([r.n_trials for r in results], dtype=np.float64)
    weights /= weights.sum()
    first = results[0].calibration

    def mean(key: str) -> float:  # trial-weighted, for display: each group used its own
        return float(
            sum(w * getattr(r.calibration, key) for w, r in zip(weights, results, strict=True))
        )

    calibration = replace(
        first,
        w=mean("w"),
        b=mean("b"),
        prior_log_odds=mean("prior_log_odds"),
        n_pairs=int(sum(r.calibration.n_pairs for r in results)),
        source=f"{first.source}, per {attr} ({len(results)} groups, each its own N)",
        converged=all(r.calibration.converged for r in results),
    )
    return LIDResult(
        lid=_ro(np.concatenate([r.lid for r in results])),
        p_target=_ro(np.concatenate([r.p_target for r in results])),
        rank=_ro(np.concatenate([r.rank for r in results])),
        n_enrolled=max(r.n_enrolled for r in results),
        calibration=calibration,
        n_degenerate=sum(r.n_degenerate for r in results),
        fold_w=tuple(float(r.w) for r in results),
    )


def _ro(a: NDArray) -> NDArray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def check_group_calibration(
    groups: dict[str, ScoreMatrix], devs: dict[str, ScoreMatrix | None], with_lid: bool
) -> None:
    """Warn when a group's dev list is missing while others have one (its LID is left out)."""
    if not with_lid:
        return
    missing = [v for v, d in devs.items() if d is None]
    if missing and len(missing) < len(devs):
        warnings.warn(
            f"the dev set has no complete trial list for {', '.join(missing)}, so LID cannot be "
            "calibrated for those groups and is left out of the pooled numbers.",
            DegenerateDataWarning,
            stacklevel=3,
        )
