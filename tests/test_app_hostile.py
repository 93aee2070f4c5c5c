"""The dashboard never shows a traceback (AppTest): hostile uploads and errors on every page."""

from __future__ import annotations

import json
import re
import zipfile

import numpy as np
import pytest
from hostile_inputs import compressed_bomb, deflate_bomb, npy_header, tampered_study, zip_of
from streamlit.testing.v1 import AppTest

from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.ui.errors import APOLOGY
from voxmetrics.ui.setup import MENU
from voxmetrics.ui.state import STUDY_KEY

APP = "../app.py"  # resolved relative to this file
DATA = "pages/2_Data.py"
NEW = "➕ New condition"


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


class _Broken:
    """A study whose every use raises ``error`` (stands in for any failure inside a page)."""

    def __init__(self, error: BaseException) -> None:
        object.__setattr__(self, "_error", error)

    def __getattr__(self, name):
        raise object.__getattribute__(self, "_error")

    def __len__(self):
        raise object.__getattribute__(self, "_error")

    def __iter__(self):
        raise object.__getattribute__(self, "_error")


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page", [m.path for m in MENU])
def test_an_unexpected_error_shows_an_apology_with_details_not_a_traceback(page):
    at = _app()
    at.session_state[STUDY_KEY] = _Broken(RuntimeError("internal detail 42"))
    (at.switch_page(page) if page != "app.py" else at).run()
    assert not at.exception
    assert [e.value for e in at.error] == [APOLOGY]
    assert [x.label for x in at.expander] == ["Details"]
    details = at.expander[0].code[0].value
    assert "Error reference" in details and "RuntimeError" in details
    assert "internal detail 42" not in details and "Traceback" not in details  # server log only


@pytest.mark.parametrize("page", [m.path for m in MENU])
def test_a_library_input_error_shows_its_message(page):
    at = _app()
    at.session_state[STUDY_KEY] = _Broken(VoxMetricsInputError("x.csv: line 3 is wrong; fix it."))
    (at.switch_page(page) if page != "app.py" else at).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["x.csv: line 3 is wrong; fix it."]
    assert not at.expander


def test_out_of_memory_is_explained():
    at = _app()
    at.session_state[STUDY_KEY] = _Broken(MemoryError())
    at.run()
    assert not at.exception
    assert "more memory than the server has" in at.error[0].value


def _nested(m):
    return "[" * 100_000 + "]" * 100_000


def _null_scores(m):
    m["conditions"][0]["eval"]["scores"] = None


def _bad_attributes(m):
    m["conditions"][0]["eval"]["attributes"] = {"sex": 1}


STUDY_FILES = {
    "deeply-nested": (lambda: tampered_study(_nested), "nested too deeply"),
    "null-scores": (lambda: tampered_study(_null_scores), "must name an array member"),
    "bad-attributes": (lambda: tampered_study(_bad_attributes), "attributes must be a list"),
    "bzip2-bomb": (lambda: compressed_bomb("manifest.json", zipfile.ZIP_BZIP2), "above the cap"),
    "bzip2-array-bomb": (
        lambda: compressed_bomb("arrays/0.npy", zipfile.ZIP_BZIP2, extra={"manifest.json": "{}"}),
        "max_ratio",
    ),
    "deflate-bomb": (lambda: deflate_bomb("manifest.json", 300), "above the cap"),
}


@pytest.mark.parametrize("case", list(STUDY_FILES))
def test_hostile_study_files_show_one_message_in_the_sidebar(case):
    build, expected = STUDY_FILES[case]
    at = _app()
    names = at.session_state[STUDY_KEY].names
    at.file_uploader(key="vm_study_file").set_value(("bad.vxm", build(), "application/zip"))
    at.button(key="vm_load_study").click().run()
    assert not at.exception
    messages = [e.value for e in at.sidebar.error]
    assert len(messages) == 1 and "bad.vxm" in messages[0] and expected in messages[0], messages
    assert at.session_state[STUDY_KEY].names == names


def _score_npz_with(scores: bytes) -> bytes:
    def arr(values):
        import io

        buf = io.BytesIO()
        np.save(buf, np.array(values))
        return buf.getvalue()

    return zip_of(
        {
            "scores.npy": scores,
            "trial_ids.npy": arr(["t1", "t2"]),
            "trial_speakers.npy": arr(["a", "b"]),
            "enrol_speakers.npy": arr(["a", "b"]),
        }
    )


SCORE_FILES = {
    "npz-bomb": (lambda: deflate_bomb("scores.npy", 200), "max_ratio"),
    "npy-header-lies": (lambda: _score_npz_with(npy_header((10**12,))), "max_array_bytes"),
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
    at = _app()
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
    at = _app()
    at.switch_page(DATA).run()
    at.selectbox(key="vm_data_condition").select(NEW).run()
    at.text_input(key="vm_data_new_name").input("hostile").run()
    at.file_uploader(key="vm_eval_file").set_value(("bad.bin", build(), "application/octet-stream"))
    at.button(key="vm_load_scores").click().run()
    assert not at.exception
    assert len(at.error) == 1 and expected in at.error[0].value, [e.value for e in at.error]
    assert "hostile" not in at.session_state[STUDY_KEY].names


def _scaled_study(scale: float):
    from voxmetrics.data.model import ScoreMatrix
    from voxmetrics.data.study import Condition, Study
    from voxmetrics.synth import demo_study

    base = demo_study(n_speakers=10)

    def scaled(sm):
        if sm is None:
            return None
        return ScoreMatrix.from_arrays(
            sm.scores * scale,
            trial_ids=sm.trial_ids,
            trial_speakers=sm.trial_speakers,
            enrol_speakers=sm.enrol_speakers,
            attributes=sm.attributes,
        )

    conditions = tuple(
        Condition(c.name, eval=scaled(c.eval), dev=scaled(c.dev), attacker=c.attacker)
        for c in base.conditions
    )
    return Study(conditions, name="extreme", settings=base.settings)


@pytest.mark.parametrize(
    "page", ["pages/1_Overview.py", "pages/3_LID.py", "pages/4_SRD.py", "pages/5_ZEBRA.py"]
)
def test_scores_around_1e300_give_the_same_pages_as_ordinary_scores(page):
    seen = []
    for scale in (1.0, 1e300):
        at = _app()
        at.session_state[STUDY_KEY] = _scaled_study(scale)
        at.switch_page(page).run()
        assert not at.exception and not at.error
        # the same warnings; numbers of a fit that diverges by design (perfect separation)
        # may differ in their last digits, so they are masked
        seen.append(sorted(re.sub(r"[-+]?\d[\d.e+-]*", "#", w.value) for w in at.warning))
    assert seen[0] == seen[1]
