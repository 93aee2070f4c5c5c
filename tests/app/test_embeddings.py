"""The Embeddings page through the app's entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import importlib.util
import io
import zipfile

import pandas as pd
import pytest
import soundfile as sf
import streamlit as st
from app_cases import open_app, open_page, text_of
from extractor_cases import voice
from metric_registry import forget_unimportable_modules
from streamlit.testing.v1 import AppTest

from voxmetrics.data.study import Study
from voxmetrics.ui.state import STUDY_KEY

PAGE = "pages/8_Embeddings.py"


@pytest.fixture(autouse=True)
def _fresh():
    st.cache_data.clear()
    st.cache_resource.clear()
    forget_unimportable_modules()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()
    forget_unimportable_modules()


def _page() -> AppTest:
    return open_page(PAGE, timeout=120)


def _study_zip() -> tuple[bytes, bytes]:
    """8 recordings (2 speakers x enrol/trial x original/B1), one of them corrupt."""
    buf, rows = io.BytesIO(), []
    with zipfile.ZipFile(buf, "w") as z:
        for k, (spk, f0) in enumerate((("a", 110.0), ("b", 210.0))):
            for role in ("enrol", "trial"):
                for system in ("original", "B1"):
                    rel = f"{system}/{spk}_{role}.wav"
                    wav = io.BytesIO()
                    shift = 1.0 if system == "original" else 1.3
                    sf.write(wav, voice(0.6, seed=k, f0=f0 * shift), 16000, format="WAV")
                    z.writestr(rel, wav.getvalue())
                    rows.append((f"{system}_{spk}_{role}", spk, role, "eval", rel, system))
        rows.append(("broken", "a", "trial", "eval", "broken.wav", "original"))
        z.writestr("broken.wav", b"this is not audio")
    cols = ["utt_id", "speaker", "role", "split", "audio_path", "system"]
    return buf.getvalue(), pd.DataFrame(rows, columns=cols).to_csv(index=False).encode()


def test_smoke_asks_for_uploads():
    at = _page()
    assert "Embeddings: from recordings to conditions" in text_of(at.title)
    assert "Upload the zip and the manifest" in text_of(at.info)
    at.button(key="vm_emb_run").click().run()
    assert "Choose the audio zip" in text_of(at.error)


def test_garbage_zip_shows_an_error():
    at = _page()
    _, manifest = _study_zip()
    at.file_uploader(key="vm_emb_zip").set_value(("x.zip", b"garbage", "application/zip"))
    at.file_uploader(key="vm_emb_manifest").set_value(("m.csv", manifest, "text/csv"))
    at.button(key="vm_emb_run").click().run()
    assert not at.exception, at.exception
    assert "not a readable zip" in text_of(at.error)


def test_bad_manifest_shows_an_error():
    at = _page()
    data, _ = _study_zip()
    at.file_uploader(key="vm_emb_zip").set_value(("a.zip", data, "application/zip"))
    at.file_uploader(key="vm_emb_manifest").set_value(("m.csv", b"utt_id\nx\n", "text/csv"))
    at.button(key="vm_emb_run").click().run()
    assert "lacks column(s)" in text_of(at.error)


@pytest.mark.skipif(importlib.util.find_spec("resemblyzer") is None, reason="no resemblyzer")
def test_extract_ge2e_lists_failures_and_adds_conditions(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXMETRICS_CACHE", str(tmp_path))
    at = _page()
    data, manifest = _study_zip()
    at.file_uploader(key="vm_emb_zip").set_value(("a.zip", data, "application/zip"))
    at.file_uploader(key="vm_emb_manifest").set_value(("m.csv", manifest, "text/csv"))
    at.selectbox(key="vm_emb_model").set_value("ge2e")
    at.selectbox(key="vm_emb_device").set_value("cpu")
    at.button(key="vm_emb_run").click().run()
    assert not at.exception, at.exception
    assert "8 recordings embedded" in text_of(at.success) and "1 left out" in text_of(at.success)
    failed = at.dataframe[0].value
    assert failed["utt_id"].tolist() == ["broken"]
    assert "not a readable audio file" in failed["reason"].iloc[0]
    names = at.dataframe[1].value["Condition"].tolist()
    assert names == [
        "ge2e: original",
        "ge2e: B1 / ignorant",
        "ge2e: B1 / lazy-informed",
    ]
    at.button(key="vm_emb_add").click().run()
    assert not at.exception, at.exception
    study = at.session_state[STUDY_KEY]
    assert set(names) <= set(study.names)
    assert study.get("ge2e: B1 / ignorant").attacker == "ignorant"


def test_loudness_normalisation_is_on_by_default_and_kept():
    at = _page()
    switch = at.toggle(key="vm_emb_loudness")
    assert switch.value is True and "-30 LUFS" in switch.label
    switch.set_value(False).run()
    assert not at.exception, at.exception
    at.switch_page("pages/1_Overview.py").run()
    at.switch_page(PAGE).run()
    assert at.toggle(key="vm_emb_loudness").value is False  # kept across a page change


@pytest.mark.skipif(importlib.util.find_spec("resemblyzer") is None, reason="no resemblyzer")
def test_the_loudness_switch_is_recorded_with_the_embeddings(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXMETRICS_CACHE", str(tmp_path))
    at = _page()
    data, manifest = _study_zip()
    at.file_uploader(key="vm_emb_zip").set_value(("a.zip", data, "application/zip"))
    at.file_uploader(key="vm_emb_manifest").set_value(("m.csv", manifest, "text/csv"))
    at.selectbox(key="vm_emb_model").set_value("ge2e")
    at.selectbox(key="vm_emb_device").set_value("cpu")
    at.toggle(key="vm_emb_loudness").set_value(False)
    at.button(key="vm_emb_run").click().run()
    assert not at.exception, at.exception
    assert "no loudness normalisation" in text_of(at.success)
    at.button(key="vm_emb_add").click().run()
    study = at.session_state[STUDY_KEY]
    es = study.get("ge2e: B1 / ignorant").embeddings
    assert "no loudness normalisation" in es.source  # saved with the study


pytestmark = pytest.mark.usefixtures("fresh_app_caches")

TIMEOUT = 240


def test_the_embeddings_page_asks_for_the_attribute_columns():
    at = open_app(timeout=TIMEOUT, before_first_run=True, study=Study())
    at.switch_page("pages/8_Embeddings.py").run()
    assert not at.exception
    intro = "\n".join(str(m.value) for m in at.markdown)
    assert "`sex`" in intro and "`age_group`" in intro and "SBLS" in intro
