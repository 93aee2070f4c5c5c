"""Provenance in the data layer: fingerprints, library versions, the .vxm file, study build."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest

from voxmetrics.data.provenance import (
    InputFile,
    attacker_record,
    file_sha256,
    fingerprint_paths,
    library_versions,
)
from voxmetrics.data.studyfile import study_from_bytes, study_to_bytes
from voxmetrics.data.utility import Utility
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.synth import demo_study


def test_fingerprints_walk_folders_and_skip_hidden_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("x")
    (tmp_path / "a" / ".hidden").write_text("h")
    (tmp_path / "b.txt").write_text("b")
    got = fingerprint_paths([(tmp_path, "source"), (tmp_path / "b.txt", "again")])
    assert [f.path for f in got] == [str(tmp_path / "a" / "x.txt"), str(tmp_path / "b.txt")]
    assert got[0].sha256 == hashlib.sha256(b"x").hexdigest() == file_sha256(tmp_path / "a/x.txt")
    assert {f.role for f in got} == {"source"}  # the first role wins
    assert fingerprint_paths([(tmp_path / "missing", "x")]) == ()
    with pytest.raises(VoxMetricsInputError, match="more than the 1"):
        fingerprint_paths([(tmp_path, "source")], max_files=1)


def test_versions_and_attacker_records():
    v = library_versions()
    assert v["numpy"] == np.__version__ and "python" in v and "scikit-learn" in v
    cond = demo_study(n_speakers=4).get("plain")
    assert attacker_record(cond) == {"attacker": "semi-informed", "score_kind": "similarity"}


def test_the_study_file_keeps_inputs_versions_and_utility_replicates(tmp_path):
    f = tmp_path / "eval.txt"
    f.write_text("scores")
    study = demo_study(n_speakers=4)
    reps = np.array([0.05, np.nan, 0.07])
    u = Utility(wer=0.06, replicates={"wer": reps}, draws={"wer": "abc:3:0"})
    study = dataclasses.replace(
        study,
        inputs=(InputFile.of(f, role="eval"),),
        conditions=(dataclasses.replace(study.conditions[0], utility=u), *study.conditions[1:]),
    )
    back = study_from_bytes(study_to_bytes(study))
    assert back.inputs == study.inputs
    assert back.saved_by["numpy"] == np.__version__ and back.saved_by["voxmetrics"]
    got = back.conditions[0].utility
    assert got == u and got.draws == {"wer": "abc:3:0"}
    np.testing.assert_array_equal(got.replicates["wer"], reps)  # NaN kept as NaN
    assert "replicates" not in got.to_dict()  # the evaluate JSON's utility block
