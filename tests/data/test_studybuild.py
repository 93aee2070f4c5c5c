"""voxmetrics.data.studybuild: a study from a folder layout or a manifest CSV, and its sources."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmetrics.data.studybuild import build_study, source_files
from voxmetrics.errors import VoxMetricsInputError

SPEAKERS = {"eval": ["a", "b", "c"], "dev": ["d", "e", "f"]}


def _scores(path: Path, split: str = "eval", *, sign: float = 1.0) -> Path:
    """A long scores CSV: every trial of each speaker against every enrolled one (3 x 3)."""
    spk = SPEAKERS[split]
    rows = [
        (f"{t}-1", t, e, sign * (0.9 if t == e else 0.1 * (i + j)))
        for i, t in enumerate(spk)
        for j, e in enumerate(spk)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=["trial_id", "trial_speaker", "enrol_speaker", "score"]).to_csv(
        path, index=False
    )
    return path


def _embeddings(folder: Path, *, systems: tuple[str, ...] = ()) -> None:
    """embeddings.npz + metadata.csv: one enrolment and one trial utterance per eval speaker."""
    folder.mkdir(parents=True, exist_ok=True)
    ids, meta = [], []
    for k, s in enumerate(SPEAKERS["eval"]):
        for role in ("enrol", "trial"):
            ids.append(f"{s}-{role}")
            row = {"utt_id": ids[-1], "speaker": s, "role": role, "split": "eval"}
            if systems:
                row["system"] = systems[k % len(systems)]
            meta.append(row)
    vectors = np.repeat(np.eye(3), 2, axis=0) + 0.05
    np.savez(folder / "embeddings.npz", embeddings=vectors, utt_ids=np.array(ids))
    pd.DataFrame(meta).to_csv(folder / "metadata.csv", index=False)


def test_folder_layout(tmp_path):
    root = tmp_path / "challenge"
    _scores(root / "b1" / "semi-informed" / "eval.csv")
    _scores(root / "b1" / "semi-informed" / "dev.csv", "dev")
    _scores(root / "b2" / "ignorant" / "eval.csv")
    _scores(root / "b2" / "lazy-informed" / "eval.csv")
    (root / "b2" / "lazy-informed" / "notes.md").write_text("not a score file")
    (root / ".hidden").mkdir()
    study = build_study(root)
    assert study.name == "challenge"
    assert study.names == ["b1", "b2 (ignorant)", "b2 (lazy-informed)"]
    b1 = study.get("b1")
    assert b1.attacker == "semi-informed" and b1.score_kind == "similarity"
    assert b1.eval.shape == (3, 3) and b1.eval.tar.tolist() == [0.9, 0.9, 0.9]
    assert b1.dev is not None and sorted(b1.dev.enrol_speakers.tolist()) == ["d", "e", "f"]
    assert study.get("b2 (ignorant)").dev is None and b1.recipe is None  # imported scores
    assert [(f.role, Path(f.path).name) for f in study.inputs][:1] == [("study source", "dev.csv")]
    assert {Path(f.path).name for f in study.inputs} == {"dev.csv", "eval.csv", "notes.md"}
    assert build_study(root, name="mine").name == "mine"


def test_distances_are_negated(tmp_path):
    root = tmp_path / "r"
    _scores(root / "b1" / "ignorant" / "eval.csv", sign=-1.0)
    cond = build_study(root, distance=True).get("b1")
    assert cond.score_kind == "distance" and cond.eval.tar.tolist() == [0.9, 0.9, 0.9]


def test_embeddings_without_scores_are_scored_by_cosine(tmp_path):
    folder = tmp_path / "r" / "sys" / "semi-informed"
    _embeddings(folder)
    cond = build_study(tmp_path / "r").get("sys")
    assert cond.embeddings is not None and cond.eval.shape == (3, 3)
    assert cond.recipe is not None and cond.recipe.label == "cosine"
    # cosine of (1.05, .05, .05) with itself is 1 and with (.05, 1.05, .05) is 0.1075 / 1.1075
    np.testing.assert_allclose(cond.eval.tar, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(cond.eval.non, 0.1075 / 1.1075)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda r: (r / "b1").mkdir(parents=True), r"b1: no attacker folder; expected b1/"),
        (
            lambda r: _scores(r / "b1" / "informed-ish" / "eval.csv"),
            r"'informed-ish' is not an attacker; name the folder one of",
        ),
        (
            lambda r: (r / "b1" / "ignorant").mkdir(parents=True),
            r"ignorant: no eval.<ext> scores and no embeddings.<ext>; each",
        ),
        (
            lambda r: [_scores(r / "b1" / "ignorant" / n) for n in ("eval.csv", "eval.parquet")],
            r"several 'eval' files \(eval.csv, eval.parquet\); keep one",
        ),
        (
            lambda r: [
                _scores(r / "b1" / "ignorant" / "eval.csv"),
                (r / "b1" / "ignorant" / "eval.trials").write_text(""),
                (r / "b1" / "ignorant" / "eval.key").write_text(""),
            ],
            r"several eval key files \(eval.key, eval.trials\); keep one",
        ),
        (lambda r: r.mkdir(), r": no <system>/<attacker>/ folders; expected e.g."),
    ],
)
def test_folder_layout_errors(tmp_path, make, message):
    root = tmp_path / "r"
    make(root)
    with pytest.raises(VoxMetricsInputError, match=message):
        build_study(root)


def test_manifest(tmp_path):
    _scores(tmp_path / "s" / "b1.csv")
    _scores(tmp_path / "s" / "b1_dev.csv", "dev")
    _scores(tmp_path / "s" / "llr.csv")
    _embeddings(tmp_path / "emb", systems=("B1",))
    manifest = tmp_path / "m.csv"
    manifest.write_text(
        "condition,attacker,eval,dev,score_kind,embeddings,metadata,system\n"
        "b1 ,ignorant,s/b1.csv,s/b1_dev.csv,,,,\n"
        f"cal,,{tmp_path / 's' / 'llr.csv'},,llr,,,\n"
        "emb,lazy-informed,,,,emb/embeddings.npz,emb/metadata.csv,B1\n"
    )
    study = build_study(manifest)
    assert study.name == "m" and study.names == ["b1", "cal", "emb"]
    assert study.get("b1").attacker == "ignorant" and study.get("b1").dev is not None
    assert study.get("cal").attacker == "semi-informed" and study.get("cal").score_kind == "llr"
    assert study.get("emb").embeddings is not None and study.get("emb").eval.shape == (3, 3)
    roles = [(Path(f.path).name, f.role) for f in study.inputs]
    assert roles[0] == ("m.csv", "study manifest")
    assert ("b1_dev.csv", "b1: dev") in roles and ("metadata.csv", "emb: metadata") in roles
    assert [(p.name, r) for p, r in source_files(manifest)] == [
        ("m.csv", "study manifest"),
        ("b1.csv", "b1: eval"),
        ("b1_dev.csv", "b1: dev"),
        ("llr.csv", "cal: eval"),
        ("embeddings.npz", "emb: embeddings"),
        ("metadata.csv", "emb: metadata"),
    ]
    assert source_files(tmp_path / "s") == [(tmp_path / "s", "study source")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "condition,eval\nx,s.csv\n",
            r"^m\.csv: the manifest lacks column\(s\) attacker; it needs",
        ),
        (
            "condition,attacker,eval,colour\nx,,s.csv,red\n",
            r"^m\.csv: unknown column\(s\) colour; the columns are condition, attacker, eval",
        ),
        (
            "condition,attacker,eval\nx,,gone.csv\n",
            r"^m\.csv: line 2: eval file 'gone\.csv' does not exist \(paths are relative",
        ),
        (
            "condition,attacker,eval\n,,s.csv\n",
            r"^m\.csv: line 2: give a condition name and an eval scores file",
        ),
        (
            "condition,attacker,eval\nx,,s.csv\nx,,s.csv\n",
            r"^m\.csv: two conditions are called 'x'; names must be unique\.$",
        ),
        (
            "condition,attacker,eval,score_kind\nx,,s.csv,logit\n",
            r"^condition 'x': score_kind 'logit' is unknown; use one of",
        ),
        (
            "condition,attacker,eval,embeddings\nx,,,emb/embeddings.npz\n",
            r"^condition 'x': embeddings embeddings\.npz need a metadata file",
        ),
        (
            "condition,attacker,eval,embeddings,metadata,score_kind,system\n"
            "x,,,emb/embeddings.npz,emb/metadata.csv,distance,B1\n",
            r"^condition 'x': embeddings are scored by cosine similarity; score_kind 'distance'",
        ),
        (
            "condition,attacker,eval,embeddings,metadata\n"
            "x,,,emb/embeddings.npz,emb/metadata.csv\n",
            r"^condition 'x': embeddings\.npz: the metadata mix 2 systems .* the manifest's system",
        ),
        (
            "condition,attacker,eval\nx,,bad.csv\n",
            r"^condition 'x': bad\.csv: ",
        ),
    ],
)
@pytest.mark.filterwarnings("ignore::voxmetrics.errors.IgnoredEmbeddingsWarning")  # B1 rows only
def test_manifest_errors(tmp_path, text, message):
    _scores(tmp_path / "s.csv")
    (tmp_path / "bad.csv").write_text("trial_id,trial_speaker,enrol_speaker,score\nt,a,a,x\n")
    _embeddings(tmp_path / "emb", systems=("B1", "original"))
    manifest = tmp_path / "m.csv"
    manifest.write_text(text)
    with pytest.raises(VoxMetricsInputError, match=message):
        build_study(manifest)


def test_no_such_source(tmp_path):
    with pytest.raises(VoxMetricsInputError, match=r"nowhere: no such folder or manifest file\.$"):
        build_study(tmp_path / "nowhere")
