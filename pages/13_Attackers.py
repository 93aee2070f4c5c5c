"""Attackers: every back-end side by side on a condition's embeddings, the strongest on dev."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.strongest import STRONGEST_RULE, strongest_attackers
from voxmetrics.evaluation import evaluate_condition
from voxmetrics.evaluation.attackers import BACKEND_COLUMNS, compare_attackers
from voxmetrics.plots.attackers import attackers_figure
from voxmetrics.ui import attackers_page as text

study = ui.page_setup("Attackers")
st.title("Attackers: is the attacker strong enough?")
ui.require_conditions(study)
st.markdown(text.INTRO)

names, without = text.conditions_with_embeddings(study)
if without:
    st.caption(
        f"Not attacked here: {', '.join(ui.md_escape(n) for n in without)}: no utterance "
        "embeddings (imported scores). The back-ends score embeddings: load the condition's "
        "embeddings on the Data page, or extract them from audio on the Embeddings page."
    )
if not names:
    st.info(
        "No condition of the study has utterance embeddings, so no attacker back-end can be "
        "tried. Add a condition from embeddings (Data page) or from audio (Embeddings page), "
        "or load the demo study from the sidebar: its conditions have embeddings.",
        icon=":material/info:",
    )
    st.stop()

choices = ui.compute(text.attacker_choices, study, names, cache=False).value
if choices is None:
    st.stop()
condition = study.get(choices.condition)
original = None if choices.original is None else study.get(choices.original).embeddings
options = {**study.settings.evaluate_options(), "bootstrap": 0}  # the side-by-side numbers
cmp = ui.compute(
    compare_attackers,
    condition,
    backends=choices.backends,
    select_by=choices.select_by,
    calibrate=choices.calibrate,
    original=original,
    options=options,
    evaluator=ui.cached(evaluate_condition),
    seed=study.settings.seed,
    bar=f"Trying every attacker on {choices.condition}",
    warn=choices.condition,
).value
if cmp is None:
    st.stop()

st.caption(
    f"Attackers of **{ui.md_escape(choices.condition)}** ({condition.attacker}): each back-end "
    "trained on the attacker's own data (train split, else dev), evaluated on eval."
)
st.subheader("The strongest, chosen on dev")
text.show_strongest(cmp)
text.show_weak_attacker(cmp)

st.subheader("Every back-end side by side")
stem = f"attackers_{choices.condition}"
ui.show_table(cmp.frame(), f"{stem}.csv", column_help=BACKEND_COLUMNS)
text.show_skipped(cmp)
st.caption(
    "Dev: the figure each back-end is compared by (out of sample: held-out speakers). Eval: "
    "what each back-end's scores give, evaluated as every condition is (no bootstrap here). "
    "The strongest is the one reported; the others show how much the attacker matters."
)
ui.show_figure(attackers_figure(cmp), stem, show_title=False)

st.subheader("Add attackers to the study")
text.add_buttons(cmp)

st.subheader("The attacker each system is judged against")
judged = ui.compute(strongest_attackers, study.conditions).value
if judged is not None and judged.choices:
    ui.show_table(judged.frame(), "attackers_judged.csv")
    st.caption(f"The rule: {STRONGEST_RULE}.")
elif judged is not None:
    st.caption(
        "No condition of the study carries an attacker recipe yet: each is judged against "
        "the scores it was given. Add the strongest attacker's condition above, and the "
        "report card, the call-outs and the ranking judge it."
    )
