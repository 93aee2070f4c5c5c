"""Readers: score and embedding files (paths or uploaded bytes) to the data model.

Every reader takes a :data:`Source` (a path, or the raw bytes of an uploaded file), recognises the
format from the content (:func:`detect_format`; the file extension is only a hint), parses it
with vectorised pandas / numpy code and builds the model through
:meth:`~voxmetrics.data.ScoreMatrix.from_arrays` or
:meth:`~voxmetrics.data.EmbeddingSet.from_arrays`. Every problem becomes one
:class:`~voxmetrics.errors.VoxMetricsInputError` saying what is wrong, where (file name and, for
text files, the line, counting a CSV header as line 1; for Parquet the data row, counting from 1)
and how to fix it. Pickled data is refused.

The formats (docs, User guide > Input formats):

- ``csv`` / ``parquet``: long scores, columns ``trial_id, trial_speaker, enrol_speaker, score``
  plus optional per-trial attribute columns, one row per (trial, enrolled identity) pair.
- ``npz``: ``scores`` (T x N), ``trial_ids``, ``trial_speakers`` (T), ``enrol_speakers`` (N) and
  optional ``attr_<name>`` arrays of length T.
- ``kaldi``: whitespace-separated ``enrol_id trial_id score`` lines, with a ``kaldi-key`` file
  (``enrol_id trial_id target|nontarget``) or an ``utt2spk`` file (``utt_id speaker``) giving
  the trial speakers.
- embeddings: ``npz`` (``embeddings``, ``utt_ids``), ``npy``, Kaldi ark / scp or HDF5 with a
  ``metadata`` CSV (``utt_id, speaker, role, split`` and optional attribute columns), or one
  ``parquet`` file with those columns and an ``embedding`` list column.

One module per role: :mod:`~voxmetrics.data.readers.detect` (which format a file is),
:mod:`~voxmetrics.data.readers.tables` (CSV / Parquet tables), one module per score format
(:mod:`~voxmetrics.data.readers.long`, :mod:`~voxmetrics.data.readers.npz`,
:mod:`~voxmetrics.data.readers.kaldi`), :mod:`~voxmetrics.data.readers.scores` (any score file)
and :mod:`~voxmetrics.data.readers.embeddings` (embeddings with their metadata); what they share
is in the private ``_common``. The names below are the package's public surface.
"""

from __future__ import annotations

from voxmetrics.data.readers._common import FORMATS, SCORE_COLUMNS, Source
from voxmetrics.data.readers.detect import detect_format
from voxmetrics.data.readers.embeddings import read_embeddings
from voxmetrics.data.readers.scores import negate_scores, read_scores
from voxmetrics.data.readers.tables import read_table

__all__ = [
    "FORMATS",
    "SCORE_COLUMNS",
    "Source",
    "detect_format",
    "negate_scores",
    "read_embeddings",
    "read_scores",
    "read_table",
]
