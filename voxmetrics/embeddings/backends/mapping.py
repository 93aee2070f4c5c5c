"""Mapping attacks: learn anonymised -> original on the attacker's paired data, then score.

Champion et al. (ASRU 2021) align anonymised x-vectors with the original ones by an orthogonal
Procrustes rotation learned on pairs (the same utterance before and after anonymisation) and
recover many identities. ``method="procrustes"``: W = U V^T from the SVD of X^T Y on unit
vectors (a rotation: it assumes the anonymiser moved the embeddings rigidly);
``method="ridge"``: an affine least-squares map with a ridge penalty ``alpha`` per training
pair (it can also undo a linear squeeze or a nuisance direction). The mapped trials (and the
mapped enrolment, when it is anonymised too) are then cosine-scored.

It needs what only some attackers have: the original embeddings of their own training
utterances. It is never trained on the evaluated utterances.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends._common import FittedBackend, TrainingData, cosine_scores
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["MAPPING_METHODS", "MappingBackend", "fit_mapping"]

MAPPING_METHODS = ("procrustes", "ridge")
"""The mapping attacks: an orthogonal rotation or a ridge-regularised affine map."""


class MappingBackend(FittedBackend):
    """Map anonymised embeddings to the original space (``x -> x W + b``), then cosine."""

    name = "procrustes"

    def __init__(
        self,
        weights: NDArray[np.float64],
        offset: NDArray[np.float64],
        parameters: dict,
        *,
        map_enrol: bool = True,
    ) -> None:
        super().__init__(parameters)
        self.weights = weights
        """d x d' map."""
        self.offset = offset
        """d' offset (zero for Procrustes)."""
        self.map_enrol = map_enrol
        """Map the enrolment too (False when the enrolment is original speech)."""

    def transform(self, x: NDArray[np.floating]) -> NDArray[np.float64]:
        """The unit mapped rows."""
        return unit_rows(unit_rows(np.asarray(x, dtype=np.float64)) @ self.weights + self.offset)

    def __call__(self, enrol, enrol_speakers, trials):
        """Cosine of the mapped trials against the (mapped) enrolment profiles."""
        e = self.transform(enrol) if self.map_enrol else unit_rows(enrol)
        return cosine_scores(e, enrol_speakers, self.transform(trials))


def fit_mapping(
    train: TrainingData,
    *,
    method: str = "procrustes",
    alpha: float = 1e-3,
    map_enrol: bool = True,
) -> MappingBackend:
    """Fit the anonymised -> original map on the training pairs.

    Raises
    ------
    VoxMetricsInputError
        Unknown method, or fewer than two pairs (no originals of the training utterances).
    """
    if method not in MAPPING_METHODS:
        raise VoxMetricsInputError(
            f"mapping method '{method}' is unknown; use one of {', '.join(MAPPING_METHODS)}."
        )
    x, y = train.paired()
    if x.shape[0] < 2:
        raise VoxMetricsInputError(
            "a mapping attack needs the original embeddings of the attacker's training "
            f"utterances (paired on utt_id); {x.shape[0]} of its {train.n_utterances} "
            "training utterances have one."
        )
    x, y = unit_rows(x), unit_rows(y)
    if method == "procrustes":
        if x.shape[1] != y.shape[1]:
            raise VoxMetricsInputError(
                "Procrustes maps embeddings of one dimension onto the same dimension; the "
                f"anonymised have {x.shape[1]} and the originals {y.shape[1]} (use ridge)."
            )
        u, _, vt = np.linalg.svd(x.T @ y)
        weights, offset = u @ vt, np.zeros(y.shape[1])
        params: dict = {"method": method, "n_pairs": int(x.shape[0])}
    else:
        mx, my = x.mean(axis=0), y.mean(axis=0)
        xc, yc = x - mx, y - my
        gram = xc.T @ xc + alpha * x.shape[0] * np.eye(x.shape[1])
        weights = np.linalg.solve(gram, xc.T @ yc)
        offset = my - mx @ weights
        params = {"method": method, "alpha": float(alpha), "n_pairs": int(x.shape[0])}
    return MappingBackend(weights, offset, params, map_enrol=map_enrol)
