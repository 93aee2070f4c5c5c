"""Widgets of the Soft biometrics page: its controls, its uploads and its text.

:func:`sbls_controls` draws the attacker, options and upload controls and returns what they
say; the page turns them into one :class:`~voxmetrics.analysis.sbls.SBLSRow` per condition
with the functions of :mod:`voxmetrics.analysis.sbls`, run through
:func:`voxmetrics.ui.compute`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from voxmetrics._types import MISSING
from voxmetrics.analysis.sbls import Attack, SBLSOptions, predictions_attack, weights_ok
from voxmetrics.data.study import Condition, Study
from voxmetrics.metrics.sbls import (
    DEFAULT_ATTACKER,
    DEFAULT_LAMBDA,
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_WEIGHTS,
    AttributeLeakage,
)
from voxmetrics.plots.sbls import short_group
from voxmetrics.ui.computing import compute
from voxmetrics.ui.setup import md_escape

__all__ = [
    "ATTRIBUTE_HELP",
    "AUTO_IDENTITY_SPEAKERS",
    "COMPONENT_HELP",
    "DEFAULT_REPLICATES",
    "IDENTITY_HELP",
    "IDENTITY_KEY",
    "IDENTITY_LABEL",
    "IDENTITY_SWITCH_HELP",
    "INTERSECTION_HELP",
    "SUBGROUP_HELP",
    "SBLSControls",
    "attribute_metrics",
    "group_size_note",
    "identity_off",
    "intro",
    "sbls_controls",
    "trial_speakers",
]

DEFAULT_REPLICATES = 200
"""Bootstrap replicates of the page by default (a reweighting: a fraction of a second)."""
ATTACKERS = {
    "anonymised": "Trained on anonymised speech (informed attacker; default)",
    "original": "Trained on original speech (ignorant attacker)",
}
WEIGHT_KEYS = ("vm_sbls_w_attr", "vm_sbls_w_assoc", "vm_sbls_w_sub")
UPLOADS = "vm_sbls_uploads"
DEFAULTS: dict[str, Any] = {
    "vm_sbls_attacker": DEFAULT_ATTACKER,
    "vm_sbls_lambda": DEFAULT_LAMBDA,
    **dict(zip(WEIGHT_KEYS, DEFAULT_WEIGHTS, strict=True)),
    "vm_sbls_min_group": DEFAULT_MIN_GROUP_SIZE,
    "vm_sbls_boot": DEFAULT_REPLICATES,
    "vm_sbls_seed": 0,
}


@dataclass(frozen=True)
class SBLSControls:
    """What the controls of the page say."""

    attacker: str
    """"anonymised" or "original": whom the built-in attacker is trained on."""
    original: Condition | None
    """The condition with the original speech (None when no condition has embeddings)."""
    options: SBLSOptions
    """Weights, lambda and minimum group size."""
    n_boot: int
    """Bootstrap replicates (0 = no intervals)."""
    seed: int
    """Seed of the bootstrap."""
    uploads: dict[str, Attack]
    """Uploaded attacks by condition name (they replace the built-in attacker)."""


def sbls_controls(study: Study) -> SBLSControls:
    """Draw the attacker, options and upload controls; stop the page on invalid weights."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    uploads: dict[str, Attack] = st.session_state.setdefault(UPLOADS, {})
    for name in list(uploads):  # drop uploads of conditions that left the study
        if name not in study.names:
            del uploads[name]
    with_emb = [c.name for c in study.conditions if c.embeddings is not None]
    if with_emb and st.session_state.get("vm_sbls_original") not in with_emb:
        st.session_state["vm_sbls_original"] = "plain" if "plain" in with_emb else with_emb[0]
    with st.container(border=True):
        attacker_col, original_col = st.columns([3, 2])
        kind = attacker_col.radio(
            "Built-in attacker",
            list(ATTACKERS),
            format_func=ATTACKERS.get,
            key="vm_sbls_attacker",
            horizontal=True,
            disabled=not with_emb,
            help="A logistic regression per attribute, trained on the dev-split embeddings and "
            "applied to every eval utterance. Trained on the condition's own anonymised dev "
            "speech (the default, as in the study report and the sbls command), it is an "
            "attacker who knows the anonymiser; trained on original speech, one who does not.",
        )
        original_name = original_col.selectbox(
            "Condition with the original speech",
            with_emb or ["(no condition has embeddings)"],
            key="vm_sbls_original" if with_emb else "vm_sbls_original_none",
            disabled=not with_emb or kind != "original",
            help="The unanonymised embeddings the ignorant attacker is trained on (their dev "
            "split). In the demo study this is 'plain'.",
        )
        cols = st.columns([2, 1, 1, 1, 1.2, 1.2, 1])
        lam = cols[0].slider(
            "λ of P_subgroup",
            min_value=0.0,
            max_value=1.0,
            step=0.05,
            key="vm_sbls_lambda",
            help="Weight of the worst subgroup (1 − max L_g) against the spread between "
            "subgroups (min (1 − L_g) / max (1 − L_g)). The authors use 0.7.",
        )
        weights = tuple(
            float(col.number_input(label, min_value=0.0, max_value=1.0, step=0.05, key=key))
            for col, label, key in zip(
                cols[1:4], ("w_attr", "w_assoc", "w_sub"), WEIGHT_KEYS, strict=True
            )
        )
        min_group = cols[4].number_input(
            "Min group size",
            min_value=1,
            max_value=100_000,
            step=1,
            key="vm_sbls_min_group",
            help="Sex × age groups with fewer eval utterances are left out of P_subgroup and "
            "listed. The paper's value is not known; VoxMetrics uses 30.",
        )
        n_boot = cols[5].number_input(
            "Bootstrap replicates",
            min_value=0,
            max_value=5_000,
            step=50,
            key="vm_sbls_boot",
            help="Speaker-level bootstrap of the 95 % intervals: speakers are resampled with "
            "all their utterances and SBLS is recomputed with the attacker's predictions held "
            "fixed (a reweighting of the utterances). 0 = no intervals.",
        )
        seed = cols[6].number_input(
            "Seed", min_value=0, max_value=2**31 - 1, step=1, key="vm_sbls_seed",
            help="Seed of the bootstrap.",
        )  # fmt: skip
        _upload_controls(study, uploads, expanded=not with_emb or bool(uploads))
    if not weights_ok(weights):
        st.error(
            f"The weights must sum to 1; they sum to {sum(weights):.2f}. Adjust w_attr, "
            "w_assoc and w_sub (the paper uses 0.4, 0.4, 0.2).",
            icon=":material/error:",
        )
        st.stop()
    w_attr, w_assoc, w_sub = weights
    options = SBLSOptions((w_attr, w_assoc, w_sub), float(lam), int(min_group))
    original = study.get(original_name) if with_emb else None
    return SBLSControls(kind, original, options, int(n_boot), int(seed), uploads)


def _upload_controls(study: Study, uploads: dict[str, Attack], *, expanded: bool) -> None:
    with st.expander(
        "Use your own attacker: upload attribute predictions",
        expanded=expanded,
        icon=":material/upload_file:",
    ):
        st.caption(
            "A CSV with one row per (utterance, attribute, class): `utt_id, attribute, class, "
            "score` (class scores, e.g. probabilities) or one row per (utterance, attribute): "
            "`utt_id, attribute, predicted` (hard predictions). The utterances are the "
            "condition's eval utterances; the true labels come from its metadata (or its "
            "score file's attribute columns). Uploaded predictions replace the built-in "
            "attacker for that condition."
        )
        up_col, file_col = st.columns([1, 2], vertical_alignment="bottom")
        target = up_col.selectbox("For condition", study.names, key="vm_sbls_upload_condition")
        upload = file_col.file_uploader(
            "Predictions file", type=["csv", "parquet"], key="vm_sbls_upload_file"
        )
        if st.button("Use these predictions", key="vm_sbls_use_upload", icon=":material/check:"):
            if upload is None:
                st.error("Choose a predictions file first.", icon=":material/error:")
            else:
                parsed = compute(
                    predictions_attack, study.get(target), upload.getvalue(), upload.name
                )
                if not parsed.failed:
                    uploads[target] = parsed.value
                    st.success(
                        f"{md_escape(upload.name)}: predictions of "
                        f"{', '.join(parsed.value.predictions)} for {parsed.value.n} eval "
                        f"utterances of **{md_escape(target)}**.",
                        icon=":material/check_circle:",
                    )
        for name, attack in list(uploads.items()):
            forget_col, text_col = st.columns([1, 5], vertical_alignment="center")
            if forget_col.button("Forget", key=f"vm_sbls_forget_{name}", icon=":material/delete:"):
                del uploads[name]
                st.rerun()
            text_col.caption(f"**{md_escape(name)}**: {md_escape(attack.attacker)}.")


def attribute_metrics(attribute: AttributeLeakage) -> None:
    """The four numbers of one attribute as metrics."""
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(
        "AUC (aligned)",
        f"{attribute.auc:.3f}" if attribute.auc is not None else MISSING,
        help="Mean over the classes of the one-vs-rest AUC with the matched score column. "
        "0.5 = guessing, 1 = perfect. Hard predictions have no AUC.",
    )
    m2.metric(
        "Balanced accuracy",
        f"{attribute.balanced_accuracy:.3f}",
        help=f"Mean recall of the aligned predictions; chance is 1/{len(attribute.classes)}.",
    )
    m3.metric(
        "Leakage L_a",
        f"{attribute.leakage:.3f}",
        help="(AUC − 0.5) / 0.5 clipped to [0, 1] (balanced accuracy rescaled from chance "
        "for hard predictions). P_attr = 1 − mean L_a.",
    )
    m4.metric(
        "NMI",
        f"{attribute.nmi:.3f}",
        help="Mutual information of true and predicted classes / ln K. P_assoc = 1 − mean NMI.",
    )


COMPONENT_HELP = {
    "Attacker": "The speech the built-in attacker was trained on (dev split): the original "
    "speech of a condition, or the condition's own anonymised speech; or an uploaded "
    "predictions file.",
    "P_attr": "Attribute inference protection, 1 − mean leakage L_a (higher = more protection).",
    "P_assoc": "Systematic linkage protection, 1 − mean NMI (higher = more protection).",
    "P_subgroup": "Subgroup protection from the joint recovery rates (higher = more "
    "protection; at most about 0.88 for a random guess on sex × 3 age groups).",
    "SBLS": "0.4·P_attr + 0.4·P_assoc + 0.2·P_subgroup by default (higher = more protection).",
    "Groups used": "Sex × age subgroups that reach the minimum group size.",
    **{
        f"{c} CI": f"95 % speaker-level bootstrap interval of {c}."
        for c in ("P_attr", "P_assoc", "P_subgroup", "SBLS")
    },
}
"""Column help of the per-condition table."""
ATTRIBUTE_HELP = {
    "AUC (aligned)": "Mean one-vs-rest AUC after matching classes (0.5 = guessing).",
    "Leakage L_a": "0 = chance, 1 = perfect inference.",
    "NMI": "Normalised mutual information (by ln K: below 1 even for a perfect attacker when "
    "the classes are unbalanced).",
}
"""Column help of the per-attribute table."""
INTERSECTION_HELP = {
    "Joint recovery L_g": "Share of the subgroup's utterances with every attribute recovered "
    "(higher = worse).",
    "Used": "False: below the minimum group size, left out of P_subgroup.",
}
"""Column help of the intersections table."""
SUBGROUP_HELP = {
    "Within subgroup": "The values of the other attributes.",
    "AUC": "Aligned AUC of the attribute inside the subgroup (empty: one class only).",
    "Leakage": "Leakage of the attribute inside the subgroup (0 = chance).",
    "Accuracy": "Share of the subgroup's utterances whose attribute was predicted right.",
}
"""Column help of the per-(attribute, subgroup) table."""
IDENTITY_HELP = {
    "SBLS": "Soft-biometric protection: higher = more protection.",
    "P_attr": "Attribute inference protection: higher = more protection.",
    "EER": "1-to-1 verification equal error rate: higher = more protection (0.5 = chance).",
    "LIDmax (bits)": "Worst single-trial identity disclosure: higher = LESS protection.",
    "Linkability": "1-to-N identification rate: higher = less protection.",
}
"""Column help of the identity table."""

AUTO_IDENTITY_SPEAKERS = 200
"""Up to this many trial speakers the identity numbers beside SBLS are computed on the page's
first visit; beyond, on request (:data:`IDENTITY_LABEL`) unless another page already has them.

They need each condition's LID, whose calibration on the dev set costs about 2.5 CPU seconds
per condition of 8,000 x 1,000 scores (about 13 for the 1,000-speaker demo's five conditions,
more than the rest of the page)."""

IDENTITY_KEY = "vm_sbls_identity"
IDENTITY_LABEL = "Compare with the identity numbers (EER, LIDmax, linkability)"
IDENTITY_SWITCH_HELP = (
    "EER, LIDmax and linkability of each condition beside its SBLS. LIDmax needs each "
    "condition's LID calibrated on its dev set: on by default up to "
    f"{AUTO_IDENTITY_SPEAKERS} trial speakers, on request beyond; always shown once another "
    "page (Overview, Threat model) has computed them. Computed once per condition and kept."
)


def trial_speakers(study: Study, names: Sequence[str]) -> int:
    """The most trial speakers of any of the named conditions (0 without one)."""
    counts = [len(set(study.get(n).eval.trial_speakers.tolist())) for n in names]
    return max(counts, default=0)


def identity_off(n_speakers: int, n_conditions: int) -> str:
    """Why the identity numbers are not shown yet (the study is large) and how to show them."""
    return (
        f"The identity numbers are off: with {n_speakers:,} trial speakers, LIDmax needs the "
        f"LID calibration of each of the {n_conditions} condition(s) (a few CPU seconds "
        "each). Turn the switch on to compute them, or open the Overview or the Threat model "
        "page first: their numbers are shown here without computing anything again."
    )


def group_size_note(name: str, groups: pd.DataFrame, min_group_size: int) -> str:
    """Markdown: the smallest subgroup of ``groups`` (an intersection frame with speakers)."""
    smallest = groups.loc[groups["Utterances"].idxmin()]
    n_small, n_all = int(smallest["Utterances"]), len(groups)
    return (
        f"**Minimum group size.** The smallest subgroup of {md_escape(name)}, "
        f"{md_escape(short_group(str(smallest['Subgroup'])))}, has {n_small} eval utterances "
        f"from {int(smallest['Speakers'])} speakers, so a minimum of up to {n_small} keeps all "
        f"{n_all} subgroups (now {min_group_size}: {int(groups['Used'].sum())} of {n_all} "
        "used). Utterances of one speaker are not independent, so the speaker count is the "
        "real sample size: a group of 3 speakers gives a noisy L_g whatever its utterance count."
    )


def intro() -> None:
    """What SBLS measures, its three parts and its direction."""
    st.markdown(
        "**Does anonymised speech still tell an attacker the speaker's sex or age group?** "
        "Hiding *who* speaks is not enough if a classifier can still read *what kind of person* "
        "speaks. The **Soft Biometric Leakage Score** (SBLS, Seo et al. 2025) attacks every eval "
        "utterance with a fixed attribute classifier and combines three parts:\n\n"
        "- **P_attr, attribute inference**: how well the classifier's scores separate the classes "
        "(one-vs-rest AUC; 0.5 = guessing).\n"
        "- **P_assoc, systematic linkage**: whether its predictions follow a rule an attacker can "
        "exploit, even a wrong one such as *always predicts the opposite sex* (mutual "
        "information). The classifier's classes are first matched to ours, so a swapped or "
        "reordered classifier counts as fully informative.\n"
        "- **P_subgroup, subgroups**: the share of each sex × age group whose attributes are all "
        "recovered; mostly the worst group, partly the spread between groups.\n\n"
        "SBLS = 0.4·P_attr + 0.4·P_assoc + 0.2·P_subgroup (the paper's weights)."
    )
    st.info(
        "**Direction: SBLS and its parts are protection scores, higher = more protection** "
        "(1 = nothing leaks, 0 = everything does). That is the opposite of LID and D_ECE, "
        "where higher means more disclosure.",
        icon=":material/swap_vert:",
    )
