"""The Linkage page's text: its introduction, the assumptions beside each figure.

Also the help of its summary table and the call that fetches each condition's linkage numbers
(:func:`linkage_reports`). No computation: the numbers come from the ``linkability`` and
``singling_out`` parts of each condition's report and :mod:`voxmetrics.analysis.linkage`.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from voxmetrics.analysis.linkage import UtteranceOverlap
from voxmetrics.data.study import Study
from voxmetrics.evaluation import ConditionReport
from voxmetrics.metrics.similarity import VoiceDistinctiveness
from voxmetrics.ui.setup import md_escape
from voxmetrics.ui.widgets import part_reports

__all__ = [
    "AUTO_CURVES_SPEAKERS",
    "CALIBRATIONS",
    "CURVES_HELP",
    "CURVES_LABEL",
    "DEID_HELP",
    "G_VD_HELP",
    "INTRO",
    "LENGTHS_HELP",
    "LINKAGE_PARTS",
    "MEAN_SCORE_NOTES",
    "SINGLING_OUT_NOTES",
    "SINGLING_OUT_VS_N_NOTES",
    "SUMMARY_HELP",
    "assumptions",
    "conversation_notes",
    "curves_off",
    "legal_notes",
    "linkability_notes",
    "linkage_reports",
    "names_list",
    "pick_pair",
    "similarity_metrics",
    "similarity_notes",
    "similarity_warnings",
    "too_many_utterances",
]

LINKAGE_PARTS = ("linkability", "singling_out")
"""The parts of a condition's report the Linkage page shows (with the EER every report has)."""

CALIBRATIONS = {"pav": "PAV + Laplace (VoicePrivacy 2022)", "raw": "Raw scores (VoicePAT)"}
"""Calibrations of the similarity matrices' pair scores and their labels."""


def assumptions(text: str) -> None:
    """The bordered box of assumptions beside a figure."""
    with st.container(border=True):
        st.markdown("**Assumptions**\n\n" + text)


def linkage_reports(study: Study, names: Sequence[str]) -> dict[str, ConditionReport]:
    """The linkage numbers of each chosen condition, under the study's settings, by name.

    A condition that another page has already evaluated in full (the same options: the
    Overview's reports) gives that report; the others are evaluated for
    :data:`LINKAGE_PARTS` alone (:func:`~voxmetrics.ui.widgets.part_reports`, a progress bar
    each), the same numbers without LID, SRD or ZEBRA. Their warnings about linkage go to the
    page's notes; a condition whose input is bad shows its message and is left out. In study
    order.
    """
    return part_reports(
        study,
        names,
        parts=LINKAGE_PARTS,
        label="Linkage numbers",
        topic="Linkage",
    )


def names_list(names: Sequence[str]) -> str:
    """Condition names in bold, comma-separated, Markdown-escaped."""
    return ", ".join(f"**{md_escape(n)}**" for n in names)


INTRO = (
    "Under the GDPR, data count as anonymous only if no one can **single out** a person, "
    "**link** records of the same person, or **infer** information about them (Article 29 "
    "Working Party, Opinion 05/2014, endorsed by the EDPB). Vauquier et al. 2025 turn the first "
    "two into metrics for speech, and the French data protection authority (CNIL) validated "
    "them: **Linkability**, how often an anonymised utterance is matched to its own speaker "
    "among N' enrolled speakers, and **Singling out**, how often a predicate built from one "
    "enrolled voice isolates exactly one person of a population of N. The VoicePrivacy 2022 "
    "voice similarity matrices add **DeID** (how much the anonymised voices have stopped "
    "resembling their originals) and **G_VD** (how distinguishable the anonymised voices "
    "remain among themselves). Every figure lists the assumptions it rests on."
)


def linkability_notes(draws: int | None, banded: bool) -> str:
    """Assumptions of linkability vs N' (``draws``: the sampled estimate's, None if off)."""
    return (
        "- Linked = own speaker scores **at least as high as** every other candidate: **a "
        "tie counts as a link**, as the authors' public code (Vauquier et al. 2025; their "
        "eq. 2 reads strictly, which is SRD's rank-1 rate).\n"
        "- The N' candidates: a random subset of the N enrolled that contains the own "
        "speaker.\n"
        "- Lines: the **exact expectation** over all such subsets, mean over trials of "
        "C(N−1−b, N'−1) / C(N−1, N'−1), b = others scoring above the own speaker. No sampling "
        "noise.\n"
        + (
            f"- Open markers: **sampled** as in the paper, {draws} random subsets per trial; "
            "bars ± 1 SD of the per-draw linkability.\n"
            if draws is not None
            else "- A **sampled** estimate (the paper's procedure) can be added above.\n"
        )
        + "- At N' = N: the Linkability of the matrix. Dashed: chance 1/N'.\n"
        + (
            "- Shaded: the 95 % speaker-bootstrap band of each line (the study's replicates)."
            if banded
            else "- No band: the study's bootstrap is off (Report page)."
        )
    )


AUTO_CURVES_SPEAKERS = 200
"""Up to this many trial speakers the singling-out curves are drawn on the page's first visit.

Beyond, on request (:data:`CURVES_LABEL`): singling out vs N, the conversation length and
Vauquier et al.'s figure 1 run singling out on hundreds of populations per condition, about
10 CPU seconds per condition at 1,000 speakers (the page's first visit, without them, about 6
for five conditions)."""

CURVES_LABEL = "Singling out vs N, conversation length and Vauquier et al. 2025, figure 1"
CURVES_HELP = (
    "Singling out on 20 random populations of each size N, at each conversation length L, "
    "and the paper's figure 1 (singling out, linkability and 1 − EER against the number of "
    "speakers for each L). They run singling out hundreds of times per condition: on by "
    f"default up to {AUTO_CURVES_SPEAKERS} trial speakers, on request beyond. Computed once "
    "per condition and kept."
)


def curves_off(n_speakers: int, n_conditions: int) -> str:
    """Why the curves are not drawn yet (the study is large) and how to draw them."""
    return (
        f"The three singling-out curves are off: with {n_speakers:,} trial speakers they run "
        f"singling out on hundreds of populations for each of the {n_conditions} condition(s) "
        "(about 10 seconds of computing per condition at 1,000 speakers, with a progress bar). "
        "Turn them on with the switch above; the numbers on this page and in the summary do not "
        "depend on them."
    )


SINGLING_OUT_NOTES = (
    "- Population: the N trial speakers of the eval split; K trial utterances give 1 held-out "
    "and M = K − 1 calibration embeddings.\n"
    "- Predicate: *cosine to an enrolled speaker's profile > threshold*. **Threshold rule**: "
    "midpoint of the M-th and (M+1)-th highest calibration scores, so it holds for about 1/N "
    "of the population.\n"
    "- Isolated = **exactly one** held-out embedding strictly above it, whoever it belongs "
    "to.\n"
    "- Speakers with fewer than 2 trial utterances are left out (as the paper).\n"
    "- Up to 10 utterances per speaker, drawn at random; F = the largest K folds (fold f "
    "holds out utterance f mod K of each speaker); 5 draws, seed 0; mean over enrolled "
    "speakers, folds and draws.\n"
    "- Grey ticks: chance (1 − 1/N)^(N−1) → 1/e ≈ 0.37, each condition at its full N."
)
SINGLING_OUT_VS_N_NOTES = (
    "- Population of N speakers: 20 random sets of N of the speakers (one at the full N), seed "
    "0; their enrolment profiles are the predicates.\n"
    "- Same threshold and isolation rules as above; error bars: one SD over the sets.\n"
    "- Dashed: chance (1 − 1/N)^(N−1)."
)


def conversation_notes(longest: int) -> str:
    """Assumptions of the conversation-length figure, up to L = ``longest``."""
    return (
        "- Each speaker's trial embeddings are L2-normalised and averaged in consecutive "
        "groups of L (file order); an incomplete last group is dropped; enrolment profiles "
        "unchanged.\n"
        f"- L = 1, 2, 4, … {longest}: while every speaker keeps 2 groups (one held out, one "
        "calibrating).\n"
        "- Singling out as above; linkability against all N enrolled.\n"
        "- Dashed: chance (independent of L)."
    )


LENGTHS_HELP = (
    "Comma-separated; the paper uses 1, 3 and 30. The default ends with the longest length "
    "the data allow (at most 30: the median number of trial utterances per speaker). A length "
    "is skipped for a condition where no speaker has L trial utterances."
)


def legal_notes(skipped: Sequence[str]) -> str:
    """Assumptions of Vauquier et al.'s figure 1, with the (condition, L) skipped."""
    return (
        "- Rows: singling out vs population size N; linkability and 1 − EER vs N' enrolled "
        "candidates; columns: L.\n"
        "- EER at N': ROCCH-EER of the pooled scores when each trial meets its own speaker and "
        "N' − 1 others drawn at random; mean of 5 draws, seed 0.\n"
        "- Linkability: exact expectation over the candidate sets; a tie is a link, as the "
        "authors' code.\n"
        "- Legend: condition (attacker). Dashed: chance (1 − 1/N)^(N−1), 1/N', 0.5."
        + (f"\n- Skipped (too few utterances): {', '.join(skipped)}." if skipped else "")
    )


DEID_HELP = (
    "1 − D_diag(M_oa) / D_diag(M_oo): 0 = the anonymised voices are as recognisable as the "
    "originals, 1 = fully de-identified."
)
G_VD_HELP = (
    "10 log10(D_diag(M_aa) / D_diag(M_oo)): 0 dB = the anonymised voices are as "
    "distinguishable among themselves as the originals; negative = less."
)


def similarity_notes(
    original: str, anonymised: str, calibration: str, overlap: UtteranceOverlap, grouped: bool
) -> str:
    """Assumptions of the three similarity matrices."""
    ordering = "sex, then id (white lines between groups)" if grouped else "id"
    return (
        f"- Utterances: every enrolment and trial utterance of the eval split; originals "
        f"from **{md_escape(original)}**, anonymised from **{md_escape(anonymised)}**.\n"
        "- M[i, j] = sigmoid(mean LLR over the utterance pairs of speakers i and j **whose "
        "utterance ids differ**): an utterance is never compared with itself or with its "
        f"own anonymised version ({overlap.shared:,} of {overlap.anonymised:,} anonymised "
        "utterances share an original's id). Then symmetrised, (M + Mᵀ) / 2.\n"
        f"- **Calibration** (now: {CALIBRATIONS[calibration]}): *PAV + Laplace*, the default "
        "of VoicePrivacy 2022, pools each matrix's pair scores (same speaker = target) and "
        "turns them into LLRs by pool-adjacent-violators with Laplace's rule, so every LLR is "
        "finite; *raw*, as VoicePAT, puts the cosine scores themselves into the sigmoid.\n"
        "- D\\_diag(M) = |mean of the diagonal − mean off it|. DeID = 1 − D\\_diag(M\\_oa) / "
        "D\\_diag(M\\_oo): 0 = as recognisable as the originals, 1 = fully de-identified. "
        "G\\_VD = 10 log10(D\\_diag(M\\_aa) / D\\_diag(M\\_oo)) dB: 0 = as distinguishable "
        "among themselves as the originals, negative = less.\n"
        f"- Speakers ordered by {ordering}; the hover gives the pair, the value, the mean raw "
        "cosine score and the number of ordered utterance pairs."
    )


MEAN_SCORE_NOTES = (
    "- Needs only the score matrix, so it also covers conditions without embeddings.\n"
    "- Rows: trial speakers, the mean over all their trials; columns: enrolled speakers, own "
    "columns first, so mated cells lie on the diagonal.\n"
    "- Scores as given (cosine for embeddings), not calibrated: compare cells within a row, "
    "not across conditions.\n"
    "- A bright diagonal: each speaker's trials still resemble their own enrolment more than "
    "anybody else's."
)
SUMMARY_HELP = {
    "Linkability": "Share of trials whose own speaker scores highest among all N enrolled (a "
    "tie counts as a link, as the authors' code).",
    "Chance 1/N": "Linkability of a blind guess.",
    "Singling out": "Probability that an enrolled voice's threshold predicate isolates exactly "
    "one of the N trial speakers (needs embeddings).",
    "N speakers": "The population singled out from: trial speakers of the eval split.",
    "Chance (1-1/N)^(N-1)": "Singling out by a random predicate of mean 1/N (→ 1/e).",
    "DeID": "De-identification against the original voices (needs embeddings).",
    "G_VD (dB)": "Gain of voice distinctiveness against the original voices.",
    "Linkability 95% CI": "Speaker-level bootstrap (the study's replicates, Report page).",
    "Singling out 95% CI": "Predicate speakers resampled; the population held fixed.",
    "DeID 95% CI": "Speakers of the similarity matrices resampled; matrices held fixed.",
}
"""Column help of the summary table."""


def similarity_metrics(d: VoiceDistinctiveness) -> None:
    """DeID, G_VD and the three D_diag side by side."""
    cols = st.columns(5)
    cols[0].metric("DeID", f"{d.deid:.3f}", help=DEID_HELP)
    cols[1].metric("G_VD", f"{d.g_vd:.2f} dB", help=G_VD_HELP)
    cols[2].metric("D_diag(M_oo)", f"{d.d_diag_oo:.3f}")
    cols[3].metric("D_diag(M_oa)", f"{d.d_diag_oa:.3f}")
    cols[4].metric("D_diag(M_aa)", f"{d.d_diag_aa:.3f}")


def similarity_warnings(
    left_out: Sequence[str], overlap: UtteranceOverlap, original: str, anonymised: str
) -> None:
    """Say which speakers the matrices left out, and warn when no utterance id is shared."""
    if left_out:
        st.caption(
            f"{len(left_out)} speaker(s) with a single utterance in a set are left out of the "
            "three matrices (a same-speaker pair needs two utterances): "
            + ", ".join(md_escape(s) for s in left_out[:10])
            + (" ..." if len(left_out) > 10 else "")
        )
    if overlap.shared == 0:
        st.warning(
            f"None of the {overlap.anonymised:,} anonymised utterances shares an utterance id "
            f"with an original one: the matrices assume that **{md_escape(anonymised)}** is an "
            f"anonymised copy of **{md_escape(original)}** that keeps each utterance's id. "
            "Check that you picked the right pair.",
            icon=":material/warning:",
        )


def too_many_utterances(size: int, limit: int) -> str:
    """Why the dashboard does not draw the matrices of ``size`` utterances."""
    return (
        f"The matrices score every pair of utterances of the eval split ({size:,} utterances "
        f"here, more than the dashboard's {limit:,}). Run `python -m voxmetrics similarity "
        "--original ... --anonymised ...` instead."
    )


def pick_pair(embedded: Sequence[str], preferred: Sequence[str]) -> tuple[str, str, str]:
    """Widgets: the original and the anonymised condition, and the calibration.

    The original defaults to "plain" when there is one, the anonymised set to the first of
    ``preferred`` (the chosen conditions) that is not the original.
    """
    state = st.session_state
    if state.get("vm_link_original") not in embedded:
        state["vm_link_original"] = "plain" if "plain" in embedded else embedded[0]
    pick_o, pick_a, pick_c = st.columns([1, 1, 1.6], vertical_alignment="bottom")
    original = pick_o.selectbox(
        "Original (unprocessed) voices",
        embedded,
        key="vm_link_original",
        help="The condition whose embeddings are the original voices (the demo's 'plain').",
    )
    candidates = [n for n in embedded if n != original] or list(embedded)
    if state.get("vm_link_anonymised") not in candidates:
        state["vm_link_anonymised"] = ([n for n in preferred if n in candidates] or candidates)[0]
    anonymised = pick_a.selectbox("Anonymised voices", candidates, key="vm_link_anonymised")
    calibration = pick_c.radio(
        "Calibration of the pair scores",
        list(CALIBRATIONS),
        format_func=CALIBRATIONS.get,
        horizontal=True,
        key="vm_link_calibration",
    )
    return original, anonymised, calibration
