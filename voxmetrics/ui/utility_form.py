"""The Data page's tab that computes a condition's utility (WER, UAR, rho_F0) from uploads.

The dashboard's side of ``study build --wer / --uar / --rho-f0``: the same library calls
(:mod:`voxmetrics.analysis.utility`, through
:func:`~voxmetrics.ui.uploads.study_with_utility_files`), the same targets (a condition, or a
system for all its conditions) and the same bootstrap intervals (the study's replicates and
seed). It draws widgets; it computes nothing itself.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from voxmetrics.analysis.utility import AttachedUtility, target_conditions, utility_targets
from voxmetrics.data.study import Study
from voxmetrics.ui.computing import compute
from voxmetrics.ui.state import get_study, set_study
from voxmetrics.ui.uploads import study_with_utility_files

__all__ = ["TARGET_KEY", "utility_tab"]

TARGET_KEY = "vm_data_util_target"
"""Session-state key of the chosen target (a condition or a system)."""
_AUDIO_HELP = (
    "A zip of audio files (wav, flac, ogg, mp3), one per utterance, named after its utterance "
    "id (e.g. 1272-128104-0000.wav), in any folder of the archive; decoded at 16 kHz."
)


def _target_label(study: Study, target: str) -> str:
    """A target as the picker shows it: a system with how many conditions it stands for."""
    if target in study.names:
        return target
    return f"{target} (system: all {len(target_conditions(study, target))} conditions)"


def _uploads() -> dict[str, Any]:
    """The file pickers of the three utility numbers and of utt2spk."""
    wer_col, uar_col, rho_col = st.columns(3)
    files: dict[str, Any] = {}
    with wer_col:
        st.markdown("**WER** (speech recognition)")
        files["reference"] = st.file_uploader(
            "Reference transcripts",
            key="vm_data_util_ref",
            help="A Kaldi `text` file (utt_id word word ...) or a CSV with the columns utt_id "
            "and text.",
        )
        files["hypotheses"] = st.file_uploader(
            "ASR hypotheses",
            key="vm_data_util_hyp",
            help="The ASR system's transcripts of the anonymised speech, same layout; one per "
            "reference utterance (an empty one is allowed).",
        )
    with uar_col:
        st.markdown("**UAR** (emotion recognition)")
        files["labels"] = st.file_uploader(
            "Emotion labels",
            key="vm_data_util_labels",
            help="`utt_id label` lines (e.g. utt2emo) or a CSV with the columns utt_id and label.",
        )
        files["predictions"] = st.file_uploader(
            "Emotion predictions",
            key="vm_data_util_preds",
            help="The classifier's label of each anonymised utterance, same layout.",
        )
    with rho_col:
        st.markdown("**ρF0** (pitch correlation)")
        files["original"] = st.file_uploader(
            "Original recordings (.zip)", type=["zip"], key="vm_data_util_orig", help=_AUDIO_HELP
        )
        files["anonymised"] = st.file_uploader(
            "Anonymised recordings (.zip)",
            type=["zip"],
            key="vm_data_util_anon",
            help=_AUDIO_HELP + " The same utterance ids as the originals.",
        )
    files["utt2spk"] = st.file_uploader(
        "utt2spk (optional)",
        key="vm_data_util_utt2spk",
        help="`utt_id speaker` lines, for the speaker-level bootstrap. Without it the speaker "
        "of an utterance is its id's prefix before '-' (Kaldi, LibriSpeech).",
    )
    return files


def utility_tab(study: Study) -> AttachedUtility | None:
    """Uploads of per-utterance files and a target; puts their utility on its conditions.

    Returns what was attached (None until the button is pressed and the files are good); the
    session's study is updated already.
    """
    st.caption(
        "What the anonymisation costs the speech's other uses, computed from per-utterance "
        "files, as `voxmetrics study build --wer / --uar / --rho-f0` does: the **WER** of ASR "
        "hypotheses against reference transcripts, the **UAR** (and per-emotion accuracy) of "
        "an emotion classifier's predictions, and **ρF0**, the pitch correlation of original "
        "and anonymised recordings. Give any of the three pairs. Each number replaces the one "
        "the condition had (e.g. from a VoicePrivacy results summary) and is shown on the "
        "Privacy vs utility page. The condition and attacker above are not used: pick where "
        "the numbers go in *Attach to*."
    )
    targets = utility_targets(study)
    if not targets:
        st.info("Add a condition first: utility is attached to a condition or a system.")
        return None
    if st.session_state.get(TARGET_KEY) not in targets:
        st.session_state[TARGET_KEY] = targets[0]
    target = st.selectbox(
        "Attach to",
        targets,
        key=TARGET_KEY,
        format_func=lambda t: _target_label(study, t),
        help="A condition, or a system (the name before ' (' of conditions named "
        "'SYSTEM (attacker)'): then every condition of that system gets the numbers.",
    )
    files = _uploads()
    settings = get_study().settings
    st.caption(
        f"Speaker-level bootstrap intervals of {settings.bootstrap} replicates (seed "
        f"{settings.seed}): the study's settings (Report page), as on the command line."
    )
    if not st.button(
        "Compute and attach", type="primary", key="vm_data_util_attach", icon=":material/upload:"
    ):
        return None
    out = compute(
        study_with_utility_files,
        get_study(),  # the whole study, not the sidebar's subset
        target,
        cache=False,
        bar="Computing the utility",
        **files,
    )
    if out.failed:
        return None
    set_study(out.value.study)
    return out.value
