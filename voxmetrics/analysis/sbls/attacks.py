"""Attacks: a fixed attacker's output on one condition's eval utterances, and SBLS of it.

From the built-in attacker (:func:`voxmetrics.metrics.sbls.builtin_attacker`, trained on the dev
embeddings of the condition itself, the default, or of the original speech; its predictions are
kept per process) or from an uploaded predictions file
(:func:`voxmetrics.data.predictions.join_predictions`). SBLS is
:func:`voxmetrics.metrics.sbls.sbls` of the attack (:func:`attack_sbls`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lru import LRU
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.predictions import AttributePrediction, join_predictions
from voxmetrics.data.study import Condition
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.sbls import (
    DEFAULT_ATTACKER,
    DEFAULT_LAMBDA,
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_WEIGHTS,
    SBLSResult,
    attribute_columns,
    builtin_attacker,
    sbls,
)

__all__ = [
    "Attack",
    "AttackerKind",
    "SBLSOptions",
    "attack_sbls",
    "default_attack",
    "embedding_set_attack",
    "embeddings_attack",
    "predictions_attack",
]


AttackerKind = Literal["original", "anonymised"]


@dataclass(frozen=True)
class SBLSOptions:
    """What SBLS depends on besides the attacker's predictions."""

    weights: tuple[float, float, float] = DEFAULT_WEIGHTS
    """(w_attr, w_assoc, w_sub)."""
    subgroup_lambda: float = DEFAULT_LAMBDA
    """lambda of P_subgroup."""
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE
    """Smallest intersection used."""

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~voxmetrics.metrics.sbls.sbls`."""
        return {
            "weights": self.weights,
            "subgroup_lambda": self.subgroup_lambda,
            "min_group_size": self.min_group_size,
        }

    def key(self) -> str:
        """The options as part of a cache key."""
        w = ",".join(repr(float(x)) for x in self.weights)
        return f"w={w}|lam={float(self.subgroup_lambda)!r}|min={int(self.min_group_size)}"


@dataclass(frozen=True, eq=False)
class Attack:
    """A fixed attacker's output on the eval utterances of one condition."""

    labels: Mapping[str, NDArray[np.str_]] = field(repr=False)
    """True label of every utterance, per attribute."""
    predictions: Mapping[str, AttributePrediction] = field(repr=False)
    """The attacker's scores (or hard predictions), same utterance order."""
    speakers: NDArray[np.str_] = field(repr=False)
    """Speaker of every utterance (the bootstrap resamples them)."""
    utt_ids: NDArray[np.str_] = field(repr=False)
    """The utterances attacked."""
    attacker: str
    """Who produced the predictions, e.g. "built-in logistic regression trained on original
    dev embeddings (plain)"."""
    key: str
    """Content key: data and attacker."""
    short: str = ""
    """A short label of the attacker for tables, e.g. "original (plain)"."""
    trained_on: str | None = None
    """Built-in attacker: "anonymised" or "original"; None for uploaded predictions."""

    @property
    def n(self) -> int:
        """Utterances attacked."""
        return int(self.utt_ids.size)


def embedding_set_attack(
    anonymised: EmbeddingSet,
    *,
    original: EmbeddingSet | None = None,
    attacker: AttackerKind = DEFAULT_ATTACKER,
    split: str = "eval",
    attributes: Sequence[str] | None = None,
    name: str = "",
    original_name: str = "",
) -> Attack:
    """The built-in attacker on anonymised embeddings (what ``sbls_embeddings`` does).

    Trained on the dev split of the anonymised embeddings themselves (``attacker=
    "anonymised"``, an informed attacker, the default everywhere) or of ``original``
    (``"original"``, ignorant), and applied to every utterance of ``split`` of ``anonymised``.
    :func:`attack_sbls` of the returned attack equals
    :func:`voxmetrics.metrics.sbls.sbls_embeddings` of the same inputs (tests check it); the
    predictions are kept so that the bootstrap can hold them fixed. ``name`` and
    ``original_name`` name the data in messages and labels. A process trains the attacker once
    per data (embeddings, split, training set, attributes): the study report, ``compare`` and
    the Soft biometrics page reuse its predictions.

    Raises
    ------
    VoxMetricsInputError
        An unknown attacker, no original embeddings for the original attacker, no attribute
        columns, no dev or ``split`` utterances.
    """
    if attacker not in ("original", "anonymised"):
        raise VoxMetricsInputError(
            f'the attacker is trained on "original" or "anonymised" speech, not {attacker!r}.'
        )
    where = f"'{name}'" if name else (anonymised.source or "the embeddings")
    if attacker == "original":
        if original is None:
            raise VoxMetricsInputError(
                "the attacker trained on original speech needs the original (unanonymised) "
                "embeddings; give them, or train the attacker on anonymised speech."
            )
        train_es = original
        trained_on = "original dev embeddings" + (f" ({original_name})" if original_name else "")
    else:
        train_es = anonymised
        trained_on = "anonymised dev embeddings"  # its own: the same label everywhere
    names = list(attributes) if attributes is not None else attribute_columns(anonymised.meta)
    if not names:
        raise VoxMetricsInputError(
            f"{where}: the metadata has no attribute columns (e.g. sex, age_group) to measure "
            "leakage of."
        )
    for es, what in (
        (anonymised, where),
        (train_es, f"the attacker's training data ({trained_on})"),
    ):
        missing = [a for a in names if a not in es.meta.columns]
        if missing:
            raise VoxMetricsInputError(
                f"{what} has no column(s) {', '.join(missing)}; it needs the same attribute "
                "columns."
            )
    train = (train_es.meta["split"] == "dev").to_numpy()
    test = (anonymised.meta["split"] == split).to_numpy()
    if not train.any() or not test.any():
        raise VoxMetricsInputError(
            f"the attacker trains on the dev split and attacks the {split} split; found "
            f"{int(train.sum())} dev utterances in {trained_on} and {int(test.sum())} {split} "
            f"utterances in {where}."
        )
    train_key = train_es.content_hash if attacker == "original" else "self"
    content = anonymised.content_hash
    predictions = _trained_predictions(
        (content, split, train_key, tuple(names)),
        lambda: builtin_attacker(
            train_es.embeddings[train],
            {a: train_es.meta[a].to_numpy()[train] for a in names},
            anonymised.embeddings[test],
        ),
    )
    meta = anonymised.meta[test]
    short = "anonymised (own dev)"
    if attacker == "original":
        short = f"original ({original_name})" if original_name else "original"
    return Attack(
        labels={a: meta[a].to_numpy().astype(str) for a in names},
        predictions=predictions,
        speakers=meta["speaker"].to_numpy().astype(str),
        utt_ids=meta["utt_id"].to_numpy().astype(str),
        attacker=f"built-in logistic regression trained on {trained_on}",
        key=f"emb:{content}|{split}|{attacker}:{train_key}|{','.join(names)}",
        short=short,
        trained_on=attacker,
    )


_PREDICTIONS_MAX = 64

# The built-in attacker's predictions by the content they depend on, so that the report, the
# compare command and the dashboard page train it once per condition in a process.
_PREDICTIONS: LRU[tuple[Any, ...], dict[str, AttributePrediction]] = LRU(_PREDICTIONS_MAX)


def _trained_predictions(
    key: tuple[Any, ...], train: Callable[[], dict[str, AttributePrediction]]
) -> dict[str, AttributePrediction]:
    """``train()``, or its result for the same ``key`` (the data it depends on) kept from before.

    The predictions' arrays are made read-only: every attack of the same data shares them.
    """
    kept = _PREDICTIONS.get(key)
    if kept is not None:
        return dict(kept)
    predictions = train()
    for p in predictions.values():
        for arr in (p.scores, p.predicted):
            if arr is not None:
                arr.flags.writeable = False
    _PREDICTIONS.put(key, predictions)
    return dict(predictions)


def embeddings_attack(
    anonymised: Condition,
    *,
    original: Condition | None = None,
    attacker: AttackerKind = DEFAULT_ATTACKER,
    split: str = "eval",
) -> Attack:
    """:func:`embedding_set_attack` on a condition's embeddings (the page's built-in attacker).

    ``original`` is the condition with the original speech, needed by the attacker trained
    on original speech (``attacker="original"``).

    Raises
    ------
    VoxMetricsInputError
        No embeddings, no original condition for the original attacker, or any error of
        :func:`embedding_set_attack`.
    """
    es = anonymised.embeddings
    if es is None:
        raise VoxMetricsInputError(
            f"'{anonymised.name}' has no embeddings, so the built-in attacker cannot run on it; "
            "upload the predictions of your own attribute classifier instead."
        )
    if attacker == "original" and (original is None or original.embeddings is None):
        raise VoxMetricsInputError(
            "the attacker trained on original speech needs a condition with the original "
            "(unanonymised) embeddings; choose one, or train the attacker on anonymised speech."
        )
    return embedding_set_attack(
        es,
        original=original.embeddings if attacker == "original" and original else None,
        attacker=attacker,
        split=split,
        name=anonymised.name,
        original_name=original.name if attacker == "original" and original else "",
    )


def default_attack(condition: Condition) -> Attack | None:
    """The default attacker (trained on the condition's own anonymised dev embeddings).

    The attack of the study report, the ``compare`` command and the page's default; None
    when the condition has no embeddings, no attribute columns or no dev split.
    """
    es = condition.embeddings
    if es is None or not attribute_columns(es.meta) or "dev" not in es.splits():
        return None
    return embeddings_attack(condition, attacker=DEFAULT_ATTACKER)


def _eval_table(condition: Condition) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(utt_ids, speakers, attribute labels) of the condition's eval utterances."""
    es = condition.embeddings
    if es is not None:
        meta = es.meta[(es.meta["split"] == "eval").to_numpy()]
        names = attribute_columns(meta)
        return (
            meta["utt_id"].to_numpy().astype(str),
            meta["speaker"].to_numpy().astype(str),
            {a: meta[a].to_numpy().astype(str) for a in names},
        )
    ev = condition.eval
    return (
        np.asarray(ev.trial_ids).astype(str),
        np.asarray(ev.trial_speakers).astype(str),
        {a: np.asarray(v).astype(str) for a, v in ev.attributes.items()},
    )


def predictions_attack(condition: Condition, data: bytes, name: str) -> Attack:
    """An uploaded predictions file joined to the condition's eval utterances.

    The utterances are the eval rows of the condition's embedding metadata, or the eval
    trials of its score matrix (with their attribute columns) when it has no embeddings.

    Raises
    ------
    VoxMetricsInputError
        No attribute labels, or any mismatch :func:`join_predictions` finds.
    """
    utt_ids, speakers, labels = _eval_table(condition)
    if not labels:
        raise VoxMetricsInputError(
            f"'{condition.name}' has no attribute labels (e.g. sex, age_group) for its eval "
            "utterances; add attribute columns to its metadata or score file."
        )
    predictions = join_predictions(data, utt_ids, list(labels), name=name)
    if not predictions:
        raise VoxMetricsInputError(f"{name}: no predictions for any attribute.")
    labels = {a: y for a, y in labels.items() if a in predictions}
    key_data = condition.embeddings.content_hash if condition.embeddings else condition.content_hash
    return Attack(
        labels=labels,
        predictions=predictions,
        speakers=speakers,
        utt_ids=utt_ids,
        attacker=f"uploaded predictions ({name})",
        key=f"upload:{hashlib.sha256(data).hexdigest()}|{key_data}",
        short=f"upload: {name}",
    )


def attack_sbls(attack: Attack, options: SBLSOptions | None = None) -> SBLSResult:
    """:func:`~voxmetrics.metrics.sbls.sbls` of an attack under ``options`` (default SBLS)."""
    opts = options or SBLSOptions()
    return sbls(
        attack.labels,
        attack.predictions,
        attacker=attack.attacker,
        trained_on=attack.trained_on,
        **opts.kwargs(),
    )
