"""Dashboard side of issue #27 item 5: attacker set-ups on the Data page, DeID per row."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from app_cases import open_page
from streamlit.testing.v1 import AppTest

from voxmetrics.data.model import EmbeddingSet
from voxmetrics.data.study import Study
from voxmetrics.synth import demo_embeddings
from voxmetrics.ui.state import STUDY_KEY

DATA = "pages/2_Data.py"
SUFFIX = "_mcadams08"

pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _page(path: str, study: Study | None = None) -> AppTest:
    return open_page(path, study, timeout=120)


def _files(es: EmbeddingSet, suffix: str = "") -> tuple[bytes, bytes]:
    meta = es.meta.copy()
    meta["utt_id"] = meta["utt_id"].astype(str) + suffix
    buf = io.BytesIO()
    np.savez(buf, embeddings=es.embeddings, utt_ids=meta["utt_id"].to_numpy(dtype=str))
    return buf.getvalue(), meta.to_csv(index=False).encode()


def test_data_page_builds_the_attacker_setups_from_two_embedding_files():
    sets = demo_embeddings(n_speakers=6, n_enrol=2, n_trial=4)
    (o_emb, o_meta), (a_emb, a_meta) = _files(sets["plain"]), _files(sets["anon-mild"], SUFFIX)
    at = _page(DATA, Study(name="empty"))
    npz = "application/octet-stream"
    at.file_uploader(key="vm_setup_original_emb").set_value(("orig.npz", o_emb, npz))
    at.file_uploader(key="vm_setup_original_meta").set_value(("orig.csv", o_meta, "text/csv"))
    at.file_uploader(key="vm_setup_anonymised_emb").set_value(("anon.npz", a_emb, npz))
    at.file_uploader(key="vm_setup_anonymised_meta").set_value(("anon.csv", a_meta, "text/csv"))
    at.text_input(key="vm_setup_name").input("mcadams")
    at.text_input(key="vm_setup_suffix").input(SUFFIX)
    at.multiselect(key="vm_setup_which").set_value(["ignorant", "semi-informed"])
    at.button(key="vm_setup_build").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    study = at.session_state[STUDY_KEY]
    assert study.names == ["original", "mcadams (ignorant)", "mcadams (semi-informed)"]
    assert [study.get(n).attacker for n in study.names] == ["original", "ignorant", "semi-informed"]


def test_data_page_refuses_mixed_systems_without_a_filter():
    sets = demo_embeddings(n_speakers=4, n_enrol=2, n_trial=2)
    anon = sets["anon-mild"].meta.assign(system="mcadams")
    anon["utt_id"] = anon["utt_id"] + SUFFIX
    both = pd.concat([sets["plain"].meta.assign(system="original"), anon])
    emb = np.vstack([sets["plain"].embeddings, sets["anon-mild"].embeddings])
    buf = io.BytesIO()
    np.savez(buf, embeddings=emb, utt_ids=both["utt_id"].to_numpy(dtype=str))
    at = _page(DATA)
    at.selectbox(key="vm_data_condition").select("➕ New condition").run()
    at.text_input(key="vm_data_new_name").input("pooled").run()
    at.file_uploader(key="vm_emb_file").set_value(("e.npz", buf.getvalue(), "application/x"))
    at.file_uploader(key="vm_meta_file").set_value(
        ("m.csv", both.to_csv(index=False).encode(), "text/csv")
    )
    at.button(key="vm_load_embeddings").click().run()
    assert not at.exception
    assert len(at.error) == 1 and "mix 2 systems" in at.error[0].value
    assert 'the "System" box' in at.error[0].value
    assert "pooled" not in at.session_state[STUDY_KEY].names
