"""VoicePrivacy-style uploads on the Data page (AppTest): distances, Kaldi arks, systems."""

from __future__ import annotations

import io
import json
import shutil
import zipfile

import kaldiio
import numpy as np
import pandas as pd
import pytest
from app_cases import APP, open_app
from hostile_inputs import deflate_bomb, npy_header, score_npz_of
from streamlit.testing.v1 import AppTest

from voxmetrics.data import read_scores
from voxmetrics.ui.state import STUDY_KEY

DATA = "pages/2_Data.py"
NEW = "➕ New condition"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _data_page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    at.switch_page(DATA).run()
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input(name).run()
    return at


def _kaldi_distances() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(0)
    spk = ["1272", "1462", "2035"]
    rows, key = [], []
    for s in spk:
        for k in range(2):
            tid = f"{s}-128104-{k:04d}"
            for e in spk:
                d = rng.normal(0.4 if e == s else 1.2, 0.2)  # distances: mated are smaller
                rows.append(f"{e} {tid} {d:.6f}")
                key.append(f"{e} {tid} {'target' if e == s else 'nontarget'}")
    return "\n".join(rows).encode() + b"\n", "\n".join(key).encode() + b"\n"


def test_distance_scores_are_negated_and_said():
    scores, trials = _kaldi_distances()
    at = _data_page("vpc-dist")
    at.file_uploader(key="vm_eval_file").set_value(("eval.scores", scores, "text/plain"))
    at.file_uploader(key="vm_eval_key").set_value(("trials", trials, "text/plain"))
    at.radio(key="vm_score_kind").set_value("distance").run()
    at.button(key="vm_load_scores").click().run()
    assert not at.exception and not at.error
    cond = at.session_state[STUDY_KEY].get("vpc-dist")
    assert cond.score_kind == "distance"
    expected = read_scores(scores, trials=trials, distance=True)
    assert cond.eval.equals(expected)
    assert (cond.eval.tar < 0).all()
    assert "distances negated on reading" in at.success[0].value
    assert any("distances negated on reading" in str(c.value) for c in at.caption)


def test_kaldi_ark_upload_with_a_system_and_a_subset():
    rng = np.random.default_rng(1)
    rows = [
        (f"{spk}-{role}{k}", spk, role, "eval", sys)
        for sys in ("original", "b1")
        for spk in ("a", "b", "c")
        for role in ("enrol", "trial")
        for k in range(2)
    ]
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split", "system"])
    meta.loc[meta.system == "b1", "utt_id"] = "b1-" + meta.utt_id
    # the ark holds the original system plus 3 utterances listed nowhere
    ids = [*meta.utt_id[meta.system == "original"], "x1", "x2", "x3"]
    buf = io.BytesIO()
    kaldiio.save_ark(buf, {u: rng.normal(size=8).astype(np.float32) for u in ids})
    at = _data_page("vpc-ark")
    at.file_uploader(key="vm_emb_file").set_value(("xvector.ark", buf.getvalue(), "x/ark"))
    at.file_uploader(key="vm_meta_file").set_value(
        ("meta.csv", meta.to_csv(index=False).encode(), "text/csv")
    )
    at.text_input(key="vm_emb_system").input("original").run()
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception and not at.error
    cond = at.session_state[STUDY_KEY].get("vpc-ark")
    assert len(cond.embeddings.meta) == 12 and cond.eval.shape == (6, 3)
    assert any("3 of 15 embeddings have no row in meta.csv" in w.value for w in at.warning)


def _meta_and_vectors():
    rng = np.random.default_rng(2)
    rows = [
        (f"{spk}-{role}{k}", spk, role, "eval")
        for spk in ("a", "b", "c")
        for role in ("enrol", "trial")
        for k in range(2)
    ]
    meta = pd.DataFrame(rows, columns=["utt_id", "speaker", "role", "split"])
    return meta, {u: rng.normal(size=6) for u in meta.utt_id}


def test_hdf5_upload_equals_the_npz_path():
    import h5py

    meta, vecs = _meta_and_vectors()
    h5 = io.BytesIO()
    with h5py.File(h5, "w") as f:
        f.create_dataset("embeddings", data=np.stack(list(vecs.values())))
        f.create_dataset("utt_ids", data=np.array(list(vecs), dtype=h5py.string_dtype()))
    npz = io.BytesIO()
    np.savez(npz, embeddings=np.stack(list(vecs.values())), utt_ids=np.array(list(vecs)))
    at = _data_page("vpc-h5")
    for name, data in (("x.h5", h5.getvalue()), ("x.npz", npz.getvalue())):
        if name == "x.npz":
            at.selectbox(key="vm_data_condition").select(NEW).run()
            at.text_input(key="vm_data_new_name").input("vpc-npz").run()
        at.file_uploader(key="vm_emb_file").set_value((name, data, "application/octet-stream"))
        at.file_uploader(key="vm_meta_file").set_value(
            ("meta.csv", meta.to_csv(index=False).encode(), "text/csv")
        )
        at.button(key="vm_load_embeddings").click().run()
        assert not at.exception and not at.error
    study = at.session_state[STUDY_KEY]
    assert study.get("vpc-h5").eval.scores.tolist() == study.get("vpc-npz").eval.scores.tolist()


def test_scp_upload_says_to_upload_the_ark():
    meta, _ = _meta_and_vectors()
    at = _data_page("vpc-scp")
    at.file_uploader(key="vm_emb_file").set_value(
        ("x.ark", b"a-enrol0 exp/xvector.1.ark:9\na-enrol1 exp/xvector.1.ark:40\n", "text/plain")
    )
    at.file_uploader(key="vm_meta_file").set_value(
        ("meta.csv", meta.to_csv(index=False).encode(), "text/csv")
    )
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception
    assert "upload the ark itself" in at.error[0].value
    assert "vpc-scp" not in at.session_state[STUDY_KEY].names


def test_vpc_tree_zip_adds_its_conditions(tmp_path):
    from tests.vpc_tree import write_tree, zip_tree
    from voxmetrics.data.vpc import read_vpc_tree

    root = write_tree(tmp_path / "tree", {"mcadams": 1.0})
    shutil.rmtree(root / "exp" / "asv_anon_mcadams")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(DATA).run()
    at.file_uploader(key="vm_vpc_zip").set_value(("vpc.zip", zip_tree(root), "application/zip"))
    at.button(key="vm_load_vpc").click().run()
    assert not at.exception and not at.error
    study = at.session_state[STUDY_KEY]
    expected = read_vpc_tree(root).study
    assert study.names[-3:] == expected.names
    assert study.get("mcadams (lazy-informed)").eval.equals(
        expected.get("mcadams (lazy-informed)").eval
    )
    assert study.get("mcadams (ignorant)").utility == expected.get("mcadams (ignorant)").utility
    assert "Loaded 3 conditions" in at.success[0].value
    assert "semi" in at.warning[0].value and "no scores" in at.warning[0].value


def test_vpc_tree_zip_with_a_missing_score_says_why(tmp_path):
    from tests.vpc_tree import write_tree, zip_tree

    root = write_tree(tmp_path / "tree", {"mcadams": 1.0})
    scores = root / "exp" / "asv_orig" / "libri_dev_enrolls-libri_dev_trials_f" / "scores"
    scores.write_text("\n".join(scores.read_text().splitlines()[1:]) + "\n")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(DATA).run()
    before = at.session_state[STUDY_KEY].names
    at.file_uploader(key="vm_vpc_zip").set_value(("vpc.zip", zip_tree(root), "application/zip"))
    at.button(key="vm_load_vpc").click().run()
    assert not at.exception
    assert "1 of the 27 pairs of the trial key" in at.error[0].value
    assert "vpc.zip: " in at.error[0].value
    assert at.session_state[STUDY_KEY].names == before


def _load_tree(root) -> AppTest:
    from tests.vpc_tree import zip_tree

    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(DATA).run()
    at.file_uploader(key="vm_vpc_zip").set_value(("vpc.zip", zip_tree(root), "application/zip"))
    at.button(key="vm_load_vpc").click().run()
    assert not at.exception and not at.error
    return at


def test_vpc_tree_zip_checks_the_summary_eers_as_study_build_does(tmp_path):
    from tests.vpc_tree import summaries_of_the_scores, write_tree
    from voxmetrics.analysis.vpc import check_summary_eers
    from voxmetrics.data.vpc import read_vpc_tree

    root = write_tree(tmp_path / "tree", {"mcadams": 1.0}, results=False, decimals=3)
    summaries_of_the_scores(root, "mcadams", off=1.0)
    check = check_summary_eers(read_vpc_tree(root))
    assert check.n_agree == 7 and len(check.mismatches) == 1
    at = _load_tree(root)
    assert at.info[0].value == check.agreement + "."
    shown = [w.value.replace("\\", "") for w in at.warning]  # markdown escapes
    disagree = [w for w in shown if w.startswith("The results summaries disagree")]
    assert len(disagree) == 1 and check.mismatches[0].message in disagree[0]
    summaries_of_the_scores(root, "mcadams")  # now one run: nothing disagrees
    at = _load_tree(root)
    assert "8 per-gender EER(s) of the results summaries agree with the scores" in at.info[0].value
    assert not any("disagree" in w.value for w in at.warning)


def test_vpc_2026_trees_and_exp_only_zips_load_in_one_upload(tmp_path):
    """Track 1, track 2 and an exp/-only zip (with the challenge's embeddings) each load in one
    upload; the page says what was read and lists only what is really missing."""
    from tests.vpc_tree import add_embeddings, write_tree_2026, zip_exp_only, zip_tree
    from voxmetrics.data.vpc import read_vpc_tree

    t1 = write_tree_2026(tmp_path / "t1", track=1)
    t2 = write_tree_2026(tmp_path / "t2", track=2)
    t3 = add_embeddings(write_tree_2026(tmp_path / "t3", track=1, results=False))
    for root, data, n_missing in (
        (t1, zip_tree(t1), 0),
        (t2, zip_tree(t2), 0),
        (t3, zip_exp_only(t3), 1),
    ):
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        at.switch_page(DATA).run()
        at.file_uploader(key="vm_vpc_zip").set_value(("vpc.zip", data, "application/zip"))
        at.button(key="vm_load_vpc").click().run()
        assert not at.exception and not at.error
        expected = read_vpc_tree(root).study
        study = at.session_state[STUDY_KEY]
        assert study.names[-4:] == expected.names
        for name in expected.names:
            assert study.get(name).eval.equals(expected.get(name).eval)
        assert "Loaded 4 conditions of a VoicePrivacy 2026 tree" in at.success[0].value
        missing = [w.value for w in at.warning if w.value.startswith("Missing from the tree")]
        assert len(missing) == n_missing
        if n_missing:  # the exp/-only zip: data/ is missing, and what that costs
            assert "data/: not in the tree" in missing[0].replace("\\", "")
            assert study.get("mcadams (semi-informed)").embeddings is not None
        notes = [i.value for i in at.info if i.value.startswith("Read as the challenge")]
        said = "labelled by the speaker of each trial" if n_missing else "repeat a pair listed"
        assert notes and said in notes[0].replace("\\", "")
        (read,) = [e for e in at.expander if e.label == "What was read"]
        assert "mcadams (semi-informed) test:" in read.markdown[0].value.replace("\\", "")


SCORE_FILES = {
    "npz-bomb": (lambda: deflate_bomb("scores.npy", 200), "max_ratio"),
    "npy-header-lies": (
        lambda: score_npz_of(npy_header((10**12,)), zipfile.ZIP_DEFLATED),
        "max_array_bytes",
    ),
    "sparse-csv": (
        lambda: (
            "trial_id,trial_speaker,enrol_speaker,score\n"
            + "".join(f"t{i},e{i},e{i},0.5\n" for i in range(20_000))
        ).encode(),
        "max_cells",  # a sparse list implying 20,000 x 20,000 cells
    ),
    "json-not-scores": (lambda: json.dumps({"a": 1}).encode(), "not a score file"),
    "csv-cut-at-a-line": (  # a broken file never gives a number on the page either
        lambda: (
            "trial_id,trial_speaker,enrol_speaker,score\n"
            + "".join([f"t{i},s{i % 4},s{j},0.{j}\n" for i in range(6) for j in range(4)][:-3])
        ).encode(),
        "the rows end early",
    ),
}


def _hdf5_upload(kind: str) -> bytes:
    import io

    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        if kind == "external":  # would read a file of the server
            f.create_dataset("u1", shape=(4,), dtype="f4", external=[("/etc/hostname", 0, 16)])
        else:  # 3 KB declaring 1,000,000 x 1,000 that writes nothing
            f.create_dataset("embeddings", shape=(1_000_000, 1000), dtype="i1")
            f.create_dataset("utt_ids", data=np.array([b"u0"]))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("kind", "expected"), [("external", "external files"), ("unwritten", "max_array_bytes")]
)
def test_hostile_hdf5_uploads_show_one_message(kind, expected):
    at = open_app(timeout=60)
    at.switch_page(DATA).run()
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("hostile").run()
    at.file_uploader(key="vm_emb_file").set_value(
        ("x.h5", _hdf5_upload(kind), "application/x-hdf5")
    )
    meta = b"utt_id,speaker,role,split\nu0,a,enrol,eval\nu1,a,trial,eval\n"
    at.file_uploader(key="vm_meta_file").set_value(("m.csv", meta, "text/csv"))
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception
    assert len(at.error) == 1 and expected in at.error[0].value, [e.value for e in at.error]
    assert "hostile" not in at.session_state[STUDY_KEY].names


@pytest.mark.parametrize("case", list(SCORE_FILES))
def test_hostile_score_uploads_show_one_message(case):
    build, expected = SCORE_FILES[case]
    at = open_app(timeout=60)
    at.switch_page(DATA).run()
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("hostile").run()
    at.file_uploader(key="vm_eval_file").set_value(("bad.bin", build(), "application/octet-stream"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert len(at.error) == 1 and expected in at.error[0].value, [e.value for e in at.error]
    assert "hostile" not in at.session_state[STUDY_KEY].names
