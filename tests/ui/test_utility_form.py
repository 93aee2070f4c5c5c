"""The Data page's Utility tab (AppTest): WER, UAR and rho_F0 from uploads, the same numbers
as ``study build --wer/--uar/--rho-f0``, on a condition or a system; bad uploads say why."""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace

import numpy as np
import pytest
from app_cases import APP
from streamlit.testing.v1 import AppTest

from tests.vpc_tree import write_tree
from voxmetrics.cli import main
from voxmetrics.data.studyfile import load_study
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.ui.state import STUDY_KEY
from voxmetrics.ui.utility_form import TARGET_KEY

DATA = "pages/2_Data.py"

REF = b"1000-0000 A B C D\n1001-0000 E F\n1100-0000 G H\n1101-0000 I J K\n"
HYP = b"1000-0000 A B X D\n1001-0000 E F\n1100-0000 G\n1101-0000 I J K L\n"
LABELS = b"1000-0000 ang\n1001-0000 sad\n1100-0000 sad\n1101-0000 neu\n"
PREDS = b"utt_id,label\n1000-0000,ang\n1001-0000,ang\n1100-0000,sad\n1101-0000,neu\n"

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return write_tree(tmp_path_factory.mktemp("vpc") / "tree", {"mcadams": 1.0}, results=False)


def _utility_tab(tree, bootstrap: int = 40) -> AppTest:
    """The Data page with the tree's study in the session, as ``study build --bootstrap``."""
    study = read_vpc_tree(tree).study
    study = replace(study, settings=replace(study.settings, bootstrap=bootstrap))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[STUDY_KEY] = study
    at.run()
    at.switch_page(DATA).run()
    assert not at.exception
    return at


def _upload(at: AppTest, key: str, name: str, data: bytes) -> None:
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream"))


def test_wer_and_uar_on_a_system(tree):
    at = _utility_tab(tree)
    assert at.selectbox(key=TARGET_KEY).value == "mcadams"  # systems first
    _upload(at, "vm_data_util_ref", "text", REF)
    _upload(at, "vm_data_util_hyp", "hyp", HYP)
    _upload(at, "vm_data_util_labels", "utt2emo", LABELS)
    _upload(at, "vm_data_util_preds", "pred.csv", PREDS)
    at.button(key="vm_data_util_attach").click().run()
    assert not at.exception and not at.error
    study = at.session_state[STUDY_KEY]
    for name in ("mcadams (ignorant)", "mcadams (lazy-informed)", "mcadams (semi-informed)"):
        u = study.get(name).utility
        assert u.wer == pytest.approx(3 / 11) and set(u.intervals) == {"wer", "uar"}
        assert u.source == "WER of hyp; UAR of pred.csv"
    assert study.get("original").utility is None
    success = at.success[0].value.replace("\\", "")  # markdown escapes
    assert "Utility attached" in success
    assert "mcadams (ignorant): utility from WER of hyp; UAR of pred.csv" in success


def test_the_same_numbers_and_intervals_as_the_cli(tree, tmp_path):
    at = _utility_tab(tree, bootstrap=30)
    at.selectbox(key=TARGET_KEY).set_value("mcadams (ignorant)").run()
    utt2spk = b"1000-0000 a\n1001-0000 b\n1100-0000 a\n1101-0000 c\n"
    files = {"text": REF, "hyp": HYP, "utt2emo": LABELS, "pred.csv": PREDS, "utt2spk": utt2spk}
    keys = ("ref", "hyp", "labels", "preds", "utt2spk")
    for key, (name, data) in zip(keys, files.items(), strict=True):
        _upload(at, f"vm_data_util_{key}", name, data)
        (tmp_path / name).write_bytes(data)
    at.button(key="vm_data_util_attach").click().run()
    assert not at.exception and not at.error
    ours = at.session_state[STUDY_KEY]
    out = tmp_path / "s.vxm"
    target = "mcadams (ignorant)"
    argv = ["study", "build", str(out), str(tree), "--bootstrap", "30"]
    argv += ["--wer", target, str(tmp_path / "text"), str(tmp_path / "hyp")]
    argv += ["--uar", target, str(tmp_path / "utt2emo"), str(tmp_path / "pred.csv")]
    argv += ["--utt2spk", str(tmp_path / "utt2spk")]
    assert main(argv) == 0
    theirs = load_study(out)
    assert ours.settings == theirs.settings
    assert ours.get(target).utility == theirs.get(target).utility
    assert ours.get(target).utility.intervals.keys() == {"wer", "uar"}
    assert ours.get("mcadams (lazy-informed)").utility is None


def _recordings(shifts: dict[str, float]) -> bytes:
    import soundfile as sf

    sr = 16000
    t = np.arange(sr) / sr
    contour = 140 + 30 * np.sin(2 * np.pi * 1.5 * t)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for utt, shift in shifts.items():
            wav = io.BytesIO()
            sf.write(
                wav, 0.4 * np.sin(2 * np.pi * np.cumsum(shift * contour) / sr), sr, format="WAV"
            )
            zf.writestr(f"wav/{utt}.wav", wav.getvalue())
    return buf.getvalue()


def test_rho_f0_from_two_zips(tree):
    at = _utility_tab(tree, bootstrap=0)
    at.selectbox(key=TARGET_KEY).set_value("mcadams (ignorant)").run()
    _upload(at, "vm_data_util_orig", "orig.zip", _recordings({"1000-0000": 1.0, "1001-0000": 1.0}))
    _upload(at, "vm_data_util_anon", "anon.zip", _recordings({"1000-0000": 1.4, "1001-0000": 1.2}))
    at.button(key="vm_data_util_attach").click().run()
    assert not at.exception and not at.error
    u = at.session_state[STUDY_KEY].get("mcadams (ignorant)").utility
    assert u.rho_f0 > 0.9 and u.wer is None and u.intervals == {}
    assert u.source == "rho_F0 of anon.zip"


def test_bad_uploads_say_why_and_change_nothing(tree):
    at = _utility_tab(tree)
    before = at.session_state[STUDY_KEY]
    at.button(key="vm_data_util_attach").click().run()
    assert "Choose the files of at least one utility number" in at.error[0].value
    _upload(at, "vm_data_util_ref", "text", REF)
    at.button(key="vm_data_util_attach").click().run()
    assert not at.exception
    assert (
        "The WER needs the reference transcripts and the ASR hypotheses: only the reference "
        "transcripts are chosen" in at.error[0].value
    )
    _upload(at, "vm_data_util_hyp", "hyp.txt", b"1000-0000 A B\n")
    at.button(key="vm_data_util_attach").click().run()
    assert "hyp.txt: 3 utterance(s) of the reference text have no output" in at.error[0].value
    _upload(at, "vm_data_util_hyp", "hyp.txt", HYP)
    _upload(at, "vm_data_util_orig", "orig.zip", b"not a zip")
    _upload(at, "vm_data_util_anon", "anon.zip", b"not a zip")
    at.button(key="vm_data_util_attach").click().run()
    assert not at.exception
    assert "orig.zip: not a readable zip archive" in at.error[0].value
    assert at.session_state[STUDY_KEY] is before
    assert not at.success
