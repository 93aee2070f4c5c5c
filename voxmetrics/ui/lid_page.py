"""The LID page's widgets: its controls, its notices and its trial explorer.

The numbers and tables are :mod:`voxmetrics.analysis.lid`'s, which the page runs through
:func:`voxmetrics.ui.compute`; here they are wired to Streamlit widgets.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

import pandas as pd
import streamlit as st

from voxmetrics._types import DEFAULT_BOOTSTRAP, MISSING
from voxmetrics.analysis import lid as analysis
from voxmetrics.analysis.lid import LIDOptions, LIDRow
from voxmetrics.data.study import Condition, Study
from voxmetrics.metrics.lid import LIDResult
from voxmetrics.plots.overview import LOCAL_EER, LOCAL_LID_MAX
from voxmetrics.ui.setup import md_escape
from voxmetrics.ui.widgets import download_table

__all__ = [
    "VARIANTS",
    "calibration_caption",
    "ceiling_example",
    "lid_controls",
    "show_notices",
    "trial_card",
    "trial_condition",
    "trial_table",
    "trial_table_key",
]

VARIANTS = {
    "reference-code": "authors' code: sample sd, balanced, L2 penalty (C = 1); default",
    "maximum-likelihood": "maximum likelihood: population sd, unweighted, unpenalised",
}
"""The LID calibration variants and their labels on the page."""


def ceiling_example(study: Study) -> str:
    """The log2 N ceiling of the study's conditions, for the page's intro.

    Examples
    --------
    >>> from voxmetrics.synth import demo_study
    >>> ceiling_example(demo_study(n_speakers=5))
    'here 2.3 bits: N = 5 enrolled speakers'
    >>> ceiling_example(Study())
    '5.3 bits for N = 40 enrolled speakers, say'
    """
    ns = sorted({int(c.eval.n_enrolled) for c in study.conditions})
    if not ns:
        return "5.3 bits for N = 40 enrolled speakers, say"
    shown = [f"{math.log2(n):.1f} bits for N = {n}" for n in ns[:3]]
    if len(ns) == 1:
        return f"here {math.log2(ns[0]):.1f} bits: N = {ns[0]} enrolled speakers"
    more = ", ..." if len(ns) > 3 else ""
    return "here " + ", ".join(shown) + more


def lid_controls(study: Study) -> tuple[list[str], LIDOptions, int]:
    """The bordered box of the page's controls.

    Returns
    -------
    chosen : list of str
        The conditions picked (possibly none).
    options : LIDOptions
        Variant, cross-calibration (only when a chosen condition lacks a dev set) and seed.
    n_boot : int
        Bootstrap replicates (0 = no intervals).
    """
    with st.container(border=True):
        shown = st.session_state.get("vm_lid_conditions")
        if shown is None:  # first visit: every condition
            st.session_state["vm_lid_conditions"] = list(study.names)
        elif any(n not in study.names for n in shown):  # drop names that left the study
            st.session_state["vm_lid_conditions"] = [n for n in shown if n in study.names]
        chosen = st.multiselect("Conditions", study.names, key="vm_lid_conditions")
        variant_col, boot_col, seed_col = st.columns([3, 1, 1])
        if st.session_state.get("vm_lid_variant") not in VARIANTS:  # first visit: the study's
            st.session_state["vm_lid_variant"] = study.settings.lid_variant
        variant = variant_col.radio(
            "Calibration variant",
            list(VARIANTS),
            format_func=VARIANTS.get,
            key="vm_lid_variant",
            help="The authors' public code (Šterns et al. 2025), the default, uses the sample sd, "
            "balanced class weights and scikit-learn's default L2 penalty (C = 1): the model of "
            "the paper's Table 3, Table 4 and Figure 4, solved exactly (the published code stops "
            "its solver early: up to a few hundredths of a bit per trial apart; docs, Methods > "
            "LID); it stays finite when the dev pools separate. Maximum likelihood fits w, b "
            "without penalty on population-sd z-scores; on separable dev pools its w is capped "
            "and its LIDs go to extreme values. The page starts from the study's setting.",
        )
        n_boot = boot_col.number_input(
            "Bootstrap replicates",
            min_value=0,
            max_value=20_000,
            value=study.settings.bootstrap,
            step=100,
            key="vm_lid_boot",
            help="Speaker-level bootstrap of the 95 % intervals of ALID, PDR, NDR, LID+, LID- and "
            "LID q95 (trial speakers resampled, calibration held fixed). 0 = no intervals. "
            "Starts from the study's setting (default "
            f"{DEFAULT_BOOTSTRAP}), so the page and the report give the same intervals.",
        )
        seed = seed_col.number_input(
            "Seed",
            min_value=0,
            max_value=2**31 - 1,
            value=0,
            step=1,
            key="vm_lid_seed",
            help="Seed of the bootstrap and of the cross-calibration folds.",
        )
        no_dev = [n for n in chosen if study.get(n).dev is None]
        cv_col, k_col = st.columns([3, 1])
        cross = cv_col.toggle(
            "Cross-calibrate conditions without a dev set (k-fold on eval)",
            key="vm_lid_crosscal",
            disabled=not no_dev,
            help="Without a dev set there is nothing to learn w, b on. Cross-calibration splits "
            "the eval speakers into k folds and calibrates each fold on the others; its numbers "
            "are labelled 'cross-calibrated' everywhere.",
        )
        k = k_col.number_input(
            "Folds k",
            min_value=2,
            max_value=20,
            value=5,
            step=1,
            key="vm_lid_k",
            disabled=not cross,
        )
        if no_dev:
            names = ", ".join(md_escape(n) for n in no_dev)
            cv_col.caption(f"Without a dev set: {names}.")
        else:
            cv_col.caption(
                "Every selected condition has a dev set, so cross-calibration is not needed."
            )

    options = LIDOptions(
        cross_calibrate=int(k) if cross and no_dev else None,
        variant=variant,
        seed=int(seed),
    )
    return chosen, options, int(n_boot)


def trial_table_key(condition: Condition, options: LIDOptions) -> str:
    """Widget key of a condition's trial table: it follows the data and the LID options.

    The table is sorted by LID, so a selection stored under one calibration would point at
    another trial under the next; a new key starts from the default selection instead.
    """
    digest = hashlib.sha256(f"{condition.name}|{options.key(condition)}".encode()).hexdigest()
    return f"vm_lid_trials_{digest[:16]}"


def trial_table(trials: pd.DataFrame, key: str, filename: str) -> tuple[int, bool]:
    """The trial table with single-row selection and its download.

    Returns the selected trial's row in the score matrix (the largest LID when nothing is
    selected) and whether a row is selected.
    """
    event = st.dataframe(
        trials,
        hide_index=True,
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": [0]}},
        height=390,
        placeholder=MISSING,
        column_config={
            "Rank": st.column_config.NumberColumn(
                "Rank", help="Position of the true speaker among the N (1 = top).", format="%d"
            ),
            "p(target)": st.column_config.NumberColumn(
                "p(target)", help="Posterior of the true speaker.", format="%.4f"
            ),
            "LID (bits)": st.column_config.NumberColumn("LID (bits)", format="%.3f"),
        },
    )
    download_table(trials, filename)
    selected = event.selection.rows
    position = selected[0] if selected and selected[0] < len(trials) else 0
    index = int(trials.index[position])
    return index, bool(selected)


def trial_card(condition: Condition, result: LIDResult, index: int, *, selected: bool) -> None:
    """The selected trial's LID, posterior of its speaker and rank, as metrics."""
    ev = condition.eval
    n_enrolled = result.n_enrolled
    st.markdown(f"**Trial {md_escape(str(ev.trial_ids[index]))}**")
    st.caption(f"Speaker {md_escape(str(ev.trial_speakers[index]))}")
    if not selected:
        st.caption("No row selected: the trial with the largest LID.")
    st.metric(
        "LID",
        f"{float(result.lid[index]):.2f} bits",
        help=f"log₂(N · p(target)); at most log₂ N = {result.ceiling:.2f} bits.",
    )
    st.metric(
        "p(target)",
        f"{float(result.p_target[index]):.3f}",
        help="The attacker's posterior of the true speaker.",
    )
    st.caption(f"A random guess gives 1/N = {1 / n_enrolled:.3f}.")
    st.metric(
        "Rank of the true speaker",
        f"{int(result.rank[index])} of {n_enrolled:,}",
        help="Position by raw score; ties count against the attacker.",
    )


def show_notices(rows: Sequence[LIDRow], flagged: Sequence[LIDRow]) -> None:
    """The localised vulnerabilities (or that there is none) and the conditions without LID."""
    for row in flagged:
        base, lid = row.one_to_one, row.lid
        assert base is not None and lid is not None  # localised_vulnerabilities: both known
        st.warning(
            f"**{md_escape(row.name)}: localised vulnerability.** Its EER is "
            f"{base.eer:.2f}, close to chance (0.5), so the 1-to-1 view calls it "
            f"private. Yet its most exposed trial discloses {lid.lid_max:.2f} bits "
            f"(LIDmax > {LOCAL_LID_MAX:g} bit): some speakers are still singled out.",
            icon=":material/crisis_alert:",
        )
    if not flagged and any(row.lid is not None for row in rows):
        st.caption(
            f"No selected condition has a near-chance EER (≥ {LOCAL_EER:g}) together with "
            f"LIDmax > {LOCAL_LID_MAX:g} bit."
        )
    missing = [row.name for row in rows if row.status == analysis.NEEDS_CALIBRATION]
    if missing:
        st.info(
            f"{', '.join(md_escape(n) for n in missing)}: no dev set, so LID needs "
            "calibration. Turn on cross-calibration above to calibrate on the eval speakers "
            "themselves (k-fold), or add a dev set on the Data page.",
            icon=":material/info:",
        )


def calibration_caption(matrix: str, options: LIDOptions, *, group: str | None = None) -> str:
    """The caption under the calibration curve binned on ``matrix``.

    ``group``: the attribute whose groups were each calibrated on their own, if any.
    """
    notes = [
        "Each marker is the share of mated pairs among the (trial, enrolled identity) pairs "
        "whose row z-score falls in the bin; its size grows with the number of pairs. The line "
        "is the fitted logistic curve."
    ]
    if matrix == "eval":
        notes.append(
            "This condition is cross-calibrated: the curve is computed on eval with the mean "
            "of the folds' calibrations (each trial's LID used its own fold's)."
        )
    if group is not None:
        notes.append(
            f"Its trials are ranked within their own {group} group, and each group is calibrated "
            f"on its own: the markers pool the {group} groups' pairs (each row z-scored within "
            "its group), the line is the trial-weighted mean of the groups' calibrations (each "
            "trial's LID used its own group's)."
        )
    if options.reference_code:
        notes.append(
            "With balanced class weights the fitted curve sits above the mated rate by design. "
            "Only its slope w matters for LID."
        )
    return " ".join(notes)


def trial_condition(with_lid: Mapping[str, LIDResult], flagged: Sequence[LIDRow]) -> str:
    """The trial explorer's condition picker; it opens on the first flagged condition."""
    names = list(with_lid)
    default = flagged[0].name if flagged else names[0]
    if st.session_state.get("vm_lid_trial_condition") not in names:
        st.session_state["vm_lid_trial_condition"] = default
    return st.selectbox(
        "Condition",
        names,
        key="vm_lid_trial_condition",
        help="Opens on a condition with a localised vulnerability, when there is one.",
    )
