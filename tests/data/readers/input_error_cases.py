"""What the tests of bad input to the readers and writers share: small files and the check.

Each such test expects one :class:`~voxmetrics.errors.VoxMetricsInputError` whose message says
what is wrong, where and how to fix it (the tests in ``test_detect.py``, ``test_tables.py``,
``test_long.py``, ``test_scores.py``, ``test_npz.py``, ``test_kaldi.py``,
``test_embeddings.py`` of this directory, ``tests/data/test_model.py`` and
``tests/data/test_writers.py``).
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from voxmetrics.errors import VoxMetricsInputError

LONG_HEADER = "trial_id,trial_speaker,enrol_speaker,score\n"
GOOD_ROWS = "t1,a,a,0.9\nt1,a,b,0.1\nt2,b,a,0.2\nt2,b,b,0.8\n"

# a Kaldi / VoicePrivacy scores file and its key
KALDI_SCORES = b"a t1 0.9\nb t1 0.1\na t2 0.2\nb t2 0.8\n"
KALDI_KEY = b"a t1 target\nb t1 nontarget\na t2 nontarget\nb t2 target\n"

# embeddings metadata: two enrolled utterances and one trial
EMBEDDING_META = b"utt_id,speaker,role,split\ne1,a,enrol,eval\ne2,b,enrol,eval\nt1,a,trial,eval\n"


def long_csv(body: str, header: str = LONG_HEADER) -> bytes:
    """A long scores CSV: the header, then the rows of ``body``."""
    return (header + body).encode()


def savez_bytes(**arrays) -> bytes:
    """The bytes of ``numpy.savez`` of ``arrays``."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def npz_score_file(path, scores):
    """A score NPZ of ``scores`` at ``path`` (trial i spoken by enrolled speaker i mod N)."""
    t, n = scores.shape
    enrol = np.array([f"s{j}" for j in range(n)])
    np.savez(
        path,
        scores=scores,
        trial_ids=np.array([f"u{i}" for i in range(t)]),
        trial_speakers=enrol[np.arange(t) % n],
        enrol_speakers=enrol,
    )
    return path


def input_error(match: str):
    """``pytest.raises`` of a VoxMetricsInputError whose message matches ``match``."""
    return pytest.raises(VoxMetricsInputError, match=match)
