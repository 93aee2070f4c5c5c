"""Conditions from embeddings: attackers, the study's conditions and their table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmetrics.data.model import EmbeddingSet
from voxmetrics.embeddings import (
    conditions_frame,
    conditions_from_embeddings,
    read_manifest,
    study_conditions,
)
from voxmetrics.errors import VoxMetricsInputError

MANIFEST = """utt_id,speaker,role,split,audio_path,system,sex
o_e1,a,enrol,eval,orig/a1.wav,original,F
o_t1,a,trial,eval,orig/a2.wav,original,F
o_e2,b,enrol,eval,orig/b1.wav,original,M
o_t2,b,trial,eval,orig/b2.wav,original,M
x_e1,a,enrol,eval,anon/a1.wav,B1,F
x_t1,a,trial,eval,anon/a2.wav,B1,F
x_e2,b,enrol,eval,anon/b1.wav,B1,M
x_t2,b,trial,eval,anon/b2.wav,B1,M
"""


def test_conditions_ignorant_and_lazy_informed():
    meta = read_manifest(MANIFEST.encode())
    es = EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(8, 4)), meta)
    conds = {c.name: c for c in conditions_from_embeddings(es)}
    assert list(conds) == ["original", "B1 / ignorant", "B1 / lazy-informed"]
    ign = conds["B1 / ignorant"].embeddings.meta
    assert set(ign.loc[ign["role"] == "enrol", "system"]) == {"original"}
    assert set(ign.loc[ign["role"] == "trial", "system"]) == {"B1"}
    assert set(conds["B1 / lazy-informed"].embeddings.meta["system"]) == {"B1"}
    sm = conds["B1 / ignorant"].embeddings.score_matrix("eval")
    assert sm.shape == (2, 2)
    only = conditions_from_embeddings(es, scenarios=("ignorant",))
    assert [c.scenario for c in only] == ["original", "ignorant"]
    with pytest.raises(VoxMetricsInputError, match="scenario 'x'"):
        conditions_from_embeddings(es, scenarios=("x",))


def test_study_conditions_and_their_table():
    meta = read_manifest(MANIFEST.encode())
    es = EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(8, 4)), meta)
    conds = conditions_from_embeddings(es)
    study = study_conditions(conds, "ge2e")
    assert [c.name for c in study] == [f"ge2e: {c.name}" for c in conds]
    assert [c.attacker for c in study] == ["original", "ignorant", "lazy-informed"]
    for c, sc in zip(conds, study, strict=True):
        assert sc.embeddings is c.embeddings
        assert sc.eval.equals(c.embeddings.score_matrix("eval"))
        assert (sc.dev is None) == ("dev" not in c.embeddings.splits())
        assert sc.description == f"{c.scenario} attack on {c.system}, ge2e embeddings"
    table = conditions_frame(conds, "ge2e")
    assert table["Condition"].tolist() == [c.name for c in study]
    for row, c in zip(table.itertuples(), conds, strict=True):
        roles = c.embeddings.meta["role"]
        assert (row.Enrolment, row.Trials) == ((roles == "enrol").sum(), (roles == "trial").sum())
        assert row.Enrolment + row.Trials == len(c.embeddings.meta)


def test_the_baseline_is_called_original_as_the_attacker():
    meta = pd.DataFrame(
        {
            "utt_id": list("abcdefgh"),
            "speaker": ["s", "t"] * 4,
            "role": ["enrol", "enrol", "trial", "trial"] * 2,
            "split": ["eval"] * 8,
            "system": ["original"] * 4 + ["B1"] * 4,
        }
    )
    es = EmbeddingSet.from_arrays(np.eye(8) + 0.1, meta)
    conditions = conditions_from_embeddings(es)
    assert [c.name for c in conditions] == ["original", "B1 / ignorant", "B1 / lazy-informed"]
    assert conditions[0].scenario == "original"
    assert not any("unprotected" in c.name for c in conditions)
