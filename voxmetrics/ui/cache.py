"""Cached wrappers around library calls, keyed on content hashes.

``st.cache_data`` hashes large arrays from a sample, so two big matrices could collide; every
wrapper here takes an explicit string key (a sha256 of the content) and receives the big
objects as ``_``-prefixed arguments, which Streamlit does not hash. Entries are bounded with
``max_entries``. Parsed data objects are immutable, so they are shared through
``st.cache_resource`` (no copy per hit); small result objects go through ``st.cache_data``.

Library warnings raised inside a cached call are captured into an :class:`Outcome`, so a cache
hit shows them again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import streamlit as st

from voxmetrics.analysis.sbls import Attack, attack_sbls, default_attack
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.summary import ScoreHistogram, score_histogram
from voxmetrics.errors import VoxMetricsInputError, VoxMetricsWarning
from voxmetrics.metrics.sbls import SBLSResult
from voxmetrics.metrics.uncertainty import Comparison
from voxmetrics.report import (
    ConditionReport,
    compare_conditions,
    evaluate,
    evaluate_condition,
)
from voxmetrics.report.export import PngExporter
from voxmetrics.report.study import StudyReport, build_study_report
from voxmetrics.synth import demo_study

__all__ = [
    "Outcome",
    "PngExporter",
    "ResultStore",
    "clear_study_report_store",
    "compare_pair",
    "condition_attack",
    "condition_from_embedding_files",
    "condition_from_score_files",
    "condition_report",
    "condition_sbls",
    "demo_study_cached",
    "parse_embeddings",
    "parse_scores",
    "png_exporter",
    "score_histogram_cached",
    "sha256",
    "study_report",
    "study_report_key",
]

T = TypeVar("T")


class Upload(Protocol):
    """What the wrappers need of an ``st.file_uploader`` value."""

    name: str

    def getvalue(self) -> bytes:
        """The file's bytes."""
        ...


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """A value and the messages of the library warnings raised while computing it."""

    value: T
    """The result."""
    warnings: tuple[str, ...] = ()
    """Messages of the :class:`~voxmetrics.errors.VoxMetricsWarning` raised."""


def capture(fn: Callable[..., T], *args: Any, **kwargs: Any) -> Outcome[T]:
    """Call ``fn`` and collect the VoxMetrics warnings it raises (others pass through)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args, **kwargs)
    messages = []
    for w in caught:
        if issubclass(w.category, VoxMetricsWarning):
            messages.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return Outcome(value, tuple(dict.fromkeys(messages)))


def sha256(data: bytes | None) -> str:
    """Hex sha256 of ``data`` ("-" for no data)."""
    return "-" if data is None else hashlib.sha256(data).hexdigest()


@st.cache_resource(show_spinner="Simulating the demo study…")
def demo_study_cached() -> Study:
    """The built-in demo study, built once per server (it is immutable)."""
    return demo_study()


# ---------------------------------------------------------------- parsing uploads


@st.cache_resource(max_entries=8, show_spinner="Reading the scores…")
def _read_scores(
    key: str,
    _data: bytes,
    _trials: bytes | None,
    name: str,
    trials_name: str | None,
    format: str,
    distance: bool = False,
) -> Outcome[ScoreMatrix]:
    from voxmetrics.data.readers import read_scores

    return capture(
        read_scores,
        _data,
        trials=_trials,
        format=format,
        name=name,
        trials_name=trials_name,
        distance=distance,
    )


def parse_scores(
    upload: Upload, *, trials: Upload | None = None, format: str = "auto", distance: bool = False
) -> Outcome[ScoreMatrix]:
    """Parse an uploaded score file (and its Kaldi key file), cached on the bytes' sha256.

    With ``distance=True`` the scores are distances (lower = closer), negated on reading.
    """
    data = upload.getvalue()
    tdata = trials.getvalue() if trials is not None else None
    key = f"{sha256(data)}:{sha256(tdata)}"
    return _read_scores(
        key,
        data,
        tdata,
        upload.name,
        trials.name if trials is not None else None,
        format,
        distance,
    )


def with_trial_attributes(sm: ScoreMatrix, upload: Upload, *, required: bool = True) -> ScoreMatrix:
    """``sm`` with the per-trial attributes of an uploaded table joined in.

    The table (CSV or Parquet) has a ``trial_id`` or a ``speaker`` column and the attribute
    columns (:meth:`~voxmetrics.data.model.ScoreMatrix.with_attributes`); Kaldi / VoicePrivacy
    scores carry no attributes, so this is how they get e.g. ``sex`` for the subset selector.
    Without ``required``, a table that does not cover ``sm`` leaves it unchanged (a dev set
    the table does not describe).
    """
    from voxmetrics.data.readers import read_table

    table = read_table(upload.getvalue(), name=upload.name)
    try:
        return sm.with_attributes(table, where=upload.name)
    except VoxMetricsInputError:
        if required:
            raise
        return sm


@dataclass(frozen=True, eq=False)
class ParsedEmbeddings:
    """An embedding set and the score matrices of its splits."""

    embeddings: EmbeddingSet
    """The parsed utterance embeddings."""
    eval: ScoreMatrix
    """Cosine scores of the eval split."""
    dev: ScoreMatrix | None
    """Cosine scores of the dev split, when the metadata has dev rows."""


def _embeddings_and_scores(
    data: bytes,
    metadata: bytes | None,
    name: str,
    metadata_name: str | None,
    system: str | None = None,
) -> ParsedEmbeddings:
    from voxmetrics.data.readers import read_embeddings

    es = read_embeddings(
        data, metadata=metadata, name=name, metadata_name=metadata_name, system=system
    )
    dev = es.score_matrix("dev") if "dev" in es.splits() else None
    return ParsedEmbeddings(es, es.score_matrix("eval"), dev)


@st.cache_resource(max_entries=4, show_spinner="Reading and scoring the embeddings…")
def _read_embeddings(
    key: str,
    _data: bytes,
    _metadata: bytes | None,
    name: str,
    metadata_name: str | None,
    system: str | None = None,
) -> Outcome[ParsedEmbeddings]:
    return capture(_embeddings_and_scores, _data, _metadata, name, metadata_name, system)


def parse_embeddings(
    upload: Upload, *, metadata: Upload | None = None, system: str | None = None
) -> Outcome[ParsedEmbeddings]:
    """Parse uploaded embeddings (+ metadata CSV) and score them, cached on the bytes' sha256.

    ``system`` keeps only the metadata rows of that system.
    """
    data = upload.getvalue()
    mdata = metadata.getvalue() if metadata is not None else None
    key = f"{sha256(data)}:{sha256(mdata)}:{system}"
    return _read_embeddings(
        key, data, mdata, upload.name, metadata.name if metadata is not None else None, system
    )


def condition_from_score_files(
    name: str,
    eval_file: Upload,
    *,
    eval_trials: Upload | None = None,
    dev_file: Upload | None = None,
    dev_trials: Upload | None = None,
    attributes: Upload | None = None,
    format: str = "auto",
    score_kind: str = "similarity",
    attacker: str = "semi-informed",
) -> Outcome[Condition]:
    """A condition from uploaded score files (parsed through :func:`parse_scores`, cached).

    ``attributes`` (a trial or speaker table) is joined to eval, and to dev when it covers it
    (:func:`with_trial_attributes`). Raises
    :class:`~voxmetrics.errors.VoxMetricsInputError` at the first bad input.
    """
    distance = score_kind == "distance"
    ev = parse_scores(eval_file, trials=eval_trials, format=format, distance=distance)
    dv = None
    if dev_file is not None:
        dv = parse_scores(dev_file, trials=dev_trials, format=format, distance=distance)
    eval_sm, dev_sm = ev.value, None if dv is None else dv.value
    if attributes is not None:
        eval_sm = with_trial_attributes(eval_sm, attributes)
        if dev_sm is not None:
            dev_sm = with_trial_attributes(dev_sm, attributes, required=False)
    files = ", ".join(f.name for f in (eval_file, dev_file) if f is not None)
    condition = Condition(
        name,
        eval=eval_sm,
        dev=dev_sm,
        attacker=attacker,  # type: ignore[arg-type]
        description=f"Loaded from {files}.",
        score_kind=score_kind,  # type: ignore[arg-type]
    )
    return Outcome(condition, ev.warnings + (() if dv is None else dv.warnings))


def condition_from_embedding_files(
    name: str,
    embeddings: Upload,
    *,
    metadata: Upload | None = None,
    system: str | None = None,
    attacker: str = "semi-informed",
) -> Outcome[Condition]:
    """A condition from uploaded embeddings, cosine-scored (:func:`parse_embeddings`, cached).

    Raises :class:`~voxmetrics.errors.VoxMetricsInputError` for bad input.
    """
    out = parse_embeddings(embeddings, metadata=metadata, system=system)
    parsed = out.value
    condition = Condition(
        name,
        eval=parsed.eval,
        dev=parsed.dev,
        attacker=attacker,  # type: ignore[arg-type]
        embeddings=parsed.embeddings,
        description=f"Cosine scores of {embeddings.name}.",
    )
    return Outcome(condition, out.warnings)


# ---------------------------------------------------------------- results


_EVALUATE_DEFAULTS: dict[str, Any] = {
    name: p.default
    for name, p in inspect.signature(evaluate).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
}


@st.cache_data(max_entries=128, show_spinner=False)
def _report(
    key: str, _condition: Condition, options: tuple[tuple[str, Any], ...]
) -> Outcome[ConditionReport]:
    return capture(evaluate_condition, _condition, **dict(options))


def condition_report(condition: Condition, **options: Any) -> Outcome[ConditionReport]:
    """:func:`~voxmetrics.report.evaluate_condition`, cached on the data's content hash.

    The key covers the scores, the attacker and ``options`` (keyword options of
    :func:`~voxmetrics.report.evaluate`, e.g. ``bootstrap``, ``seed``, ``cross_calibrate``;
    an option given at its default value is the same entry as leaving it out), not the name,
    so renaming a condition does not recompute anything.
    """
    opts = tuple(
        sorted(
            (k, v)
            for k, v in options.items()
            if k not in _EVALUATE_DEFAULTS or _EVALUATE_DEFAULTS[k] != v
        )
    )
    out = _report(f"{condition.attacker}|{condition.content_hash}", condition, opts)
    return dataclasses.replace(out, value=dataclasses.replace(out.value, name=condition.name))


@st.cache_data(max_entries=32, show_spinner=False)
def _compare(
    key: str,
    _a: Condition,
    _b: Condition,
    _original: Condition | None,
    options: tuple[tuple[str, Any], ...],
) -> Outcome[dict[str, Comparison]]:
    return capture(compare_conditions, _a, _b, original=_original, **dict(options))


def compare_pair(
    a: Condition, b: Condition, *, original: Condition | None = None, **options: Any
) -> Outcome[dict[str, Comparison]]:
    """:func:`~voxmetrics.report.compare_conditions`, cached on the conditions' content.

    ``original`` holds the unprocessed voices of DeID and G_VD (its content is in the key).
    """
    key = f"{a.attacker}|{a.content_hash}|{b.attacker}|{b.content_hash}"
    key += "|-" if original is None else f"|{original.content_hash}"
    return _compare(key, a, b, original, tuple(sorted(options.items())))


@st.cache_data(max_entries=64, show_spinner=False)
def _attack(key: str, _condition: Condition) -> Outcome[Attack | None]:
    return capture(default_attack, _condition)


def condition_attack(condition: Condition) -> Outcome[Attack | None]:
    """:func:`~voxmetrics.analysis.sbls.default_attack` of a condition, cached.

    Keyed on the content hash of the condition's embeddings, the only input the attack reads
    (None at once for a condition without embeddings): the attacker is trained once, for the
    Overview's report card and the Report page alike.
    """
    if condition.embeddings is None:
        return Outcome(None)
    return _attack(condition.embeddings.content_hash, condition)


@st.cache_data(max_entries=64, show_spinner=False)
def _sbls(key: str, _condition: Condition) -> Outcome[SBLSResult | None]:
    def sbls_of() -> SBLSResult | None:
        attack = _replay(condition_attack(_condition))
        return None if attack is None else attack_sbls(attack)

    return capture(sbls_of)


def condition_sbls(condition: Condition) -> Outcome[SBLSResult | None]:
    """:func:`~voxmetrics.report.evaluate_sbls` (the informed built-in attacker), cached.

    The SBLS of :func:`condition_attack`; None at once for a condition without embeddings.
    """
    if condition.embeddings is None:
        return Outcome(None)
    return _sbls(condition.embeddings.content_hash, condition)


@st.cache_data(max_entries=64, show_spinner=False)
def _histogram(key: str, _sm: ScoreMatrix, bins: int) -> ScoreHistogram:
    return score_histogram(_sm, bins=bins)


def score_histogram_cached(sm: ScoreMatrix, *, bins: int = 60) -> ScoreHistogram:
    """:func:`~voxmetrics.data.summary.score_histogram`, cached on the matrix's content hash."""
    return _histogram(sm.content_hash, sm, bins)


# ---------------------------------------------------------------- static image export


@st.cache_resource(show_spinner=False)
def png_exporter() -> PngExporter:
    """The server-wide :class:`~voxmetrics.report.export.PngExporter`, started on first use."""
    return PngExporter()


class ResultStore:
    """A bounded, thread-safe least-recently-used map shared by every session.

    For results computed with a progress bar (bootstraps): ``st.cache_data`` would replay the
    bar's updates on a hit, so these results are kept here and looked up before computing.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        """The stored value, or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Store a value, dropping the least recently used beyond ``max_entries``."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()


# ---------------------------------------------------------------- the study report


@st.cache_resource(show_spinner=False)
def _study_report_store() -> ResultStore:
    return ResultStore(max_entries=8)


def clear_study_report_store() -> None:
    """Forget every stored study report (for tests)."""
    _study_report_store().clear()


def study_report_key(study: Study) -> tuple[Hashable, ...]:
    """What a study's report depends on (the key of :func:`study_report`).

    The study's name and settings and, per condition in order, its name, attacker,
    description and content hash.
    """
    return (
        study.name,
        tuple(sorted(study.settings.to_dict().items())),
        tuple((c.name, c.attacker, c.description, c.content_hash) for c in study.conditions),
    )


def _replay(out: Outcome[T]) -> T:
    """The value of a cached outcome, its warnings raised again for an enclosing capture."""
    for message in out.warnings:
        warnings.warn(message, VoxMetricsWarning, stacklevel=2)
    return out.value


def study_report(study: Study) -> Outcome[StudyReport]:
    """:func:`~voxmetrics.report.study.build_study_report` with the study's settings, stored.

    Each condition's report and SBLS attack come from :func:`condition_report` and
    :func:`condition_attack`, the caches every page evaluates conditions through: after the
    Overview (same settings) no condition is evaluated and no attacker trained again. While
    the rest is computed, a ``st.progress`` bar follows the library's ``progress`` callback
    (the report is kept in a :class:`ResultStore`, not ``st.cache_data``, which would replay
    the bar); a stored report is returned at once. Raises
    :class:`~voxmetrics.errors.VoxMetricsInputError` for an empty study.
    """
    key = study_report_key(study)
    store = _study_report_store()
    stored = store.get(key)
    if stored is not None:
        return stored
    bar = st.progress(0.0, text="Building the report…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(1.0, max(0.0, fraction)), text=f"{message}…")

    try:
        out = capture(
            build_study_report,
            study,
            progress=progress,
            evaluator=lambda c, **options: _replay(condition_report(c, **options)),
            attack_of=lambda c: _replay(condition_attack(c)),
        )
    finally:
        bar.empty()
    store.put(key, out)
    return out
