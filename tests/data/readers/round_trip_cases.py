"""Hypothesis strategies of the readers' round-trip tests: score matrices with awkward labels."""

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
