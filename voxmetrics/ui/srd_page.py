"""The SRD page's widgets: controls, captions, the sparse-data notice and the per-speaker view.

The numbers and tables are :mod:`voxmetrics.analysis.srd`'s, which the page runs through
:func:`voxmetrics.ui.compute`; here they are wired to Streamlit widgets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import streamlit as st

from voxmetrics.analysis.srd import zero_rank_counts
from voxmetrics.data.study import Condition, Study
from voxmetrics.evaluation import ConditionReport
from voxmetrics.metrics.srd import LOSSES, Loss, SpeakerSRD, SRDResult
from voxmetrics.ui.setup import md_escape
from voxmetrics.ui.widgets import kept_switch, part_reports

__all__ = [
    "AUTO_SPEAKER_MODELS",
    "LOSS_HELP",
    "SPEAKER_MODELS",
    "SPEAKER_MODELS_HELP",
    "SPEAKER_MODELS_LABEL",
    "SRD_PARTS",
    "rank_caption",
    "show_sparse_notice",
    "speaker_models_off",
    "speaker_models_switch",
    "speaker_picker",
    "srd_controls",
    "srd_reports",
    "trial_speaker_count",
]

CONDITIONS = "vm_srd_conditions"
LOSSES_KEY = "vm_srd_losses"
LOG_AXES = "vm_srd_log"
SPEAKER = "vm_srd_speaker"
LOSS_HELP = (
    "LL: log-likelihood, the best overall fit. CLL: LL forced to match the rank-1 share "
    "(the paper's choice, and the model of the report). MS, WMS, RWMS: squared errors, plain, "
    "weighted by p_k and by e^-k (the first ranks only)."
)
"""Help of the loss picker."""

SPEAKER_MODELS = "vm_srd_speaker_models"
"""The switch of the per-speaker view (its value is also kept under ``..._kept``)."""
AUTO_SPEAKER_MODELS = 200
"""Up to this many trial speakers the per-speaker view is computed on the page's first visit.

Beyond, on request (:data:`SPEAKER_MODELS_LABEL`): it fits one beta-binomial model per trial
speaker of the chosen condition, about 6 CPU seconds at 1,000 speakers (4 for a further
condition); the rest of the page's first visit, without it, takes about 7.5 for five
conditions."""
SPEAKER_MODELS_LABEL = "Per-speaker models"
SPEAKER_MODELS_HELP = (
    "One rank histogram per trial speaker of the chosen condition, each with its own "
    "beta-binomial model (LL), the mean disclosure of every speaker and their table. It fits "
    "one model per speaker, about 6 seconds of computing at 1,000 speakers: on by default up "
    f"to {AUTO_SPEAKER_MODELS} trial speakers, on request beyond. Computed once per condition "
    "and kept."
)
"""Help of the per-speaker switch."""


def srd_controls(study: Study) -> tuple[list[str], list[Loss], bool]:
    """The conditions, the model losses (both in canonical order) and the log-log toggle."""
    if CONDITIONS in st.session_state:
        st.session_state[CONDITIONS] = [n for n in st.session_state[CONDITIONS] if n in study.names]
    else:
        st.session_state[CONDITIONS] = list(study.names)
    if LOSSES_KEY not in st.session_state:
        st.session_state[LOSSES_KEY] = ["LL", "CLL"]
    chosen_names = st.multiselect("Conditions", study.names, key=CONDITIONS)
    loss_col, axes_col = st.columns([3, 1], vertical_alignment="bottom")
    chosen_losses = loss_col.multiselect("Model losses", LOSSES, key=LOSSES_KEY, help=LOSS_HELP)
    names = [n for n in study.names if n in chosen_names]  # study order, whatever the clicks
    losses = [loss for loss in LOSSES if loss in chosen_losses]
    log_axes = axes_col.toggle("Log-log axes", value=True, key=LOG_AXES)
    return names, losses, log_axes


def rank_caption(results: Mapping[str, SRDResult], log_axes: bool) -> str:
    """The caption under the rank distributions; on log axes, how many ranks are left out."""
    caption = (
        "Dots: the share of trials at each rank; broken lines of the same colour: the "
        "beta-binomial models (one dash style per loss; faded when the fit did not converge); "
        "dotted: chance, 1/N."
    )
    zeros = {n: z for n, z in zero_rank_counts(results).items() if z} if log_axes else {}
    if zeros:
        listed = ", ".join(f"{md_escape(n)} {z}" for n, z in zeros.items())
        caption += (
            " Ranks that no trial reached have probability 0, which a log axis cannot show: "
            f"they are left out of the data lines ({listed} of N ranks). Switch off log-log "
            "axes to see them."
        )
    return caption


def show_sparse_notice(results: Mapping[str, SRDResult]) -> None:
    """Which conditions have fewer than 10 trials per rank, if any."""
    sparse = [n for n, r in results.items() if r.sparse]
    if sparse:
        detail = ", ".join(
            f"{md_escape(n)} ({results[n].n_trials:,} trials for N = {results[n].n_enrolled:,})"
            for n in sparse
        )
        st.info(
            f"Sparse data: {detail} have fewer than 10 trials per rank on average, so their "
            "histograms are noisy and mostly zeros at high ranks. Prefer the model's statistics "
            "(CLL, as in the report) to the data's there.",
            icon=":material/info:",
        )


def speaker_picker(speakers: SpeakerSRD, condition: str, column: Any) -> tuple[str, int]:
    """The speaker select box (in ``column``), labelled with each speaker's empirical MeanD.

    Returns the speaker and its index in ``speakers``; the choice is kept per condition.
    """
    key = f"{SPEAKER}_{condition}"  # one choice per condition: the labels differ
    labels = {
        str(s): f"{s} · MeanD {m:.2f} bits"
        for s, m in zip(speakers.speakers, speakers.empirical_mean_d, strict=True)
    }
    if st.session_state.get(key) not in labels:
        st.session_state[key] = next(iter(labels))
    speaker = column.selectbox(
        "Speaker",
        list(labels),
        key=key,
        format_func=labels.get,
        help="With the empirical MeanD of the speaker's own rank histogram.",
    )
    return speaker, list(labels).index(speaker)


def trial_speaker_count(condition: Condition) -> int:
    """How many distinct trial speakers the condition's eval split has."""
    return int(np.unique(condition.eval.trial_speakers).size)


def speaker_models_switch(n_speakers: int) -> bool:
    """The per-speaker switch: on by default up to :data:`AUTO_SPEAKER_MODELS` trial speakers.

    ``n_speakers``: the trial speakers of the chosen condition, which set the default on the
    first visit. The value is kept for the session: Streamlit drops a widget's state when the
    user leaves the page, so it is copied where a page change does not drop it.
    """
    return kept_switch(
        SPEAKER_MODELS_LABEL,
        SPEAKER_MODELS,
        default=n_speakers <= AUTO_SPEAKER_MODELS,
        help=SPEAKER_MODELS_HELP,
    )


def speaker_models_off(n_speakers: int, condition: str) -> str:
    """Why the per-speaker view is not computed (the condition is large) and how to see it."""
    return (
        f"The per-speaker view is off: {md_escape(condition)} has {n_speakers:,} trial speakers "
        "and it fits a beta-binomial model to each one's rank histogram (about 6 seconds of "
        "computing at 1,000 speakers, with a progress bar). It shows one speaker's rank "
        "histogram with its models, the mean disclosure of every speaker and their table. Turn "
        "it on with the switch above; the numbers above do not depend on it."
    )


SRD_PARTS = ("linkability", "srd")
"""The parts of a condition's report the SRD page shows (with the EER every report has)."""


def srd_reports(study: Study, names: Sequence[str]) -> dict[str, ConditionReport]:
    """The SRD numbers of each chosen condition, under the study's settings, by name.

    A condition that another page has already evaluated in full (the same options: the
    Overview's reports) gives that report; the others are evaluated for :data:`SRD_PARTS`
    alone (:func:`~voxmetrics.ui.widgets.part_reports`, a progress bar each), the same numbers
    without LID, ZEBRA or singling out. Their warnings about SRD go to the page's notes; a
    condition whose input is bad shows its message and is left out. In study order.
    """
    return part_reports(
        study,
        names,
        parts=SRD_PARTS,
        label="SRD numbers",
        topic="SRD",
    )
