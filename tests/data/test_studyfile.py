"""Study files (.vxm): round trip, and refusal of damaged or tampered archives (issue 9)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from hostile_inputs import (
    DAMAGED_STUDIES,
    MiB,
    refused,
    small_study_bytes,
    tampered_study,
)
from sparse_cases import block_mask, full_matrix, listed_rows

from voxmetrics.data import (
    Condition,
    EmbeddingSet,
    ScoreMatrix,
    Study,
    StudySettings,
    load_study,
    read_scores,
    save_study,
    study_from_bytes,
    study_to_bytes,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import Limits, use_limits
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study(n_speakers=6)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _assert_same_matrix(a: ScoreMatrix | None, b: ScoreMatrix | None) -> None:
    assert (a is None) == (b is None)
    if a is None:
        return
    assert a.scores.dtype == b.scores.dtype
    np.testing.assert_array_equal(a.scores, b.scores)
    for name in ("trial_ids", "trial_speakers", "enrol_speakers"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert set(a.attributes) == set(b.attributes)
    for k in a.attributes:
        np.testing.assert_array_equal(a.attributes[k], b.attributes[k])
    assert a.n_excluded_trials == b.n_excluded_trials
    assert a.source == b.source


def _assert_same_study(a: Study, b: Study) -> None:
    assert a.name == b.name
    assert a.settings == b.settings
    assert a.names == b.names
    for ca, cb in zip(a.conditions, b.conditions, strict=True):
        assert (ca.attacker, ca.description) == (cb.attacker, cb.description)
        _assert_same_matrix(ca.eval, cb.eval)
        _assert_same_matrix(ca.dev, cb.dev)
        assert (ca.embeddings is None) == (cb.embeddings is None)
        if ca.embeddings is not None:
            np.testing.assert_array_equal(ca.embeddings.embeddings, cb.embeddings.embeddings)
            pd.testing.assert_frame_equal(ca.embeddings.meta, cb.embeddings.meta)
            assert ca.embeddings.source == cb.embeddings.source
        assert ca.content_hash == cb.content_hash


def test_round_trip_of_the_demo_study_is_identical(demo, tmp_path):
    study = dataclasses.replace(
        demo.renamed("plain", "plain <b>&'x'"),
        name="my study",
        settings=StudySettings(bootstrap=50, seed=3, lid_variant="reference-code"),
    )
    path = save_study(study, tmp_path / "sub" / "s.vxm")
    assert path.exists()
    assert not list(path.parent.glob("*.part"))
    assert path.stat().st_mode & 0o044 == (0o666 & ~_umask()) & 0o044  # readable like any file
    _assert_same_study(study, load_study(path))
    _assert_same_study(study, study_from_bytes(path.read_bytes()))


def test_round_trip_keeps_attributes_float32_excluded_counts_and_odd_labels(small_sm):
    sm = ScoreMatrix.from_arrays(
        small_sm.scores.astype(np.float32),
        trial_ids=[f'ü-{t} "q"/../x' for t in small_sm.trial_ids],
        trial_speakers=small_sm.trial_speakers,
        enrol_speakers=small_sm.enrol_speakers,
        attributes={**small_sm.attributes, "age": np.arange(small_sm.n_trials)},
        n_excluded_trials=3,
        source="x.csv",
    )
    study = Study((Condition("c/../1", eval=sm, attacker="ignorant", description="d\nline"),))
    back = study_from_bytes(study_to_bytes(study))
    _assert_same_study(study, back)
    assert back.get("c/../1").eval.scores.dtype == np.float32
    assert back.get("c/../1").eval.attributes["age"].dtype.kind == "i"


def test_round_trip_of_embeddings_with_numeric_and_missing_columns(small_es):
    meta = small_es.meta.copy()
    meta["age"] = np.linspace(20, 60, len(meta))
    es = EmbeddingSet.from_arrays(small_es.embeddings, meta, source="emb.npz")
    study = Study((Condition("e", eval=es.score_matrix("eval"), embeddings=es),))
    back = study_from_bytes(study_to_bytes(study))
    _assert_same_study(study, back)


def test_empty_study_round_trips():
    back = study_from_bytes(study_to_bytes(Study(name="empty")))
    assert len(back) == 0 and back.name == "empty"


# ---------------------------------------------------------------- tampered archives


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _pack(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buf.getvalue()


def _with_manifest(data: bytes, edit) -> bytes:
    members = _members(data)
    manifest = json.loads(members["manifest.json"])
    edit(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    return _pack(members)


@pytest.fixture(scope="module")
def small_file(demo) -> bytes:
    return study_to_bytes(Study(demo.conditions[:2], name="two"))


@pytest.mark.parametrize(
    "member", ["../evil.npy", "/etc/passwd", "arrays/../../evil", "C:/evil", "..\\evil"]
)
def test_path_traversal_member_is_refused(small_file, member):
    data = _pack({**_members(small_file), member: b"x"})
    with pytest.raises(VoxMetricsInputError, match=r"unsafe archive.*outside the archive"):
        study_from_bytes(data)


def test_manifest_pointing_outside_the_array_folder_is_refused(small_file):
    def edit(m):
        m["conditions"][0]["eval"]["scores"] = "../arrays/0.npy"

    with pytest.raises(VoxMetricsInputError, match="must name an array member"):
        study_from_bytes(_with_manifest(small_file, edit))


@pytest.mark.parametrize("version", [2, 0, "1", None])
def test_wrong_version_is_refused(small_file, version):
    def edit(m):
        m["version"] = version

    with pytest.raises(VoxMetricsInputError, match=r"version .* is not supported") as info:
        study_from_bytes(_with_manifest(small_file, edit))
    assert ("Upgrade VoxMetrics" in str(info.value)) == (version == 2)


def test_pickled_array_is_refused(small_file):
    members = _members(small_file)
    manifest = json.loads(members["manifest.json"])
    name = manifest["conditions"][0]["eval"]["trial_ids"]
    buf = io.BytesIO()
    np.save(buf, np.array([object(), "t"], dtype=object)[1:], allow_pickle=True)
    members[name] = buf.getvalue()
    with pytest.raises(VoxMetricsInputError, match=r"refusing .*pickled object array"):
        study_from_bytes(_pack(members))


def test_oversized_member_is_refused(small_file):
    with pytest.raises(VoxMetricsInputError, match="above the cap of 1,000 bytes"):
        study_from_bytes(small_file, max_member_bytes=1000)


def test_oversized_manifest_is_refused(small_file, monkeypatch):
    import voxmetrics.data.studyfile as sf

    monkeypatch.setattr(sf, "MAX_MANIFEST_BYTES", 10)
    with pytest.raises(VoxMetricsInputError, match=r"refusing member 'manifest.json'"):
        study_from_bytes(small_file)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"not a zip at all", "not a zip archive"),
        (_pack({"hello.txt": b"hi"}), "not a VoxMetrics study file"),
        (_pack({"manifest.json": b"{not json"}), "not valid JSON"),
        (_pack({"manifest.json": b'{"format": "other"}'}), "does not describe a VoxMetrics"),
    ],
)
def test_foreign_files_are_refused(data, match):
    with pytest.raises(VoxMetricsInputError, match=match):
        study_from_bytes(data)


@pytest.mark.parametrize("case", list(DAMAGED_STUDIES))
def test_damaged_or_truncated_study_files_say_so_and_how_to_fix_it(small_file, case):
    edit, match = DAMAGED_STUDIES[case]
    with pytest.raises(VoxMetricsInputError) as info:
        study_from_bytes(edit(small_file), name="s.vxm")
    message = str(info.value)
    assert message.startswith("s.vxm: damaged or truncated study file: "), message
    assert re.search(match, message), message
    assert "Copy the file whole again" in message and "save the study again" in message
    assert "not a zip archive" not in message


def test_a_file_that_is_no_zip_at_all_is_still_not_a_zip_archive():
    for data in (b"", b"hello", b"PK"):
        with pytest.raises(VoxMetricsInputError, match="not a zip archive"):
            study_from_bytes(data)


def test_missing_member_and_wrong_dtype_are_refused(small_file):
    members = _members(small_file)
    manifest = json.loads(members["manifest.json"])
    scores_name = manifest["conditions"][0]["eval"]["scores"]
    ids_name = manifest["conditions"][0]["eval"]["trial_ids"]
    missing = {k: v for k, v in members.items() if k != scores_name}
    with pytest.raises(VoxMetricsInputError, match="not in the archive"):
        study_from_bytes(_pack(missing))
    swapped = {**members, scores_name: members[ids_name]}
    with pytest.raises(VoxMetricsInputError, match=r"scores .* expected floating-point"):
        study_from_bytes(_pack(swapped))


def test_invalid_settings_and_duplicate_names_are_refused(small_file):
    def bad_settings(m):
        m["settings"] = {"bootstrap": -1}

    with pytest.raises(VoxMetricsInputError, match="setting 'bootstrap'"):
        study_from_bytes(_with_manifest(small_file, bad_settings))

    def unknown_setting(m):
        m["settings"] = {"colour": "red"}

    with pytest.raises(VoxMetricsInputError, match="unknown setting"):
        study_from_bytes(_with_manifest(small_file, unknown_setting))

    def duplicate(m):
        m["conditions"][1]["name"] = m["conditions"][0]["name"]

    with pytest.raises(VoxMetricsInputError, match="same name"):
        study_from_bytes(_with_manifest(small_file, duplicate))


def test_damaged_scores_are_validated_like_any_input(small_file):
    members = _members(small_file)
    manifest = json.loads(members["manifest.json"])
    name = manifest["conditions"][0]["eval"]["scores"]
    scores = np.load(io.BytesIO(members[name]))
    scores = scores.copy()
    scores[0, 0] = np.nan
    buf = io.BytesIO()
    np.save(buf, scores)
    members[name] = buf.getvalue()
    with pytest.raises(VoxMetricsInputError, match="NaN or infinite"):
        study_from_bytes(_pack(members))


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(VoxMetricsInputError, match="no such file"):
        load_study(tmp_path / "nope.vxm")


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "kwargs",
    [{"bootstrap": -1}, {"bootstrap": 1.5}, {"seed": -2}, {"cross_calibrate": 1},
     {"cross_calibrate": True}, {"bootstrap": True}, {"lid_variant": "sklearn"},
     {"lid_variant": None}],
)  # fmt: skip
def test_invalid_settings_are_refused(kwargs):
    with pytest.raises(VoxMetricsInputError, match="setting"):
        StudySettings(**kwargs)


def test_settings_round_trip_through_dict():
    s = StudySettings(bootstrap=0, seed=9, cross_calibrate=4, ties="attacker")
    assert StudySettings.from_dict(s.to_dict()) == s
    assert s.evaluate_options() == {
        "bootstrap": 0,
        "seed": 9,
        "cross_calibrate": 4,
        "lid_variant": "reference-code",
        "ties": "attacker",
        "linkability_rule": "code",
    }
    # studies saved before the setting existed load with the default
    assert StudySettings.from_dict({"bootstrap": 0}).ties == "reference"
    with pytest.raises(VoxMetricsInputError, match="ties"):
        StudySettings(ties="optimistic")


def test_lid_variant_setting_round_trips_and_reads_the_old_name(small_file):
    s = StudySettings(lid_variant="reference-code")
    assert StudySettings.from_dict(s.to_dict()) == s
    assert s.evaluate_options()["lid_variant"] == "reference-code"
    # "metrics" was the old name of the unpenalised fit: old files still load, renamed
    assert StudySettings(lid_variant="metrics").lid_variant == "maximum-likelihood"

    def old_name(m):
        m["settings"] = {"bootstrap": 10, "lid_variant": "metrics"}

    loaded = study_from_bytes(_with_manifest(small_file, old_name))
    assert loaded.settings.lid_variant == "maximum-likelihood"
    # files written before the setting existed load with the default (the authors' recipe)
    loaded = study_from_bytes(_with_manifest(small_file, lambda m: m.pop("settings", None)))
    assert loaded.settings.lid_variant == "reference-code"


def test_study_file_keeps_the_mask(tmp_path):
    from voxmetrics.data.study import Condition, Study
    from voxmetrics.data.studyfile import load_study, save_study

    sm = full_matrix()
    sparse = read_scores(listed_rows(sm, block_mask(sm)).to_csv(index=False).encode(), name="s.csv")
    save_study(Study((Condition("c", sparse),)), tmp_path / "s.vxm")
    back = load_study(tmp_path / "s.vxm").conditions[0].eval
    assert back.equals(sparse) and back.mask is not None
    complete = Study((Condition("c", sm),))
    save_study(complete, tmp_path / "c.vxm")
    assert load_study(tmp_path / "c.vxm").conditions[0].eval.mask is None


def _cond(m):
    return m["conditions"][0]


def _drop(d: dict, key: str) -> None:
    del d[key]


MANIFEST_EDITS = {
    "conditions-null": (lambda m: m.update(conditions=None), r"no list of conditions"),
    "conditions-object": (lambda m: m.update(conditions={"a": 1}), r"no list of conditions"),
    "conditions-text": (lambda m: m.update(conditions="x"), r"no list of conditions"),
    "condition-null": (
        lambda m: m["conditions"].__setitem__(0, None),
        r"conditions\[0\] must be an object, not null",
    ),
    "condition-list": (
        lambda m: m["conditions"].__setitem__(0, [1, 2]),
        r"conditions\[0\] must be an object, not a list",
    ),
    "name-null": (lambda m: _cond(m).update(name=None), r"conditions\[0\]\.name must be non-empty"),
    "name-number": (lambda m: _cond(m).update(name=5), r"conditions\[0\]\.name must be non-empty"),
    "name-empty": (lambda m: _cond(m).update(name=" "), r"name must be non-empty"),
    "name-missing": (lambda m: _drop(_cond(m), "name"), r"conditions\[0\]\.name is missing"),
    "eval-null": (lambda m: _cond(m).update(eval=None), r"conditions\[0\]\.eval is missing"),
    "eval-list": (lambda m: _cond(m).update(eval=[]), r"eval must be an object, not a list"),
    "eval-text": (lambda m: _cond(m).update(eval="arrays/0.npy"), r"eval must be an object"),
    "scores-null": (
        lambda m: _cond(m)["eval"].update(scores=None),
        r"eval\.scores must name an array member.*not null",
    ),
    "scores-number": (lambda m: _cond(m)["eval"].update(scores=3), r"not a number"),
    "scores-list": (lambda m: _cond(m)["eval"].update(scores=["arrays/0.npy"]), r"not a list"),
    "scores-climbs-out": (
        lambda m: _cond(m)["eval"].update(scores="../arrays/0.npy"),
        r"must name an array member",
    ),
    "scores-absent-member": (
        lambda m: _cond(m)["eval"].update(scores="arrays/999.npy"),
        r"refers to 'arrays/999\.npy', which is not in the archive",
    ),
    "scores-missing": (lambda m: _drop(_cond(m)["eval"], "scores"), r"eval\.scores is missing"),
    "trial-ids-dict": (lambda m: _cond(m)["eval"].update(trial_ids={}), r"not an object"),
    "attributes-dict": (
        lambda m: _cond(m)["eval"].update(attributes={"sex": "arrays/1.npy"}),
        r"attributes must be a list of \[name, member\] pairs",
    ),
    "attributes-strings": (
        lambda m: _cond(m)["eval"].update(attributes=["sex"]),
        r"attributes\[0\] must be a \[name, member\] pair",
    ),
    "attributes-triple": (
        lambda m: _cond(m)["eval"].update(attributes=[["a", "arrays/1.npy", 3]]),
        r"attributes\[0\] must be a \[name, member\] pair",
    ),
    "attributes-number-name": (
        lambda m: _cond(m)["eval"].update(attributes=[[1, "arrays/1.npy"]]),
        r"attributes\[0\] must be",
    ),
    "attributes-null-member": (
        lambda m: _cond(m)["eval"].update(attributes=[["a", None]]),
        r"attributes\[0\]\[1\] must name an array member",
    ),
    "attributes-duplicate": (
        lambda m: _cond(m)["eval"].update(
            attributes=[["a", "arrays/1.npy"], ["a", "arrays/1.npy"]]
        ),
        r"names the same column twice",
    ),
    "n-excluded-text": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials="3"),
        r"n_excluded_trials must be a whole number",
    ),
    "n-excluded-negative": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=-1),
        r"n_excluded_trials must be a whole number",
    ),
    "n-excluded-bool": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=True),
        r"n_excluded_trials",
    ),
    "n-excluded-float": (
        lambda m: _cond(m)["eval"].update(n_excluded_trials=1.5),
        r"n_excluded_trials",
    ),
    "source-number": (lambda m: _cond(m)["eval"].update(source=5), r"eval\.source must be text"),
    "unknown-field": (lambda m: _cond(m)["eval"].update(evil=1), r"unknown field\(s\) evil"),
    "attacker-number": (lambda m: _cond(m).update(attacker=5), r"attacker must be text"),
    "attacker-unknown": (lambda m: _cond(m).update(attacker="godlike"), r"attacker 'godlike'"),
    "description-list": (lambda m: _cond(m).update(description=[1]), r"description must be text"),
    "dev-text": (lambda m: _cond(m).update(dev="x"), r"dev must be an object"),
    "embeddings-text": (lambda m: _cond(m).update(embeddings="x"), r"embeddings must be an object"),
    "embeddings-no-meta": (
        lambda m: _cond(m).update(embeddings={"embeddings": "arrays/0.npy"}),
        r"embeddings\.meta must be a list",
    ),
    "settings-list": (lambda m: m.update(settings=[1]), r"settings must be an object"),
    "settings-bad-value": (
        lambda m: m.update(settings={"bootstrap": "many"}),
        r"setting 'bootstrap' is 'many'",
    ),
    "settings-unknown": (lambda m: m.update(settings={"evil": 1}), r"unknown setting"),
    "version-text": (lambda m: m.update(version="1"), r"version '1' is not supported"),
    "version-bool": (lambda m: m.update(version=True), r"version True is not supported"),
    "version-newer": (lambda m: m.update(version=99), r"Upgrade VoxMetrics"),
    "format-wrong": (lambda m: m.update(format="zip"), r"does not describe a VoxMetrics study"),
    "name-of-study-number": (lambda m: m.update(name=7), r"name must be text"),
    "manifest-array": (lambda m: [m], r"does not describe a VoxMetrics study"),
    "manifest-not-json": (lambda m: "{not json", r"not valid JSON"),
    "manifest-not-utf8": (lambda m: b"\xff\xfe{}", r"not valid JSON"),
    "deeply-nested": (lambda m: "[" * 100_000 + "]" * 100_000, r"nested too deeply"),
    "nested-past-limit": (
        lambda m: m.update(settings={"x": json.loads("[" * 40 + "]" * 40)}),
        r"nested too deeply.*max_json_depth",
    ),
    "duplicate-names": (
        lambda m: m["conditions"].append(json.loads(json.dumps(_cond(m)))),
        r"same name",
    ),
    "thousand-conditions": (
        lambda m: m.update(conditions=[_cond(m)] * 1000),
        r"1,000 conditions.*max_conditions",
    ),
    "scores-are-text": (
        lambda m: _cond(m)["eval"].update(scores=_cond(m)["eval"]["trial_ids"]),
        r"scores \(arrays/\d+\.npy\) has dtype <U\d+, expected floating-point",
    ),
    "trial-ids-are-numbers": (
        lambda m: _cond(m)["eval"].update(trial_ids=_cond(m)["eval"]["scores"]),
        r"trial ids .* expected text",
    ),
    "enrolled-mismatch": (
        lambda m: _cond(m)["eval"].update(enrol_speakers=_cond(m)["eval"]["trial_ids"]),
        r"eval|enrol|shape|length",
    ),
}


@pytest.mark.parametrize("case", list(MANIFEST_EDITS))
def test_tampered_manifest_gets_one_message(case):
    edit, match = MANIFEST_EDITS[case]
    refused(study_from_bytes, tampered_study(edit), name="t.vxm", match=r"t\.vxm.*" + match)


def test_every_schema_problem_is_listed_in_one_message():
    def edit(m):
        _cond(m)["eval"].update(scores=None, source=3)
        _cond(m).update(attacker=1)

    message = refused(study_from_bytes, tampered_study(edit), name="t.vxm", match=r"schema")
    assert message.count("must") == 3


def test_a_manifest_above_the_cap_is_refused():
    refused(
        study_from_bytes,
        tampered_study(lambda m: " " * (17 * MiB)),
        name="t.vxm",
        match=r"manifest\.json.*above the cap",
    )


def test_conditions_limit_can_be_raised():
    data = tampered_study(
        lambda m: m.update(conditions=[{**_cond(m), "name": f"c{i}"} for i in range(5)])
    )
    with use_limits(Limits(max_conditions=4)):
        refused(study_from_bytes, data, match=r"5 conditions.*max_conditions=4")
    assert len(study_from_bytes(data)) == 5


def test_valid_study_still_loads():
    study = study_from_bytes(small_study_bytes())
    assert len(study) == 5
    assert load_study(io.BytesIO(small_study_bytes())).names == study.names


def test_duplicated_member_of_a_study_file_is_refused():
    src = zipfile.ZipFile(io.BytesIO(small_study_bytes()))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(buf, "w") as zf:
            for info in src.infolist():
                zf.writestr(info.filename, src.read(info.filename))
            zf.writestr("manifest.json", src.read("manifest.json"))
    refused(study_from_bytes, buf.getvalue(), match=r"'manifest.json' appears more than once")
