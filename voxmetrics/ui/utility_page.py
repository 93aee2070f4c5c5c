"""The Privacy vs utility page's widgets: metric pickers, the reference, SBLS and the notices.

The numbers and the front are :mod:`voxmetrics.analysis.tradeoff`'s, the ranking and the call-out
:mod:`voxmetrics.analysis.ranking`'s; here they are wired to Streamlit widgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from voxmetrics.analysis.ranking import RANKING_ATTACKER, UtilityCallout, VoicePrivacyRanking
from voxmetrics.analysis.sbls import attack_sbls, default_attack
from voxmetrics.analysis.tradeoff import (
    NO_UTILITY_HELP,
    PRIVACY_METRICS,
    UTILITY_LABELS,
    Tradeoff,
    reference_condition,
)
from voxmetrics.data.study import Study
from voxmetrics.evaluation import ConditionReport
from voxmetrics.report.frames import callouts_frame
from voxmetrics.ui.computing import compute
from voxmetrics.ui.setup import md_escape
from voxmetrics.ui.widgets import show_table, show_warnings

__all__ = [
    "FRONT_KEY",
    "PRIVACY_KEY",
    "UTILITY_KEY",
    "UtilityControls",
    "front_attacker",
    "show_callouts",
    "show_no_utility",
    "show_ranking",
    "show_ranking_stability",
    "study_sbls",
    "utility_controls",
]

PRIVACY_KEY = "vm_utility_privacy"
UTILITY_KEY = "vm_utility_utility"
REFERENCE_KEY = "vm_utility_reference"
ATTACKER_KEY = "vm_utility_attacker"
FRONT_KEY = "vm_utility_front_attacker"
NO_REFERENCE = "(none)"


@dataclass(frozen=True)
class UtilityControls:
    """What the page's pickers chose."""

    privacy: str
    """Key of the privacy number."""
    utility: str
    """Key of the utility number."""
    reference: str | None
    """The original speech's condition (None: none)."""
    attacker: str
    """The attacker whose EER places a system in a band."""


def show_no_utility() -> None:
    """The notice of a study without any utility number, saying how to add them."""
    st.info(NO_UTILITY_HELP, icon=":material/info:")


def utility_controls(study: Study, reports: Sequence[ConditionReport]) -> UtilityControls:
    """The privacy and utility pickers, the original speech and the ranking's attacker."""
    p_col, u_col = st.columns(2)
    privacy = p_col.selectbox(
        "Privacy number",
        list(PRIVACY_METRICS),
        format_func=lambda k: (
            PRIVACY_METRICS[k].label
            + (" (higher is more private)" if PRIVACY_METRICS[k].higher_is_better else " (lower)")
        ),
        key=PRIVACY_KEY,
        help="EER and ROCCH-EER (1-to-1), LIDmax, ALID and linkability (1-to-N), D_ECE "
        "(ZEBRA) or SBLS (soft biometrics, computed on demand).",
    )
    utility = u_col.selectbox(
        "Utility number",
        list(UTILITY_LABELS),
        format_func=lambda k: {"wer": "WER (lower is more useful)", "uar": "UAR (higher)"}.get(
            k, f"{UTILITY_LABELS[k]} (higher)"
        ),
        key=UTILITY_KEY,
        help="WER of an ASR system, UAR of emotion recognition, ρF0: pitch correlation "
        "between each original recording and its anonymised copy.",
    )
    r_col, a_col = st.columns(2)
    options = [*study.names, NO_REFERENCE]
    default = reference_condition(reports, study.names[0] if study.names else None)
    if st.session_state.get(REFERENCE_KEY) not in options:
        st.session_state[REFERENCE_KEY] = default if default in options else NO_REFERENCE
    reference = r_col.selectbox(
        "Original speech (reference)",
        options,
        key=REFERENCE_KEY,
        help="The condition of the unprocessed speech (every condition under the 'original' "
        "attacker is one too): drawn as a star, left out of the front, "
        "the ranking and the call-out. Default: the first condition under the 'original' "
        "attacker, else the study's first condition.",
    )
    attackers = list(dict.fromkeys(r.attacker for r in reports if r.attacker != "original"))
    attackers = attackers or [RANKING_ATTACKER]
    if st.session_state.get(ATTACKER_KEY) not in attackers:
        st.session_state[ATTACKER_KEY] = (
            RANKING_ATTACKER if RANKING_ATTACKER in attackers else attackers[0]
        )
    attacker = a_col.selectbox(
        "Ranking attacker",
        attackers,
        key=ATTACKER_KEY,
        help="Whose EER places a system in a band. VoicePrivacy 2024 ranks on the "
        "semi-informed attacker (ASV retrained on anonymised speech) only.",
    )
    return UtilityControls(
        privacy=privacy,
        utility=utility,
        reference=None if reference == NO_REFERENCE else reference,
        attacker=attacker,
    )


def study_sbls(study: Study, reports: Sequence[ConditionReport]) -> dict[str, float | None]:
    """The SBLS of each condition under the default attacker (as the Overview's card)."""
    out: dict[str, float | None] = {}
    warnings: list[str] = []
    for r in reports:
        spinner = f"Soft-biometric leakage (SBLS) of {r.name}…"
        attack = compute(default_attack, study.get(r.name), spinner=spinner, warn=False)
        leak = None if attack.value is None else compute(attack_sbls, attack.value, warn=False)
        out[r.name] = None if leak is None or leak.value is None else leak.value.sbls
        warnings += [*attack.warnings, *(leak.warnings if leak is not None else ())]
    show_warnings(list(dict.fromkeys(warnings)))
    return out


def front_attacker(tradeoff: Tradeoff, default: str) -> str | None:
    """The attacker whose plane the figure draws (its conditions, their front, the original).

    A horizontal radio over the attackers of the drawn conditions; ``default`` (the ranking's
    attacker) until the user picks another. None when no anonymised condition is drawn.
    """
    attackers = tradeoff.attackers
    if not attackers:
        return None
    if st.session_state.get(FRONT_KEY) not in attackers:
        st.session_state[FRONT_KEY] = default if default in attackers else attackers[0]
    return st.radio(
        "Attacker shown",
        attackers,
        key=FRONT_KEY,
        horizontal=True,
        help="Each attacker's conditions have their own Pareto front: a system is never "
        "dominated by itself under a weaker attacker. Default: the attacker the ranking uses.",
    )


RANKING_HELP = {
    "EER": "Equal error rate of the ranking attacker, a fraction: 0.5 = chance.",
    "WER": "Word error rate, a fraction (lower is more useful; the original LibriSpeech test "
    "speech is near 0.02).",
    "UAR": "Unweighted average recall of emotion recognition, a fraction (0.25 = chance "
    "among four emotions).",
}
"""Help of the ranking's columns: each number's unit and reference point."""

STABILITY_HELP = {
    "P(in band)": "Share of the speaker-bootstrap replicates in which the system's EER "
    "reaches the band (1 = always).",
    "Rank 95% interval": "2.5 and 97.5 percentiles of the system's rank over the replicates "
    "where it is in the band (widened to hold the point rank).",
    "P(rank 1)": "Share of all the replicates in which the system ranks first in the band.",
}
"""Help of the stability table's columns."""


def show_ranking(ranking: VoicePrivacyRanking) -> None:
    """The WER and the UAR ranking (with their CSVs) and the systems left out, with why."""
    st.caption(f"Banded on {ranking.eer_rule}.")
    if ranking.rows:
        st.markdown("Ranked by WER:")
        show_table(ranking.frame(), "voiceprivacy_ranking.csv", column_help=RANKING_HELP)
    else:
        st.info(
            f"No system under the {ranking.attacker} attacker reaches the lowest band "
            f"(EER >= {ranking.bands[0]:.0%}) with a known WER.",
            icon=":material/info:",
        )
    if ranking.uar_rows:
        st.markdown("Ranked by UAR:")
        show_table(ranking.uar_frame(), "voiceprivacy_ranking_uar.csv", column_help=RANKING_HELP)
    if ranking.unranked:
        st.markdown("Not ranked:")
        show_table(ranking.unranked_frame(), "voiceprivacy_unranked.csv")


def show_ranking_stability(ranking: VoicePrivacyRanking) -> None:
    """How firm the ranking is: P(in band), the rank's interval, P(rank 1), Kendall's τ.

    Under a Markdown heading (the page's subheaders are its three sections); says so when the
    study has no bootstrap.
    """
    st.markdown("#### How firm each rank is")
    stability = ranking.stability
    if stability is None:
        st.caption(
            "No bootstrap in the study settings (Report page): the ranking comes from one "
            "draw of the speakers, and nothing says how firm it is."
        )
        return
    if ranking.rows:
        show_table(
            ranking.stability_frame(), "voiceprivacy_stability.csv", column_help=STABILITY_HELP
        )
    st.markdown("**Chance of entering each band**")
    show_table(ranking.band_frame(), "voiceprivacy_bands.csv")
    taus = [
        f"{b:.0%}: {t['median']:.2f} [{t['low']:.2f}, {t['high']:.2f}]"
        for b, t in stability.kendall_tau.items()
        if t.get("median") is not None
    ]
    st.caption(
        f"From {stability.n_replicates} speaker-bootstrap replicates, each ranked by the same "
        "rule, as in the literature on challenge rankings (Maier-Hein et al. 2018; the "
        "challengeR package). "
        + (
            "Kendall's τ between the point ranking and the replicates' (median [95 %], by "
            "band; 1 = the same order): " + "; ".join(taus) + ". "
            if taus
            else ""
        )
        + " ".join(f"{md_escape(n)}." for n in stability.notes)
    )


def show_callouts(callouts: Sequence[UtilityCallout], rule: str) -> None:
    """The auditors' call-out: a warning per system and the table, or all clear."""
    if not callouts:
        st.success(f"No ranked system is called out ({rule}).", icon=":material/check_circle:")
        return
    names = ", ".join(f"**{md_escape(c.condition)}**" for c in callouts)
    st.warning(
        f"Ranked as private by the EER bands, yet still leaking: {names}. Called out: {rule}.",
        icon=":material/warning:",
    )
    show_table(callouts_frame(callouts), "utility_callouts.csv")
