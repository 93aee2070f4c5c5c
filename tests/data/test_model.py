"""The data model's attacker parts (voxmetrics.data.model): the ``train`` split and
``EmbeddingSet.score_matrix_with``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmetrics.data import EmbeddingSet, read_embeddings
from voxmetrics.data.model import SPLIT_VALUES
from voxmetrics.errors import VoxMetricsInputError


def _set(splits=("train", "dev", "eval")) -> EmbeddingSet:
    rows = []
    for split in splits:
        for s in range(3):
            for role in ("enrol", "trial", "trial"):
                rows.append((f"{split}{s}{role}{len(rows)}", f"{split}{s}", role, split, "F"))
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split", "sex"])
    return EmbeddingSet.from_arrays(np.random.default_rng(0).normal(size=(len(rows), 4)), meta)


def test_the_train_split_is_accepted_never_scored_and_trained_on_first(tmp_path):
    es = _set()
    assert SPLIT_VALUES == ("dev", "eval", "train")
    assert es.splits() == ["dev", "eval"] and es.training_split() == "train"
    assert _set(("dev", "eval")).training_split() == "dev"
    assert _set(("eval",)).training_split() is None
    # the readers accept it too
    np.savez(tmp_path / "e.npz", embeddings=es.embeddings, utt_ids=es.meta["utt_id"].to_numpy(str))
    es.meta.to_csv(tmp_path / "e.csv", index=False)
    assert read_embeddings(tmp_path / "e.npz", metadata=tmp_path / "e.csv").training_split() == (
        "train"
    )
    bad = es.meta.assign(split=["test"] * len(es.meta))
    with pytest.raises(VoxMetricsInputError, match="use one of dev, eval, train"):
        EmbeddingSet.from_arrays(es.embeddings, bad)


def test_score_matrix_with_lays_out_the_matrix_as_score_matrix():
    es = _set()
    seen = {}

    def scorer(enrol, enrol_speakers, trials):
        seen["shapes"] = (enrol.shape, trials.shape)
        names = np.unique(enrol_speakers)
        return names, np.arange(trials.shape[0] * names.size, dtype=float).reshape(-1, names.size)

    got = es.score_matrix_with("eval", scorer)
    want = es.score_matrix("eval")
    assert seen["shapes"] == ((3, 4), (6, 4))  # the split's enrolment and trials, as given
    assert got.trial_ids.tolist() == want.trial_ids.tolist()
    assert got.enrol_speakers.tolist() == want.enrol_speakers.tolist()
    assert got.attributes["sex"].tolist() == want.attributes["sex"].tolist()
    assert got.scores[1, 2] == 5.0
