"""Whether the attacker may be too weak, so that privacy may be overestimated.

Every privacy number holds for the attacker whose scores it was given. Panariello et al.
(Interspeech 2025, "The Risks and Detection of Overestimated Privacy Protection in Voice
Anonymisation") show that a poorly trained verifier, or one trained on mismatched data,
overestimates privacy (by up to 74 % relative in the worst case they found) and propose to
detect such untrustworthy assessments. Their detector's text was not available to us; this
module implements the checks their argument calls for, each returning its reason:

``original_speech``
    The attacker's EER on *original* (unprotected) speech against what a well-trained verifier
    reaches on that data: the user's reference EER, else the speaker encoder's own cosine
    scoring of that speech. An attacker that cannot verify unprotected speech well cannot show
    that anonymised speech is protected. Fires when it is more than ``margin`` (5 points by
    default) above the reference.
``trained_vs_cosine``
    On dev, every trained linear back-end (LDA, WCCN, PLDA) weaker than plain cosine scoring:
    the attacker's training data are too few or mismatched. Fires when the best of them is
    more than ``order_margin`` (1 point) above cosine's dev EER.
``ordering``
    Attackers who know more must not do worse: a lazy-informed attacker weaker than the
    ignorant one, or a semi-informed one weaker than the lazy-informed one (EERs of one
    anonymiser's conditions), beyond ``order_margin``.

:func:`check_attacker` runs those its inputs allow and returns a :class:`WeakAttackerCheck`;
its reasons go into the condition's attacker recipe (``cautions``), and the card, the report
and the page say :data:`~voxmetrics.data.recipe.WEAK_ATTACKER` with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from voxmetrics.analysis.attackers import AttackerSweep, dev_figure
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.recipe import WEAK_ATTACKER
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "CHECKS",
    "DEFAULT_MARGIN",
    "DEFAULT_ORDER_MARGIN",
    "Finding",
    "WeakAttackerCheck",
    "check_attacker",
]

CHECKS = ("original_speech", "trained_vs_cosine", "ordering")
"""The checks, in the order they run."""
DEFAULT_MARGIN = 0.05
"""How far (EER, absolute) the attacker may be above the reference on original speech."""
DEFAULT_ORDER_MARGIN = 0.01
"""How far (EER, absolute) a better-informed or trained attacker may be above a lesser one."""
_LINEAR = ("lda", "wccn", "plda")
_ORDER = (("ignorant", "lazy-informed"), ("lazy-informed", "semi-informed"))


@dataclass(frozen=True)
class Finding:
    """One check that fired: which, why, and the numbers behind it."""

    check: str
    """Its name (:data:`CHECKS`)."""
    reason: str
    """Why the attacker may be too weak, in one sentence with the numbers."""
    values: tuple[tuple[str, float], ...] = ()
    """The numbers compared, by name."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        return {"check": self.check, "reason": self.reason, "values": dict(self.values)}


@dataclass(frozen=True)
class WeakAttackerCheck:
    """The weak-attacker checks that could run, and those that fired.

    Examples
    --------
    >>> c = check_attacker(eer_by_knowledge={"ignorant": 0.40, "lazy-informed": 0.46})
    >>> c.weak, c.ran
    (True, ('ordering',))
    >>> print(c.message)
    the attacker may be too weak: privacy may be overestimated (the lazy-informed attacker \
(EER 46.0 %) is weaker than the ignorant one (EER 40.0 %), though it knows more)
    """

    findings: tuple[Finding, ...]
    """The checks that fired."""
    ran: tuple[str, ...]
    """The checks the inputs allowed to run."""

    @property
    def weak(self) -> bool:
        """Whether any check fired."""
        return bool(self.findings)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Each finding's reason (what an attacker recipe keeps as its ``cautions``)."""
        return tuple(f.reason for f in self.findings)

    @property
    def message(self) -> str:
        """The warning with its reasons (empty when no check fired)."""
        if not self.findings:
            return ""
        return f"{WEAK_ATTACKER} ({'; '.join(self.reasons)})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: whether weak, the message, the findings and the checks run."""
        return {
            "weak": self.weak,
            "message": self.message or None,
            "findings": [f.to_dict() for f in self.findings],
            "checks_run": list(self.ran),
        }


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _original_speech(
    sweep: AttackerSweep, original: EmbeddingSet, reference_eer: float | None, margin: float
) -> Finding | str | None:
    """The attacker on original speech against a well-trained verifier there."""
    chosen = sweep.strongest
    if chosen.name == "procrustes" or chosen.scorer is None:
        return "skip"  # a mapping attack maps anonymised speech: not applicable to original
    split = "eval" if "eval" in original.splits() else original.splits()[-1]
    attacker = dev_figure(original.score_matrix_with(split, chosen.scorer), "eer")  # type: ignore[arg-type]
    reference = reference_eer
    source = "the reference verifier"
    if reference is None:
        reference = dev_figure(original.score_matrix(split), "eer")  # type: ignore[arg-type]
        source = "the speaker encoder's own cosine scoring"
    if attacker is None or reference is None or attacker <= reference + margin:
        return None
    return Finding(
        "original_speech",
        f"on original (unprotected) speech the attacker ({chosen.name}) has an EER of "
        f"{_pct(attacker)}, against {_pct(reference)} for {source}: it does not verify even "
        "unprotected speech well",
        (("attacker_eer", attacker), ("reference_eer", reference)),
    )


def _trained_vs_cosine(sweep: AttackerSweep, order_margin: float) -> Finding | str | None:
    """Every trained linear back-end weaker than cosine on dev."""
    linear = {
        o.name: o.dev_eer for o in sweep.outcomes if o.name in _LINEAR and o.dev_eer is not None
    }
    cosine = sweep.cosine_dev_eer
    if not linear or cosine is None:
        return "skip"
    best_name = min(linear, key=lambda n: linear[n])
    best = linear[best_name]
    if best <= cosine + order_margin:
        return None
    listed = ", ".join(f"{n} {_pct(v)}" for n, v in linear.items())
    return Finding(
        "trained_vs_cosine",
        f"on dev every trained back-end is weaker than plain cosine scoring ({listed}; cosine "
        f"{_pct(cosine)}): the attacker's training data ({sweep.trained_on}) are too few or "
        "mismatched",
        (("best_trained_dev_eer", best), ("cosine_dev_eer", cosine)),
    )


def _ordering(eers: Mapping[str, float], order_margin: float) -> list[Finding]:
    out = []
    for lesser, more in _ORDER:
        if lesser in eers and more in eers and eers[more] > eers[lesser] + order_margin:
            out.append(
                Finding(
                    "ordering",
                    f"the {more} attacker (EER {_pct(eers[more])}) is weaker than the {lesser} "
                    f"one (EER {_pct(eers[lesser])}), though it knows more",
                    ((f"{more}_eer", eers[more]), (f"{lesser}_eer", eers[lesser])),
                )
            )
    return out


def check_attacker(
    sweep: AttackerSweep | None = None,
    *,
    original: EmbeddingSet | None = None,
    reference_eer: float | None = None,
    eer_by_knowledge: Mapping[str, float] | None = None,
    margin: float = DEFAULT_MARGIN,
    order_margin: float = DEFAULT_ORDER_MARGIN,
    matched: bool = True,
) -> WeakAttackerCheck:
    """Run the weak-attacker checks the inputs allow (module docstring).

    Parameters
    ----------
    sweep : AttackerSweep, optional
        The attacker (its chosen back-end, fitted on its training data) and the dev EERs of
        the back-ends tried.
    original : EmbeddingSet, optional
        Original (unprotected) embeddings of other utterances, with enrolment and trials (its
        eval split): the ``original_speech`` check.
    reference_eer : float, optional
        What a well-trained verifier reaches on ``original`` (default: cosine scoring of it
        by the speaker encoder that made the embeddings).
    eer_by_knowledge : mapping, optional
        EERs of one anonymiser's conditions by attacker knowledge level (``ignorant``,
        ``lazy-informed``, ``semi-informed``): the ``ordering`` check.
    margin, order_margin : float
        How far above the reference (original speech) or the lesser attacker an EER may be
        before the check fires.
    matched : bool
        Whether the attacker's training data are of the kind it attacks (``trained_vs_cosine``
        runs only then: an ignorant attacker trains on original speech and attacks anonymised
        trials, mismatched by definition).

    Returns
    -------
    WeakAttackerCheck
    """
    if reference_eer is not None and not 0.0 <= reference_eer <= 1.0:
        raise VoxMetricsInputError(
            f"the reference EER is a fraction in [0, 1], got {reference_eer} (e.g. 0.02 for 2 %)."
        )
    findings: list[Finding] = []
    ran: list[str] = []
    if sweep is not None and original is not None:
        got = _original_speech(sweep, original, reference_eer, margin)
        if got != "skip":
            ran.append("original_speech")
            if isinstance(got, Finding):
                findings.append(got)
    if sweep is not None and matched:
        got = _trained_vs_cosine(sweep, order_margin)
        if got != "skip":
            ran.append("trained_vs_cosine")
            if isinstance(got, Finding):
                findings.append(got)
    if eer_by_knowledge:
        ran.append("ordering")
        findings += _ordering(eer_by_knowledge, order_margin)
    return WeakAttackerCheck(findings=tuple(findings), ran=tuple(ran))
