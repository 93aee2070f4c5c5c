"""Two-covariance PLDA: SpeechBrain's ``PLDA`` training and ``fast_PLDA_scoring``, vectorised.

The model (Kenny et al. 2013; Jiang et al. 2012, as SpeechBrain's ``PLDA_LDA`` implements it
after SIDEKIT): an embedding is ``x = mean + F h + e`` with a speaker factor ``h ~ N(0, I)``
shared by a speaker's utterances and a residual ``e ~ N(0, Sigma)``; with ``F`` of full rank
(the default, ``rank_f = d``) the between-speaker covariance ``F F^T`` and the within-speaker
covariance ``Sigma`` are two free covariances: the two-covariance model. It is trained by EM
exactly as SpeechBrain's ``PLDA.plda`` does (initial ``F`` from the leading eigenvectors of
the total covariance, ``n_iter`` E/M steps with the minimum-divergence step), and a trial is
scored against an enrolment mean by the log-likelihood ratio of "same speaker" to "different
speakers" (``fast_PLDA_scoring``, closed set ``p_known = 0``). The reference test holds both
to SpeechBrain's code on the same data.

What it assumes: Gaussian speaker and residual distributions (length normalisation first makes
embeddings closer to that, Garcia-Romero & Espy-Wilson 2011), and that the attacker's training
speakers span the between-speaker variability of the evaluated ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import linalg

from voxmetrics.embeddings.backends._common import (
    FittedBackend,
    Projection,
    TrainingData,
    speaker_sums,
)
from voxmetrics.errors import VoxMetricsInputError

__all__ = ["PLDABackend", "PLDAModel", "fit_plda", "plda_scores"]


@dataclass(frozen=True, eq=False)
class PLDAModel:
    """A trained PLDA: ``mean``, speaker loading ``F`` (d x rank) and residual ``Sigma``."""

    mean: NDArray[np.float64]
    """Global mean (d,)."""
    F: NDArray[np.float64]
    """Speaker-factor loading matrix (d x rank_f); the between-speaker covariance is F F^T."""
    Sigma: NDArray[np.float64]
    """Residual (within-speaker) covariance (d x d)."""


def _sqr_inv(sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    """SpeechBrain's whitening matrix: eigenvectors (descending) over the root eigenvalues."""
    values, vectors = linalg.eigh(sigma)
    ind = values.real.argsort()[::-1]
    return vectors.real[:, ind] @ np.diag(1.0 / np.sqrt(values.real[ind]))


def fit_plda(
    x: NDArray[np.float64],
    speakers: NDArray[np.str_],
    *,
    rank_f: int | None = None,
    n_iter: int = 10,
    scaling_factor: float = 1.0,
) -> PLDAModel:
    """Train PLDA by EM as SpeechBrain's ``PLDA.plda`` (no whitening), vectorised.

    Parameters
    ----------
    x : ndarray, shape (U, d)
        Training embeddings.
    speakers : ndarray of str, shape (U,)
        Their speakers (at least two).
    rank_f : int, optional
        Rank of the speaker subspace (default d: the two-covariance model).
    n_iter : int
        EM iterations (SpeechBrain's default 10).
    scaling_factor : float
        Multiplies the statistics (SpeechBrain's ``scaling_factor``).

    Returns
    -------
    PLDAModel

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> spk = np.repeat(np.arange(20), 5).astype(str)
    >>> x = rng.normal(size=(20, 3))[spk.astype(int)] + 0.3 * rng.normal(size=(100, 3))
    >>> m = fit_plda(x, spk)
    >>> m.F.shape, bool(np.trace(m.F @ m.F.T) > np.trace(m.Sigma))
    ((3, 3), True)
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[1]
    rank = d if rank_f is None else int(rank_f)
    if not 1 <= rank <= d:
        raise VoxMetricsInputError(f"PLDA rank_f must be between 1 and {d}, got {rank_f}.")
    names, sums, counts = speaker_sums(x, np.asarray(speakers).astype(str))
    if names.size < 2:
        raise VoxMetricsInputError("PLDA needs training utterances of at least two speakers.")
    mean = x.mean(axis=0)
    centred = x - mean
    sigma_obs = centred.T @ centred / x.shape[0]
    if np.linalg.matrix_rank(sigma_obs) < d:
        raise VoxMetricsInputError(
            f"PLDA needs a full-rank covariance of its training embeddings: {x.shape[0]} "
            f"utterances in {d} dimensions span only {np.linalg.matrix_rank(sigma_obs)}; give "
            "more training utterances (or reduce the dimension first)."
        )
    n = counts.astype(np.float64) * scaling_factor  # sessions per model (stat0)
    stat1 = sums * scaling_factor
    values, vectors = linalg.eigh(sigma_obs)
    idx = np.argsort(values)[::-1]
    F = vectors.real[:, idx[:rank]]
    Sigma = sigma_obs
    n_models = names.size
    for _ in range(n_iter):
        sqr_inv_sigma = _sqr_inv(Sigma)
        white = (stat1 - n[:, None] * mean) @ sqr_inv_sigma  # whiten_stat1(mean, Sigma)
        F = sqr_inv_sigma.T @ F
        A = F.T @ F
        e_h = np.empty((n_models, rank))
        sum_hh = np.zeros((rank, rank))  # sum over models of inv_lambda
        sum_n_hh = np.zeros((rank, rank))  # the same weighted by the sessions
        aux = white @ F
        for sessions in np.unique(n):
            group = n == sessions
            inv_lambda = linalg.inv(sessions * A + np.eye(rank))
            e_h[group] = aux[group] @ inv_lambda
            sum_hh += group.sum() * inv_lambda
            sum_n_hh += sessions * group.sum() * inv_lambda
        R = (sum_hh + e_h.T @ e_h) / n_models
        C = e_h.T @ white @ linalg.inv(sqr_inv_sigma)
        A_acc = sum_n_hh + e_h.T @ (n[:, None] * e_h)
        F = linalg.solve(A_acc, C).T
        Sigma = sigma_obs - F @ C / n.sum()
        F = F @ linalg.cholesky(R)
    return PLDAModel(mean=mean, F=F, Sigma=Sigma)


def plda_scores(
    model: PLDAModel, enrol: NDArray[np.float64], trials: NDArray[np.float64]
) -> NDArray[np.float64]:
    """PLDA LLRs of each trial (T x d) against each enrolment vector (N x d): T x N.

    SpeechBrain's ``fast_PLDA_scoring`` with ``p_known = 0`` and ``scaling_factor = 1``
    (its score matrix is N x T; this is its transpose).
    """
    mu, F, Sigma = model.mean, model.F, model.Sigma
    e, t = enrol - mu, trials - mu
    inv_sigma = linalg.inv(Sigma)
    eye = np.eye(F.shape[1])
    K = F.T @ inv_sigma @ F
    alpha1 = np.linalg.slogdet(linalg.inv(K + eye))[1]
    alpha2 = np.linalg.slogdet(linalg.inv(2 * K + eye))[1]
    constant = alpha2 / 2.0 - alpha1
    sigma_ac = F @ F.T
    sigma_tot_inv = linalg.inv(sigma_ac + Sigma)
    tmp = linalg.inv(sigma_ac + Sigma - sigma_ac @ sigma_tot_inv @ sigma_ac)
    phi = sigma_tot_inv - tmp
    psi = sigma_tot_inv @ sigma_ac @ tmp
    model_part = 0.5 * np.einsum("ij,ij->i", e @ phi, e)
    seg_part = 0.5 * np.einsum("ij,ij->i", t @ phi, t)
    return seg_part[:, None] + model_part[None, :] + constant + t @ (e @ psi).T


class PLDABackend(FittedBackend):
    """Centring and length normalisation (``projection``), then PLDA LLR scoring.

    A speaker's enrolment is the mean of its projected enrolment rows (SpeechBrain's
    ``mean_stat_per_model`` before ``fast_PLDA_scoring``).
    """

    name = "plda"

    def __init__(self, projection: Projection, model: PLDAModel, parameters: dict) -> None:
        super().__init__(parameters)
        self.projection = projection
        """The pre-processing learned on the training data."""
        self.model = model
        """The trained PLDA."""

    def __call__(self, enrol, enrol_speakers, trials):
        """PLDA LLRs of the projected trials against the projected enrolment means."""
        names, sums, counts = speaker_sums(self.projection(enrol), enrol_speakers)
        return names, plda_scores(self.model, sums / counts[:, None], self.projection(trials))


def fit_plda_backend(
    train: TrainingData, projection: Projection, *, rank_f: int | None = None, n_iter: int = 10
) -> PLDABackend:
    """A :class:`PLDABackend` trained on the projected training rows."""
    x = projection(train.embeddings)
    model = fit_plda(x, train.speakers, rank_f=rank_f, n_iter=n_iter)
    params = {"rank_f": model.F.shape[1], "n_iter": n_iter}
    return PLDABackend(projection, model, params)
