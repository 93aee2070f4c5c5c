"""Score files of every format into a :class:`~voxmetrics.data.ScoreMatrix`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from voxmetrics._types import ScoreFormat
from voxmetrics.data.model import ScoreMatrix
from voxmetrics.data.readers._common import Source, load_source
from voxmetrics.data.readers.detect import binary_kind, check_not_empty, check_utf8, detect_kind
from voxmetrics.data.readers.kaldi import scores_from_kaldi
from voxmetrics.data.readers.long import scores_from_long
from voxmetrics.data.readers.npz import npz_file, scores_from_npz
from voxmetrics.data.readers.tables import read_tabular_rows
from voxmetrics.errors import VoxMetricsInputError

__all__ = [
    "negate_scores",
    "read_scores",
]

_SCORE_FORMATS = ("auto", "csv", "parquet", "npz", "kaldi")


def read_scores(
    source: Source,
    *,
    trials: Source | None = None,
    format: ScoreFormat = "auto",
    name: str | None = None,
    trials_name: str | None = None,
    distance: bool = False,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    r"""Read a score file into a :class:`~voxmetrics.data.ScoreMatrix`.

    The long format is pivoted to T x N keeping trials and enrolled identities in their order of
    first appearance. A sparse trial list (pairs missing from a long or Kaldi file, an NPZ
    ``mask`` array, or NaN for the unlisted pairs of an NPZ) gives a matrix with a ``mask``
    (:attr:`~voxmetrics.data.ScoreMatrix.mask`): NaN in the unlisted cells, which the metrics
    never read. Trials whose speaker is not enrolled are excluded and counted (an
    :class:`~voxmetrics.errors.ExcludedTrialsWarning` is emitted).

    Parameters
    ----------
    source : str, os.PathLike or bytes
        The scores: a path, or the raw bytes of an uploaded file.
    trials : str, os.PathLike or bytes, optional
        For Kaldi / VoicePrivacy scores only (required there): the key file ``enrol_id trial_id
        target|nontarget`` (a trial's speaker is the ``enrol_id`` of its target line; a trial
        with no target line has a speaker who is not enrolled) or an utt2spk file ``utt_id
        speaker`` (every trial must be listed).
    format : {"auto", "csv", "parquet", "npz", "kaldi"}
        ``"auto"`` recognises the format from the content (:func:`detect_format`).
    name, trials_name : str, optional
        File names used in messages (default: the path's name or ``"uploaded file"``).
    distance : bool, default False
        The scores are distances (lower = closer, e.g. Euclidean or PLDA-free cosine
        distances): they are negated on reading, so that every metric sees higher = closer.
    allow_incomplete : bool, default False
        A broken file is refused: Kaldi key pairs without a score, NaN scores (an NPZ without
        a ``mask``; an empty or NaN score cell), a long or Kaldi file that lists its pairs in
        grid order and stops inside a trial. With True such pairs are left out instead,
        counted in an :class:`~voxmetrics.errors.IncompleteScoresWarning`, and the metrics use
        the listed pairs only.

    Returns
    -------
    ScoreMatrix
        With ``source`` set to ``name``; CSV / Parquet attribute columns and NPZ ``attr_<name>``
        arrays become per-trial attributes.

    Raises
    ------
    VoxMetricsInputError
        Saying what is wrong, where (file and line / row) and how to fix it: empty file, missing
        columns, non-numeric / NaN / infinite scores, duplicate (trial, enrolled) pairs, a
        sparse list without a mated or a non-mated pair (or over the cell limit), fewer than two
        enrolled identities, no trial with an enrolled speaker, text that is not UTF-8, pickled
        arrays, inconsistent array lengths, malformed Kaldi lines.

    Examples
    --------
    >>> csv_bytes = (b"trial_id,trial_speaker,enrol_speaker,score,sex\n"
    ...              b"t1,a,a,0.9,F\nt1,a,b,0.1,F\nt2,b,a,0.2,M\nt2,b,b,0.8,M\n")
    >>> sm = read_scores(csv_bytes, name="scores.csv")
    >>> sm.shape, sm.tar.tolist(), sm.attributes["sex"].tolist()
    ((2, 2), [0.9, 0.8], ['F', 'M'])
    >>> sm2 = read_scores(b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n",
    ...                   trials=b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n")
    >>> sm2.trial_speakers.tolist()
    ['a', 'b']
    >>> read_scores(b"a t1 0.1\nb t1 0.9\n", trials=b"t1 a\n", distance=True).tar.tolist()
    [-0.1]
    """
    sm = _read_scores(source, trials, format, name, trials_name, allow_incomplete)
    return negate_scores(sm) if distance else sm


def negate_scores(sm: ScoreMatrix) -> ScoreMatrix:
    """The matrix with every score negated: distances (lower = closer) become similarities.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[0.2, 1.5]], trial_ids=["t"], trial_speakers=["a"],
    ...                              enrol_speakers=["a", "b"])
    >>> negate_scores(sm).scores.tolist()
    [[-0.2, -1.5]]
    """
    neg = np.negative(sm.scores)
    neg.flags.writeable = False
    return replace(sm, scores=neg)


def _read_scores(
    source: Source,
    trials: Source | None,
    format: ScoreFormat,
    name: str | None,
    trials_name: str | None,
    allow_incomplete: bool = False,
) -> ScoreMatrix:
    npz_path = npz_file(source, format, name) if trials is None else None
    if npz_path is not None:  # one copy of the matrix: read from the file, not from its bytes
        nm = name or npz_path.name or str(npz_path)
        return scores_from_npz(npz_path, nm, allow_incomplete)
    data, nm = load_source(source, name)
    if format not in _SCORE_FORMATS:
        raise VoxMetricsInputError(
            f"{nm}: unknown format {format!r}; use one of {', '.join(_SCORE_FORMATS)}."
        )
    if format == "auto":
        kind = detect_kind(data, nm)
    else:
        check_not_empty(data, nm)
        found = binary_kind(data, nm)
        expected = format if format in ("npz", "parquet") else None
        if found != expected:
            what = f"the file is {found.upper()}" if found else "the file is text, not binary"
            if found is None and expected:
                what = f"the file does not start with the {expected.upper()} signature"
            raise VoxMetricsInputError(
                f"{nm}: format={format!r} was given but {what}; pass the right format or "
                "format='auto'."
            )
        if expected is None:
            check_utf8(data, nm)
        kind = format
    if trials is not None and kind != "kaldi":
        raise VoxMetricsInputError(
            f"{nm}: a trials (key) file was given but the scores are {kind}, not Kaldi; the key "
            "file only goes with Kaldi / VoicePrivacy scores (`enrol_id trial_id score`)."
        )
    if kind in ("csv", "parquet"):
        df, where = read_tabular_rows(data, nm, kind, categorical=True)
        return scores_from_long(df, where, text=kind == "csv", allow_incomplete=allow_incomplete)
    if kind == "npz":
        return scores_from_npz(data, nm, allow_incomplete)
    if kind == "kaldi":
        return scores_from_kaldi(data, nm, trials, trials_name, allow_incomplete)
    advice = {
        "npy": "an NPY file holds one bare array without labels; save scores with their labels "
        "in an NPZ (numpy.savez(path, scores=..., trial_ids=..., trial_speakers=..., "
        "enrol_speakers=...)) or as a long CSV",
        "kaldi-key": "this is a Kaldi key file (`enrol_id trial_id target|nontarget`); pass the "
        "scores file as the source and this one as trials=... (command line: --trials)",
        "utt2spk": "this is an utt2spk file (`utt_id speaker`); pass the Kaldi scores file as "
        "the source and this one as trials=... (command line: --trials)",
        "metadata": "this is an embeddings metadata CSV (utt_id, speaker, role, split); read it "
        "with read_embeddings(..., metadata=...) or give a scores file",
    }
    raise VoxMetricsInputError(f"{nm}: not a score file: {advice[kind]}.")
