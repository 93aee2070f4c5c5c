"""Embeddings: extract speaker embeddings from a zip of recordings and turn them into conditions."""

import tempfile

import streamlit as st

from voxmetrics import ui
from voxmetrics.embeddings import (
    DEFAULT_LOUDNESS,
    conditions_frame,
    conditions_from_embeddings,
    extract_embeddings,
    extract_zip,
    load_extractor,
    read_manifest,
    study_conditions,
)

RESULT = "vm_emb_result"


def with_conditions(study, conditions, model: str):
    """``study`` with the extracted conditions added (named ``"<model>: <name>"``)."""
    for c in study_conditions(conditions, model):
        study = study.with_condition(c)
    return study


study = ui.page_setup("Embeddings")
# key -> (model, label): the built-in encoders and the folders the operator listed at start
# (`voxmetrics app --model-dir NAME=FOLDER`); the browser picks a key, never a location
ENCODERS = ui.speaker_encoders()
st.title("Embeddings: from recordings to conditions")
st.markdown(
    "Upload a **zip of recordings** (wav, flac, ogg or mp3) and a **manifest CSV** with columns "
    "`utt_id, speaker, role, split, audio_path` (relative to the zip root) and `system` "
    "(`original` for unprocessed audio, else the anonymiser's name). Add the speaker's **`sex`** "
    "and **`age_group`** columns (any other label column too) and every condition made here "
    "gets its soft-biometric leakage score (SBLS, Soft biometrics page and report card); "
    "without them it has none. Each recording is embedded "
    "by a speaker encoder (the attacker); files that cannot be used are listed with the reason "
    "and the rest proceed. The original audio gives the **original** condition (no "
    "anonymisation: the baseline, with the attacker knowledge called *original* on the Data "
    "page), and each anonymiser an **ignorant** condition (enrolment on original audio, trials "
    "anonymised) and a **lazy-informed** one (both anonymised)."
)

zip_col, man_col = st.columns(2)
zip_file = zip_col.file_uploader("Audio zip", type=["zip"], key="vm_emb_zip")
manifest_file = man_col.file_uploader("Manifest CSV", type=["csv"], key="vm_emb_manifest")
model_col, dev_col, batch_col = st.columns([3, 1, 1])
choice = model_col.selectbox(
    "Speaker encoder",
    list(ENCODERS),
    format_func=lambda key: ENCODERS[key][1],
    key="vm_emb_model",
    help="The encoders this server offers; more are listed by whoever starts it "
    "(voxmetrics app --model-dir NAME=FOLDER).",
)
model = ENCODERS[choice][0] if choice in ENCODERS else ""
device = dev_col.selectbox("Device", ["auto", "cpu", "cuda"], key="vm_emb_device")
batch_size = batch_col.number_input("Batch size", 1, 128, 16, key="vm_emb_batch")
loudness_norm = ui.kept_switch(
    f"Loudness normalisation ({DEFAULT_LOUDNESS:g} LUFS)",
    "vm_emb_loudness",
    default=True,
    help=f"Bring every recording to an integrated loudness of {DEFAULT_LOUDNESS:g} LUFS "
    "(ITU-R BS.1770-4) before embedding, as the VoicePrivacy 2024 evaluation does before its "
    "speaker encoders. The embeddings' source (saved with the study) records which. Off: the "
    "audio is embedded as decoded (extract --no-loudness-norm).",
)

if st.button("Extract embeddings", type="primary", key="vm_emb_run", icon=":material/graphic_eq:"):
    if zip_file is None or manifest_file is None or not model:
        st.error("Choose the audio zip, the manifest CSV and a model first.")
    else:
        manifest = ui.compute(
            read_manifest, manifest_file.getvalue(), name=manifest_file.name, cache=False
        )
        extractor = None
        if not manifest.failed:  # loaded once per (model, device) and server
            loading = "Loading the model…"
            extractor = ui.compute(load_extractor, model, device=device, spinner=loading)
        if extractor is not None and not extractor.failed:
            with tempfile.TemporaryDirectory(prefix="voxmetrics-audio-") as tmp:
                unzipped = ui.compute(
                    extract_zip, zip_file.getvalue(), tmp, name=zip_file.name, cache=False
                )
                extracted = None
                if not unzipped.failed:
                    extracted = ui.compute(
                        extract_embeddings,
                        manifest.value,
                        audio_root=tmp,
                        extractor=extractor.value,
                        batch_size=int(batch_size),
                        loudness=DEFAULT_LOUDNESS if loudness_norm else None,
                        cache=False,
                        bar="Embedding the recordings",
                    )
                if extracted is not None and not extracted.failed:
                    st.session_state[RESULT] = extracted.value

result = st.session_state.get(RESULT)
if result is None:
    st.info("Upload the zip and the manifest, then extract.", icon=":material/info:")
    st.stop()

summary = result.to_dict()
level = summary.get("loudness_lufs")
st.success(
    f"{summary['model']}: {summary['n_embedded']} recordings embedded "
    f"({summary['n_cached']} from the cache), {summary['n_failed']} left out, "
    f"{summary['seconds']:.1f} s; "
    + ("no loudness normalisation." if level is None else f"loudness brought to {level:g} LUFS.")
)
if not result.failures.empty:
    st.subheader("Files left out")
    ui.show_table(result.failures, "failed_files.csv")
if result.embeddings is None:
    st.stop()

es = result.embeddings
conditions = ui.compute(conditions_from_embeddings, es, cache=False).value
if conditions is None:
    st.stop()
st.subheader("Conditions")
ui.show_table(conditions_frame(conditions, result.model), "conditions.csv")
if st.button("Add these conditions to the study", key="vm_emb_add", icon=":material/add:"):
    # the whole study, whatever subset the pages show
    added = ui.compute(with_conditions, ui.get_study(), conditions, result.model, cache=False)
    if not added.failed:
        ui.set_study(added.value)
        ui.notify("success", f"Added {len(conditions)} conditions to the study.")
        st.rerun()
