"""The 1-to-1 vs 1-to-N threat model in numbers (Šterns et al. 2025).

An EER of 50 % looks like perfect privacy, yet the attacker of a closed-set 1-to-N search only
needs each trial's own speaker to win *its own row*. This module computes both views of the
same matrix (:func:`threat_view`), for the 4x4 example of Šterns et al. 2025 (:func:`paper_matrix`)
and for the offset generator of :func:`voxmetrics.synth.offset_scores` (:func:`threat_scenario`),
names the conditions of a study that look private on the EER but are not
(:func:`threat_callouts`, :func:`checked_conditions`) and the speakers who stay exposed under
every anonymiser and attacker (:func:`study_exposure`). The dashboard's Threat model page edits
the example as the table of :func:`example_frame` and reads it back with :func:`example_view`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from voxmetrics.analysis.exposure import (
    ExposedSpeakers,
    condition_exposure,
    exposed_speakers,
    speaker_attributes,
)
from voxmetrics.analysis.strongest import StrongestAttackers, strongest_attackers
from voxmetrics.analysis.verdicts import Verdict, lid_max_verdict, linkability_verdict
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.one_to_n import one_to_n_lists
from voxmetrics.evaluation.result import ConditionReport
from voxmetrics.metrics.baseline import BaselineResult, baseline_metrics
from voxmetrics.metrics.lid import LIDCalibration, LIDResult, calibrate_lid, lid
from voxmetrics.metrics.ranks import target_ranks
from voxmetrics.synth import offset_scores

__all__ = [
    "CALLOUT_EER",
    "CALLOUT_LID_MAX",
    "CALLOUT_LINKABILITY_FACTOR",
    "EXAMPLE_OWN_COLUMN",
    "IDENTITY_PARTS",
    "PAPER_EXAMPLE_SCORES",
    "PAPER_EXAMPLE_TARGETS",
    "PAPER_EXAMPLE_W",
    "Callout",
    "ThreatView",
    "checked_conditions",
    "example_frame",
    "example_view",
    "paper_matrix",
    "study_exposure",
    "threat_callouts",
    "threat_scenario",
    "threat_view",
]

PAPER_EXAMPLE_SCORES: tuple[tuple[float, ...], ...] = (
    (0.9, 0.8, 0.8, 0.8),
    (0.7, 0.6, 0.6, 0.6),
    (0.4, 0.5, 0.4, 0.4),
    (0.2, 0.2, 0.3, 0.2),
)
"""Šterns et al. 2025, eq. 1: four trials (rows) against four enrolled speakers (columns)."""
PAPER_EXAMPLE_TARGETS: tuple[int, ...] = (0, 0, 1, 2)
"""Column of each row's own speaker in :data:`PAPER_EXAMPLE_SCORES`."""
PAPER_EXAMPLE_W = 1.5
"""The calibration weight of Šterns et al.'s (2025) worked LID example (docs, Methods > LID)."""

CALLOUT_EER = 0.45
"""A condition with EER at or above this looks private on the 1-to-1 view."""
CALLOUT_LID_MAX = 1.0
"""LIDmax (bits) at or above which some trial is singled out."""
CALLOUT_LINKABILITY_FACTOR = 2.0
"""Linkability above this multiple of chance (1/N) is a linkage threat."""


def paper_matrix(
    scores: ArrayLike = PAPER_EXAMPLE_SCORES, targets: ArrayLike = PAPER_EXAMPLE_TARGETS
) -> ScoreMatrix:
    """A small score matrix whose rows' own speakers are given by column index.

    By default the 4x4 example of Šterns et al. 2025 (eq. 1). Enrolled speakers are called
    ``speaker 1..N``, trials ``trial 1..T``.

    Examples
    --------
    >>> sm = paper_matrix()
    >>> sm.trial_speakers.tolist()
    ['speaker 1', 'speaker 1', 'speaker 2', 'speaker 3']
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2:
        raise VoxMetricsInputError(f"scores must be a table (trials x speakers), got {s.shape}.")
    t = np.asarray(targets)
    n_trials, n = s.shape
    if t.shape != (n_trials,):
        raise VoxMetricsInputError(
            f"give one own-speaker column per trial: {n_trials} trials but {t.size} own speaker(s)."
        )
    if not np.issubdtype(t.dtype, np.integer):
        raise VoxMetricsInputError(
            f"own-speaker columns must be whole numbers (column indices), got {t.dtype} values."
        )
    if t.size and (t.min() < 0 or t.max() >= n):
        raise VoxMetricsInputError(
            f"own-speaker columns must be between 1 and {n} (the enrolled speakers); got "
            f"{(t + 1).tolist()}."
        )
    speakers = np.array([f"speaker {j + 1}" for j in range(n)])
    return ScoreMatrix.from_arrays(
        s,
        trial_ids=[f"trial {i + 1}" for i in range(n_trials)],
        trial_speakers=speakers[t],
        enrol_speakers=speakers,
        source="threat example",
    )


@dataclass(frozen=True)
class ThreatView:
    """One matrix seen both ways: pooled (EER) and row by row (linkability, LID)."""

    matrix: ScoreMatrix = field(repr=False)
    """The evaluated scores."""
    baseline: BaselineResult
    """EER, ROCCH-EER and linkability of :attr:`matrix`."""
    lid: LIDResult = field(repr=False)
    """LID per trial under :attr:`calibration`."""
    ranks: NDArray[np.int64] = field(repr=False)
    """Rank of each trial's own speaker in its row (ties against the attacker)."""

    @property
    def calibration(self) -> LIDCalibration:
        """How LID was calibrated (a fixed w, or learned on a dev matrix)."""
        return self.lid.calibration

    @property
    def linked(self) -> NDArray[np.bool_]:
        """Trials whose own speaker scores at least as high as every other in the row.

        A tie is a link, as in :func:`~voxmetrics.metrics.legal.linkability` (the authors'
        code), so the mean of this is the view's linkability; :attr:`ranks` count a tie
        against the attacker.
        """
        return target_ranks(self.matrix.scores, self.matrix.targets, ties="attacker") == 1

    def trial_frame(self) -> pd.DataFrame:
        """One row per trial: own and best other score, rank, linked, p(own), LID in bits."""
        sm = self.matrix
        s = np.asarray(sm.scores, dtype=np.float64)
        idx = np.arange(sm.n_trials)
        own = s[idx, sm.targets]
        others = s.copy()
        others[idx, sm.targets] = -np.inf
        return pd.DataFrame(
            {
                "trial": sm.trial_ids,
                "speaker": sm.trial_speakers,
                "own score": own,
                "best other score": others.max(axis=1),
                "rank": self.ranks,
                "linked": self.linked,
                "p(own speaker)": self.lid.p_target,
                "LID (bits)": self.lid.lid,
            }
        )

    def summary(self) -> dict[str, float]:
        """The numbers that move apart: EER, ROCCH-EER, linkability (and chance), ALID, LIDmax."""
        b = self.baseline
        # threat_view's baseline_metrics computes every part
        assert b.eer_rocch is not None and b.linkability is not None
        return {
            "eer": b.eer,
            "eer_rocch": b.eer_rocch,
            "linkability": b.linkability,
            "chance_linkability": b.chance_linkability,
            "alid": self.lid.alid,
            "lid_max": self.lid.lid_max,
            "lid_ceiling": self.lid.ceiling,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary, calibration and per-trial table."""
        return {
            **self.summary(),
            "calibration": self.calibration.to_dict(),
            "trials": self.trial_frame().to_dict(orient="records"),
        }


def _fixed_calibration(w: float, n_enrolled: int) -> LIDCalibration:
    if not math.isfinite(w) or w < 0:
        raise VoxMetricsInputError(f"w must be a finite number >= 0, got {w}.")
    return LIDCalibration(
        w=float(w),
        b=0.0,
        prior_log_odds=-math.log(n_enrolled - 1),
        n_pairs=0,
        source=f"fixed w = {w:g}",
    )


def threat_view(
    matrix: ScoreMatrix, *, dev: ScoreMatrix | None = None, w: float | None = None
) -> ThreatView:
    """Both views of ``matrix``, with LID calibrated on ``dev`` or with a fixed weight ``w``.

    Examples
    --------
    The 4x4 example of Šterns et al. 2025: the pooled EER is 0.5, yet every trial is linked.

    >>> v = threat_view(paper_matrix(), w=PAPER_EXAMPLE_W)
    >>> v.baseline.eer, v.baseline.linkability, v.linked.tolist()
    (0.5, 1.0, [True, True, True, True])
    """
    if (dev is None) == (w is None):
        raise VoxMetricsInputError("give either a dev matrix to calibrate LID on or a fixed w.")
    cal = (
        calibrate_lid(dev.scores, dev.targets)
        if dev is not None
        else _fixed_calibration(float(w), matrix.n_enrolled)  # type: ignore[arg-type]
    )
    return ThreatView(
        matrix=matrix,
        baseline=baseline_metrics(matrix.scores, matrix.targets),
        lid=lid(matrix.scores, matrix.targets, cal),
        ranks=target_ranks(matrix.scores, matrix.targets),
    )


def threat_scenario(
    *,
    n_enrolled: int = 20,
    n_trials: int = 200,
    margin: float = 0.5,
    offset_spread: float = 1.0,
    noise: float = 0.2,
    seed: int = 0,
) -> ThreatView:
    """The offset generator's eval matrix, with LID calibrated on a dev matrix of other speakers.

    See :func:`voxmetrics.synth.offset_scores` for the model; the dev matrix has the same
    parameters, its own speakers and the next seed.

    Examples
    --------
    >>> v = threat_scenario(n_enrolled=10, n_trials=100, margin=1.0, offset_spread=2.0,
    ...                     noise=0.2)
    >>> round(v.baseline.eer, 2) >= 0.3, v.baseline.linkability > 0.9
    (True, True)
    """
    for name, count, low in (("n_enrolled", n_enrolled, 2), ("n_trials", n_trials, 2)):
        if count < low:
            raise VoxMetricsInputError(f"{name} must be at least {low}, got {count}.")
    for name, value in (("margin", margin), ("offset_spread", offset_spread), ("noise", noise)):
        if not math.isfinite(value) or value < 0:
            raise VoxMetricsInputError(f"{name} must be a finite number >= 0, got {value}.")
    if noise == 0 and margin == 0:
        raise VoxMetricsInputError("with no noise and no margin every score of a row is equal.")
    scores = partial(
        offset_scores,
        n_enrolled=n_enrolled,
        n_trials=n_trials,
        margin=margin,
        offset_spread=offset_spread,
        noise=noise,
    )
    eval_ = scores(seed=seed, prefix="spk")
    dev = scores(seed=seed + 1, prefix="dev")
    return threat_view(eval_, dev=dev)


# ---------------------------------------------------------------- the editable example

EXAMPLE_OWN_COLUMN = "own speaker"
"""Column of :func:`example_frame` holding each trial's own speaker, counted from 1."""


def example_frame(
    scores: ArrayLike = PAPER_EXAMPLE_SCORES, targets: ArrayLike = PAPER_EXAMPLE_TARGETS
) -> pd.DataFrame:
    """A small score matrix as an editable table: ``speaker 1..N`` columns and the own speaker.

    By default the 4x4 example of Šterns et al. 2025 (eq. 1); rows ``trial 1..T``, the own
    speaker counted from 1 in :data:`EXAMPLE_OWN_COLUMN`. :func:`example_view` reads it back.

    Examples
    --------
    >>> f = example_frame()
    >>> f.columns.tolist(), f[EXAMPLE_OWN_COLUMN].tolist()
    (['speaker 1', 'speaker 2', 'speaker 3', 'speaker 4', 'own speaker'], [1, 1, 2, 3])
    """
    s = np.asarray(scores, dtype=float)
    frame = pd.DataFrame(
        s,
        columns=[f"speaker {j + 1}" for j in range(s.shape[1])],
        index=[f"trial {i + 1}" for i in range(s.shape[0])],
    )
    frame[EXAMPLE_OWN_COLUMN] = [int(t) + 1 for t in np.asarray(targets).ravel()]
    return frame


def example_view(frame: pd.DataFrame, *, w: float = PAPER_EXAMPLE_W) -> ThreatView:
    """Both views of an edited :func:`example_frame`, LID with the fixed weight ``w``.

    Raises :class:`~voxmetrics.errors.VoxMetricsInputError` naming the empty cells, an own
    speaker that is not a whole column number, or (from :func:`paper_matrix`) one outside the
    columns.

    Examples
    --------
    >>> f = example_frame()
    >>> f.loc["trial 1", "speaker 2"] = 0.95  # trial 1 now scores speaker 2 highest
    >>> example_view(f).baseline.linkability
    0.75
    """
    if EXAMPLE_OWN_COLUMN not in frame.columns:
        raise VoxMetricsInputError(
            f"the example needs an {EXAMPLE_OWN_COLUMN!r} column (the own speaker of each trial)."
        )
    empty = [
        f"{trial} ({column})"
        for trial, row in frame.iterrows()
        for column, value in row.items()
        if pd.isna(value)
    ]
    if empty:
        raise VoxMetricsInputError(
            f"Some cells are empty: {', '.join(empty)}. Type a number in each cell, or reset "
            "to the paper's example."
        )
    speakers = [c for c in frame.columns if c != EXAMPLE_OWN_COLUMN]
    own = frame[EXAMPLE_OWN_COLUMN].astype(float)
    if not (own == own.round()).all():
        raise VoxMetricsInputError(
            f"The own speaker of a trial is a column number, a whole number from 1 to "
            f"{len(speakers)}; got {', '.join(f'{v:g}' for v in own)}."
        )
    targets = (own.astype(int) - 1).tolist()
    return threat_view(paper_matrix(frame[speakers].to_numpy(float), targets), w=w)


# ---------------------------------------------------------------- call-outs on a study


@dataclass(frozen=True)
class Callout:
    """A condition that looks private on the EER but discloses identity trial by trial."""

    condition: str
    """Condition name."""
    eer: float
    """Its EER (at least :data:`CALLOUT_EER`)."""
    linkability: float | None
    """Its linkability (None when the reports lack the linkability part)."""
    chance_linkability: float
    """1/N."""
    lid_max: float | None
    """Its LIDmax in bits (None without LID)."""
    reasons: tuple[str, ...]
    """Why it is called out, in plain words."""
    worst_trials: pd.DataFrame = field(repr=False)
    """The trials that give away most: trial, speaker, rank, margin over the best other score
    and LID (bits) when available, worst first."""
    judged_attacker: str = ""
    """The attacker it is judged against (its back-end, and how it was chosen as the
    strongest tried); "" when the scores' making is unknown."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {
            "condition": self.condition,
            "judged_attacker": self.judged_attacker or None,
            "eer": self.eer,
            "linkability": self.linkability,
            "chance_linkability": self.chance_linkability,
            "lid_max": self.lid_max,
            "reasons": list(self.reasons),
            "worst_trials": self.worst_trials.to_dict(orient="records"),
        }


IDENTITY_PARTS = ("pairwise", "linkability", "srd", "lid")
"""The parts of a condition's report that the call-outs read (``evaluate(parts=...)``): the
baseline, linkability, the target ranks of the SRD part, and LID."""


def _worst_trials(sm: ScoreMatrix, report: ConditionReport, n_worst: int) -> pd.DataFrame:
    lists = one_to_n_lists(sm)  # the trials the report's ranks and LID are of, in order
    margins = []
    for full in lists:
        s = np.asarray(full.scores, dtype=np.float64)
        idx = np.arange(full.n_trials)
        others = s.copy()
        others[idx, full.targets] = -np.inf
        margins.append(s[idx, full.targets] - others.max(axis=1))
    frame = pd.DataFrame(
        {
            "trial": np.concatenate([f.trial_ids for f in lists]) if lists else [],
            "speaker": np.concatenate([f.trial_speakers for f in lists]) if lists else [],
            "rank": None if report.srd is None else report.srd.ranks,
            "margin": np.concatenate(margins) if margins else [],
        }
    )
    if report.lid is not None:
        frame["LID (bits)"] = report.lid.lid
        frame["p(own speaker)"] = report.lid.p_target
        order = np.lexsort((-frame["margin"].to_numpy(), -report.lid.lid))
    else:
        order = np.argsort(-frame["margin"].to_numpy(), kind="stable")
    return frame.iloc[order[:n_worst]].reset_index(drop=True)


def _crosses(verdict: Verdict, value: float | None, threshold: float) -> bool:
    """Whether a number is cited as leaking: at or past ``threshold`` and judged on its own.

    A number the card reads as "≈ chance" or "uninformative at N = n" (one rule for every
    page, :mod:`voxmetrics.analysis.verdicts`) is never cited, whatever its point estimate.
    """
    return value is not None and not verdict.note and verdict.level != "n/a" and value >= threshold


def threat_callouts(
    study: Study,
    reports: Sequence[ConditionReport],
    *,
    eer_min: float = CALLOUT_EER,
    lid_max_min: float = CALLOUT_LID_MAX,
    linkability_factor: float = CALLOUT_LINKABILITY_FACTOR,
    n_worst: int = 5,
    attackers: StrongestAttackers | None = None,
) -> list[Callout]:
    """The conditions that look private on the EER but link or single out some trials.

    Called out: EER >= ``eer_min`` and (LIDmax >= ``lid_max_min`` bits or linkability above
    ``linkability_factor`` x chance), each with its ``n_worst`` most exposed trials. A number
    is cited only when the report card judges it on its own: one whose interval cannot tell it
    from chance, or that is "uninformative at N = n", is not (the card's rule,
    :func:`voxmetrics.analysis.verdicts.judge`); the defaults are the card's risk thresholds, so
    a condition is called out exactly when its card shows a risk cell for LIDmax or
    linkability and its EER looks private.

    ``reports`` are the study's condition reports (:func:`voxmetrics.evaluation.evaluate_study`,
    every part or at least :data:`IDENTITY_PARTS`); a report whose condition is no longer in
    the study is skipped. When the study holds several attackers of one system and knowledge
    level, only the strongest (``attackers``, by default
    :func:`~voxmetrics.analysis.strongest.strongest_attackers` of the study's conditions) is
    judged, and each call-out names the attacker it is judged against.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> s = demo_study()
    >>> [c.condition for c in threat_callouts(s, evaluate_study(s, bootstrap=0))]
    ['anon-leaky']
    """
    out = []
    if attackers is None:
        attackers = strongest_attackers(study.conditions)
    for r in reports:
        if r.name not in study.names or r.baseline.eer < eer_min or not attackers.judged(r.name):
            continue
        b = r.baseline
        reasons = []
        lid_v, link_v = lid_max_verdict(r), linkability_verdict(r)
        if r.lid is not None and _crosses(lid_v, r.lid.lid_max, lid_max_min):
            reasons.append(
                f"its worst trial discloses {r.lid.lid_max:.2f} bits about its speaker "
                f"(LIDmax >= {lid_max_min:g} bit)"
            )
        ratio = None if b.linkability is None else b.linkability / b.chance_linkability
        if (
            ratio is not None
            and _crosses(link_v, ratio, linkability_factor)
            and (ratio > linkability_factor)
        ):
            reasons.append(
                f"{b.linkability:.1%} of trials are linked to their speaker, "
                f"{ratio:.1f}x the chance of {b.chance_linkability:.1%}"
            )
        if not reasons:
            continue
        out.append(
            Callout(
                condition=r.name,
                eer=b.eer,
                linkability=b.linkability,
                chance_linkability=b.chance_linkability,
                lid_max=None if r.lid is None else r.lid.lid_max,
                reasons=tuple(reasons),
                worst_trials=_worst_trials(study.get(r.name).eval, r, n_worst),
                judged_attacker=attackers.label(r.name),
            )
        )
    return out


def checked_conditions(
    reports: Sequence[ConditionReport], callouts: Sequence[Callout]
) -> pd.DataFrame:
    """Every condition checked for call-outs: EER, linkability and chance, LIDmax, called out.

    Columns ``Condition, EER, Linkability, Chance (1/N), LIDmax (bits), Called out`` and the
    card's verdict on LIDmax and on linkability (``LIDmax verdict``, ``Linkability verdict``:
    its level, and why when the rule overrides the thresholds); LIDmax is None without LID.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> s = demo_study()
    >>> reports = evaluate_study(s, bootstrap=0)
    >>> df = checked_conditions(reports, threat_callouts(s, reports))
    >>> df.loc[df["Called out"], "Condition"].tolist()
    ['anon-leaky']
    """
    called = {c.condition for c in callouts}
    return pd.DataFrame(
        {
            "Condition": [r.name for r in reports],
            "EER": [r.baseline.eer for r in reports],
            "Linkability": [r.baseline.linkability for r in reports],
            "Chance (1/N)": [r.baseline.chance_linkability for r in reports],
            "LIDmax (bits)": [None if r.lid is None else r.lid.lid_max for r in reports],
            "Called out": [r.name in called for r in reports],
            "LIDmax verdict": [_verdict_text(lid_max_verdict(r)) for r in reports],
            "Linkability verdict": [_verdict_text(linkability_verdict(r)) for r in reports],
        }
    )


def _verdict_text(v: Verdict) -> str:
    """A verdict in a few words: its level, and why when the rule set it."""
    if v.level == "n/a":
        return "not available"
    return (
        f"{v.level} ({v.note})"
        if v.note and v.note != "≈ chance"
        else (f"{v.level}, ≈ chance" if v.note else v.level)
    )


def study_exposure(
    study: Study, reports: Sequence[ConditionReport], *, exclude: Sequence[str] = ()
) -> ExposedSpeakers:
    """The most exposed speakers of a study (:mod:`voxmetrics.analysis.exposure`).

    Each report with target ranks (its ``srd`` part) counts, but those under attacker
    ``original`` and those named in ``exclude`` (the original speech); a report whose condition
    is no longer in the study is skipped. The ranks, LID and singling out are the report's, on
    the condition's complete trials; sex and age group come from the trials' attributes and the
    embeddings' metadata.

    Examples
    --------
    >>> from voxmetrics.evaluation import evaluate_study
    >>> from voxmetrics.synth import demo_study
    >>> s = demo_study(n_speakers=10)
    >>> top = study_exposure(s, evaluate_study(s, bootstrap=0), exclude=["plain"]).frame()
    >>> int(top["Exposed under"].iloc[0]) >= 2, "Sex" in top.columns
    (True, True)
    """
    per_condition, tables = {}, []
    for r in reports:
        if r.name not in study.names or r.attacker == "original" or r.name in exclude:
            continue
        if r.srd is None:
            continue
        cond = study.get(r.name)
        full = cond.eval.complete_rows()
        if full is None or full.n_trials != len(r.srd.ranks):
            continue
        so = r.singling_out
        per_condition[r.name] = condition_exposure(
            full.trial_speakers,
            r.srd.ranks,
            full.n_enrolled,
            lid=None if r.lid is None else r.lid.lid,
            predicates=None if so is None else so.predicates,
            isolation=None if so is None else so.per_predicate,
        )
        attrs = {k: v for k, v in full.attributes.items() if k in ("sex", "age_group")}
        if attrs:
            tables.append(pd.DataFrame({"speaker": full.trial_speakers, **attrs}))
        if cond.embeddings is not None:
            tables.append(cond.embeddings.meta)
    return exposed_speakers(per_condition, attributes=speaker_attributes(tables))
