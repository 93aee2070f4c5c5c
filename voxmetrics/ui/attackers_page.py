"""The Attackers page's widgets: the choices, the strongest, the warning, the actions.

The numbers come from :mod:`voxmetrics.evaluation.attackers` (every back-end of one condition,
evaluated) and :mod:`voxmetrics.analysis.strongest` (which attacker the verdicts judge); this
module holds what the page shows around them: its prose, the pickers, the strongest's summary,
the weak-attacker warning, the buttons that add conditions to the study, and the attacker lines
the Overview shows under the report card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from voxmetrics.analysis.attackers import SELECT_METRICS
from voxmetrics.data.recipe import WEAK_ATTACKER
from voxmetrics.data.study import Condition, Study
from voxmetrics.embeddings.backends import BACKENDS
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.evaluation.attackers import AttackerComparison
from voxmetrics.evaluation.card import ReportCard
from voxmetrics.ui.notes import md_escape
from voxmetrics.ui.state import get_study, get_subset, notify, set_study

__all__ = [
    "BACKEND_HELP",
    "INTRO",
    "NO_ORIGINAL",
    "AttackerChoices",
    "add_buttons",
    "attacker_choices",
    "conditions_with_embeddings",
    "show_card_attackers",
    "show_skipped",
    "show_strongest",
    "show_weak_attacker",
]

INTRO = (
    "Every privacy number holds **for the attacker whose scores it was given**. A weak "
    "attacker makes any anonymiser look private, so the attacker is part of the measurement. "
    "Here every attacker back-end VoxMetrics has is tried on a condition's utterance "
    "embeddings (cosine, LDA, WCCN, PLDA, score normalisation, a mapping to the original "
    "voices, fusion, max enrolment), each **trained on the attacker's own data** (the `train` "
    "split, else dev with its dev figures cross-fitted over speakers; never eval). The "
    "strongest is **chosen on dev** (lowest dev EER by default) and **reported on eval**, and "
    "every number of every back-end is shown beside it. When the attacker may be too weak "
    "(Panariello et al. 2025), the page says so, with its reasons."
)
"""The page's opening paragraph."""
NO_ORIGINAL = "(none)"
"""The original-speech picker's entry for none."""
BACKEND_HELP = (
    "The attacker back-ends to try (docs, Methods > Attackers). Procrustes maps anonymised "
    "embeddings to the original ones: it needs the original voices (below) and an attacker "
    "who knows the anonymiser (lazy- or semi-informed). Fusion weighs the others' scores."
)
ORIGINAL_HELP = (
    "A condition whose embeddings are the original (unprotected) voices. The weak-attacker "
    "check applies the attacker to them: one that cannot verify even unprotected speech well "
    "cannot show that the anonymised speech is protected. Its utterances (same utt_id) are "
    "also the pairs the mapping attack (procrustes) learns from."
)
SELECT_HELP = (
    "The dev figure the strongest back-end is chosen by (lowest EER by default; highest "
    "TAR at FAR 1 % or linkability). It is chosen on dev and reported on eval, never chosen "
    "on eval."
)


def conditions_with_embeddings(study: Study) -> tuple[list[str], list[str]]:
    """The conditions the back-ends can score (those with embeddings), and the others."""
    with_es = [c.name for c in study.conditions if c.embeddings is not None]
    return with_es, [n for n in study.names if n not in with_es]


@dataclass(frozen=True)
class AttackerChoices:
    """What the page's pickers chose."""

    condition: str
    """The condition attacked."""
    backends: tuple[str, ...]
    """The back-ends to try."""
    select_by: str
    """The dev metric of the choice."""
    calibrate: bool
    """Whether the strongest's scores are calibrated to LLRs on dev."""
    original: str | None
    """The condition holding the original voices (None: none)."""


def _default_original(study: Study, names: Sequence[str]) -> str:
    """The first condition under attacker ``original`` with embeddings, else none."""
    return next(
        (n for n in names if study.get(n).attacker == "original"),
        NO_ORIGINAL,
    )


def attacker_choices(study: Study, names: Sequence[str]) -> AttackerChoices:
    """The pickers: the condition, the back-ends, the dev metric, calibration, original voices."""
    cond_col, select_col, original_col = st.columns([2, 1, 2])
    condition = cond_col.selectbox(
        "Condition",
        list(names),
        key="vm_attackers_condition",
        help="A condition with utterance embeddings: its anonymisation system under its "
        "attacker knowledge level. Every back-end scores its embeddings again.",
    )
    select_by = select_col.selectbox(
        "Choose the strongest by", list(SELECT_METRICS), key="vm_attackers_select", help=SELECT_HELP
    )
    options = [NO_ORIGINAL, *(n for n in names if n != condition)]
    default = _default_original(study, options[1:])
    original = original_col.selectbox(
        "Original voices (for the checks)",
        options,
        index=options.index(default),
        key=f"vm_attackers_original_{condition}",
        help=ORIGINAL_HELP,
    )
    backends = st.multiselect(
        "Back-ends", list(BACKENDS), default=list(BACKENDS), key="vm_attackers_backends",
        help=BACKEND_HELP,
    )  # fmt: skip
    calibrate = st.toggle(
        "Calibrate the strongest's scores to likelihood ratios (learned on dev)",
        key="vm_attackers_calibrate",
        help="Logistic-regression calibration on its dev scores: its scores become natural-log "
        "LLRs (actual DCF and Cllr then mean what they say). It changes no EER or ranking.",
    )
    if not backends:
        raise VoxMetricsInputError("Choose at least one back-end to try (e.g. cosine and plda).")
    return AttackerChoices(
        condition=condition,
        backends=tuple(backends),
        select_by=select_by,
        calibrate=bool(calibrate),
        original=None if original == NO_ORIGINAL else original,
    )


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def show_strongest(cmp: AttackerComparison) -> None:
    """The strongest back-end: chosen on dev by its dev figure, reported on eval."""
    o = cmp.sweep.strongest
    report = cmp.reports.get(o.name)
    eer = None if report is None else report.baseline.eer
    cosine = cmp.reports.get("cosine")
    trained = "" if o.recipe is None else o.recipe.trained_on
    if cmp.sweep.select_by is None:
        lead = f"**{o.name}** is the only back-end tried"
    else:
        rate = cmp.select_by in ("eer", "eer_rocch", "tar_at_far", "linkability")
        value = _pct(o.dev_value) if rate else "—" if o.dev_value is None else f"{o.dev_value:.3f}"
        lead = (
            f"**{o.name}** is the strongest of {sum(x.ok for x in cmp.sweep.outcomes)} "
            f"back-ends: chosen on dev by its {cmp.select_by} ({value})"
        )
    text = f"{lead}, reported on eval: EER {_pct(eer)}"
    if cosine is not None and o.name != "cosine":
        text += f" (cosine scoring, today's attacker: {_pct(cosine.baseline.eer)})"
    trained_text = f" Trained on: {trained}." if trained and trained != "none" else ""
    st.success(text + "." + trained_text, icon=":material/security:")
    for note in cmp.notes:
        st.caption(md_escape(note))


def show_skipped(cmp: AttackerComparison) -> None:
    """The back-ends that could not be tried here, each with why (a caption)."""
    skipped = [o for o in cmp.sweep.outcomes if not o.ok]
    if skipped:
        st.caption(
            "Not tried here: "
            + "; ".join(
                f"**{o.name}**: {md_escape((o.skipped or '').rstrip('.'))}" for o in skipped
            )
            + "."
        )


def show_weak_attacker(cmp: AttackerComparison) -> None:
    """The weak-attacker warning with its reasons, or which checks ran and passed."""
    check = cmp.check
    if check.weak:
        reasons = "\n".join(f"- {md_escape(r)}" for r in check.reasons)
        st.warning(
            f"**{WEAK_ATTACKER[0].upper()}{WEAK_ATTACKER[1:]}.**\n\n{reasons}",
            icon=":material/warning:",
        )
    if check.ran:
        fired = {f.check for f in check.findings}
        st.caption(
            "Weak-attacker checks run (docs, Methods > Attackers): "
            + ", ".join(f"{c} ({'fired' if c in fired else 'passed'})" for c in check.ran)
            + "."
            + ("" if "original_speech" in check.ran else " Choose the original voices above "
               "to check the attacker on unprotected speech too.")
        )  # fmt: skip
    else:
        st.caption(
            "No weak-attacker check could run: choose the original voices above, or try the "
            "trained back-ends beside cosine."
        )


def _add(conditions: Sequence[Condition]) -> None:
    """Add (or replace) ``conditions`` in the whole study, with a notice."""
    study = get_study()
    for c in conditions:
        study = study.with_condition(c)
    set_study(study)
    names = ", ".join(c.name for c in conditions)
    notify("success", f"Added {names} to the study.")


def add_buttons(cmp: AttackerComparison) -> None:
    """The buttons that add the strongest attacker's condition, or every back-end's.

    A back-end whose eval scores are the condition's own (cosine scoring of the embeddings the
    condition was scored from) adds nothing new, and is not added.
    """
    own = cmp.condition.eval.content_hash
    same = {o.name for o in cmp.sweep.outcomes if o.ok and o.eval.content_hash == own}  # type: ignore[union-attr]
    ok = [o.name for o in cmp.sweep.outcomes if o.ok and o.name not in same]
    if get_subset() is not None:
        st.info(
            "The page shows a subset of the trials (sidebar): choose **All trials** to add "
            "attackers' conditions, which hold every trial.",
            icon=":material/info:",
        )
        return
    st.caption(
        f"Each is named **{md_escape(cmp.name)} [back-end]**, keeps the condition's attacker "
        "knowledge level, embeddings and utility, and carries its attacker recipe (saved with "
        "the study). The report card, the call-outs and the ranking then judge the strongest "
        "attacker of the system (lowest dev EER) and say which."
    )
    if same:
        st.caption(f"{', '.join(sorted(same))}: the condition's own scores (nothing new to add).")
    with st.container(horizontal=True, gap="small"):
        st.button(
            f"Add the strongest ({cmp.strongest})",
            key="vm_attackers_add_strongest",
            on_click=_add,
            args=(cmp.conditions(),),
            icon=":material/add:",
            type="primary",
            disabled=cmp.strongest in same,
            help="The strongest is the condition's own scores: it is judged as it is."
            if cmp.strongest in same
            else None,
        )
        st.button(
            f"Add every back-end ({len(ok)})",
            key="vm_attackers_add_all",
            on_click=_add,
            args=(cmp.conditions(ok),),
            icon=":material/playlist_add:",
            disabled=not ok,
        )


def show_card_attackers(card: ReportCard) -> None:
    """Under the report card: the weak-attacker warnings, then which attacker each row judges."""
    for name, why in card.weak_attackers.items():
        st.warning(f"**{md_escape(name)}**: {md_escape(why)}.", icon=":material/warning:")
    lines = [f"- **{md_escape(n)}**: {md_escape(t)}" for n, t in card.attackers.items()]
    lines += [
        f"- *{md_escape(n)}* (not on the card): {md_escape(t)}" for n, t in card.not_judged.items()
    ]
    if lines:
        st.markdown("**Which attacker each row is judged against**\n\n" + "\n".join(lines))
        st.page_link(
            "pages/13_Attackers.py", label="Attackers: every back-end", icon=":material/security:"
        )
