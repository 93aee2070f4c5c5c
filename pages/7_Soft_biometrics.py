"""Soft biometrics: SBLS, the Soft Biometric Leakage Score (Seo et al. 2025)."""

from dataclasses import replace

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis.sbls import (
    SBLSRow,
    attack_sbls,
    attribute_frame,
    component_frame,
    embeddings_attack,
    identity_frame,
    intersection_frame,
    interval_frame,
    sbls_intervals,
    subgroup_frame,
)
from voxmetrics.metrics.sbls import attribute_columns
from voxmetrics.plots.sbls import (
    auc_matrix_figure,
    components_figure,
    confusion_figure,
    identity_figure,
    short_group,
    subgroup_figure,
)
from voxmetrics.plots.style import condition_colors
from voxmetrics.ui import sbls_page as w

NO_LABELS = "no attribute labels: add sex / age_group columns"

study = ui.page_setup("Soft biometrics")
st.title("Soft biometrics: SBLS")
ui.require_conditions(study)

w.intro()
controls = w.sbls_controls(study)
options = controls.options
rows: list[SBLSRow] = []  # one per condition: its attack (uploaded or built-in) and SBLS
for cond in study.conditions:
    if cond.name in controls.uploads:
        attack = controls.uploads[cond.name]
    elif cond.embeddings is None:
        rows.append(SBLSRow(cond, status="no embeddings: upload predictions to score it"))
        continue
    elif not attribute_columns(cond.embeddings.meta):  # as the Overview's "–": not an error
        rows.append(SBLSRow(cond, status=NO_LABELS))
        continue
    else:
        out = ui.compute(
            embeddings_attack,
            cond,
            original=controls.original,
            attacker=controls.attacker,
            spinner=f"Training the attacker and attacking {cond.name}…",
            warn=False,
        )
        if out.failed:
            rows.append(SBLSRow(cond, status="the built-in attacker failed (see above)"))
            continue
        attack = out.value
    result = ui.compute(attack_sbls, attack, options).value
    itself = (
        controls.attacker == "original"
        and controls.original is not None
        and cond.name == controls.original.name
        and cond.name not in controls.uploads
    )
    status = "original (itself)" if itself else attack.short
    rows.append(SBLSRow(cond, attack=attack, result=result, status=status))
scored = [row for row in rows if row.result is not None]
without = [row.name for row in rows if row.attack is None and row.condition.embeddings is None]
if without:
    st.info(
        f"{', '.join(ui.md_escape(n) for n in without)}: no utterance embeddings, so the "
        f"built-in attacker cannot run on {'it' if len(without) == 1 else 'them'} (it needs "
        "dev embeddings to train on and eval embeddings to attack). Upload the predictions of "
        "your own attribute classifier above, or add the embeddings on the Data page.",
        icon=":material/info:",
    )
unlabelled = [row.name for row in rows if row.status == NO_LABELS]
if unlabelled:
    st.info(
        f"{', '.join(ui.md_escape(n) for n in unlabelled)}: no attribute labels (e.g. `sex`, "
        "`age_group`) in the embeddings' metadata, so there is nothing to measure the leakage "
        "of (the report card shows –). Add the columns to the metadata (Data page) or to the "
        "manifest (Embeddings page), or upload your classifier's predictions above.",
        icon=":material/info:",
    )
if not scored:
    st.stop()
results = {row.name: row.result for row in scored}
original = controls.original.name if controls.original is not None else ""
if any(row.name not in controls.uploads for row in scored):
    who = (
        f"the built-in attacker trained on the original speech of **{ui.md_escape(original)}**"
        if controls.attacker == "original"
        else "the built-in attacker trained on each condition's own anonymised dev speech"
    )
    st.markdown(f"**Attacker:** {who} (dev split), attacking every eval utterance.")
if uploaded := [ui.md_escape(row.name) for row in scored if row.name in controls.uploads]:
    st.markdown(f"**Attacker of {', '.join(uploaded)}:** the uploaded predictions.")

st.header("Protection per condition", divider="gray")
if controls.n_boot > 0:  # a progress bar while each condition's replicates are computed
    scored = [
        replace(
            row,
            intervals=ui.compute(
                sbls_intervals,
                row.attack,
                options,
                n_boot=controls.n_boot,
                seed=controls.seed,
                bar=f"Bootstrap of {row.name}",
            ).value,
        )
        for row in scored
    ]
ui.show_table(
    component_frame(scored, intervals=controls.n_boot > 0),
    "sbls_components.csv",
    column_help=w.COMPONENT_HELP,
)
if controls.n_boot > 0:
    st.caption(
        f"95 % intervals: speaker-level bootstrap, {controls.n_boot:,} replicates, seed "
        f"{controls.seed}; the attacker's predictions are held fixed (it is not retrained)."
    )
    ui.download_table(
        interval_frame(scored), "sbls_intervals.csv", label="Intervals as numbers (CSV)"
    )
else:
    st.caption("Bootstrap intervals are off (0 replicates).")
intervals = {row.name: row.intervals for row in scored if row.intervals}
ui.show_figure(components_figure(results, intervals or None), "sbls_components", show_title=False)
st.caption(
    "Each group of bars is one condition; taller bars mean more protection. Whiskers: "
    "95 % bootstrap intervals. P_subgroup stays below 1 even for a random guess: the "
    "share of a subgroup recovered by chance (1/6 for sex × 3 age groups) is not "
    "subtracted, so a guess scores at most about 0.88, less with small noisy groups."
)

st.header("Per attribute", divider="gray")
names = list(results)
others = [n for n in names if not (controls.attacker == "original" and n == original)]
default = min(others or names, key=lambda n: results[n].sbls if results[n].sbls is not None else 2)
if st.session_state.get("vm_sbls_inspect") not in names:
    st.session_state["vm_sbls_inspect"] = default
inspect_col, attr_col = st.columns([2, 3], vertical_alignment="bottom")
inspect = inspect_col.selectbox(
    "Condition",
    names,
    key="vm_sbls_inspect",
    help="Opens on the condition with the lowest SBLS (other than the original speech).",
)
result, row = results[inspect], next(r for r in scored if r.name == inspect)
attr_names = [a.name for a in result.attributes]
if st.session_state.get("vm_sbls_attribute") not in attr_names:
    st.session_state["vm_sbls_attribute"] = attr_names[0]
attr_name = attr_col.radio("Attribute", attr_names, key="vm_sbls_attribute", horizontal=True)
attribute = next(a for a in result.attributes if a.name == attr_name)
w.attribute_metrics(attribute)
conf_col, auc_col = st.columns(2)
with conf_col:
    ui.show_figure(
        confusion_figure(attribute, title=f"{inspect}: {attr_name}, true vs predicted"),
        f"sbls_confusion_{inspect}_{attr_name}",
    )
with auc_col:
    if attribute.auc_matrix is not None:
        columns = row.attack.predictions[attr_name].classes
        title = f"{inspect}: {attr_name}, AUC per score column"
        ui.show_figure(
            auc_matrix_figure(attribute, column_labels=columns, title=title),
            f"sbls_auc_matrix_{inspect}_{attr_name}",
        )
    else:
        st.info(
            "Hard predictions: there are no class scores, so no AUC matrix. The classes were "
            "matched on the recall of each predicted class instead.",
            icon=":material/info:",
        )
st.caption(
    "Left: each row is a true class; the cells show how its utterances were predicted, after "
    "the attacker's classes were matched to ours (colour = share of the row). A strong "
    "diagonal means the attribute is readable. Right: the AUC of every true class (rows) "
    "with every score column of the attacker (columns); the outlined cells are the matching "
    "that maximises the total AUC, so a classifier with another class order, or one that "
    "swaps the classes, is scored on what it actually knows."
)
ui.show_table(
    attribute_frame(result), f"sbls_attributes_{inspect}.csv", column_help=w.ATTRIBUTE_HELP
)

st.header("Subgroups", divider="gray")
if st.session_state.get("vm_sbls_subgroup_condition") not in names:
    st.session_state["vm_sbls_subgroup_condition"] = inspect
sub_name = st.selectbox("Condition", names, key="vm_sbls_subgroup_condition")
sub_result, sub_row = results[sub_name], next(r for r in scored if r.name == sub_name)
ui.show_figure(
    subgroup_figure(sub_result, title=f"{sub_name}: joint recovery rate of each subgroup"),
    f"sbls_subgroups_{sub_name}",
)
st.caption(
    "Each marker is one intersection of all attributes; its position is the share of its "
    "utterances for which the attacker recovered **every** attribute (L_g, higher = worse), "
    "its size the number of utterances. P_subgroup = λ·(1 − worst L_g) + (1 − λ)·(lowest / "
    "highest 1 − L_g). The rate is not corrected for chance: a uniform guess already "
    "recovers the dashed share."
)
if skipped := [r for r in sub_result.subgroups if r.attribute == "all" and not r.used]:
    listed = ", ".join(f"{ui.md_escape(short_group(r.group))} (n = {r.n})" for r in skipped)
    st.warning(
        f"Left out of P_subgroup (fewer than {options.min_group_size} utterances): {listed}.",
        icon=":material/filter_alt_off:",
    )
if sub_result.p_subgroup is None:
    st.error(
        f"No subgroup of {ui.md_escape(sub_name)} has {options.min_group_size} utterances, so "
        "P_subgroup and SBLS are undefined. Lower the minimum group size.",
        icon=":material/error:",
    )
groups = intersection_frame(sub_result, sub_row.attack)
st.markdown(w.group_size_note(sub_name, groups, options.min_group_size))
ui.show_table(groups, f"sbls_intersections_{sub_name}.csv", column_help=w.INTERSECTION_HELP)
st.markdown("**Each attribute within the subgroups of the others**")
ui.show_table(
    subgroup_frame(sub_result), f"sbls_subgroups_{sub_name}.csv", column_help=w.SUBGROUP_HELP
)

st.header("Attributes and identity together", divider="gray")
if not ui.identity_reports_ready(study, names):  # LID of every condition: on request when large
    largest = w.trial_speakers(study, names)
    default = largest <= w.AUTO_IDENTITY_SPEAKERS
    if not ui.kept_switch(
        w.IDENTITY_LABEL, w.IDENTITY_KEY, default=default, help=w.IDENTITY_SWITCH_HELP
    ):
        st.info(w.identity_off(largest, len(names)), icon=":material/info:")
        st.stop()
evaluated = ui.identity_reports(study, names, topics=())
reports = {name: evaluated.get(name) for name in names}
ui.show_table(identity_frame(scored, reports), "sbls_identity.csv", column_help=w.IDENTITY_HELP)
colors = condition_colors(study.names)
ui.show_figure(
    identity_figure(results, [r for r in reports.values() if r is not None], colors=colors),
    "sbls_identity",
)
st.caption(
    "Hiding the identity and hiding the attributes are different goals. A condition can "
    "reach a near-chance EER while its voices still give away sex and age (low SBLS), or keep "
    "a worst-case identity disclosure (LIDmax) high while attributes are protected. "
    "Directions: SBLS ↑ more protection, EER ↑ more protection, LIDmax ↑ less protection."
)
