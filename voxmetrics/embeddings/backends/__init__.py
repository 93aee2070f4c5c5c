"""Attacker back-ends: embeddings to scores, trained on the attacker's own data.

What this package is: the scoring rules an attacker can put behind a fixed speaker encoder
(retraining the encoder itself stays outside: its scores can be imported). What it is not: the
sweep over back-ends and the choice of the strongest on dev
(:mod:`voxmetrics.analysis.attackers`), nor the calibration and fusion of scores
(:mod:`voxmetrics.metrics.calibration`).

:func:`fit_backend` trains one back-end by name on :class:`TrainingData` (the ``train`` split
of anonymised embeddings, else dev; never eval) and returns a scorer for
:meth:`voxmetrics.data.model.EmbeddingSet.score_matrix_with`:

``cosine``
    Today's scoring: cosine against the normalised mean of the unit enrolment embeddings.
``max``
    Cosine against every enrolment utterance, the maximum per speaker.
``lda``, ``wccn``
    Centring and length normalisation, then LDA or WCCN (:mod:`.linear`), then cosine.
``plda``
    Centring and length normalisation, then two-covariance PLDA LLRs (:mod:`.plda`).
``snorm``, ``asnorm``
    Cosine normalised with a cohort of the training embeddings (:mod:`.norm`).
``procrustes``
    Map anonymised to original embeddings (Procrustes or ridge), then cosine (:mod:`.mapping`).
"""

from __future__ import annotations

from typing import Any

from voxmetrics.embeddings.backends._common import (
    FittedBackend,
    Projection,
    TrainingData,
    cosine_scores,
    max_scores,
)
from voxmetrics.embeddings.backends.linear import (
    MaxBackend,
    ProjectionBackend,
    fit_centring,
    fit_lda,
    fit_wccn,
)
from voxmetrics.embeddings.backends.mapping import MAPPING_METHODS, MappingBackend, fit_mapping
from voxmetrics.embeddings.backends.norm import DEFAULT_TOP_N, NormBackend
from voxmetrics.embeddings.backends.plda import (
    PLDABackend,
    PLDAModel,
    fit_plda,
    fit_plda_backend,
    plda_scores,
)
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "BACKENDS",
    "DEFAULT_TOP_N",
    "EMBEDDING_BACKENDS",
    "MAPPING_METHODS",
    "TRAINED_BACKENDS",
    "FittedBackend",
    "MappingBackend",
    "MaxBackend",
    "NormBackend",
    "PLDABackend",
    "PLDAModel",
    "Projection",
    "ProjectionBackend",
    "TrainingData",
    "backend_parameters",
    "cosine_scores",
    "fit_backend",
    "fit_centring",
    "fit_lda",
    "fit_mapping",
    "fit_plda",
    "fit_wccn",
    "max_scores",
    "plda_scores",
]

BACKENDS = ("cosine", "lda", "wccn", "plda", "snorm", "asnorm", "procrustes", "fusion", "max")
"""Every back-end, in the order they are tried (ties in the choice of the strongest go to
the first): the order of the methods docs, with max-over-enrolment last."""

EMBEDDING_BACKENDS = tuple(b for b in BACKENDS if b != "fusion")
"""The back-ends that score embeddings (``fusion`` combines their scores)."""

TRAINED_BACKENDS = ("lda", "wccn", "plda", "snorm", "asnorm", "procrustes")
"""The embedding back-ends trained on the attacker's data (cosine and max are not)."""

_PARAMETERS: dict[str, tuple[str, ...]] = {
    "cosine": (),
    "max": (),
    "lda": ("dim",),
    "wccn": ("shrinkage",),
    "plda": ("rank_f", "n_iter"),
    "snorm": (),
    "asnorm": ("top_n",),
    "procrustes": ("method", "alpha", "map_enrol"),
}


def backend_parameters(name: str) -> tuple[str, ...]:
    """The parameters :func:`fit_backend` takes for back-end ``name``.

    Examples
    --------
    >>> backend_parameters("asnorm")
    ('top_n',)
    """
    if name not in _PARAMETERS:
        raise VoxMetricsInputError(
            f"back-end '{name}' is unknown"
            + (" (fusion combines the other back-ends' scores on dev)" if name == "fusion" else "")
            + f"; the embedding back-ends are {', '.join(EMBEDDING_BACKENDS)}."
        )
    return _PARAMETERS[name]


def fit_backend(name: str, train: TrainingData | None = None, **params: Any) -> FittedBackend:
    """Train back-end ``name`` on ``train`` (not needed by ``cosine`` and ``max``).

    Parameters
    ----------
    name : str
        One of :data:`EMBEDDING_BACKENDS`.
    train : TrainingData, optional
        The attacker's training data.
    **params
        The back-end's parameters (:func:`backend_parameters`): ``dim`` (LDA), ``shrinkage``
        (WCCN), ``rank_f``, ``n_iter`` (PLDA), ``top_n`` (AS-norm, default 300), ``method``,
        ``alpha``, ``map_enrol`` (mapping).

    Returns
    -------
    FittedBackend
        A scorer with its ``name`` and ``parameters``.

    Raises
    ------
    VoxMetricsInputError
        Unknown back-end or parameter, a trained back-end without training data, or training
        data it cannot be fitted on.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> spk = np.repeat(np.array(["a", "b", "c"]), 4)
    >>> x = rng.normal(size=(3, 5))[np.repeat(np.arange(3), 4)] + 0.1 * rng.normal(size=(12, 5))
    >>> lda = fit_backend("lda", TrainingData(x, spk))
    >>> speakers, scores = lda(x[::4], spk[::4], x)
    >>> lda.name, lda.parameters, speakers.tolist(), scores.shape
    ('lda', {'dim': 2}, ['a', 'b', 'c'], (12, 3))
    """
    allowed = backend_parameters(name)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise VoxMetricsInputError(
            f"back-end '{name}' has no parameter {', '.join(map(repr, unknown))}; its "
            f"parameters are {', '.join(allowed) or 'none'}."
        )
    if name == "cosine":
        return FittedBackend()
    if name == "max":
        return MaxBackend()
    if train is None:
        raise VoxMetricsInputError(
            f"back-end '{name}' is trained on the attacker's own data; give a 'train' split "
            "(or a 'dev' split) of anonymised embeddings."
        )
    train.check("training data")
    if name == "lda":
        projection, dim = fit_lda(train, dim=params.get("dim"))
        return ProjectionBackend("lda", projection, {"dim": dim})
    if name == "wccn":
        shrinkage = float(params.get("shrinkage", 0.01))
        return ProjectionBackend(
            "wccn", fit_wccn(train, shrinkage=shrinkage), {"shrinkage": shrinkage}
        )
    if name == "plda":
        return fit_plda_backend(
            train,
            fit_centring(train),
            rank_f=params.get("rank_f"),
            n_iter=int(params.get("n_iter", 10)),
        )
    if name in ("snorm", "asnorm"):
        top_n = None if name == "snorm" else int(params.get("top_n", DEFAULT_TOP_N))
        return NormBackend(train.embeddings, top_n)
    return fit_mapping(
        train,
        method=str(params.get("method", "procrustes")),
        alpha=float(params.get("alpha", 1e-3)),
        map_enrol=bool(params.get("map_enrol", True)),
    )
