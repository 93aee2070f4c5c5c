"""Utility metrics of anonymised speech: WER, UAR and the pitch correlation rho_F0.

VoicePrivacy judges an anonymiser on privacy against utility (Tomashenko et al. 2024): the
word error rate of an ASR system on the anonymised speech (WER, computed here with ``jiwer``),
the unweighted average recall of an emotion classifier (UAR, macro recall, with scikit-learn)
and, in the 2022 edition, the correlation between the pitch contours of each original
recording and its anonymised copy (rho_F0). Every number is a fraction, like the EER. Where
per-utterance data exist, a speaker-level bootstrap gives a percentile interval: speakers are
resampled with replacement and all their utterances move together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.bootstrap import (
    BootstrapInterval,
    draws_key,
    percentile_interval,
    speaker_resample_counts,
)

__all__ = [
    "F0_CEILING",
    "F0_FLOOR",
    "PitchCorrelationResult",
    "Replicates",
    "UARResult",
    "WERResult",
    "combine_utility",
    "f0_contour",
    "mean_pitch_correlation",
    "pitch_correlation",
    "unweighted_average_recall",
    "word_error_rate",
]

F0_FLOOR = 75.0
"""Lowest F0 (Hz) of the pitch tracker, as VoicePrivacy 2022."""
F0_CEILING = 500.0
"""Highest F0 (Hz) of the pitch tracker, as VoicePrivacy 2022."""


def _speakers(speakers: ArrayLike | None, n: int, what: str) -> NDArray[np.str_] | None:
    if speakers is None:
        return None
    spk = np.asarray(speakers).astype(str).ravel()
    if spk.size != n:
        raise VoxMetricsInputError(
            f"`speakers` has {spk.size} entries for {n} {what}; give one speaker per item."
        )
    return spk


def _resampled(
    speakers: NDArray[np.str_], n_boot: int, confidence: float, seed: int
) -> tuple[NDArray[np.int64], NDArray[np.intp], int]:
    """The speaker-level resampling counts of ``n_boot`` replicates (options checked first)."""
    if n_boot < 1 or not 0 < confidence < 1:
        raise VoxMetricsInputError("`n_boot` must be >= 1 and `confidence` in (0, 1).")
    rng = np.random.default_rng(seed)
    return speaker_resample_counts(speakers, n_boot=n_boot, rng=rng)


@dataclass(frozen=True, eq=False)
class Replicates:
    """A utility number in each speaker-bootstrap replicate, and how they were drawn."""

    values: NDArray[np.float64] = field(repr=False)
    """(B,) the number in each replicate (NaN where undefined)."""
    draws: str
    """:func:`~voxmetrics.metrics.bootstrap.draws_key` of the speakers, B and seed."""


def _ratio_interval(
    num: NDArray[np.float64],
    den: NDArray[np.float64],
    speakers: NDArray[np.str_],
    *,
    n_boot: int,
    confidence: float,
    seed: int,
) -> tuple[BootstrapInterval, Replicates]:
    """Percentile interval of sum(num) / sum(den) over speaker-resampled items (one product)."""
    counts, inverse, s = _resampled(speakers, n_boot, confidence, seed)
    per_num = np.bincount(inverse, weights=num, minlength=s)
    per_den = np.bincount(inverse, weights=den, minlength=s)
    top, bottom = counts @ per_num, counts @ per_den
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = np.where(bottom > 0, top / bottom, np.nan)
    estimate = float(num.sum() / den.sum()) if den.sum() > 0 else None
    drawn = Replicates(reps, draws_key(speakers, n_boot=n_boot, seed=seed))
    return percentile_interval(estimate, reps, confidence, n_boot), drawn


# ---------------------------------------------------------------- WER


@dataclass(frozen=True)
class WERResult:
    """Word error rate of ASR hypotheses against reference transcripts."""

    wer: float
    """(substitutions + deletions + insertions) / reference words, a fraction (may exceed 1)."""
    substitutions: int
    """Reference words replaced by another word."""
    deletions: int
    """Reference words missing from the hypothesis."""
    insertions: int
    """Hypothesis words without a reference word."""
    n_words: int
    """Words of the references."""
    n_utterances: int
    """Utterances scored."""
    interval: BootstrapInterval | None = None
    """Speaker-level bootstrap interval, when computed."""
    replicates: Replicates | None = field(default=None, compare=False, repr=False)
    """The WER in each replicate behind :attr:`interval` (not in the JSON)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the fields."""
        return {
            "wer": self.wer,
            "substitutions": self.substitutions,
            "deletions": self.deletions,
            "insertions": self.insertions,
            "n_words": self.n_words,
            "n_utterances": self.n_utterances,
            "interval": None if self.interval is None else self.interval.to_dict(),
        }


def _texts(values: Sequence[str]) -> list[str]:
    return [" ".join(str(v).split()) for v in values]


def word_error_rate(
    references: Sequence[str],
    hypotheses: Sequence[str],
    *,
    speakers: ArrayLike | None = None,
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> WERResult:
    """Corpus word error rate with ``jiwer``, and its speaker-level bootstrap interval.

    Words are the whitespace-separated tokens, compared as given (normalise case and
    punctuation beforehand, as the ASR's own scoring does).

    Parameters
    ----------
    references, hypotheses : sequence of str, length U
        Reference transcript and ASR hypothesis of each utterance (a hypothesis may be empty).
    speakers : array_like of str, length U, optional
        Speaker of each utterance, for the bootstrap interval (``n_boot`` > 0).
    n_boot, confidence, seed :
        Replicates, coverage and seed of the speaker-level bootstrap (0 = no interval).

    Returns
    -------
    WERResult

    Raises
    ------
    VoxMetricsInputError
        Different numbers of references and hypotheses, no utterance, or an empty reference.

    Examples
    --------
    >>> r = word_error_rate(["the cat sat", "hello"], ["the bat sat down", ""])
    >>> r.wer, (r.substitutions, r.deletions, r.insertions), r.n_words
    (0.75, (1, 1, 1), 4)
    """
    import jiwer

    ref, hyp = _texts(references), _texts(hypotheses)
    if len(ref) != len(hyp):
        raise VoxMetricsInputError(
            f"{len(ref)} references but {len(hyp)} hypotheses; give one hypothesis per reference."
        )
    if not ref:
        raise VoxMetricsInputError("no utterance to score; give references and hypotheses.")
    empty = [i for i, r in enumerate(ref) if not r]
    if empty:
        raise VoxMetricsInputError(
            f"{len(empty)} reference transcript(s) are empty (first: utterance #{empty[0] + 1}); "
            "a WER needs reference words: remove those utterances."
        )
    out = jiwer.process_words(ref, hyp)
    n_words = np.array([len(r.split()) for r in ref], dtype=np.float64)
    errors = np.zeros(len(ref))
    for i, chunks in enumerate(out.alignments):
        for c in chunks:
            if c.type in ("substitute", "delete"):
                errors[i] += c.ref_end_idx - c.ref_start_idx
            elif c.type == "insert":
                errors[i] += c.hyp_end_idx - c.hyp_start_idx
    interval = drawn = None
    spk = _speakers(speakers, len(ref), "utterances")
    if n_boot and spk is not None:
        interval, drawn = _ratio_interval(
            errors, n_words, spk, n_boot=n_boot, confidence=confidence, seed=seed
        )
    return WERResult(
        wer=float(out.wer),
        substitutions=int(out.substitutions),
        deletions=int(out.deletions),
        insertions=int(out.insertions),
        n_words=int(n_words.sum()),
        n_utterances=len(ref),
        interval=interval,
        replicates=drawn,
    )


# ---------------------------------------------------------------- UAR


@dataclass(frozen=True)
class UARResult:
    """Unweighted average recall of class predictions (emotion recognition)."""

    uar: float
    """The UAR, in [0, 1]: with folds, the mean of the per-fold UARs (``method`` ``fold_mean``,
    as the VoicePrivacy challenge computes it); without, the mean over the reference classes of
    each class's recall over all utterances (``pooled`` macro recall)."""
    per_class: Mapping[str, float] = field(default_factory=dict)
    """Recall (per-class accuracy) of each reference class (with folds: its mean over the folds
    that hold the class, as the challenge's ``ACC_<class>``)."""
    accuracy: float = 0.0
    """Share of utterances predicted right (weighted by class frequency, unlike the UAR)."""
    n_utterances: int = 0
    """Utterances scored."""
    interval: BootstrapInterval | None = None
    """Bootstrap interval of the UAR, when computed: speakers resampled (pooled), or folds
    resampled (fold mean)."""
    replicates: Replicates | None = field(default=None, compare=False, repr=False)
    """The UAR in each speaker-bootstrap replicate behind :attr:`interval` (pooled only; not in
    the JSON): a fold mean's replicates resample folds, not speakers, and the ranking's
    stability takes it as fixed."""
    method: str = "pooled"
    """``fold_mean`` or ``pooled`` (:data:`voxmetrics.data.utility.UAR_METHODS`)."""
    per_fold: Mapping[str, float] = field(default_factory=dict)
    """The UAR of each fold (``fold_mean`` only)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of the fields."""
        return {
            "uar": self.uar,
            "per_class": {k: float(v) for k, v in self.per_class.items()},
            "accuracy": self.accuracy,
            "n_utterances": self.n_utterances,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "method": self.method,
            "per_fold": {k: float(v) for k, v in self.per_fold.items()},
        }


def unweighted_average_recall(
    labels: ArrayLike,
    predictions: ArrayLike,
    *,
    speakers: ArrayLike | None = None,
    folds: ArrayLike | None = None,
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> UARResult:
    """UAR and per-class recall, with scikit-learn: per fold when the folds are known.

    VoicePrivacy's speech emotion recognition (``evaluate_ser.py``) runs one classifier per
    IEMOCAP fold and prints the mean over folds of each fold's UAR (``recall_score(ref, hyp,
    average="macro")`` on the fold's utterances; it rounds each fold's to 0.001 % first). With
    ``folds`` this function computes that number (``method = "fold_mean"``); without, the macro
    recall of all utterances pooled (``method = "pooled"``), another number.

    Parameters
    ----------
    labels, predictions : array_like of str, length U
        Reference class and predicted class of each utterance.
    speakers : array_like of str, length U, optional
        Speaker of each utterance, for the bootstrap interval of the pooled UAR (``n_boot``
        > 0); a replicate's UAR averages the classes it holds.
    folds : array_like, length U, optional
        Fold of each utterance. The UAR is then the mean of the per-fold UARs; its interval
        (``n_boot`` > 0) resamples the folds.
    n_boot, confidence, seed :
        As :func:`word_error_rate`.

    Returns
    -------
    UARResult

    Examples
    --------
    >>> r = unweighted_average_recall(["a", "a", "a", "b"], ["a", "a", "b", "b"])
    >>> round(r.uar, 4), {k: round(v, 4) for k, v in r.per_class.items()}, r.accuracy
    (0.8333, {'a': 0.6667, 'b': 1.0}, 0.75)
    >>> f = unweighted_average_recall(["a", "b", "a", "b"], ["a", "a", "a", "b"],
    ...                               folds=[1, 1, 2, 2])
    >>> f.method, f.per_fold, f.uar
    ('fold_mean', {'1': 0.5, '2': 1.0}, 0.75)
    """
    from sklearn.metrics import accuracy_score, recall_score

    y = np.asarray(labels).astype(str).ravel()
    p = np.asarray(predictions).astype(str).ravel()
    if y.size != p.size:
        raise VoxMetricsInputError(
            f"{y.size} labels but {p.size} predictions; give one prediction per labelled utterance."
        )
    if y.size == 0:
        raise VoxMetricsInputError("no utterance to score; give labels and predictions.")
    if folds is not None:
        return _fold_uar(y, p, _speakers(folds, y.size, "utterances"), n_boot, confidence, seed)
    classes = np.unique(y)
    recalls = recall_score(y, p, labels=classes, average=None, zero_division=0)
    uar = float(recall_score(y, p, labels=classes, average="macro", zero_division=0))
    interval = drawn = None
    spk = _speakers(speakers, y.size, "utterances")
    if n_boot and spk is not None:
        interval, drawn = _uar_interval(y, p, classes, spk, n_boot, confidence, seed)
    return UARResult(
        uar=uar,
        per_class={str(c): float(r) for c, r in zip(classes, recalls, strict=True)},
        accuracy=float(accuracy_score(y, p)),
        n_utterances=int(y.size),
        interval=interval,
        replicates=drawn,
    )


def _fold_uar(
    y: NDArray[np.str_],
    p: NDArray[np.str_],
    folds: NDArray[np.str_] | None,
    n_boot: int,
    confidence: float,
    seed: int,
) -> UARResult:
    """The mean of the per-fold UARs, as the challenge's ``evaluate_ser.py``."""
    import warnings

    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import accuracy_score, recall_score

    assert folds is not None
    names = np.unique(folds)
    per_fold: dict[str, float] = {}
    per_class: dict[str, list[float]] = {}
    for fold in names:
        inside = folds == fold
        with warnings.catch_warnings():  # a class predicted but absent counts 0, as there
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            per_fold[str(fold)] = float(recall_score(y[inside], p[inside], average="macro"))
        for c in np.unique(y[inside]):
            of_c = inside & (y == c)
            per_class.setdefault(str(c), []).append(float(np.mean(p[of_c] == c)))
    values = np.array(list(per_fold.values()))
    interval = None
    if n_boot:
        if n_boot < 1 or not 0 < confidence < 1:
            raise VoxMetricsInputError("`n_boot` must be >= 1 and `confidence` in (0, 1).")
        rng = np.random.default_rng(seed)
        reps = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
        interval = percentile_interval(float(values.mean()), reps, confidence, n_boot)
    return UARResult(
        uar=float(values.mean()),
        per_class={c: float(np.mean(v)) for c, v in sorted(per_class.items())},
        accuracy=float(accuracy_score(y, p)),
        n_utterances=int(y.size),
        interval=interval,
        method="fold_mean",
        per_fold=per_fold,
    )


def _uar_interval(
    y: NDArray[np.str_],
    p: NDArray[np.str_],
    classes: NDArray[np.str_],
    spk: NDArray[np.str_],
    n_boot: int,
    confidence: float,
    seed: int,
) -> tuple[BootstrapInterval, Replicates]:
    counts, inverse, s = _resampled(spk, n_boot, confidence, seed)
    cls = np.searchsorted(classes, y)
    cells = inverse * classes.size + cls
    totals = np.bincount(cells, minlength=s * classes.size).reshape(s, classes.size)
    hits = np.bincount(cells, weights=(y == p), minlength=s * classes.size).reshape(s, classes.size)
    tot_b, hit_b = counts @ totals, counts @ hits  # (B, C)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(tot_b > 0, hit_b / tot_b, np.nan)
        reps = np.nanmean(np.where(tot_b > 0, recall, np.nan), axis=1)
    present = totals.sum(axis=0) > 0
    estimate = float(np.mean(hits.sum(axis=0)[present] / totals.sum(axis=0)[present]))
    drawn = Replicates(reps, draws_key(spk, n_boot=n_boot, seed=seed))
    return percentile_interval(estimate, reps, confidence, n_boot), drawn


# ---------------------------------------------------------------- rho_F0


def f0_contour(
    wave: ArrayLike, sample_rate: int, *, hop_seconds: float = 0.01
) -> NDArray[np.float64]:
    """F0 contour (Hz, 0 where unvoiced) with librosa's pYIN tracker (Mauch and Dixon 2014).

    Frames every ``hop_seconds`` (10 ms, as VoicePrivacy 2022), F0 searched in
    :data:`F0_FLOOR` .. :data:`F0_CEILING` Hz.

    Parameters
    ----------
    wave : array_like, 1-D
        Mono waveform.
    sample_rate : int
        Its sample rate (Hz).
    """
    import librosa

    x = np.asarray(wave, dtype=np.float64).ravel()
    hop = max(1, round(hop_seconds * sample_rate))
    frame = 1 << int(np.ceil(np.log2(max(4 * sample_rate / F0_FLOOR, 2 * hop))))
    if x.size < frame:
        x = np.pad(x, (0, frame - x.size))
    f0, voiced, _ = librosa.pyin(
        x,
        fmin=F0_FLOOR,
        fmax=F0_CEILING,
        sr=sample_rate,
        frame_length=frame,
        hop_length=hop,
        center=True,
    )
    return np.where(voiced & np.isfinite(f0), f0, 0.0)


def pitch_correlation(f0_original: ArrayLike, f0_anonymised: ArrayLike) -> float:
    """Pitch correlation of one recording and its anonymised copy (VoicePrivacy 2022 rule).

    The shorter contour is linearly stretched to the longer one's length, values outside
    :data:`F0_FLOOR` .. :data:`F0_CEILING` Hz become 0 (unvoiced), the anonymised contour is
    shifted (circularly) by the lag that maximises the cross-correlation of the two, and the
    result is the Pearson correlation of the two contours, 0 when it is undefined (a constant
    contour).

    Examples
    --------
    >>> a = [0, 100, 120, 140, 0, 0]
    >>> round(pitch_correlation(a, [0, 0, 200, 240, 280, 0]), 6)
    1.0
    """
    a = np.asarray(f0_original, dtype=np.float64).ravel()
    b = np.asarray(f0_anonymised, dtype=np.float64).ravel()
    if a.size < 2 or b.size < 2:
        raise VoxMetricsInputError(
            "a pitch contour needs at least 2 frames; the recordings are too short."
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise VoxMetricsInputError("a pitch contour holds NaN or infinite values; use 0 there.")
    if a.size > b.size:
        b = np.interp(np.linspace(1, b.size, a.size), np.arange(1, b.size + 1), b)
    elif a.size < b.size:
        a = np.interp(np.linspace(1, a.size, b.size), np.arange(1, a.size + 1), a)
    a = np.where((a < F0_FLOOR) | (a > F0_CEILING), 0.0, a)
    b = np.where((b < F0_FLOOR) | (b > F0_CEILING), 0.0, b)
    lag = int(np.argmax(np.correlate(a, b, "full"))) - (a.size - 1)
    b = np.roll(b, lag)
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


@dataclass(frozen=True)
class PitchCorrelationResult:
    """Mean pitch correlation rho_F0 over utterances."""

    rho_f0: float
    """Mean over utterances of :func:`pitch_correlation`, in [-1, 1]."""
    std: float
    """Standard deviation over utterances (VoicePrivacy 2022 prints it beside the mean)."""
    per_utterance: NDArray[np.float64]
    """The correlation of each utterance."""
    interval: BootstrapInterval | None = None
    """Speaker-level bootstrap interval of the mean, when computed."""
    replicates: Replicates | None = field(default=None, compare=False, repr=False)
    """The mean in each replicate behind :attr:`interval` (not in the JSON)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (without the per-utterance values)."""
        return {
            "rho_f0": self.rho_f0,
            "std": self.std,
            "n_utterances": int(self.per_utterance.size),
            "interval": None if self.interval is None else self.interval.to_dict(),
        }


def mean_pitch_correlation(
    contours: Sequence[tuple[ArrayLike, ArrayLike]],
    *,
    speakers: ArrayLike | None = None,
    n_boot: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> PitchCorrelationResult:
    """rho_F0: the mean :func:`pitch_correlation` over (original, anonymised) contour pairs.

    Examples
    --------
    >>> r = mean_pitch_correlation([([0, 100, 120, 0], [0, 150, 180, 0]),
    ...                             ([100, 110, 0, 0], [0, 0, 110, 100])])
    >>> round(r.rho_f0, 4), r.per_utterance.size
    (0.9955, 2)
    """
    if not contours:
        raise VoxMetricsInputError("no contour pair; give the F0 of at least one recording.")
    rho = np.array([pitch_correlation(a, b) for a, b in contours])
    interval = drawn = None
    spk = _speakers(speakers, rho.size, "recordings")
    if n_boot and spk is not None:
        interval, drawn = _ratio_interval(
            rho, np.ones_like(rho), spk, n_boot=n_boot, confidence=confidence, seed=seed
        )
    rho.flags.writeable = False
    return PitchCorrelationResult(float(rho.mean()), float(rho.std()), rho, interval, drawn)


# ---------------------------------------------------------------- a condition's Utility


def combine_utility(
    base: Utility | None,
    *,
    wer: WERResult | None = None,
    uar: UARResult | None = None,
    rho_f0: PitchCorrelationResult | None = None,
    source: str = "",
) -> Utility:
    """``base`` (e.g. read from a results summary) with the computed numbers put in its place.

    Each computed number replaces the one of ``base`` with its interval and its bootstrap
    replicates; the per-class accuracies follow the UAR.
    """
    b = base or Utility()
    values = {"wer": b.wer, "uar": b.uar, "rho_f0": b.rho_f0}
    intervals = dict(b.intervals)
    per_class = dict(b.per_class)
    replicates, draws = dict(b.replicates), dict(b.draws)
    for key, result, value in (
        ("wer", wer, None if wer is None else wer.wer),
        ("uar", uar, None if uar is None else uar.uar),
        ("rho_f0", rho_f0, None if rho_f0 is None else rho_f0.rho_f0),
    ):
        if result is None:
            continue
        values[key] = value
        intervals.pop(key, None)
        replicates.pop(key, None)
        draws.pop(key, None)
        iv = result.interval
        if iv is not None and iv.low is not None and iv.high is not None:
            intervals[key] = (iv.low, iv.high)
        if result.replicates is not None:
            replicates[key] = result.replicates.values
            draws[key] = result.replicates.draws
    method = b.uar_method
    if uar is not None:
        per_class = dict(uar.per_class)
        method = uar.method
    sources = "; ".join(s for s in (b.source, source) if s)
    return Utility(
        wer=values["wer"],
        uar=values["uar"],
        rho_f0=values["rho_f0"],
        intervals=intervals,
        per_class=per_class,
        source=sources,
        replicates=replicates,
        draws=draws,
        uar_method=method,
    )
