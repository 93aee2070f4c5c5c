"""SBLS of a study's conditions: attacks, the score, its intervals and every table.

An :class:`Attack` is a fixed attacker's output on one condition's eval utterances: the true
labels, the class scores (or hard predictions) and the speaker of every utterance. It comes
from the built-in attacker (:func:`voxmetrics.metrics.sbls.builtin_attacker`, trained on the
dev embeddings of the condition itself, the default, or of the original speech) or from an
uploaded predictions file (:func:`voxmetrics.data.predictions.join_predictions`). SBLS is
:func:`voxmetrics.metrics.sbls.sbls` of the attack (:func:`attack_sbls`).

The speaker-level bootstrap (:func:`sbls_replicates`, :func:`sbls_intervals`) holds the
attacker fixed (it is trained once) and resamples the evaluation speakers. A replicate is a
reweighting, not a re-run: every quantity SBLS reads is a sum over utterances (class counts,
the Mann-Whitney sums of the one-vs-rest AUCs, confusion tables, subgroup sizes and joint
hits), so a replicate weights each utterance by how often its speaker was drawn. The class
alignment is redone in each replicate, as a re-run would; the per-speaker tables are built once
per distinct alignment. The result equals recomputing :func:`~voxmetrics.metrics.sbls.sbls` on
the resampled utterances (the tests hold a slow reference that does exactly that).

The dashboard's Soft biometrics page, the ``sbls`` and ``compare`` commands and the study
report all call these functions, so they give the same numbers.

One module per role: :mod:`~voxmetrics.analysis.sbls.attacks` (the attacks and SBLS of one),
:mod:`~voxmetrics.analysis.sbls.replicates` (the bootstrap, its intervals and the paired
comparison) and :mod:`~voxmetrics.analysis.sbls.frames` (the tables). The names below are the
package's public surface.
"""

from __future__ import annotations

from voxmetrics.analysis.sbls.attacks import (
    Attack,
    SBLSOptions,
    attack_sbls,
    default_attack,
    embedding_set_attack,
    embeddings_attack,
    predictions_attack,
)
from voxmetrics.analysis.sbls.frames import (
    SBLSRow,
    attribute_frame,
    component_frame,
    identity_frame,
    intersection_frame,
    interval_frame,
    subgroup_frame,
    weights_ok,
)
from voxmetrics.analysis.sbls.replicates import (
    COMPONENTS,
    compare_sbls,
    sbls_intervals,
    sbls_replicates,
)

__all__ = [
    "COMPONENTS",
    "Attack",
    "SBLSOptions",
    "SBLSRow",
    "attack_sbls",
    "attribute_frame",
    "compare_sbls",
    "component_frame",
    "default_attack",
    "embedding_set_attack",
    "embeddings_attack",
    "identity_frame",
    "intersection_frame",
    "interval_frame",
    "predictions_attack",
    "sbls_intervals",
    "sbls_replicates",
    "subgroup_frame",
    "weights_ok",
]
