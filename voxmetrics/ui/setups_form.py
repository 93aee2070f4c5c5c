"""The Data page's tab that builds the VoicePrivacy attacker set-ups from two embedding files."""

from __future__ import annotations

import streamlit as st

from voxmetrics.data.setups import SETUPS
from voxmetrics.data.study import Study
from voxmetrics.ui.computing import compute
from voxmetrics.ui.state import get_study, set_study
from voxmetrics.ui.uploads import setup_conditions_from_files

__all__ = ["attacker_setups_tab"]

_EMB_TYPES = ["npz", "npy", "parquet", "ark", "h5", "hdf5"]


def attacker_setups_tab(study: Study) -> list[str]:
    """Uploads of an original and an anonymised embedding file; adds their conditions.

    Returns the names of the conditions added (empty until the button is pressed and the
    files are good).
    """
    st.caption(
        "From the embeddings of the original utterances and of their anonymised copies (one "
        "speaker encoder, one anonymiser): **original** (unprotected), **ignorant** (original "
        "enrolment, anonymised trials), **lazy-informed** and **semi-informed** (both "
        "anonymised; semi-informed means the anonymised embeddings come from an encoder "
        "retrained on anonymised speech)."
    )
    cols = st.columns(2)
    files = {}
    for col, which in zip(cols, ("original", "anonymised"), strict=True):
        with col:
            st.markdown(f"**{which.capitalize()} utterances**")
            files[which] = (
                st.file_uploader("Embeddings", type=_EMB_TYPES, key=f"vm_setup_{which}_emb"),
                st.file_uploader("Metadata CSV", type=["csv"], key=f"vm_setup_{which}_meta"),
                st.text_input(
                    "System (optional)",
                    key=f"vm_setup_{which}_system",
                    help="Keep only the metadata rows of this `system` (needed when they mix "
                    "several).",
                ).strip(),
            )
    name_col, setups_col = st.columns(2)
    system = name_col.text_input(
        "Anonymiser's name", key="vm_setup_name", placeholder="e.g. mcadams"
    ).strip()
    setups = setups_col.multiselect(
        "Attacker set-ups", SETUPS, default=["ignorant", "lazy-informed"], key="vm_setup_which"
    )
    suffix_col, map_col = st.columns(2)
    suffix = suffix_col.text_input(
        "Strip this suffix from anonymised utterance ids (optional)",
        key="vm_setup_suffix",
        placeholder="e.g. _mcadams08",
        help="So that each anonymised utterance is paired with its original (DeID, G_VD).",
    ).strip()
    utt_map = map_col.file_uploader(
        "Or an utterance map CSV (utt_id, original)", type=["csv"], key="vm_setup_map"
    )
    if not st.button("Build the set-ups", type="primary", key="vm_setup_build"):
        return []
    (o_emb, o_meta, o_sys), (a_emb, a_meta, a_sys) = files["original"], files["anonymised"]
    if o_emb is None or a_emb is None or not system:
        st.error("Choose both embedding files and name the anonymiser first.")
        return []
    out = compute(
        setup_conditions_from_files,
        o_emb,
        o_meta,
        a_emb,
        a_meta,
        system=system,
        setups=tuple(setups),
        anonymised_system=a_sys or None,
        original_system=o_sys or None,
        strip_suffix=suffix or None,
        utt_map=utt_map,
        include_original="original" not in study.names,  # a second anonymiser reuses it
        cache=False,
    )
    if out.failed:
        return []
    taken = [c.name for c in out.value if c.name in study.names]
    if taken:
        st.error(
            f"The study already has condition(s) {', '.join(taken)}: remove or rename them "
            "first, or name the anonymiser differently."
        )
        return []
    new = get_study()
    for c in out.value:
        new = new.with_condition(c)
    set_study(new)
    return [c.name for c in out.value]
