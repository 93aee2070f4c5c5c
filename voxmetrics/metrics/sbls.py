"""SBLS: Soft Biometric Leakage Score (Seo et al. 2025; docs, Methods > SBLS).

Three protection components in [0, 1] (1 = no measurable leakage): attribute inference
P_attr (permutation-aligned one-vs-rest AUC, or balanced accuracy for hard predictions),
systematic linkage P_assoc (normalised mutual information of true and aligned predicted
classes) and subgroup protection P_subgroup (joint recovery rate of attribute intersections);
SBLS is their weighted sum. Parts the paper leaves open (docs, Methods > SBLS) are parameters
here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.arrays import unit_rows
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.predictions import AttributePrediction
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import check_count
from voxmetrics.metrics._scipy import optimize
from voxmetrics.metrics.parallel import single_blas_thread

pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "DEFAULT_ATTACKER",
    "DEFAULT_LAMBDA",
    "DEFAULT_MIN_GROUP_SIZE",
    "DEFAULT_WEIGHTS",
    "AttributeLeakage",
    "AttributePrediction",
    "SBLSResult",
    "SubgroupRow",
    "attribute_columns",
    "builtin_attacker",
    "sbls",
    "sbls_embeddings",
]

DEFAULT_WEIGHTS: tuple[float, float, float] = (0.4, 0.4, 0.2)
"""(w_attr, w_assoc, w_sub): reproduce Seo et al.'s (2025) Table 3 (docs, Methods > SBLS)."""
DEFAULT_LAMBDA = 0.7
"""Weight of the worst case in P_subgroup (the authors' value)."""
DEFAULT_MIN_GROUP_SIZE = 30
"""Smallest subgroup used (the paper's value is not recoverable)."""
DEFAULT_ATTACKER: Literal["original", "anonymised"] = "anonymised"
"""The built-in attacker used by default everywhere (library, ``sbls`` command, dashboard page,
study report): trained on the anonymised dev embeddings of the condition itself, an informed
attacker. It needs no original speech, so every condition with embeddings gets the same
attacker, and it is the conservative (worst-case) view. The ignorant attacker trained on
original speech stays available as ``"original"``."""


@dataclass(frozen=True)
class AttributeLeakage:
    """Leakage of one attribute, with every intermediate (docs, Methods > SBLS)."""

    name: str
    """Attribute name."""
    classes: tuple[str, ...]
    """True classes, sorted; rows of the matrices."""
    auc_matrix: NDArray[np.float64] | None = field(repr=False)
    """K x K one-vs-rest AUC of true class c using score column c' (None for hard input)."""
    permutation: tuple[int, ...]
    """pi(c): the attacker column aligned with true class c (Hungarian assignment)."""
    auc: float | None
    """Aligned AUC, mean_c AUC[c, pi(c)] (None for hard input)."""
    balanced_accuracy: float
    """Balanced accuracy of the aligned hard predictions."""
    leakage: float
    """L_a in [0, 1]: from the AUC (soft) or the balanced accuracy (hard)."""
    nmi: float
    """I(Y; Y_hat) / ln K from the confusion matrix."""
    confusion: NDArray[np.int64] = field(repr=False)
    """K x K counts: true class (rows) x aligned predicted class (columns)."""
    predicted: NDArray[np.str_] = field(repr=False)
    """Aligned hard prediction of every utterance, in true-class labels."""


@dataclass(frozen=True)
class SubgroupRow:
    """One subgroup of the breakdown."""

    attribute: str
    """The attribute whose leakage is measured, or "all" for the joint recovery rate."""
    group: str
    """The subgroup, e.g. "sex=F & age_group=18-35"."""
    n: int
    """Utterances in the subgroup."""
    auc: float | None
    """Aligned AUC of ``attribute`` within the subgroup (None when undefined)."""
    leakage: float | None
    """Leakage of ``attribute`` in the subgroup; for "all", L_g, the joint recovery rate."""
    accuracy: float | None
    """Accuracy of the aligned predictions of ``attribute`` (or all attributes) in it."""
    used: bool
    """False when n < min_group_size (skipped)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {
            "attribute": self.attribute,
            "group": self.group,
            "n": self.n,
            "auc": self.auc,
            "leakage": self.leakage,
            "accuracy": self.accuracy,
            "used": self.used,
        }


@dataclass(frozen=True)
class SBLSResult:
    """SBLS, its components and every intermediate."""

    attributes: tuple[AttributeLeakage, ...]
    """Per-attribute leakage."""
    subgroups: tuple[SubgroupRow, ...]
    """Per-(attribute, subgroup) rows (subgroups of the other attributes' values) and the
    joint-recovery rows of the full intersections (attribute "all")."""
    p_attr: float
    """1 - mean_a L_a."""
    p_assoc: float
    """1 - mean_a NMI_a."""
    p_subgroup: float | None
    """Subgroup protection (None when no intersection reaches the minimum size)."""
    sbls: float | None
    """w_attr P_attr + w_assoc P_assoc + w_sub P_subgroup (higher = more protection)."""
    weights: tuple[float, float, float]
    """(w_attr, w_assoc, w_sub)."""
    subgroup_lambda: float
    """lambda of P_subgroup."""
    min_group_size: int
    """Smallest subgroup used."""
    attacker: str = "uploaded predictions"
    """Who produced the predictions."""
    trained_on: str | None = None
    """Built-in attacker: "anonymised" (informed) or "original" (ignorant) dev embeddings;
    None for uploaded predictions."""

    @property
    def skipped(self) -> tuple[SubgroupRow, ...]:
        """Subgroups below the minimum size."""
        return tuple(r for r in self.subgroups if not r.used)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``python -m voxmetrics sbls``."""
        return {
            "sbls": self.sbls,
            "p_attr": self.p_attr,
            "p_assoc": self.p_assoc,
            "p_subgroup": self.p_subgroup,
            "attacker": self.attacker,
            "attacker_trained_on": self.trained_on,
            "weights": list(self.weights),
            "lambda": self.subgroup_lambda,
            "min_group_size": self.min_group_size,
            "attributes": {
                a.name: {
                    "auc": a.auc,
                    "balanced_accuracy": a.balanced_accuracy,
                    "leakage": a.leakage,
                    "nmi": a.nmi,
                }
                for a in self.attributes
            },
            "subgroups": [r.to_dict() for r in self.subgroups],
        }


def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


def roc_auc(positive: NDArray[np.bool_], scores: ArrayLike) -> float:
    """Area under the ROC curve of ``scores`` for the binary labels ``positive``.

    The Mann-Whitney statistic with mid-ranks (a tie counts 1/2), which equals the trapezoidal
    ROC area of ``sklearn.metrics.roc_auc_score``; both classes must be present.

    Examples
    --------
    >>> roc_auc(np.array([True, False, True, False]), [0.9, 0.1, 0.4, 0.4])
    0.875
    """
    from scipy.stats import rankdata  # imported here: scipy.stats costs ~0.3 s to import

    pos = np.asarray(positive, dtype=bool)
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _auc_matrix(y: NDArray[np.str_], classes: Sequence[str], scores: NDArray) -> NDArray:
    """AUC of every score column for every class (one-vs-rest), as :func:`roc_auc` each.

    Vectorised: every column is ranked once and the positives' rank sums of all classes come
    from one product with the one-hot labels (the sums of mid-ranks are exact), so hundreds
    of classes cost one pass instead of classes x columns sorts.
    """
    from scipy.stats import rankdata

    onehot = (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(np.float64)
    ranks = rankdata(np.asarray(scores, dtype=np.float64), axis=0)
    n_pos = onehot.sum(axis=0)[:, None]
    n_neg = y.size - n_pos
    defined = (n_pos > 0) & (n_neg > 0)  # otherwise AUC is undefined here: counts as chance
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = (onehot.T @ ranks - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where(defined, auc, 0.5)


def _nmi(contingency: NDArray, k: int) -> float:
    """I(Y; Y_hat) / ln K from a (true x predicted) contingency table of any width.

    Mutual information does not depend on how the predicted categories are named, so the
    raw table (every predicted class, assigned by the alignment or not) gives it exactly.
    """
    confusion = np.asarray(contingency, dtype=np.float64)
    n = confusion.sum()
    if n == 0 or k < 2:
        return 0.0
    p = confusion / n
    px, py = p.sum(axis=1, keepdims=True), p.sum(axis=0, keepdims=True)
    nz = p > 0
    mi = float((p[nz] * np.log(p[nz] / (px @ py)[nz])).sum())
    return _clip01(mi / math.log(k))


def _align(
    name: str, y: NDArray[np.str_], classes: tuple[str, ...], pred: AttributePrediction
) -> AttributeLeakage:
    k = len(classes)
    if pred.scores is not None:
        scores = np.asarray(pred.scores, dtype=np.float64)
        # the attacker may know classes absent from these labels (m >= k): the alignment
        # then assigns k of its m columns, as with hard predictions below
        if scores.shape != (y.size, len(pred.classes)) or len(pred.classes) < k:
            raise VoxMetricsInputError(
                f"attribute '{name}': the attacker gives {len(pred.classes)} class scores "
                f"({', '.join(pred.classes)}) but the true labels have {k} classes "
                f"({', '.join(classes)}); give one score column per class."
            )
        auc = _auc_matrix(y, classes, scores)
        _, perm = optimize.linear_sum_assignment(-auc)
        aligned_auc = float(auc[np.arange(k), perm].mean())
        # aligned prediction: the true class whose assigned column scores highest
        predicted_idx = np.argmax(scores[:, perm], axis=1)
        contingency = None  # the aligned confusion matrix below is the full table
    else:
        if pred.predicted is None:
            raise VoxMetricsInputError(f"attribute '{name}': no scores and no predictions.")
        hard = np.asarray(pred.predicted).astype(str)
        attacker_classes = np.array(sorted(set(pred.classes) | set(hard.tolist())))
        raw = np.zeros((k, attacker_classes.size))
        yi = np.searchsorted(np.array(classes), y)
        np.add.at(raw, (yi, np.searchsorted(attacker_classes, hard)), 1.0)
        recall = raw / np.maximum(raw.sum(axis=1, keepdims=True), 1.0)
        rows, cols = optimize.linear_sum_assignment(-recall)
        perm = np.full(k, -1)
        perm[rows] = cols
        to_true = {int(c): int(r) for r, c in zip(rows, cols, strict=True)}
        col_of = np.searchsorted(attacker_classes, hard)
        # a predicted class left unassigned (more attacker classes than true) is always wrong
        predicted_idx = np.array([to_true.get(int(c), -1) for c in col_of])
        auc, aligned_auc = None, None
        contingency = raw  # includes predictions of classes the alignment left unassigned
    yi = np.searchsorted(np.array(classes), y)
    confusion = np.zeros((k, k), dtype=np.int64)
    ok = predicted_idx >= 0
    np.add.at(confusion, (yi[ok], predicted_idx[ok]), 1)
    per_class = confusion.diagonal() / np.maximum(np.bincount(yi, minlength=k), 1)
    present = np.bincount(yi, minlength=k) > 0
    ba = float(per_class[present].mean())
    if aligned_auc is not None:
        leakage = _clip01((aligned_auc - 0.5) / 0.5)
    else:
        leakage = _clip01((ba - 1.0 / k) / (1.0 - 1.0 / k))
    predicted = np.where(ok, np.array(classes)[np.clip(predicted_idx, 0, k - 1)], "")
    return AttributeLeakage(
        name=name,
        classes=classes,
        auc_matrix=auc,
        permutation=tuple(int(p) for p in perm),
        auc=aligned_auc,
        balanced_accuracy=ba,
        leakage=leakage,
        nmi=_nmi(confusion if contingency is None else contingency, k),
        confusion=confusion,
        predicted=predicted,
    )


def sbls(
    labels: Mapping[str, ArrayLike],
    predictions: Mapping[str, AttributePrediction],
    *,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    subgroup_lambda: float = DEFAULT_LAMBDA,
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    attacker: str = "uploaded predictions",
    trained_on: str | None = None,
) -> SBLSResult:
    """Soft Biometric Leakage Score of an attacker's predictions (docs, Methods > SBLS).

    Parameters
    ----------
    labels : mapping of attribute name to array_like of str, shape (n,)
        True labels of each utterance.
    predictions : mapping of attribute name to AttributePrediction
        The attacker's scores (or hard predictions) for the same utterances, same order.
    weights : (w_attr, w_assoc, w_sub)
        Default (0.4, 0.4, 0.2) (docs, Methods > SBLS).
    subgroup_lambda : float
        lambda of P_subgroup, default 0.7.
    min_group_size : int
        Subgroups with fewer utterances are skipped and listed, default 30.
    attacker : str
        Label of the attacker, carried into the result.
    trained_on : {"anonymised", "original"}, optional
        What the built-in attacker was trained on (None for uploaded predictions).

    Returns
    -------
    SBLSResult

    Examples
    --------
    A perfect attacker on balanced classes leaves no protection:

    >>> y = np.array(["F", "M"] * 20)
    >>> pred = AttributePrediction(("F", "M"), scores=np.c_[y == "F", y == "M"].astype(float))
    >>> r = sbls({"sex": y}, {"sex": pred}, min_group_size=5)
    >>> r.p_attr, r.p_assoc, r.p_subgroup, r.sbls
    (0.0, 0.0, 0.0, 0.0)
    """
    w = tuple(float(x) for x in weights)
    if len(w) != 3 or any(x < 0 for x in w) or not math.isclose(sum(w), 1.0, abs_tol=1e-9):
        raise VoxMetricsInputError(
            f"`weights` must be three non-negative numbers summing to 1, got {list(weights)}."
        )
    if not 0.0 <= subgroup_lambda <= 1.0:
        raise VoxMetricsInputError(f"`subgroup_lambda` must lie in [0, 1], got {subgroup_lambda}.")
    if min_group_size < 1:
        raise VoxMetricsInputError("`min_group_size` must be >= 1.")
    names = list(labels)
    if not names:
        raise VoxMetricsInputError("SBLS needs at least one attribute.")
    missing = [a for a in names if a not in predictions]
    if missing:
        raise VoxMetricsInputError(
            f"no attacker predictions for attribute(s) {', '.join(missing)}; give scores or "
            "predictions for every attribute, or drop it."
        )
    ys = {}
    for a in names:
        raw_labels = pd.Series(np.asarray(labels[a], dtype=object).ravel())
        missing_label = raw_labels.isna() | (raw_labels.astype(str).str.strip() == "")
        if missing_label.any():
            raise VoxMetricsInputError(
                f"attribute '{a}': {int(missing_label.sum())} utterance(s) have a missing true "
                "label; fill them in or leave those utterances out."
            )
        ys[a] = raw_labels.astype(str).to_numpy()
    n = ys[names[0]].size
    if any(y.size != n for y in ys.values()) or n == 0:
        raise VoxMetricsInputError("every attribute needs one true label per utterance.")
    leaks = []
    for a in names:
        classes = tuple(sorted(set(ys[a].tolist())))
        check_count(f"attribute '{a}'", "classes", len(classes), "max_classes")
        if len(classes) < 2:
            raise VoxMetricsInputError(
                f"attribute '{a}' has a single class ({classes[0]}) in the data; leakage needs "
                "at least two."
            )
        leaks.append(_align(a, ys[a], classes, predictions[a]))
    p_attr = 1.0 - float(np.mean([a.leakage for a in leaks]))
    p_assoc = 1.0 - float(np.mean([a.nmi for a in leaks]))

    rows: list[SubgroupRow] = []
    # per-(attribute, subgroup): leakage of attribute a within each subgroup of the others
    for a_idx, a in enumerate(names):
        others = [o for o in names if o != a]
        lk = leaks[a_idx]
        pred_scores = predictions[a].scores
        scores = None if pred_scores is None else np.asarray(pred_scores, dtype=np.float64)
        for values, rows_of in _groups(ys, others):  # the subgroups that occur, in sorted order
            size = int(rows_of.size)
            label = " & ".join(f"{o}={v}" for o, v in zip(others, values, strict=True)) or "all"
            sub = _subgroup_attribute(a, ys[a][rows_of], lk, scores, rows_of)
            rows.append(SubgroupRow(a, label, size, sub[0], sub[1], sub[2], size >= min_group_size))
    # joint recovery rate L_g of each intersection of all attributes (P_subgroup)
    recovery = []
    for values, rows_of in _groups(ys, names):
        size = int(rows_of.size)
        hit = np.ones(size, dtype=bool)
        for lk, v in zip(leaks, values, strict=True):
            hit &= lk.predicted[rows_of] == v
        rate = float(hit.mean())
        used = size >= min_group_size
        label = " & ".join(f"{a}={v}" for a, v in zip(names, values, strict=True))
        rows.append(SubgroupRow("all", label, size, None, rate, rate, used))
        if used:
            recovery.append(rate)
    p_sub = None
    if recovery:
        prot = 1.0 - np.asarray(recovery)
        ratio = float(prot.min() / prot.max()) if prot.max() > 0 else 0.0
        p_sub = subgroup_lambda * float(1.0 - max(recovery)) + (1.0 - subgroup_lambda) * ratio
    score = None if p_sub is None else w[0] * p_attr + w[1] * p_assoc + w[2] * p_sub
    return SBLSResult(
        attributes=tuple(leaks),
        subgroups=tuple(rows),
        p_attr=p_attr,
        p_assoc=p_assoc,
        p_subgroup=p_sub,
        sbls=score,
        weights=w,
        subgroup_lambda=float(subgroup_lambda),
        min_group_size=int(min_group_size),
        attacker=attacker,
        trained_on=trained_on,
    )


def _groups(
    ys: Mapping[str, NDArray], names: Sequence[str]
) -> list[tuple[tuple[str, ...], NDArray[np.intp]]]:
    """The value combinations of ``names`` that occur, sorted, each with its rows.

    Only combinations that occur: with hundreds of classes the full product (e.g. 200 x 200)
    would be mostly empty, and each empty group would cost a pass over the data.
    """
    n = next(iter(ys.values())).size
    if not names:
        return [((), np.arange(n, dtype=np.intp))]
    frame = pd.DataFrame({str(i): ys[a] for i, a in enumerate(names)})
    indices = frame.groupby(list(frame.columns), sort=True).indices
    out = []
    for key, rows in indices.items():
        values = key if isinstance(key, tuple) else (key,)
        out.append((tuple(str(v) for v in values), np.asarray(rows, dtype=np.intp)))
    out.sort(key=lambda item: item[0])
    return out


def _subgroup_attribute(
    name: str,
    y: NDArray[np.str_],
    lk: AttributeLeakage,
    all_scores: NDArray[np.float64] | None,
    mask: NDArray[np.intp],
) -> tuple[float | None, float | None, float]:
    """(aligned AUC, leakage, accuracy) of one attribute within a subgroup of the others."""
    accuracy = float((lk.predicted[mask] == y).mean())
    classes = lk.classes
    present = [c for c in classes if (y == c).any()]
    if len(present) < 2:
        return None, None, accuracy
    if all_scores is not None:
        from scipy.stats import rankdata

        cols = [lk.permutation[classes.index(c)] for c in present]
        ranks = rankdata(all_scores[mask][:, cols], axis=0)  # as roc_auc, all classes at once
        positive = y[:, None] == np.asarray(present)[None, :]
        n_pos = positive.sum(axis=0)
        n_neg = y.size - n_pos
        aucs = ((ranks * positive).sum(axis=0) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
        auc = float(np.mean(aucs))
        return auc, _clip01((auc - 0.5) / 0.5), accuracy
    recalls = [float((lk.predicted[mask][y == c] == c).mean()) for c in present]
    k = len(present)
    return None, _clip01((float(np.mean(recalls)) - 1.0 / k) / (1.0 - 1.0 / k)), accuracy


def builtin_attacker(
    train_embeddings: ArrayLike,
    train_labels: Mapping[str, ArrayLike],
    test_embeddings: ArrayLike,
    *,
    seed: int = 0,
) -> dict[str, AttributePrediction]:
    """VoxMetrics' attacker (docs, Methods > SBLS): a logistic regression per attribute.

    Trained on ``train_embeddings`` (original dev embeddings for an ignorant attacker, or
    anonymised dev embeddings for an informed one; L2-normalised) and applied to
    ``test_embeddings``; returns class probabilities. BLAS runs on one thread
    (:func:`~voxmetrics.metrics.parallel.single_blas_thread`), as in the study report, so the
    predictions do not depend on where they are first computed.
    """
    xtr = np.asarray(train_embeddings, dtype=np.float64)
    xte = np.asarray(test_embeddings, dtype=np.float64)
    if xtr.ndim != 2 or xte.ndim != 2 or xtr.shape[1] != xte.shape[1]:
        raise VoxMetricsInputError(
            f"dimension mismatch: the attacker is trained on embeddings of shape {xtr.shape} "
            f"and applied to embeddings of shape {xte.shape}; both sets must come from the same "
            "extractor, with the same number of dimensions."
        )
    xtr, xte = unit_rows(xtr), unit_rows(xte)
    out = {}
    for name, y in train_labels.items():
        labels = pd.Series(np.asarray(y, dtype=object).ravel())
        known = (~labels.isna() & (labels.astype(str).str.strip() != "")).to_numpy()
        yy = labels[known].astype(str).to_numpy()  # training rows without a label are left out
        check_count(f"attribute '{name}'", "classes", np.unique(yy).size, "max_classes")
        if np.unique(yy).size < 2:
            raise VoxMetricsInputError(
                f"the attacker cannot learn attribute '{name}': its training data has fewer "
                "than two labelled classes."
            )
        from sklearn.linear_model import LogisticRegression

        with single_blas_thread():  # small products: a second BLAS thread only spins
            model = LogisticRegression(max_iter=2000, random_state=seed).fit(xtr[known], yy)
            scores = model.predict_proba(xte)
        classes = tuple(str(c) for c in model.classes_)
        out[name] = AttributePrediction(classes=classes, scores=scores)
    return out


def attribute_columns(meta: Any) -> list[str]:
    """Metadata columns that hold soft-biometric labels (all but the reserved ones)."""
    reserved = {"utt_id", "speaker", "role", "split", "system", "audio_path"}
    return [str(c) for c in meta.columns if str(c) not in reserved]


def sbls_embeddings(
    anonymised: EmbeddingSet,
    *,
    original: EmbeddingSet | None = None,
    attacker: Literal["original", "anonymised"] = DEFAULT_ATTACKER,
    attributes: Sequence[str] | None = None,
    split: str = "eval",
    **options: Any,
) -> SBLSResult:
    """SBLS of an anonymised EmbeddingSet under the built-in attacker (docs, Methods > SBLS).

    The attacker is trained on the dev split of the anonymised embeddings themselves
    (``attacker="anonymised"``, an informed attacker; the default everywhere,
    :data:`DEFAULT_ATTACKER`) or of the ``original`` ones (``"original"``, ignorant) and
    attacks every utterance of ``split`` of the anonymised set. ``options`` go to
    :func:`sbls` (weights, subgroup_lambda, min_group_size).
    """
    if attacker not in ("original", "anonymised"):
        raise VoxMetricsInputError(
            f'`attacker` must be "original" or "anonymised", not {attacker!r}.'
        )
    train_set = anonymised if attacker == "anonymised" else original
    if train_set is None:
        raise VoxMetricsInputError(
            "the original-speech attacker needs the original (unanonymised) embeddings; give "
            "them, or use the attacker trained on anonymised speech."
        )
    names = list(attributes) if attributes is not None else attribute_columns(anonymised.meta)
    if not names:
        raise VoxMetricsInputError(
            "the metadata has no attribute columns (e.g. sex, age_group) to measure leakage of."
        )
    for es in {id(anonymised): anonymised, id(train_set): train_set}.values():
        missing = [a for a in names if a not in es.meta.columns]
        if missing:
            raise VoxMetricsInputError(
                f"{es.source or 'embeddings'}: no column(s) {', '.join(missing)} in the metadata."
            )
    train = (train_set.meta["split"] == "dev").to_numpy()
    test = (anonymised.meta["split"] == split).to_numpy()
    if not train.any() or not test.any():
        raise VoxMetricsInputError(
            f"the attacker trains on the dev split and attacks the {split} split; found "
            f"{int(train.sum())} dev and {int(test.sum())} {split} utterances."
        )
    predictions = builtin_attacker(
        train_set.embeddings[train],
        {a: train_set.meta[a].to_numpy()[train] for a in names},
        anonymised.embeddings[test],
    )
    label = f"built-in logistic regression trained on {attacker} dev embeddings"
    return sbls(
        {a: anonymised.meta[a].to_numpy()[test] for a in names},
        predictions,
        attacker=label,
        trained_on=attacker,
        **options,
    )
