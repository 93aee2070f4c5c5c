"""Cached SBLS calls of the Soft biometrics page (the computing is :mod:`voxmetrics.analysis.sbls`).

Every cached call is keyed on content hashes (embeddings, uploaded bytes) plus the options that
change the result; the objects themselves are passed as ``_``-prefixed arguments, which
Streamlit does not hash.
"""

from __future__ import annotations

import streamlit as st

from voxmetrics.analysis.sbls import (
    Attack,
    AttackerKind,
    SBLSOptions,
    attack_sbls,
    embeddings_attack,
    predictions_attack,
)
from voxmetrics.analysis.sbls import sbls_intervals as _library_intervals
from voxmetrics.data.study import Condition
from voxmetrics.metrics.bootstrap import BootstrapInterval
from voxmetrics.metrics.sbls import SBLSResult
from voxmetrics.ui.cache import Outcome, ResultStore, capture, sha256

__all__ = [
    "builtin_attack",
    "clear_sbls_store",
    "sbls_intervals",
    "sbls_result",
    "uploaded_attack",
]


@st.cache_data(max_entries=64, show_spinner=False)
def _builtin(
    key: str, _condition: Condition, _original: Condition | None, attacker: str
) -> Outcome[Attack]:
    return capture(embeddings_attack, _condition, original=_original, attacker=attacker)


def builtin_attack(
    condition: Condition, original: Condition | None, attacker: AttackerKind
) -> Outcome[Attack]:
    """:func:`~voxmetrics.analysis.sbls.embeddings_attack`, cached on the embeddings' hashes."""
    es = condition.embeddings
    train = original.embeddings if attacker == "original" and original is not None else None
    key = (
        f"{es.content_hash if es is not None else condition.content_hash}|{attacker}|"
        f"{train.content_hash if train is not None else '-'}|{original.name if train else '-'}"
    )
    with st.spinner(f"Training the attacker and attacking {condition.name}…", show_time=True):
        return _builtin(key, condition, original, attacker)


@st.cache_data(max_entries=32, show_spinner=False)
def _uploaded(key: str, _condition: Condition, _data: bytes, name: str) -> Outcome[Attack]:
    return capture(predictions_attack, _condition, _data, name)


def uploaded_attack(condition: Condition, data: bytes, name: str) -> Outcome[Attack]:
    """:func:`~voxmetrics.analysis.sbls.predictions_attack`, cached on the content hashes."""
    es = condition.embeddings
    key = f"{sha256(data)}|{name}|{es.content_hash if es is not None else condition.content_hash}"
    return _uploaded(key, condition, data, name)


@st.cache_data(max_entries=128, show_spinner=False)
def _sbls(key: str, _attack: Attack, _options: SBLSOptions) -> Outcome[SBLSResult]:
    return capture(attack_sbls, _attack, _options)


def sbls_result(attack: Attack, options: SBLSOptions) -> Outcome[SBLSResult]:
    """:func:`~voxmetrics.analysis.sbls.attack_sbls`, cached on the attack's key and options."""
    return _sbls(f"{attack.key}|{options.key()}", attack, options)


@st.cache_resource(show_spinner=False)
def _interval_store() -> ResultStore:
    return ResultStore(max_entries=128)


def clear_sbls_store() -> None:
    """Forget every stored bootstrap interval (for tests)."""
    _interval_store().clear()


def sbls_intervals(
    attack: Attack, options: SBLSOptions, *, n_boot: int, seed: int = 0, label: str = ""
) -> dict[str, BootstrapInterval]:
    """:func:`~voxmetrics.analysis.sbls.sbls_intervals` with a progress bar, stored per content.

    A stored result (server-wide, per attack, options, replicates and seed) returns at once.
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
        value = _library_intervals(attack, options, n_boot=n_boot, seed=seed, progress=progress)
    finally:
        bar.empty()
    store.put(key, value)
    return value
