"""What the readers' round-trip tests share: score matrices with awkward labels (a hypothesis
strategy), one without its attributes, and the check that two are the same, order included."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from voxmetrics.data.model import ScoreMatrix

LABEL = st.text(alphabet='ab7 0.,"é-+eNA', min_size=1, max_size=5)


@st.composite
def studies(draw, *, whitespace: bool = True):
    label = LABEL if whitespace else LABEL.map(lambda s: s.replace(" ", "_").replace('"', "q"))
    enrol = draw(st.lists(label, min_size=2, max_size=4, unique=True))
    tids = draw(st.lists(label, min_size=1, max_size=5, unique=True))
    spk = draw(st.lists(st.sampled_from(enrol), min_size=len(tids), max_size=len(tids)))
    scores = draw(
        st.lists(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            min_size=len(tids) * len(enrol),
            max_size=len(tids) * len(enrol),
        )
    )
    attrs = {} if not whitespace else {"group": np.array([f"g{len(t)}" for t in tids])}
    return ScoreMatrix.from_arrays(
        np.reshape(scores, (len(tids), len(enrol))),
        trial_ids=tids,
        trial_speakers=spk,
        enrol_speakers=enrol,
        attributes=attrs,
    )


def without_attributes(sm: ScoreMatrix) -> ScoreMatrix:
    """``sm`` without its per-trial attributes (formats that cannot hold them)."""
    return ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
    )


def assert_same_matrix(a: ScoreMatrix, b: ScoreMatrix) -> None:
    """``a`` equals ``b``, with their trials and identities in the same order."""
    assert a.equals(b)
    # the readers keep the order of first appearance, and scores are written exactly
    np.testing.assert_array_equal(a.trial_ids, b.trial_ids)
    np.testing.assert_array_equal(a.enrol_speakers, b.enrol_speakers)
    np.testing.assert_array_equal(a.scores, b.scores)
