"""The study's settings form (Report page): the options every page evaluates conditions with."""

from __future__ import annotations

import dataclasses

import streamlit as st

from voxmetrics.data.study import Study, StudySettings
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.ui.state import get_study, set_study

__all__ = ["LID_VARIANT_LABELS", "LINKABILITY_RULE_LABELS", "TIE_RULES", "settings_form"]

BOOT, SEED, FOLDS = "vm_report_bootstrap", "vm_report_seed", "vm_report_folds"
LID_VARIANT = "vm_report_lid_variant"
LID_VARIANT_LABELS = {
    "reference-code": "authors' code (Šterns et al. 2025 tables; default)",
    "maximum-likelihood": "maximum likelihood (unpenalised)",
}
TIES = "vm_report_ties"
TIE_RULES = {
    "reference": "As the reference code",
    "attacker": "For the attacker",
}
LINK_RULE = "vm_report_linkability_rule"
LINKABILITY_RULE_LABELS = {
    "code": "a tie is a link (authors' code)",
    "strict": "strict (the paper's eq. 3)",
}
SHOWN_SETTINGS = "vm_report_settings_shown"  # the settings the widgets were last filled from


def _fill_settings_widgets(study: Study) -> None:
    """Show the study's settings in the form.

    On arrival (widget state is dropped when the user changes page) and when they changed
    elsewhere (e.g. a loaded study file).
    """
    settings = study.settings
    if st.session_state.get(SHOWN_SETTINGS) != settings or BOOT not in st.session_state:
        st.session_state[BOOT] = settings.bootstrap
        st.session_state[SEED] = settings.seed
        st.session_state[FOLDS] = settings.cross_calibrate or 0
        st.session_state[LID_VARIANT] = settings.lid_variant
        st.session_state[TIES] = settings.ties
        st.session_state[LINK_RULE] = settings.linkability_rule
        st.session_state[SHOWN_SETTINGS] = settings


def settings_form(study: Study) -> Study:
    """The settings form, filled from ``study``; returns the study with the applied settings.

    Applying valid settings replaces the session's whole study's settings (every page, and
    'Save study', then uses them); invalid ones show the reason and change nothing.
    """
    _fill_settings_widgets(study)
    with st.form("vm_report_settings", border=True):
        boot_col, seed_col, folds_col, ties_col = st.columns(4)
        boot_col.number_input(
            "Bootstrap replicates",
            step=50,
            key=BOOT,
            help="Speaker-level bootstrap behind the intervals of LID and ZEBRA (0 = no "
            "intervals). 200 takes about half a second per demo condition.",
        )
        seed_col.number_input(
            "Seed",
            step=1,
            key=SEED,
            help="Seed of the bootstrap and of the cross-calibration folds.",
        )
        folds_col.number_input(
            "Cross-calibration folds (0 = off)",
            step=1,
            key=FOLDS,
            help="For conditions without a dev set: calibrate LID by speaker-disjoint k-fold "
            "cross-calibration on eval (k ≥ 2). Off: those conditions have no LID.",
        )
        ties_col.selectbox(
            "Tied scores",
            list(TIE_RULES),
            format_func=TIE_RULES.__getitem__,
            key=TIES,
            help="How the pooled metrics order a target and a non-target with the same score. "
            "As the reference code: each number equals its reference implementation (EER: "
            "SpeechBrain; ROCCH-EER and min Cllr: BOSARIS / PYLLR; ZEBRA: the code of Nautsch "
            "et al. 2020). For the attacker: every tie counts for the attacker, the "
            "conservative audit view.",
        )
        st.radio(
            "LID calibration variant",
            list(LID_VARIANT_LABELS),
            format_func=LID_VARIANT_LABELS.get,
            key=LID_VARIANT,
            horizontal=True,
            help="Maximum likelihood: population-sd z-scores, unweighted, no penalty. Authors' "
            "code: sample sd, balanced class weights, L2 penalty C = 1 (reproduces Šterns et al. "
            "2025's model, solved exactly). Saved with the study.",
        )
        st.radio(
            "Linkability",
            list(LINKABILITY_RULE_LABELS),
            format_func=LINKABILITY_RULE_LABELS.get,
            key=LINK_RULE,
            horizontal=True,
            help="When a trial is linked to its own speaker. Authors' code (Vauquier et al. "
            "2025, public code v2): its own speaker scores at least every other identity, so a "
            "tie for the top score is a link. Strict (the paper's eq. 3): strictly above every "
            "other. Also the linkability curve against N'. Saved with the study.",
        )
        applied = st.form_submit_button(
            "Apply settings", key="vm_report_apply", icon=":material/tune:"
        )

    if applied:
        folds = int(st.session_state[FOLDS])
        try:
            new = StudySettings(
                **{
                    **study.settings.to_dict(),
                    "bootstrap": int(st.session_state[BOOT]),
                    "seed": int(st.session_state[SEED]),
                    "cross_calibrate": folds or None,
                    "lid_variant": st.session_state[LID_VARIANT],
                    "ties": str(st.session_state[TIES]),
                    "linkability_rule": str(st.session_state[LINK_RULE]),
                }
            )
        except VoxMetricsInputError as exc:
            st.error(
                f"Settings not applied: {exc}"
                + (
                    " Here 0 folds turns cross-calibration off."
                    if "cross_calibrate" in str(exc)
                    else ""
                ),
                icon=":material/error:",
            )
        else:
            if new != study.settings:
                set_study(dataclasses.replace(get_study(), settings=new))  # the whole study
                study = dataclasses.replace(study, settings=new)
                st.session_state[SHOWN_SETTINGS] = new
            st.success(
                "Settings applied; the Overview's report card and this report use them, and "
                "'Save study' keeps them.",
                icon=":material/check:",
            )
    s = study.settings
    st.caption(
        f"Current settings: {s.bootstrap} bootstrap replicates, seed {s.seed}, "
        + (
            f"{s.cross_calibrate}-fold cross-calibration"
            if s.cross_calibrate
            else "no cross-calibration"
        )
        + " of conditions without a dev set; ties "
        + TIE_RULES[s.ties].lower()
        + f"; LID variant {s.lid_variant}; linkability "
        + LINKABILITY_RULE_LABELS[s.linkability_rule]
        + "."
    )
    return study
