"""Cached SBLS computations and tables of the Soft biometrics page.

An :class:`Attack` is a fixed attacker's output on one condition's eval utterances: the true
labels, the class scores (or hard predictions) and the speaker of every utterance. It comes
from the built-in attacker (:func:`voxmetrics.metrics.sbls.builtin_attacker`, trained on the
dev embeddings of the original speech or of the condition itself) or from an uploaded
predictions file (:func:`voxmetrics.data.predictions.join_predictions`). SBLS is then
:func:`voxmetrics.metrics.sbls.sbls` of the attack, and the bootstrap resamples speakers and
recomputes :func:`~voxmetrics.metrics.sbls.sbls` on their utterances with the attack's
predictions held fixed (the attacker is not retrained).

Every cached call is keyed on content hashes (embeddings, score matrices, uploaded bytes) plus
the options that change the result; the objects themselves are passed as ``_``-prefixed
arguments, which Streamlit does not hash.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import streamlit as st
from numpy.typing import NDArray

from voxmetrics.data.predictions import AttributePrediction, join_predictions
from voxmetrics.data.study import Condition
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import BootstrapInterval, speaker_bootstrap
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
from voxmetrics.report import ConditionReport
from voxmetrics.ui.cache import Outcome, ResultStore, capture, sha256

__all__ = [
    "COMPONENTS",
    "Attack",
    "SBLSOptions",
    "SBLSRow",
    "attribute_frame",
    "builtin_attack",
    "clear_sbls_store",
    "component_frame",
    "embeddings_attack",
    "identity_frame",
    "intersection_frame",
    "interval_frame",
    "predictions_attack",
    "sbls_intervals",
    "sbls_result",
    "sbls_statistic",
    "subgroup_frame",
    "uploaded_attack",
    "weights_ok",
]

AttackerKind = Literal["original", "anonymised"]

COMPONENTS: dict[str, str] = {
    "p_attr": "P_attr",
    "p_assoc": "P_assoc",
    "p_subgroup": "P_subgroup",
    "sbls": "SBLS",
}
"""Bootstrapped quantities: key of the statistic to column label."""


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


# ---------------------------------------------------------------- the attacks


def embeddings_attack(
    anonymised: Condition,
    *,
    original: Condition | None = None,
    attacker: AttackerKind = DEFAULT_ATTACKER,
    split: str = "eval",
) -> Attack:
    """The built-in attacker on a condition's embeddings (what ``sbls_embeddings`` does).

    Trained on the dev split of ``original``'s embeddings (``attacker="original"``, an
    ignorant attacker) or of the condition's own anonymised embeddings (``"anonymised"``,
    informed), and applied to every utterance of ``split`` of the condition's embeddings.
    :func:`voxmetrics.metrics.sbls.sbls` of the returned attack equals
    :func:`voxmetrics.metrics.sbls.sbls_embeddings` of the same inputs (tests check it); the
    predictions are kept so that the bootstrap can hold them fixed.

    Raises
    ------
    VoxMetricsInputError
        No embeddings, no original condition for the original attacker, no attribute columns,
        no dev or eval utterances.
    """
    es = anonymised.embeddings
    if es is None:
        raise VoxMetricsInputError(
            f"'{anonymised.name}' has no embeddings, so the built-in attacker cannot run on it; "
            "upload the predictions of your own attribute classifier instead."
        )
    if attacker not in ("original", "anonymised"):
        raise VoxMetricsInputError(
            f'the attacker is trained on "original" or "anonymised" speech, not {attacker!r}.'
        )
    if attacker == "original":
        if original is None or original.embeddings is None:
            raise VoxMetricsInputError(
                "the attacker trained on original speech needs a condition with the original "
                "(unanonymised) embeddings; choose one, or train the attacker on anonymised "
                "speech."
            )
        train_es, trained_on = original.embeddings, f"original dev embeddings ({original.name})"
    else:
        train_es, trained_on = es, f"anonymised dev embeddings ({anonymised.name})"
    names = attribute_columns(es.meta)
    if not names:
        raise VoxMetricsInputError(
            f"'{anonymised.name}': the metadata has no attribute columns (e.g. sex, age_group) "
            "to measure leakage of."
        )
    missing = [a for a in names if a not in train_es.meta.columns]
    if missing:
        raise VoxMetricsInputError(
            f"the attacker's training data ({trained_on}) has no column(s) "
            f"{', '.join(missing)}; it needs the same attribute columns."
        )
    train = (train_es.meta["split"] == "dev").to_numpy()
    test = (es.meta["split"] == split).to_numpy()
    if not train.any() or not test.any():
        raise VoxMetricsInputError(
            f"the attacker trains on the dev split and attacks the {split} split; found "
            f"{int(train.sum())} dev utterances in {trained_on} and {int(test.sum())} {split} "
            f"utterances in '{anonymised.name}'."
        )
    predictions = builtin_attacker(
        train_es.embeddings[train],
        {a: train_es.meta[a].to_numpy()[train] for a in names},
        es.embeddings[test],
    )
    meta = es.meta[test]
    train_key = train_es.content_hash if attacker == "original" else "self"
    return Attack(
        labels={a: meta[a].to_numpy().astype(str) for a in names},
        predictions=predictions,
        speakers=meta["speaker"].to_numpy().astype(str),
        utt_ids=meta["utt_id"].to_numpy().astype(str),
        attacker=f"built-in logistic regression trained on {trained_on}",
        key=f"emb:{es.content_hash}|{split}|{attacker}:{train_key}",
        short=f"original ({original.name})"
        if original is not None and attacker == "original"
        else "anonymised (own dev)",
        trained_on=attacker,
    )


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
        key=f"upload:{sha256(data)}|{key_data}",
        short=f"upload: {name}",
    )


@st.cache_data(max_entries=64, show_spinner=False)
def _builtin(
    key: str, _condition: Condition, _original: Condition | None, attacker: str
) -> Outcome[Attack]:
    return capture(embeddings_attack, _condition, original=_original, attacker=attacker)


def builtin_attack(
    condition: Condition, original: Condition | None, attacker: AttackerKind
) -> Outcome[Attack]:
    """:func:`embeddings_attack`, cached on the embeddings' content hashes and the attacker."""
    es = condition.embeddings
    train = original.embeddings if attacker == "original" and original is not None else None
    key = (
        f"{es.content_hash if es is not None else condition.content_hash}|{attacker}|"
        f"{train.content_hash if train is not None else '-'}"
    )
    with st.spinner(f"Training the attacker and attacking {condition.name}…", show_time=True):
        out = _builtin(key, condition, original, attacker)
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def _uploaded(key: str, _condition: Condition, _data: bytes, name: str) -> Outcome[Attack]:
    return capture(predictions_attack, _condition, _data, name)


def uploaded_attack(condition: Condition, data: bytes, name: str) -> Outcome[Attack]:
    """:func:`predictions_attack`, cached on the bytes' and the condition's content hashes."""
    es = condition.embeddings
    key = f"{sha256(data)}|{name}|{es.content_hash if es is not None else condition.content_hash}"
    return _uploaded(key, condition, data, name)


# ---------------------------------------------------------------- SBLS and its intervals


@st.cache_data(max_entries=128, show_spinner=False)
def _sbls(key: str, _attack: Attack, _options: SBLSOptions) -> Outcome[SBLSResult]:
    return capture(
        sbls,
        _attack.labels,
        _attack.predictions,
        attacker=_attack.attacker,
        trained_on=_attack.trained_on,
        **_options.kwargs(),
    )


def sbls_result(attack: Attack, options: SBLSOptions) -> Outcome[SBLSResult]:
    """:func:`~voxmetrics.metrics.sbls.sbls` of an attack, cached on its key and the options."""
    return _sbls(f"{attack.key}|{options.key()}", attack, options)


def _take(prediction: AttributePrediction, idx: NDArray[np.intp]) -> AttributePrediction:
    if prediction.scores is not None:
        return AttributePrediction(prediction.classes, scores=prediction.scores[idx])
    return AttributePrediction(prediction.classes, predicted=prediction.predicted[idx])


def sbls_statistic(
    attack: Attack, options: SBLSOptions
) -> Callable[[NDArray[np.intp]], dict[str, float | None]]:
    """The bootstrap statistic: SBLS and its components on resampled utterances.

    The attack's predictions are held fixed (the attacker is not retrained); only the
    utterances change. A resample in which SBLS is undefined (an attribute left with one
    class, or no intersection reaching the minimum size) gives None, which the bootstrap
    counts as undefined.

    Parameters
    ----------
    attack : Attack
        The fixed attacker's output.
    options : SBLSOptions
        Weights, lambda and minimum group size.

    Returns
    -------
    callable(indices) -> dict
        Keys ``p_attr``, ``p_assoc``, ``p_subgroup``, ``sbls`` (:data:`COMPONENTS`).
    """
    kwargs = options.kwargs()

    def statistic(idx: NDArray[np.intp]) -> dict[str, float | None]:
        try:
            r = sbls(
                {a: y[idx] for a, y in attack.labels.items()},
                {a: _take(p, idx) for a, p in attack.predictions.items()},
                **kwargs,
            )
        except VoxMetricsInputError:
            return dict.fromkeys(COMPONENTS)
        return {key: getattr(r, key) for key in COMPONENTS}

    return statistic


@st.cache_resource(show_spinner=False)
def _interval_store() -> ResultStore:
    return ResultStore(max_entries=128)


def clear_sbls_store() -> None:
    """Forget every stored bootstrap interval (for tests)."""
    _interval_store().clear()


def sbls_intervals(
    attack: Attack, options: SBLSOptions, *, n_boot: int, seed: int = 0, label: str = ""
) -> dict[str, BootstrapInterval]:
    """Speaker-level bootstrap intervals of P_attr, P_assoc, P_subgroup and SBLS.

    Speakers are resampled with replacement (all their utterances move together) and
    :func:`sbls_statistic` recomputes the score with the attacker's predictions fixed. While
    replicates are computed a ``st.progress`` bar follows the library's ``progress``
    callback; a stored result (server-wide, per content and options) returns at once.

    Parameters
    ----------
    attack : Attack
        The fixed attacker's output.
    options : SBLSOptions
        Weights, lambda and minimum group size.
    n_boot : int
        Replicates (>= 1).
    seed : int
        Seed of the resampling.
    label : str
        Name shown on the progress bar.

    Returns
    -------
    dict of str to BootstrapInterval
        Keys of :data:`COMPONENTS`.
    """
    key = f"{attack.key}|{options.key()}|boot{n_boot}|seed{seed}"
    store = _interval_store()
    stored = store.get(key)
    if stored is not None:
        return stored
    name = label or "SBLS"
    bar = st.progress(0.0, text=f"Bootstrap of {name}…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(1.0, max(0.0, fraction)), text=f"{name}: {message}")

    try:
        value = speaker_bootstrap(
            sbls_statistic(attack, options),
            attack.speakers,
            n_boot=n_boot,
            seed=seed,
            progress=progress,
        )
    finally:
        bar.empty()
    store.put(key, value)
    return value


# ---------------------------------------------------------------- rows and tables


@dataclass(frozen=True, eq=False)
class SBLSRow:
    """One condition of the Soft biometrics page."""

    condition: Condition
    """The condition."""
    attack: Attack | None = None
    """The attacker's output (None when there is none)."""
    result: SBLSResult | None = None
    """SBLS of the attack (None when it could not be computed)."""
    intervals: dict[str, BootstrapInterval] | None = None
    """Bootstrap intervals (None when off)."""
    status: str = ""
    """Who attacked, or why there is no result."""

    @property
    def name(self) -> str:
        """The condition's name."""
        return self.condition.name


def _ci(interval: BootstrapInterval | None) -> str | None:
    if interval is None:
        return None
    if interval.low is None or interval.high is None:
        return "undefined"
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def component_frame(rows: Sequence[SBLSRow], *, intervals: bool = True) -> pd.DataFrame:
    """One row per condition: the attacker, the components, SBLS and their 95 % intervals.

    Columns: Condition, Attacker (the row's ``status``), P_attr, P_assoc, P_subgroup, SBLS,
    then, when ``intervals``, "<component> CI" text columns ("[low, high]"), then Groups used
    ("k of m" intersections reaching the minimum size). Conditions without a result keep
    empty cells.
    """
    records = []
    for row in rows:
        r = row.result
        rec: dict[str, Any] = {"Condition": row.name, "Attacker": row.status}
        for key, label in COMPONENTS.items():
            rec[label] = getattr(r, key) if r is not None else None
        if intervals:
            for key, label in COMPONENTS.items():
                iv = row.intervals.get(key) if row.intervals else None
                rec[f"{label} CI"] = _ci(iv)
        if r is not None:
            joint = [s for s in r.subgroups if s.attribute == "all"]
            rec["Groups used"] = f"{sum(s.used for s in joint)} of {len(joint)}"
        else:
            rec["Groups used"] = None
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    for label in COMPONENTS.values():
        df[label] = df[label].astype("float64")
    return df


def interval_frame(rows: Sequence[SBLSRow]) -> pd.DataFrame:
    """The bootstrap intervals as numbers: one row per (condition, component).

    Columns: condition, component, estimate, low, high, confidence, n_boot, n_valid, attacker.
    """
    records = []
    for row in rows:
        for key, label in COMPONENTS.items():
            iv = (row.intervals or {}).get(key)
            if iv is None:
                continue
            records.append(
                {
                    "condition": row.name,
                    "component": label,
                    **iv.to_dict(),
                    "attacker": row.status,
                }
            )
    return pd.DataFrame.from_records(
        records,
        columns=[
            "condition",
            "component",
            "estimate",
            "low",
            "high",
            "confidence",
            "n_boot",
            "n_valid",
            "attacker",
        ],
    )


def attribute_frame(result: SBLSResult) -> pd.DataFrame:
    """One row per attribute: classes, aligned AUC, balanced accuracy, leakage, NMI."""
    return pd.DataFrame(
        {
            "Attribute": [a.name for a in result.attributes],
            "Classes": [", ".join(a.classes) for a in result.attributes],
            "AUC (aligned)": [a.auc for a in result.attributes],
            "Balanced accuracy": [a.balanced_accuracy for a in result.attributes],
            "Leakage L_a": [a.leakage for a in result.attributes],
            "NMI": [a.nmi for a in result.attributes],
        }
    ).astype({"AUC (aligned)": "float64"})


def subgroup_frame(result: SBLSResult) -> pd.DataFrame:
    """The per-(attribute, subgroup) rows of a result.

    Each row is the leakage of one attribute within one subgroup of the other attributes' values
    (the joint-recovery rows of the full intersections are in :func:`intersection_frame`).
    """
    rows = [r for r in result.subgroups if r.attribute != "all"]
    df = pd.DataFrame(
        {
            "Attribute": [r.attribute for r in rows],
            "Within subgroup": [r.group for r in rows],
            "n": [r.n for r in rows],
            "AUC": [r.auc for r in rows],
            "Leakage": [r.leakage for r in rows],
            "Accuracy": [r.accuracy for r in rows],
            "Used": [r.used for r in rows],
        },
        columns=["Attribute", "Within subgroup", "n", "AUC", "Leakage", "Accuracy", "Used"],
    )
    return df.astype({"AUC": "float64", "Leakage": "float64", "Accuracy": "float64"})


def intersection_frame(result: SBLSResult, attack: Attack | None = None) -> pd.DataFrame:
    """One row per intersection of all attributes: n, speakers, joint recovery rate L_g.

    ``attack`` adds the number of distinct speakers of each intersection (utterances of one
    speaker are not independent, so this is the subgroup's real sample size).
    """
    rows = [r for r in result.subgroups if r.attribute == "all"]
    df = pd.DataFrame(
        {
            "Subgroup": [r.group for r in rows],
            "Utterances": [r.n for r in rows],
            "Joint recovery L_g": [r.leakage for r in rows],
            "Protection 1 - L_g": [1.0 - r.leakage for r in rows],
            "Used": [r.used for r in rows],
        },
        columns=["Subgroup", "Utterances", "Joint recovery L_g", "Protection 1 - L_g", "Used"],
    )
    if attack is not None:
        names = [a.name for a in result.attributes]
        counts = []
        for r in rows:
            values = dict(part.split("=", 1) for part in r.group.split(" & "))
            mask = np.ones(attack.n, dtype=bool)
            for a in names:
                mask &= attack.labels[a] == values[a]
            counts.append(int(np.unique(attack.speakers[mask]).size))
        df.insert(2, "Speakers", counts)
    return df.astype({"Joint recovery L_g": "float64", "Protection 1 - L_g": "float64"})


def identity_frame(
    rows: Sequence[SBLSRow], reports: Mapping[str, ConditionReport | None]
) -> pd.DataFrame:
    """SBLS beside the identity metrics: one row per condition with a result.

    Columns: Condition, SBLS, P_attr, EER, LIDmax (bits), Linkability.
    """
    records = []
    for row in rows:
        if row.result is None:
            continue
        rep = reports.get(row.name)
        b = rep.baseline if rep is not None else None
        records.append(
            {
                "Condition": row.name,
                "SBLS": row.result.sbls,
                "P_attr": row.result.p_attr,
                "EER": b.eer if b is not None else None,
                "LIDmax (bits)": rep.lid.lid_max if rep is not None and rep.lid else None,
                "Linkability": b.linkability if b is not None else None,
            }
        )
    df = pd.DataFrame.from_records(
        records, columns=["Condition", "SBLS", "P_attr", "EER", "LIDmax (bits)", "Linkability"]
    )
    return df.astype({c: "float64" for c in df.columns[1:]})


def weights_ok(weights: Sequence[float]) -> bool:
    """Whether three weights are non-negative and sum to 1 (what SBLS accepts)."""
    return (
        len(weights) == 3
        and all(w >= 0 for w in weights)
        and math.isclose(sum(weights), 1.0, abs_tol=1e-9)
    )
