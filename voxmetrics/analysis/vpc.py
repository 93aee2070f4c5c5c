"""A VoicePrivacy tree's results summaries checked against its scores (are they one run).

The challenge's results summaries print each EER (rounded to 0.001 %) beside the scores they
come from: per gender in 2024 (the lists ``trials_f`` and ``trials_m``), per mixed list in 2026
(gender ``mixed``; per language in track 2). :func:`check_summary_eers` recomputes every such
EER from the scores that :func:`~voxmetrics.data.vpc.read_vpc_tree` read (the subset
``sex = F`` or ``sex = M`` of the condition, the subset ``language = <dataset>`` of a tree of
several languages, or the whole split) and says which agree and which do not: a disagreement
means the scores and the summary come from different runs. It returns the findings as values;
``study build`` prints them and the dashboard's Data page shows them, in the same words. This
module computes; it reads no file and prints nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.study import Study
from voxmetrics.data.vpc import VPCImport
from voxmetrics.metrics.eer import eer

__all__ = [
    "SUMMARY_EER_TOLERANCE",
    "SummaryEERCheck",
    "SummaryEERMismatch",
    "challenge_group_eers",
    "challenge_list_views",
    "challenge_lists",
    "check_summary_eers",
]

SUMMARY_EER_TOLERANCE = 0.5e-5
"""Largest difference (a fraction: 0.0005 %) between an EER of the scores and the one of the
summary that is still agreement: the challenge rounds EERs to 0.001 %."""


@dataclass(frozen=True)
class SummaryEERMismatch:
    """One per-gender EER of a results summary that its scores do not give."""

    condition: str
    """The condition whose scores were checked (``original``, ``SYSTEM (lazy-informed)``,
    ``SYSTEM (semi-informed)``...)."""
    split: str
    """The challenge's split, ``test`` (the eval set) or ``dev``."""
    gender: str
    """The trial list, ``f`` or ``m`` (2024) or ``mixed`` (2026)."""
    system: str
    """The system whose results summary gives :attr:`eer_summary`."""
    eer_scores: float
    """The EER of the scores (fraction)."""
    eer_summary: float
    """The EER of the results summary (fraction)."""
    dataset: str = ""
    """The dataset (language) of a tree of several, ``""`` otherwise."""

    @property
    def message(self) -> str:
        """What is wrong, in one sentence.

        Examples
        --------
        >>> SummaryEERMismatch("original", "test", "f", "mcadams", 0.1, 0.0876).message[:52]
        'the EER of original (test, f) is 10.000% from its sc'
        """
        where = ", ".join(x for x in (self.dataset, self.split, self.gender) if x)
        return (
            f"the EER of {self.condition} ({where}) is "
            f"{self.eer_scores:.3%} from its scores but {self.eer_summary:.3%} in the results of "
            f"{self.system}; the scores and the summary come from different runs."
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields and the message."""
        return {
            "condition": self.condition,
            "split": self.split,
            "gender": self.gender,
            "system": self.system,
            "eer_scores": self.eer_scores,
            "eer_summary": self.eer_summary,
            "dataset": self.dataset,
            "message": self.message,
        }


@dataclass(frozen=True)
class SummaryEERCheck:
    """The per-gender EERs of a tree's results summaries against the ones of its scores."""

    n_agree: int = 0
    """EERs of the summaries that the scores give (within :data:`SUMMARY_EER_TOLERANCE`)."""
    mismatches: tuple[SummaryEERMismatch, ...] = ()
    """The EERs that the scores do not give, in the summaries' order."""
    mixed: bool = False
    """Whether the EERs checked include mixed lists (2026) rather than per-gender lists only."""

    @property
    def agreement(self) -> str | None:
        """How many EERs agree, in one line (None when none was checked or none agrees).

        Examples
        --------
        >>> SummaryEERCheck(n_agree=8).agreement
        '8 per-gender EER(s) of the results summaries agree with the scores'
        """
        if not self.n_agree:
            return None
        kind = "EER(s)" if self.mixed else "per-gender EER(s)"
        return f"{self.n_agree} {kind} of the results summaries agree with the scores"

    @property
    def lines(self) -> tuple[str, ...]:
        """Every finding, one line each: the agreement first, then each mismatch as a warning.

        ``study build`` prints them after ``voxmetrics:``, one per line.
        """
        head = () if self.agreement is None else (self.agreement,)
        return head + tuple(f"warning: {m.message}" for m in self.mismatches)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the count that agrees and the mismatches."""
        return {"n_agree": self.n_agree, "mismatches": [m.to_dict() for m in self.mismatches]}


def _checked_matrix(tree: VPCImport, row: Any) -> tuple[str, ScoreMatrix] | None:
    """The condition and the scores of one EER row of a summary, None when the tree has none."""
    name = getattr(row, "condition", "") or (
        "original" if row.model == "original" else f"{row.system} (semi-informed)"
    )
    gender = str(row.gender)
    if name not in tree.study.names or gender not in ("f", "m", "mixed"):
        return None
    cond = tree.study.get(name)
    sm = cond.eval if row.split == "test" else cond.dev
    if sm is None:
        return None
    if "language" in sm.attributes:  # several languages: the row's own
        if str(row.dataset) not in sm.attribute_values("language"):
            return None
        sm = sm.subset_attribute("language", str(row.dataset))
    if gender != "mixed":
        if "sex" not in sm.attributes or gender.upper() not in sm.attribute_values("sex"):
            return None
        sm = sm.subset_attribute("sex", gender.upper())
    return name, sm


def check_summary_eers(tree: VPCImport) -> SummaryEERCheck:
    """The EERs of the tree's results summaries against the ones of its scores.

    Each EER of a summary is compared with the EER of the scores of the condition it describes
    (its section and its enrolment and trial columns say which: 2024's ``ASV_eval`` rows are the
    ``original`` condition, 2026's the lazy-informed attacker, ``ASV_eval^anon`` rows the
    semi-informed one), on that condition's eval (``test``) or dev set: the trials of the row's
    gender (2024), of its mixed list (2026), of its language (2026 track 2). Rows of a condition,
    a gender or a language the tree has no scores of are left out.

    Parameters
    ----------
    tree : VPCImport
        What :func:`~voxmetrics.data.vpc.read_vpc_tree` or
        :func:`~voxmetrics.data.vpc.read_vpc_zip` read.

    Returns
    -------
    SummaryEERCheck
        How many agree, and each one that does not (empty when the tree has no summary EER).
    """
    table = tree.summary_eers
    if table.empty:
        return SummaryEERCheck()
    mismatches, agree, mixed = [], 0, False
    keys = [c for c in ("system", "dataset", "split", "gender", "model", "condition") if c in table]
    for row in table.drop_duplicates(keys).itertuples():
        checked = _checked_matrix(tree, row)
        if checked is None:
            continue
        name, sm = checked
        mixed |= str(row.gender) == "mixed"
        pairs = sm.pairwise_view()  # every key line, as the challenge's asv.py counts them
        ours = eer(pairs.tar, pairs.non)
        if abs(ours - float(row.EER)) > SUMMARY_EER_TOLERANCE + 1e-12:
            multi = "language" in (tree.study.get(name).eval.attributes or {})
            mismatches.append(
                SummaryEERMismatch(
                    name,
                    str(row.split),
                    str(row.gender),
                    str(row.system),
                    float(ours),
                    float(row.EER),
                    str(row.dataset) if multi else "",
                )
            )
        else:
            agree += 1
    return SummaryEERCheck(agree, tuple(mismatches), mixed)


def challenge_lists(study: Study) -> dict[str, str]:
    """The attribute whose values are the trial lists the challenge prints one EER for.

    By condition: ``sex`` for a VoicePrivacy 2024 condition (read by
    :func:`~voxmetrics.data.vpc.read_vpc_tree`: its female and male lists), ``language`` for a
    2026 track 2 condition (each language's mixed list). A 2026 track 1 condition has one
    list, whose EER is the condition's own, and any other condition none: they are left out.
    """
    out = {}
    for cond in study.conditions:
        attributes = cond.eval.attributes
        if "language" in attributes and cond.description.startswith("VoicePrivacy 2026"):
            out[cond.name] = "language"
        elif "sex" in attributes and cond.description.startswith("VoicePrivacy 2024"):
            out[cond.name] = "sex"
    return out


def challenge_list_views(sm: ScoreMatrix, attribute: str) -> dict[str, ScoreMatrix]:
    """Every listed pair of each of the challenge's lists, by value of ``attribute``.

    Each the :meth:`~voxmetrics.data.model.ScoreMatrix.pairwise_view` of the subset
    ``attribute = value``.
    """
    return {
        value: sm.subset_attribute(attribute, value).pairwise_view()
        for value in sm.attribute_values(attribute)
    }


def challenge_group_eers(study: Study) -> dict[str, dict[str, float]]:
    """The EER of each trial list the challenge prints one EER for, by condition.

    The VoicePrivacy ranking bands a system on the EERs its results print
    (:func:`voxmetrics.analysis.ranking.voiceprivacy_ranking`, ``group_eers``): the lists of
    :func:`challenge_lists` (2024: female and male; 2026 track 2: each language).

    Returns
    -------
    dict
        Condition name -> {list: EER (fraction)}, on every key line of each list.
    """
    out: dict[str, dict[str, float]] = {}
    for name, attribute in challenge_lists(study).items():
        views = challenge_list_views(study.get(name).eval, attribute)
        out[name] = {value: float(eer(v.tar, v.non)) for value, v in views.items()}
    return out
