"""Conditions and their utility from uploaded files (the Data page).

The readers are the library's (:func:`~voxmetrics.data.readers.read_scores`,
:func:`~voxmetrics.data.readers.read_embeddings`); each read is kept in the store of
:func:`~voxmetrics.ui.compute` (through :func:`~voxmetrics.ui.cached`), keyed on the sha256 of
the uploaded bytes, so loading the same file again reads nothing. The utility of uploaded
transcripts, emotion predictions and recordings is computed by the same calls as ``study
build --wer / --uar / --rho-f0`` (:mod:`voxmetrics.analysis.utility`). The page runs these
functions with ``ui.compute(..., cache=False)``: a bad file shows its message, and the
readers' warnings reach the page.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Protocol

from voxmetrics._types import Progress
from voxmetrics.analysis.utility import (
    AttachedUtility,
    rho_f0_utility,
    study_with_utility,
    target_conditions,
    uar_utility,
    wer_utility,
)
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.readers import read_embeddings, read_scores, read_table
from voxmetrics.data.setups import attacker_setups, one_system, read_utterance_map
from voxmetrics.data.study import Condition, Study
from voxmetrics.data.transcripts import read_labels
from voxmetrics.data.utility import Utility
from voxmetrics.data.vpc import VPCImport, read_vpc_zip
from voxmetrics.errors import IncompleteScoresWarning, VoxMetricsInputError, kept_warnings
from voxmetrics.ui.computing import cached

__all__ = [
    "ScoredEmbeddings",
    "Upload",
    "condition_from_embedding_files",
    "condition_from_score_files",
    "scored_embeddings",
    "setup_conditions_from_files",
    "study_with_utility_files",
    "study_with_vpc_tree",
    "with_trial_attributes",
]


class Upload(Protocol):
    """What these functions need of an ``st.file_uploader`` value."""

    name: str

    def getvalue(self) -> bytes:
        """The file's bytes."""
        ...


def _read_noting(data: bytes, **options: Any) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """:func:`read_scores`, and the messages of what it left out of an incomplete file.

    They are returned (not raised) so that the store keeps them with the matrix: a second
    load of the same file gives the condition the same ``input_warnings``.
    """
    with kept_warnings(IncompleteScoresWarning) as left_out:
        sm = read_scores(data, **options)
    return sm, tuple(str(w.message) for w in left_out)


def _scores(
    upload: Upload, trials: Upload | None, format: str, distance: bool, allow_incomplete: bool
) -> tuple[ScoreMatrix, tuple[str, ...]]:
    return cached(_read_noting)(
        upload.getvalue(),
        trials=trials.getvalue() if trials is not None else None,
        format=format,
        name=upload.name,
        trials_name=trials.name if trials is not None else None,
        distance=distance,
        allow_incomplete=allow_incomplete,
    )


def with_trial_attributes(sm: ScoreMatrix, upload: Upload, *, required: bool = True) -> ScoreMatrix:
    """``sm`` with the per-trial attributes of an uploaded table joined in.

    The table (CSV or Parquet) has a ``trial_id`` or a ``speaker`` column and the attribute
    columns (:meth:`~voxmetrics.data.model.ScoreMatrix.with_attributes`); Kaldi / VoicePrivacy
    scores carry no attributes, so this is how they get e.g. ``sex`` for the subset selector.
    Without ``required``, a table that does not cover ``sm`` leaves it unchanged (a dev set
    the table does not describe).
    """
    table = read_table(upload.getvalue(), name=upload.name)
    try:
        return sm.with_attributes(table, where=upload.name)
    except VoxMetricsInputError:
        if required:
            raise
        return sm


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
    allow_incomplete: bool = False,
) -> Condition:
    """A condition from uploaded score files (and Kaldi key files), each read once.

    With ``score_kind="distance"`` the scores are negated on reading. ``attributes`` (a
    trial or speaker table) is joined to eval, and to dev when it covers it
    (:func:`with_trial_attributes`). Raises :class:`~voxmetrics.errors.VoxMetricsInputError`
    at the first bad input; a broken score file (key pairs without a score, NaN scores, rows
    that end early) too, unless ``allow_incomplete``: then its broken pairs are left out, and
    the messages saying so are raised as
    :class:`~voxmetrics.errors.IncompleteScoresWarning` and kept in the condition's
    ``input_warnings``.
    """
    distance = score_kind == "distance"
    eval_sm, notes = _scores(eval_file, eval_trials, format, distance, allow_incomplete)
    dev_sm = None
    if dev_file is not None:
        dev_sm, dev_notes = _scores(dev_file, dev_trials, format, distance, allow_incomplete)
        notes += dev_notes
    for message in notes:
        warnings.warn(message, IncompleteScoresWarning, stacklevel=2)
    if attributes is not None:
        eval_sm = with_trial_attributes(eval_sm, attributes)
        if dev_sm is not None:
            dev_sm = with_trial_attributes(dev_sm, attributes, required=False)
    files = ", ".join(f.name for f in (eval_file, dev_file) if f is not None)
    return Condition(
        name,
        eval=eval_sm,
        dev=dev_sm,
        attacker=attacker,  # type: ignore[arg-type]
        description=f"Loaded from {files}.",
        score_kind=score_kind,  # type: ignore[arg-type]
        input_warnings=notes,
    )


@dataclass(frozen=True, eq=False)
class ScoredEmbeddings:
    """An embedding set and the cosine score matrices of its splits."""

    embeddings: EmbeddingSet
    """The parsed utterance embeddings."""
    eval: ScoreMatrix
    """Cosine scores of the eval split."""
    dev: ScoreMatrix | None
    """Cosine scores of the dev split, when the metadata has dev rows."""


def scored_embeddings(
    data: bytes,
    metadata: bytes | None,
    name: str,
    metadata_name: str | None,
    system: str | None = None,
) -> ScoredEmbeddings:
    """:func:`~voxmetrics.data.readers.read_embeddings` and the score matrices of its splits.

    ``system`` keeps only the metadata rows of that system.
    """
    es = read_embeddings(
        data, metadata=metadata, name=name, metadata_name=metadata_name, system=system
    )
    one_system(es, where=metadata_name or name, how='the "System" box')
    dev = es.score_matrix("dev") if "dev" in es.splits() else None
    return ScoredEmbeddings(es, es.score_matrix("eval"), dev)


def condition_from_embedding_files(
    name: str,
    embeddings: Upload,
    *,
    metadata: Upload | None = None,
    system: str | None = None,
    attacker: str = "semi-informed",
) -> Condition:
    """A condition from uploaded embeddings (+ metadata CSV), cosine-scored, read once.

    Raises :class:`~voxmetrics.errors.VoxMetricsInputError` for bad input.
    """
    parsed = cached(scored_embeddings)(
        embeddings.getvalue(),
        metadata.getvalue() if metadata is not None else None,
        embeddings.name,
        metadata.name if metadata is not None else None,
        system,
    )
    return Condition(
        name,
        eval=parsed.eval,
        dev=parsed.dev,
        attacker=attacker,  # type: ignore[arg-type]
        embeddings=parsed.embeddings,
        description=f"Cosine scores of {embeddings.name}.",
    )


def study_with_vpc_tree(study: Study, upload: Upload) -> tuple[Study, VPCImport]:
    """``study`` with the conditions of a zipped VoicePrivacy tree (2024 or 2026) added.

    The archive is read by :func:`~voxmetrics.data.vpc.read_vpc_zip` (the archive limits
    apply; only the trial keys, scores, results summaries and the challenge's embeddings are
    unpacked). A condition of the
    same name is replaced. Raises :class:`~voxmetrics.errors.VoxMetricsInputError` at the
    first bad input, before the study changes.
    """
    tree = read_vpc_zip(upload.getvalue(), upload.name)
    for cond in tree.study.conditions:
        study = study.with_condition(cond)
    return study, tree


def setup_conditions_from_files(
    original: Upload,
    original_metadata: Upload | None,
    anonymised: Upload,
    anonymised_metadata: Upload | None,
    *,
    system: str,
    setups: tuple[str, ...] = ("ignorant", "lazy-informed"),
    anonymised_system: str | None = None,
    original_system: str | None = None,
    strip_suffix: str | None = None,
    utt_map: Upload | None = None,
    include_original: bool = True,
) -> list[Condition]:
    """The attacker set-ups of one anonymiser from uploaded embedding files.

    :func:`~voxmetrics.data.setups.attacker_setups` of the original and anonymised embeddings
    (each with its metadata CSV unless Parquet); ``anonymised_system`` and ``original_system``
    keep one system of metadata that mix several; ``include_original`` adds the unprotected
    "original" condition.
    """

    def read(upload: Upload, meta: Upload | None, keep: str | None, how: str) -> EmbeddingSet:
        es = read_embeddings(
            upload.getvalue(),
            metadata=meta.getvalue() if meta is not None else None,
            name=upload.name,
            metadata_name=meta.name if meta is not None else None,
            system=keep,
        )
        return one_system(es, where=meta.name if meta is not None else upload.name, how=how)

    o = read(original, original_metadata, original_system, "the original's System box")
    a = read(anonymised, anonymised_metadata, anonymised_system, "the anonymised System box")
    mapping = (
        read_utterance_map(utt_map.getvalue(), name=utt_map.name) if utt_map is not None else None
    )
    return attacker_setups(
        o,
        a,
        system=system,
        setups=setups,
        strip_suffix=strip_suffix or None,
        utt_map=mapping,
        include_original=include_original,
    )


UTILITY_PAIRS: dict[str, tuple[str, str, str]] = {
    "wer": ("The WER", "reference transcripts", "ASR hypotheses"),
    "uar": ("The UAR", "emotion labels", "emotion predictions"),
    "rho_f0": ("rho_F0", "original recordings", "anonymised recordings"),
}
"""Each utility number and the two uploads it needs, as the messages name them."""


def study_with_utility_files(
    study: Study,
    target: str,
    *,
    reference: Upload | None = None,
    hypotheses: Upload | None = None,
    labels: Upload | None = None,
    predictions: Upload | None = None,
    original: Upload | None = None,
    anonymised: Upload | None = None,
    utt2spk: Upload | None = None,
    progress: Progress | None = None,
) -> AttachedUtility:
    """``study`` with the utility of uploaded files put on ``target`` (a condition or a system).

    The same library calls as ``study build --wer / --uar / --rho-f0``
    (:mod:`voxmetrics.analysis.utility`): the WER of ``hypotheses`` against ``reference``, the
    UAR of ``predictions`` against ``labels``, rho_F0 of ``anonymised`` against ``original``
    (each a zip of audio files), for every pair given, with the speaker-level bootstrap
    intervals of the study's settings (replicates and seed). ``utt2spk`` gives the speakers.

    Raises
    ------
    VoxMetricsInputError
        No pair given, one file of a pair without the other, a bad file, or an unknown target;
        the study is unchanged.
    """
    given = {
        "wer": (reference, hypotheses),
        "uar": (labels, predictions),
        "rho_f0": (original, anonymised),
    }
    for key, (first, second) in given.items():
        if (first is None) != (second is None):
            number, a, b = UTILITY_PAIRS[key]
            chosen, missing = (b, a) if first is None else (a, b)
            raise VoxMetricsInputError(
                f"{number} needs the {a} and the {b}: only the {chosen} are chosen. Add the "
                f"{missing}, or remove the {chosen}."
            )
    if all(first is None for first, _ in given.values()):
        raise VoxMetricsInputError(
            "Choose the files of at least one utility number: reference transcripts and ASR "
            "hypotheses (WER), emotion labels and predictions (UAR), or original and "
            "anonymised recordings (rho_F0)."
        )
    names = target_conditions(study, target)
    speakers = None
    if utt2spk is not None:
        speakers = read_labels(utt2spk.getvalue(), name=utt2spk.name)
    n_boot, seed = study.settings.bootstrap, study.settings.seed
    parts: list[Utility] = []
    if reference is not None and hypotheses is not None:
        wer = wer_utility(
            reference.getvalue(),
            hypotheses.getvalue(),
            utt2spk=speakers,
            n_boot=n_boot,
            seed=seed,
            reference_name=reference.name,
            hypotheses_name=hypotheses.name,
        )
        parts.append(wer)
    if labels is not None and predictions is not None:
        uar = uar_utility(
            labels.getvalue(),
            predictions.getvalue(),
            utt2spk=speakers,
            n_boot=n_boot,
            seed=seed,
            labels_name=labels.name,
            predictions_name=predictions.name,
        )
        parts.append(uar)
    if original is not None and anonymised is not None:
        rho = rho_f0_utility(
            original.getvalue(),
            anonymised.getvalue(),
            utt2spk=speakers,
            n_boot=n_boot,
            seed=seed,
            original_name=original.name,
            anonymised_name=anonymised.name,
            progress=progress,
        )
        parts.append(rho)
    return study_with_utility(study, dict.fromkeys(names, parts))
