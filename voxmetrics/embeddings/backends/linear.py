"""Linear back-ends: centring and length normalisation, LDA (scikit-learn) and WCCN.

Each is a :class:`~voxmetrics.embeddings.backends._common.Projection` learned on the attacker's
training data, followed by cosine scoring against the normalised mean of the projected
enrolment rows (or the maximum over them: :class:`MaxBackend`).

- **Centring + length normalisation** (Garcia-Romero & Espy-Wilson 2011): subtract the training
  mean of the unit vectors, normalise again. Assumes a global offset that cosine mistakes for
  speaker information.
- **LDA** (scikit-learn's ``LinearDiscriminantAnalysis``, SVD solver): the directions that
  maximise between-speaker over within-speaker variance, ``dim`` of them (default: speakers - 1,
  at most d). Assumes speakers differ by a shift in a low-dimensional subspace with a shared,
  Gaussian within-speaker spread: a linear anonymiser that adds nuisance variance elsewhere is
  undone by it.
- **WCCN** (Hatch et al. 2006): whiten the within-speaker covariance, W = Sw^-1 = B B^T, x -> B^T x.
  Assumes a shared within-speaker covariance; ``shrinkage`` pulls Sw towards a multiple of the
  identity when there are few training utterances.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.arrays import unit_rows
from voxmetrics.embeddings.backends._common import (
    FittedBackend,
    Projection,
    TrainingData,
    cosine_scores,
    max_scores,
    speaker_sums,
)
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "MaxBackend",
    "ProjectionBackend",
    "fit_centring",
    "fit_lda",
    "fit_wccn",
    "within_covariance",
]


class ProjectionBackend(FittedBackend):
    """Cosine scoring after a learned projection."""

    def __init__(self, name: str, projection: Projection, parameters: dict | None = None) -> None:
        super().__init__(parameters)
        self.name = name
        self.projection = projection
        """The learned projection."""

    def __call__(self, enrol, enrol_speakers, trials):
        """Cosine scores of the projected trials against the projected enrolment profiles."""
        p = self.projection
        return cosine_scores(p(enrol), enrol_speakers, p(trials))


class MaxBackend(FittedBackend):
    """Cosine against every enrolment utterance; a speaker's score is the maximum over them.

    VoxGuard (2025) finds max-similarity scoring far stronger than averaging at low false-accept
    rates: one enrolment utterance close to the trial is enough.
    """

    name = "max"

    def __call__(self, enrol, enrol_speakers, trials):
        """The highest cosine over each speaker's enrolment utterances."""
        return max_scores(unit_rows(enrol), enrol_speakers, unit_rows(trials))


def fit_centring(train: TrainingData) -> Projection:
    """The mean of the unit training vectors, subtracted before a second normalisation.

    Examples
    --------
    >>> t = TrainingData(np.array([[1.0, 1.0], [1.0, -1.0]]), np.array(["a", "b"]))
    >>> fit_centring(t).mean.round(6).tolist()
    [0.707107, 0.0]
    """
    return Projection(mean=unit_rows(train.embeddings).mean(axis=0))


def fit_lda(train: TrainingData, *, dim: int | None = None) -> tuple[Projection, int]:
    """LDA on the centred unit training vectors (scikit-learn, SVD solver).

    Returns the projection (centring, then ``scalings_[:, :dim]`` after LDA's own centring,
    as ``transform`` does) and the dimension kept: ``dim``, at most speakers - 1 and d.
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    mean = unit_rows(train.embeddings).mean(axis=0)
    x = unit_rows(train.embeddings) - mean
    top = min(train.n_speakers - 1, train.dim)
    k = top if dim is None else int(dim)
    if not 1 <= k <= top:
        raise VoxMetricsInputError(
            f"LDA dimension {dim} is out of range: with {train.n_speakers} training speakers "
            f"and {train.dim} dimensions it must be between 1 and {top}."
        )
    lda = LinearDiscriminantAnalysis(solver="svd", n_components=k).fit(x, train.speakers)
    k = min(k, lda.scalings_.shape[1])  # the SVD solver keeps only the directions of rank
    return Projection(mean=mean + lda.xbar_, matrix=lda.scalings_[:, :k]), k


def within_covariance(x: NDArray[np.float64], speakers: NDArray[np.str_]) -> NDArray[np.float64]:
    """Sw: the mean over speakers of each speaker's covariance (population, about its mean).

    Examples
    --------
    >>> within_covariance(np.array([[0.0], [2.0], [5.0], [5.0]]), np.array(list("aabb")))
    array([[0.5]])
    """
    names, sums, counts = speaker_sums(x, speakers)
    means = sums / counts[:, None]
    _, inverse = np.unique(speakers, return_inverse=True)
    centred = (x - means[inverse]) / np.sqrt(counts[inverse])[:, None]
    return centred.T @ centred / names.size


def fit_wccn(train: TrainingData, *, shrinkage: float = 0.01) -> Projection:
    """WCCN on the centred unit vectors: x -> B^T x with B B^T = inverse of the shrunk Sw.

    ``shrinkage`` (in [0, 1]) replaces Sw by (1 - s) Sw + s tr(Sw)/d I, so that the inverse
    exists with fewer training utterances than dimensions.
    """
    if not 0.0 <= shrinkage <= 1.0:
        raise VoxMetricsInputError(f"WCCN shrinkage must be in [0, 1], got {shrinkage}.")
    mean = unit_rows(train.embeddings).mean(axis=0)
    x = unit_rows(train.embeddings) - mean
    sw = within_covariance(x, train.speakers)
    d = sw.shape[0]
    scale = np.trace(sw) / d
    sw = (1.0 - shrinkage) * sw + (shrinkage * scale + 1e-10 * max(scale, 1e-300)) * np.eye(d)
    values, vectors = np.linalg.eigh(sw)
    values = np.maximum(values, 1e-12 * values.max())
    # B = V diag(1/sqrt(lambda)): B B^T = Sw^-1 (a square root of the inverse, as Cholesky's)
    return Projection(mean=mean, matrix=vectors / np.sqrt(values))
