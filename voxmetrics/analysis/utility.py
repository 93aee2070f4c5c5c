"""A condition's utility from per-utterance files: WER, UAR and rho_F0 with their intervals.

What the command line's ``study build --wer / --uar / --rho-f0`` and the dashboard's Data page
both compute, in the same calls: read the files (:mod:`voxmetrics.data.transcripts`), line up
references and outputs, compute the metric with its speaker-level bootstrap interval
(:mod:`voxmetrics.metrics.utility`) and return the condition's :class:`~voxmetrics.data.utility.
Utility` numbers; :func:`study_with_utility` then puts them on the conditions they belong to
(a condition, or every condition of a system). One function per utility input:

- :func:`wer_utility`: reference transcripts and ASR hypotheses give the WER;
- :func:`uar_utility`: emotion labels and a classifier's predictions give the UAR and the
  per-class accuracies;
- :func:`rho_f0_utility`: original and anonymised recordings (decoded at 16 kHz, pitch
  tracked with pYIN) give rho_F0.

A speaker of an utterance is its id's prefix before ``-`` (Kaldi, LibriSpeech) unless
``utt2spk`` gives it (:func:`~voxmetrics.data.transcripts.speakers_of`). This module computes;
it prints nothing and draws nothing.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from voxmetrics._types import Progress
from voxmetrics.data.study import Study
from voxmetrics.data.transcripts import (
    fold_column,
    paired,
    read_audio_list,
    read_audio_zip,
    read_labels,
    read_transcripts,
    speakers_of,
)
from voxmetrics.data.utility import UTILITY_METRICS, Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import BootstrapInterval

__all__ = [
    "F0_SAMPLE_RATE",
    "AttachedUtility",
    "Recordings",
    "TextSource",
    "rho_f0_utility",
    "study_with_utility",
    "target_conditions",
    "uar_utility",
    "utility_targets",
    "wer_utility",
]

TextSource = str | os.PathLike[str] | bytes
"""A transcript or label file: a path, or its bytes (an upload)."""
Recordings = str | os.PathLike[str] | bytes
"""Recordings: a folder of audio files, a ``wav.scp`` of plain paths or a CSV ``utt_id,path``
(a path), or the bytes of a zip archive of audio files (an upload)."""
F0_SAMPLE_RATE = 16000
"""Rate (Hz) every recording is decoded at before its pitch is tracked."""


def _name(source: TextSource | Recordings, name: str | None, what: str) -> str:
    """The label of ``source`` in messages: ``name``, else the file's name, else ``what``."""
    if name:
        return name
    return what if isinstance(source, bytes | bytearray) else Path(source).name


def _require(number: str, modules: dict[str, str]) -> None:
    """Refuse with one message when a package ``number`` needs is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        extras = " and ".join(dict.fromkeys(modules[m] for m in missing))
        raise VoxMetricsInputError(
            f"{number} needs {', '.join(missing)}, which is not installed: pip install "
            f"'voxmetrics[{extras}]' (or pip install -r requirements.txt in a checkout)."
        )


def _interval(key: str, iv: BootstrapInterval | None) -> dict[str, tuple[float, float]]:
    bounds = None if iv is None else iv.bounds
    return {} if bounds is None else {key: bounds}


def wer_utility(
    reference: TextSource,
    hypotheses: TextSource,
    *,
    utt2spk: pd.Series | None = None,
    n_boot: int = 0,
    seed: int = 0,
    reference_name: str | None = None,
    hypotheses_name: str | None = None,
) -> Utility:
    r"""The WER of ASR hypotheses against reference transcripts, as a condition's utility.

    Parameters
    ----------
    reference, hypotheses : str, os.PathLike or bytes
        Kaldi ``text`` files (``utt_id word word ...``) or CSVs ``utt_id,text``; the
        hypotheses cover exactly the reference's utterances (an empty one is allowed).
    utt2spk : pandas.Series, optional
        Speaker of each utterance (:func:`~voxmetrics.data.transcripts.read_labels` of an
        ``utt2spk`` file); default: the id's prefix before ``-``.
    n_boot, seed : int
        Replicates and seed of the speaker-level bootstrap interval (0: none).
    reference_name, hypotheses_name : str, optional
        Names of the files in messages and in the source (default: the file names).

    Returns
    -------
    Utility
        ``wer`` (a fraction), its interval, and the source ``"WER of HYPOTHESES"``.

    Examples
    --------
    >>> u = wer_utility(b"s1-u1 A B C D\n", b"s1-u1 A X C\n", hypotheses_name="hyp")
    >>> u.wer, u.source
    (0.5, 'WER of hyp')
    """
    from voxmetrics.metrics.utility import word_error_rate

    _require("the WER", {"jiwer": "vpc"})
    ref_name = _name(reference, reference_name, "reference transcripts")
    hyp_name = _name(hypotheses, hypotheses_name, "ASR hypotheses")
    pair = paired(
        read_transcripts(reference, name=reference_name),
        read_transcripts(hypotheses, name=hypotheses_name),
        reference_name=ref_name,
        system_name=hyp_name,
    )
    spk = speakers_of(pair.index, utt2spk)
    r = word_error_rate(pair["reference"], pair["system"], speakers=spk, n_boot=n_boot, seed=seed)
    return Utility(wer=r.wer, intervals=_interval("wer", r.interval), source=f"WER of {hyp_name}")


def uar_utility(
    labels: TextSource,
    predictions: TextSource,
    *,
    utt2spk: pd.Series | None = None,
    n_boot: int = 0,
    seed: int = 0,
    labels_name: str | None = None,
    predictions_name: str | None = None,
) -> Utility:
    r"""The UAR (and per-class accuracy) of emotion predictions, as a condition's utility.

    When the labels' (or the predictions') CSV has a ``fold`` column, the UAR is the mean of
    the per-fold UARs, as the VoicePrivacy challenge computes it on IEMOCAP (``uar_method =
    "fold_mean"``, its interval resamples the folds); otherwise the macro recall of all
    utterances pooled (``"pooled"``, its interval resamples the speakers).

    Parameters
    ----------
    labels, predictions : str, os.PathLike or bytes
        Files ``utt_id label`` (e.g. ``utt2emo``) or CSVs ``utt_id,label`` (optionally with
        ``fold``); the predictions cover exactly the labels' utterances.
    utt2spk, n_boot, seed :
        As :func:`wer_utility`.
    labels_name, predictions_name : str, optional
        Names of the files in messages and in the source (default: the file names).

    Returns
    -------
    Utility
        ``uar``, its interval, the per-class accuracies, ``uar_method`` and the source
        ``"UAR of PREDICTIONS"``.

    Examples
    --------
    >>> u = uar_utility(b"u1 ang\nu2 sad\n", b"u1 ang\nu2 ang\n", predictions_name="pred")
    >>> u.uar, dict(u.per_class), u.source, u.uar_method
    (0.5, {'ang': 1.0, 'sad': 0.0}, 'UAR of pred', 'pooled')
    >>> lab = b"utt_id,label,fold\nu1,ang,1\nu2,sad,1\nu3,ang,2\n"
    >>> f = uar_utility(lab, b"u1 ang\nu2 ang\nu3 ang\n", predictions_name="pred")
    >>> f.uar, f.uar_method, f.source
    (0.75, 'fold_mean', 'UAR of pred (mean of 2 folds)')
    """
    from voxmetrics.metrics.utility import unweighted_average_recall

    lab_name = _name(labels, labels_name, "emotion labels")
    pred_name = _name(predictions, predictions_name, "emotion predictions")
    pair = paired(
        read_labels(labels, name=labels_name),
        read_labels(predictions, name=predictions_name),
        reference_name=lab_name,
        system_name=pred_name,
    )
    folds = _folds(pair.index, (labels, lab_name), (predictions, pred_name))
    spk = speakers_of(pair.index, utt2spk)
    r = unweighted_average_recall(
        pair["reference"], pair["system"], speakers=spk, folds=folds, n_boot=n_boot, seed=seed
    )
    how = f" (mean of {len(r.per_fold)} folds)" if r.method == "fold_mean" else ""
    return Utility(
        uar=r.uar,
        intervals=_interval("uar", r.interval),
        per_class=dict(r.per_class),
        source=f"UAR of {pred_name}{how}",
        uar_method=r.method,
    )


def _folds(utterances: pd.Index, *sources: tuple[TextSource, str]) -> np.ndarray | None:
    """Each utterance's fold, from the first ``fold`` column of the sources; None without."""
    for source, name in sources:
        column = fold_column(source, name=name)
        if column is None:
            continue
        fold = column.reindex(utterances)
        if fold.isna().any():
            raise VoxMetricsInputError(
                f"{name}: {int(fold.isna().sum())} utterance(s) have no fold (first: "
                f"'{utterances[int(np.argmax(fold.isna().to_numpy()))]}'); give every "
                "utterance its fold."
            )
        return fold.astype(str).to_numpy()
    return None


def _recordings(source: Recordings, name: str) -> pd.Series:
    """Utterance id -> a path, or a member of the zip ``source``."""
    if isinstance(source, bytes | bytearray):
        from voxmetrics.embeddings.audio import AUDIO_EXTENSIONS

        return read_audio_zip(bytes(source), suffixes=AUDIO_EXTENSIONS, name=name)
    return read_audio_list(source)


def _contours(
    source: Recordings,
    files: pd.Series,
    ids: Sequence[str],
    name: str,
    tick: Callable[[str], None],
) -> list[NDArray[np.float64]]:
    """The F0 contour of each recording ``ids`` names, decoded at :data:`F0_SAMPLE_RATE`."""
    from voxmetrics.embeddings.audio import decode_audio
    from voxmetrics.metrics.utility import f0_contour

    out = []
    if isinstance(source, bytes | bytearray):
        from voxmetrics.limits import ArchiveReader

        with ArchiveReader(bytes(source), name) as ar:
            for utt in ids:
                member = files[utt]
                wave = decode_audio(ar.read(member), sample_rate=F0_SAMPLE_RATE, name=member)
                out.append(f0_contour(wave, F0_SAMPLE_RATE))
                tick(utt)
        return out
    for utt in ids:
        path = files[utt]
        wave = decode_audio(path, sample_rate=F0_SAMPLE_RATE, name=Path(path).name)
        out.append(f0_contour(wave, F0_SAMPLE_RATE))
        tick(utt)
    return out


def rho_f0_utility(
    original: Recordings,
    anonymised: Recordings,
    *,
    utt2spk: pd.Series | None = None,
    n_boot: int = 0,
    seed: int = 0,
    original_name: str | None = None,
    anonymised_name: str | None = None,
    progress: Progress | None = None,
) -> Utility:
    """The pitch correlation rho_F0 of original and anonymised recordings, as utility.

    Each recording is decoded at 16 kHz (mono), its F0 tracked with pYIN
    (:func:`~voxmetrics.metrics.utility.f0_contour`), and rho_F0 is the mean over utterances
    of the correlation of the two contours (VoicePrivacy 2022's rule,
    :func:`~voxmetrics.metrics.utility.mean_pitch_correlation`). Needs librosa (the ``vpc``
    extra).

    Parameters
    ----------
    original, anonymised : str, os.PathLike or bytes
        The recordings (:data:`Recordings`): a folder (id = file name), a ``wav.scp`` of plain
        paths or a CSV ``utt_id,path``, or a zip of audio files (id = file name, in any
        folder of the archive). The anonymised ones cover exactly the original utterances.
    utt2spk, n_boot, seed :
        As :func:`wer_utility`.
    original_name, anonymised_name : str, optional
        Names of the recordings in messages and in the source (default: the file or folder
        name; ``"original recordings"`` / ``"anonymised recordings"`` for bytes).
    progress : callable, optional
        ``progress(fraction, message)`` after each recording.

    Returns
    -------
    Utility
        ``rho_f0``, its interval and the source ``"rho_F0 of ANONYMISED"``.
    """
    from voxmetrics.metrics.utility import mean_pitch_correlation

    _require("rho_F0", {"librosa": "vpc", "soundfile": "audio"})
    orig_name = _name(original, original_name, "original recordings")
    anon_name = _name(anonymised, anonymised_name, "anonymised recordings")
    orig, anon = _recordings(original, orig_name), _recordings(anonymised, anon_name)
    pair = paired(orig, anon, reference_name=orig_name, system_name=anon_name)
    ids = list(pair.index)
    done = [0]

    def tick(utt: str) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0] / (2 * len(ids)), f"pitch of {utt}")

    contours = list(
        zip(
            _contours(original, orig, ids, orig_name, tick),
            _contours(anonymised, anon, ids, anon_name, tick),
            strict=True,
        )
    )
    spk = speakers_of(pair.index, utt2spk)
    r = mean_pitch_correlation(contours, speakers=spk, n_boot=n_boot, seed=seed)
    return Utility(
        rho_f0=r.rho_f0, intervals=_interval("rho_f0", r.interval), source=f"rho_F0 of {anon_name}"
    )


# ---------------------------------------------------------------- onto the conditions


def utility_targets(study: Study) -> list[str]:
    """What utility may be attached to: each system (all its conditions), then each condition.

    A system is the name before `` (`` of conditions named ``SYSTEM (attacker)``, as a
    VoicePrivacy tree and the attacker set-ups name them.

    """
    systems = []
    for name in study.names:
        if name.endswith(")") and " (" in name:
            system = name[: name.rindex(" (")]
            if system not in systems and system not in study.names:
                systems.append(system)
    return [*systems, *study.names]


def target_conditions(study: Study, target: str, *, where: str | None = None) -> list[str]:
    """The conditions ``target`` names: the condition of that name, else a system's conditions.

    Parameters
    ----------
    study : Study
        The study.
    target : str
        A condition name, or a system name for all its conditions ``SYSTEM (attacker)``.
    where : str, optional
        How the target was given, for the message (default: the target itself), e.g.
        ``"--wer mcadams"``.

    Raises
    ------
    VoxMetricsInputError
        No condition or system of that name.
    """
    if target in study.names:
        return [target]
    found = [c.name for c in study.conditions if c.name.startswith(f"{target} (")]
    if not found:
        raise VoxMetricsInputError(
            f"{where or target}: no condition or system of that name; the conditions are "
            f"{', '.join(study.names)}."
        )
    return found


@dataclass(frozen=True)
class AttachedUtility:
    """A study with computed utility on some of its conditions, and where each came from."""

    study: Study
    """The study, each condition of :attr:`sources` with its new utility."""
    sources: Mapping[str, str]
    """Condition name -> the sources of its new numbers (``"WER of hyp; UAR of pred"``), in
    the order the conditions were first given."""

    @property
    def lines(self) -> tuple[str, ...]:
        """One line per condition, ``NAME: utility from SOURCES``."""
        return tuple(f"{name}: utility from {src}" for name, src in self.sources.items())

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the conditions' names and sources (the study is not included)."""
        return {"sources": dict(self.sources)}


def _merged(base: Utility | None, parts: Sequence[Utility]) -> tuple[Utility, str]:
    """``base`` with the numbers of ``parts`` in their place, and the sources of the parts.

    Of two parts with the same number the last counts; the sources keep the order in which
    their numbers were first given.
    """
    chosen: dict[str, Utility] = {}
    for part in parts:
        for key in UTILITY_METRICS:
            if part.value(key) is not None:
                chosen[key] = part
    source = "; ".join(dict.fromkeys(p.source for p in chosen.values() if p.source))
    b = base or Utility()
    values = {key: b.value(key) for key in UTILITY_METRICS}
    intervals = dict(b.intervals)
    per_class = dict(b.per_class)
    method = b.uar_method
    for key in UTILITY_METRICS:  # in a fixed order, as combine_utility
        if key not in chosen:
            continue
        values[key] = chosen[key].value(key)
        intervals.pop(key, None)
        if key in chosen[key].intervals:
            intervals[key] = chosen[key].intervals[key]
        if key == "uar":
            per_class = dict(chosen[key].per_class)
            method = chosen[key].uar_method
    utility = Utility(
        wer=values["wer"],
        uar=values["uar"],
        rho_f0=values["rho_f0"],
        intervals=intervals,
        per_class=per_class,
        source="; ".join(s for s in (b.source, source) if s),
        uar_method=method,
    )
    return utility, source


def study_with_utility(study: Study, computed: Mapping[str, Sequence[Utility]]) -> AttachedUtility:
    """``study`` with computed utility numbers put on its conditions.

    Parameters
    ----------
    study : Study
        The study.
    computed : mapping of str to sequence of Utility
        Condition name -> the utility computed for it (e.g. one :func:`wer_utility` and one
        :func:`uar_utility`). Each number replaces the condition's own (from a results
        summary, say) with its interval, the per-class accuracies follow the UAR, and the
        sources are appended to the condition's; of two parts with the same number, the last
        one counts.

    Returns
    -------
    AttachedUtility
        The new study, and the sources of each condition's new numbers.

    Raises
    ------
    VoxMetricsInputError
        A name that is not a condition of the study.
    """
    sources = {}
    for name, parts in computed.items():
        cond = study.get(name)
        utility, source = _merged(cond.utility, parts)
        study = study.with_condition(replace(cond, utility=utility))
        sources[name] = source
    return AttachedUtility(study, sources)
