"""The challenge's own embeddings (speaker_vectors.pt with id2idx, idx2spk, spk2gender) as each
condition's EmbeddingSet: speaker-level vectors as enrolment profiles, utterance-level vectors
as trials. Written by the tests with torch.save, in the layout of the challenge's
speaker_embeddings.py; never unpickled."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.vpc_tree import add_embeddings, write_tree, write_tree_2026
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.data.vpc_vectors import load_vector_tensor, read_speaker_vectors
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.compare import linkage_inputs

LEVEL = "exp/asv_orig/cosine_out/emb_xvect/libri_test_trials_f/utt-level"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("vec") / "t", {"mcadams": 1.0}, n_speakers=4)
    return add_embeddings(root, seed=1)


@pytest.fixture(scope="module")
def imported(tree):
    return read_vpc_tree(tree)


def test_every_condition_gets_the_challenges_embeddings(imported):
    for c in imported.study.conditions:
        es = c.embeddings
        assert es is not None, c.name
        meta = es.meta
        enrol = meta[meta["role"] == "enrol"]
        assert set(enrol["split"]) == {"dev", "eval"}
        # one speaker-level vector per enrolled speaker: the profile is that vector
        assert enrol.groupby("split")["speaker"].nunique().to_dict() == {"dev": 8, "eval": 8}
        assert (enrol["utt_id"] == enrol["speaker"]).all()
        assert set(meta["sex"]) == {"F", "M"}
    assert all("with the challenge's embeddings" in line for line in imported.found[-4:])


@pytest.mark.parametrize("name", ["original", "mcadams (lazy-informed)", "mcadams (semi-informed)"])
def test_the_embeddings_give_the_trees_scores(imported, name):
    """Cosine of the utterance vector and the speaker vector, as asv.py scores a pair."""
    c = imported.study.get(name)
    for split, sm in (("eval", c.eval), ("dev", c.dev)):
        scored = c.embeddings.score_matrix(split)
        rows = {t: k for k, t in enumerate(scored.trial_ids)}
        cols = {s: k for k, s in enumerate(scored.enrol_speakers)}
        r, k = np.nonzero(sm.mask)
        ours = scored.scores[
            [rows[t] for t in sm.trial_ids[r]], [cols[s] for s in sm.enrol_speakers[k]]
        ]
        np.testing.assert_allclose(ours, sm.scores[r, k], atol=1e-5)


def test_singling_out_and_similarity_from_the_embeddings(imported):
    original = imported.study.get("original")
    cond = imported.study.get("mcadams (semi-informed)")
    inputs = linkage_inputs(cond, original)
    assert set(inputs.estimates) >= {"singling_out", "deid", "g_vd"}, inputs.reasons
    report = evaluate_condition(cond)
    assert report.singling_out is not None


def test_a_2026_track2_tree_with_embeddings(tmp_path):
    root = add_embeddings(write_tree_2026(tmp_path / "t", track=2, n_speakers=3), seed=4)
    cond = read_vpc_tree(root).study.get("mcadams (semi-informed)")
    es = cond.embeddings
    assert es is not None and set(es.meta["language"]) == {"en", "de"}
    assert all(u.startswith(("en/", "de/")) for u in es.meta["utt_id"])
    inputs = linkage_inputs(cond, read_vpc_tree(root).study.get("original"))
    assert "singling_out" in inputs.estimates


def test_embeddings_of_another_run_are_not_attached(tree, tmp_path):
    root = tmp_path / "t"
    shutil.copytree(tree, root)
    scores = root / "exp/asv_orig/libri_test_enrolls-libri_test_trials_f/scores"
    lines = [ln.split() for ln in scores.read_text().splitlines()]
    scores.write_text("".join(f"{e} {t} {float(s) + 0.1}\n" for e, t, s in lines))
    imp = read_vpc_tree(root)
    assert imp.study.get("original").embeddings is None
    assert imp.study.get("mcadams (lazy-informed)").embeddings is not None
    assert "embeddings and the scores come from different runs" in "\n".join(imp.notes)


def test_the_folder_reader(tree):
    sv = read_speaker_vectors(tree / LEVEL)
    assert sv.level == "utt" and sv.vectors.shape == (12, 8)
    assert sv.vectors.dtype == np.float64
    assert sv.speaker_of()["2001-0002"] == "2001" and set(sv.genders) == {"F"}
    spk = read_speaker_vectors(
        tree / "exp/asv_orig/cosine_out/emb_xvect/libri_test_enrolls/spk-level"
    )
    assert spk.level == "spk" and list(spk.ids) == list(spk.speakers)


def _bad_folder(tree: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "utt-level"
    shutil.copytree(tree / LEVEL, folder)
    return folder


def test_anything_but_a_plain_tensor_is_refused(tree, tmp_path):
    folder = _bad_folder(tree, tmp_path)
    torch.save({"vectors": torch.zeros(12, 8)}, folder / "speaker_vectors.pt")
    with pytest.raises(VoxMetricsInputError, match=r"holds a dict, not a tensor"):
        read_speaker_vectors(folder)
    torch.save(np.zeros((12, 8)), folder / "speaker_vectors.pt")  # an object to unpickle
    with pytest.raises(VoxMetricsInputError, match=r"cannot be read as a tensor saved by torch"):
        read_speaker_vectors(folder)
    (folder / "speaker_vectors.pt").write_bytes(b"not a torch file")
    with pytest.raises(VoxMetricsInputError, match=r"weights_only=True"):
        read_speaker_vectors(folder)
    torch.save(torch.zeros(2, 3, 4), folder / "speaker_vectors.pt")
    with pytest.raises(VoxMetricsInputError, match=r"shape \(2, 3, 4\); speaker vectors are n x d"):
        read_speaker_vectors(folder)
    t = torch.ones(12, 8)
    t[3, 1] = float("nan")
    torch.save(t, folder / "speaker_vectors.pt")
    with pytest.raises(VoxMetricsInputError, match=r"vector 3 has NaN"):
        read_speaker_vectors(folder)


def test_index_files_must_cover_the_vectors(tree, tmp_path):
    folder = _bad_folder(tree, tmp_path)
    lines = (folder / "id2idx").read_text().splitlines()
    (folder / "id2idx").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(VoxMetricsInputError, match=r"names 11 distinct row\(s\) of the 12 vectors"):
        read_speaker_vectors(folder)
    (folder / "id2idx").write_text("\n".join([*lines[:-1], lines[-1].split()[0] + " 40"]) + "\n")
    with pytest.raises(VoxMetricsInputError, match=r"index 40 is outside the 12 vectors"):
        read_speaker_vectors(folder)
    (folder / "id2idx").unlink()
    with pytest.raises(VoxMetricsInputError, match=r"no id2idx"):
        read_speaker_vectors(folder)


def test_without_torch_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(VoxMetricsInputError, match=r"pip install 'voxmetrics\[audio\]'"):
        load_vector_tensor(b"", "x/speaker_vectors.pt")


def test_study_file_and_study_build_keep_the_embeddings(tree, imported, tmp_path, capsys):
    from voxmetrics.cli import main
    from voxmetrics.data.studyfile import load_study, study_from_bytes, study_to_bytes

    back = study_from_bytes(study_to_bytes(imported.study))
    for c in imported.study.conditions:
        es = back.get(c.name).embeddings
        np.testing.assert_array_equal(es.embeddings, c.embeddings.embeddings)
        assert es.meta.equals(c.embeddings.meta)
    out = tmp_path / "s.vxm"
    assert main(["study", "build", str(out), str(tree)]) == 0
    err = capsys.readouterr().err
    assert "dev: 24 trials x 8 enrolled, 96 listed pairs; with the challenge's embeddings" in err
    assert load_study(out).get("original").embeddings is not None


def test_utterance_ids_saved_with_wav_are_read_without(tree, tmp_path):
    folder = _bad_folder(tree, tmp_path)
    lines = (folder / "id2idx").read_text().splitlines()
    (folder / "id2idx").write_text("".join(f"{u}.wav {k}\n" for u, k in map(str.split, lines)))
    sv = read_speaker_vectors(folder)
    assert "2001-0002" in sv.speaker_of()
