"""Legally validated linkage metrics (Vauquier et al. 2025).

Ties. The authors' public evaluation code (v2) counts a linkage as successful when the true
speaker's score is at least every other candidate's, so a tie goes to the true speaker; that is
``rule="code"`` (the default, under both ``ties`` conventions). The paper's eq. 3 (and an
independent public reproduction) is strict: ``rule="strict"`` counts a tie for the top score as
no link (it equals the rank-1 rate IdR of :func:`~voxmetrics.metrics.srd.srd`). The curve
against N' follows the same rule.

One module per role: :mod:`~voxmetrics.metrics.legal.linking` (linkability, its curve and the
EER against N'), :mod:`~voxmetrics.metrics.legal.singling` (singling out) and
:mod:`~voxmetrics.metrics.legal.conversation` (conversation length and the whole evaluation).
The names below are the package's public surface.
"""

from __future__ import annotations

from voxmetrics.metrics._validation import (
    LINKABILITY_RULES,
    LinkabilityRule,
    check_linkability_rule,
)
from voxmetrics.metrics.legal.conversation import (
    ConversationLengthCurve,
    LegalEvaluation,
    LegalLengthResult,
    conversation_length_curve,
    legal_evaluation,
)
from voxmetrics.metrics.legal.linking import (
    EERCurve,
    LinkabilityCurve,
    eer_curve,
    link_rank_ties,
    linkability,
    linkability_curve,
    linkability_curve_from_ranks,
    linkability_from_ranks,
    linkability_grid,
    other_candidates,
)
from voxmetrics.metrics.legal.singling import (
    MapBlocks,
    SinglingOutCurve,
    SinglingOutResult,
    average_consecutive,
    singling_out,
    singling_out_curve,
    singling_out_draws,
    singling_out_embeddings,
    singling_out_from_isolations,
    singling_out_isolations,
    speaker_profiles,
)

__all__ = [
    "LINKABILITY_RULES",
    "ConversationLengthCurve",
    "EERCurve",
    "LegalEvaluation",
    "LegalLengthResult",
    "LinkabilityCurve",
    "LinkabilityRule",
    "MapBlocks",
    "SinglingOutCurve",
    "SinglingOutResult",
    "average_consecutive",
    "check_linkability_rule",
    "conversation_length_curve",
    "eer_curve",
    "legal_evaluation",
    "link_rank_ties",
    "linkability",
    "linkability_curve",
    "linkability_curve_from_ranks",
    "linkability_from_ranks",
    "linkability_grid",
    "other_candidates",
    "singling_out",
    "singling_out_curve",
    "singling_out_draws",
    "singling_out_embeddings",
    "singling_out_from_isolations",
    "singling_out_isolations",
    "speaker_profiles",
]
