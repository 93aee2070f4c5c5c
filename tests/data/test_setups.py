"""VoicePrivacy attacker set-ups from existing embeddings (issue #27, item 5).

Real-shaped data: the embeddings of original utterances and of their anonymised copies, written
as an NPZ + metadata CSV each (as a speaker encoder's output is), the anonymised ids carrying
the anonymiser's suffix (``..._mcadams08``), and one metadata file mixing both systems.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from voxmetrics.analysis.linkage import utterance_overlap
from voxmetrics.cli import main
from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.readers import read_embeddings
from voxmetrics.data.setups import attacker_setups, map_utterance_ids, one_system
from voxmetrics.data.studybuild import build_study
from voxmetrics.data.studyfile import load_study
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.synth import demo_embeddings

SUFFIX = "_mcadams08"


@pytest.fixture(scope="module")
def sets():
    s = demo_embeddings(n_speakers=6, n_enrol=2, n_trial=4)
    return s["plain"], s["anon-mild"]


def _write(es: EmbeddingSet, folder, stem: str, *, suffix: str = "", system: str | None = None):
    meta = es.meta.copy()
    meta["utt_id"] = meta["utt_id"].astype(str) + suffix
    if system is not None:
        meta["system"] = system
    ids = meta["utt_id"].to_numpy().astype(str)
    np.savez(folder / f"{stem}.npz", embeddings=es.embeddings, utt_ids=ids)
    meta.to_csv(folder / f"{stem}.csv", index=False)
    return folder / f"{stem}.npz", folder / f"{stem}.csv"


@pytest.fixture(scope="module")
def files(sets, tmp_path_factory):
    folder = tmp_path_factory.mktemp("setups")
    original, anonymised = sets
    o = _write(original, folder, "original", system="original")
    a = _write(anonymised, folder, "anon", suffix=SUFFIX, system="mcadams")
    # one metadata file for both systems, as VoicePrivacy trees often have
    both = pd.concat([pd.read_csv(o[1], dtype=str), pd.read_csv(a[1], dtype=str)])
    both.to_csv(folder / "all.csv", index=False)
    emb = np.vstack([original.embeddings, anonymised.embeddings])
    ids = both["utt_id"].to_numpy().astype(str)
    np.savez(folder / "all.npz", embeddings=emb, utt_ids=ids)
    return {"original": o, "anon": a, "all": (folder / "all.npz", folder / "all.csv")}


def _read(pair, system=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_embeddings(pair[0], metadata=pair[1], system=system)


def test_the_three_setups_take_the_right_rows(files):
    original, anonymised = _read(files["original"]), _read(files["anon"])
    conds = attacker_setups(
        original,
        anonymised,
        system="mcadams",
        setups=("ignorant", "lazy-informed", "semi-informed"),
        strip_suffix=SUFFIX,
    )
    by = {c.name: c for c in conds}
    assert [(c.name, c.attacker) for c in conds] == [
        ("original", "original"),
        ("mcadams (ignorant)", "ignorant"),
        ("mcadams (lazy-informed)", "lazy-informed"),
        ("mcadams (semi-informed)", "semi-informed"),
    ]
    ign = by["mcadams (ignorant)"].embeddings
    enrol = (ign.meta["role"] == "enrol").to_numpy()
    # ignorant: the original's enrolment embeddings, the anonymised trials
    o_enrol = original.embeddings[(original.meta["role"] == "enrol").to_numpy()]
    a_trial = anonymised.embeddings[(anonymised.meta["role"] == "trial").to_numpy()]
    np.testing.assert_array_equal(ign.embeddings[enrol], o_enrol)
    np.testing.assert_array_equal(ign.embeddings[~enrol], a_trial)
    # lazy-informed: every row anonymised (enrolment first, then trials)
    lazy = by["mcadams (lazy-informed)"].embeddings
    a_enrol = anonymised.embeddings[(anonymised.meta["role"] == "enrol").to_numpy()]
    np.testing.assert_array_equal(lazy.embeddings, np.vstack([a_enrol, a_trial]))
    # every condition is scored, with a dev matrix for LID
    for c in conds:
        assert c.eval.n_trials > 0 and c.dev is not None and c.embeddings is not None
    # the anonymised ids now name their originals: every utterance is paired with its own
    assert not ign.meta["utt_id"].str.endswith(SUFFIX).any()
    overlap = utterance_overlap(by["original"].embeddings, ign, split="eval")
    assert overlap.shared == overlap.anonymised > 0  # every anonymised id names its original


def test_without_the_mapping_no_anonymised_id_matches_its_original(files):
    anonymised = _read(files["anon"])
    assert anonymised.meta["utt_id"].str.endswith(SUFFIX).all()
    mapped = map_utterance_ids(anonymised, mapping={f"x{SUFFIX}": "x"}, strip_suffix=SUFFIX)
    assert set(mapped.meta["utt_id"]) == {u[: -len(SUFFIX)] for u in anonymised.meta["utt_id"]}
    with pytest.raises(VoxMetricsInputError, match="no utterance id ends with '_other'"):
        map_utterance_ids(anonymised, strip_suffix="_other")


def test_mixed_systems_are_refused_with_the_systems_and_how_to_pick(files):
    mixed = _read(files["all"])
    with pytest.raises(VoxMetricsInputError) as exc:
        one_system(mixed, where="all.csv", how="--system")
    msg = str(exc.value)
    assert "mcadams: 72 rows" in msg and "original: 72 rows" in msg and "--system" in msg


def test_study_build_refuses_pooling_several_systems_into_one_condition(files, tmp_path):
    npz, csv = files["all"]
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"condition,attacker,eval,embeddings,metadata\nx,ignorant,,{npz},{csv}\n")
    with pytest.raises(VoxMetricsInputError, match=r"mix 2 systems.*manifest's system column"):
        build_study(manifest)
    # the filter picks one
    manifest.write_text(
        f"condition,attacker,eval,embeddings,metadata,system\nx,ignorant,,{npz},{csv},mcadams\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert build_study(manifest).get("x").eval.n_trials == 24


def test_study_build_makes_the_setups_from_two_embedding_files(files, tmp_path, capsys):
    out = tmp_path / "s.vxm"
    (o_npz, o_csv), (a_npz, a_csv) = files["original"], files["anon"]
    argv = ["study", "build", str(out), "--original", str(o_npz), str(o_csv)]
    argv += ["--anonymised", str(a_npz), str(a_csv), "--system", "mcadams"]
    argv += ["--strip-suffix", SUFFIX, "--setups", "ignorant", "lazy-informed", "semi-informed"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "mcadams (ignorant): eval" in err and "(ignorant) (ignorant)" not in err
    study = load_study(out)
    assert study.names == [
        "original",
        "mcadams (ignorant)",
        "mcadams (lazy-informed)",
        "mcadams (semi-informed)",
    ]
    assert study.get("mcadams (ignorant)").attacker == "ignorant"


def test_study_build_names_the_systems_of_mixed_metadata(files, tmp_path, capsys):
    npz, csv = files["all"]
    argv = ["study", "build", str(tmp_path / "s.vxm"), "--original", str(npz), str(csv)]
    argv += ["--anonymised", str(npz), str(csv), "--system", "mcadams"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "mcadams: 72 rows" in err and "--original-system" in err
    argv += ["--original-system", "original", "--strip-suffix", SUFFIX]
    assert main(argv) == 0


def test_study_build_folder_layout_does_not_repeat_the_attacker(tmp_path, capsys):
    for att in ("ignorant", "lazy-informed"):
        folder = tmp_path / "src" / "b1" / att
        folder.mkdir(parents=True)
        s = np.array([[0.9, 0.1], [0.2, 0.8]])
        np.savez(
            folder / "eval.npz",
            scores=s,
            trial_ids=np.array(["t1", "t2"]),
            trial_speakers=np.array(["a", "b"]),
            enrol_speakers=np.array(["a", "b"]),
        )
    assert main(["study", "build", str(tmp_path / "s.vxm"), str(tmp_path / "src")]) == 0
    err = capsys.readouterr().err
    assert "b1 (ignorant): eval 2 x 2" in err and "(ignorant) (ignorant)" not in err
