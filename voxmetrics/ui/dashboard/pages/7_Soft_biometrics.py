"""Soft biometrics: SBLS, the Soft Biometric Leakage Score (Seo et al. 2025)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.metrics.sbls import (
    DEFAULT_ATTACKER,
    DEFAULT_LAMBDA,
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_WEIGHTS,
)
from voxmetrics.plots.sbls import (
    auc_matrix_figure,
    components_figure,
    confusion_figure,
    identity_figure,
    short_group,
    subgroup_figure,
)
from voxmetrics.plots.style import condition_colors
from voxmetrics.ui.cache_sbls import (
    SBLSOptions,
    SBLSRow,
    attribute_frame,
    builtin_attack,
    component_frame,
    identity_frame,
    intersection_frame,
    interval_frame,
    sbls_intervals,
    sbls_result,
    subgroup_frame,
    uploaded_attack,
    weights_ok,
)

ORIGINAL = "vm_sbls_original"
ATTACKER = "vm_sbls_attacker"
LAMBDA = "vm_sbls_lambda"
WEIGHT_KEYS = ("vm_sbls_w_attr", "vm_sbls_w_assoc", "vm_sbls_w_sub")
MIN_GROUP = "vm_sbls_min_group"
BOOT = "vm_sbls_boot"
SEED = "vm_sbls_seed"
UPLOADS = "vm_sbls_uploads"
UPLOAD_CONDITION = "vm_sbls_upload_condition"
UPLOAD_FILE = "vm_sbls_upload_file"
INSPECT = "vm_sbls_inspect"
ATTRIBUTE = "vm_sbls_attribute"
SUBGROUP_CONDITION = "vm_sbls_subgroup_condition"
ATTACKERS = {
    "anonymised": "Trained on anonymised speech (informed attacker; default)",
    "original": "Trained on original speech (ignorant attacker)",
}
DEFAULTS = {
    ATTACKER: DEFAULT_ATTACKER,
    LAMBDA: DEFAULT_LAMBDA,
    WEIGHT_KEYS[0]: DEFAULT_WEIGHTS[0],
    WEIGHT_KEYS[1]: DEFAULT_WEIGHTS[1],
    WEIGHT_KEYS[2]: DEFAULT_WEIGHTS[2],
    MIN_GROUP: DEFAULT_MIN_GROUP_SIZE,
    BOOT: 200,
    SEED: 0,
}

study = ui.page_setup("Soft biometrics")
st.title("Soft biometrics: SBLS")
ui.require_conditions(study)

# ---------------------------------------------------------------- 1. what it measures
st.markdown(
    "**Does anonymised speech still tell an attacker the speaker's sex or age group?** "
    "Hiding *who* speaks is not enough if a classifier can still read *what kind of person* "
    "speaks. The **Soft Biometric Leakage Score** (SBLS, Seo et al. 2025) attacks every eval "
    "utterance with a fixed attribute classifier and combines three parts:"
)
st.markdown(
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

# ---------------------------------------------------------------- controls
for key, value in DEFAULTS.items():
    st.session_state.setdefault(key, value)
uploads = st.session_state.setdefault(UPLOADS, {})
for name in list(uploads):  # drop uploads of conditions that left the study
    if name not in study.names:
        del uploads[name]

with_embeddings = [c.name for c in study.conditions if c.embeddings is not None]
if with_embeddings and st.session_state.get(ORIGINAL) not in with_embeddings:
    st.session_state[ORIGINAL] = "plain" if "plain" in with_embeddings else with_embeddings[0]

with st.container(border=True):
    attacker_col, original_col = st.columns([3, 2])
    attacker_kind = attacker_col.radio(
        "Built-in attacker",
        list(ATTACKERS),
        format_func=ATTACKERS.get,
        key=ATTACKER,
        horizontal=True,
        disabled=not with_embeddings,
        help="A logistic regression per attribute, trained on the dev-split embeddings and "
        "applied to every eval utterance. Trained on the condition's own anonymised dev "
        "speech (the default, as in the study report and the sbls command), it is an attacker "
        "who knows the anonymiser; trained on original speech, one who does not.",
    )
    original_name = original_col.selectbox(
        "Condition with the original speech",
        with_embeddings or ["(no condition has embeddings)"],
        key=ORIGINAL if with_embeddings else "vm_sbls_original_none",
        disabled=not with_embeddings or attacker_kind != "original",
        help="The unanonymised embeddings the ignorant attacker is trained on (their dev "
        "split). In the demo study this is 'plain'.",
    )
    lam_col, w1_col, w2_col, w3_col, min_col, boot_col, seed_col = st.columns(
        [2, 1, 1, 1, 1.2, 1.2, 1]
    )
    lam = lam_col.slider(
        "λ of P_subgroup",
        min_value=0.0,
        max_value=1.0,
        step=0.05,
        key=LAMBDA,
        help="Weight of the worst subgroup (1 − max L_g) against the spread between subgroups "
        "(min (1 − L_g) / max (1 − L_g)). The authors use 0.7.",
    )
    weights = tuple(
        float(col.number_input(label, min_value=0.0, max_value=1.0, step=0.05, key=key))
        for col, label, key in zip(
            (w1_col, w2_col, w3_col), ("w_attr", "w_assoc", "w_sub"), WEIGHT_KEYS, strict=True
        )
    )
    min_group = min_col.number_input(
        "Min group size",
        min_value=1,
        max_value=100_000,
        step=1,
        key=MIN_GROUP,
        help="Sex × age groups with fewer eval utterances are left out of P_subgroup and "
        "listed. The paper's value is not known; VoxMetrics uses 30.",
    )
    n_boot = boot_col.number_input(
        "Bootstrap replicates",
        min_value=0,
        max_value=5_000,
        step=50,
        key=BOOT,
        help="Speaker-level bootstrap of the 95 % intervals: speakers are resampled with all "
        "their utterances and SBLS is recomputed with the attacker's predictions held fixed. "
        "0 = no intervals.",
    )
    seed = seed_col.number_input(
        "Seed", min_value=0, max_value=2**31 - 1, step=1, key=SEED, help="Seed of the bootstrap."
    )

    with st.expander(
        "Use your own attacker: upload attribute predictions",
        expanded=not with_embeddings or bool(uploads),
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
        upload_for = up_col.selectbox("For condition", study.names, key=UPLOAD_CONDITION)
        upload = file_col.file_uploader(
            "Predictions file", type=["csv", "parquet"], key=UPLOAD_FILE
        )
        if st.button("Use these predictions", key="vm_sbls_use_upload", icon=":material/check:"):
            if upload is None:
                st.error("Choose a predictions file first.", icon=":material/error:")
            else:
                parsed = ui.call(
                    uploaded_attack, study.get(upload_for), upload.getvalue(), upload.name
                )
                if parsed is not None:
                    uploads[upload_for] = parsed.value
                    ui.show_warnings(parsed.warnings)
                    st.success(
                        f"{ui.md_escape(upload.name)}: predictions of "
                        f"{', '.join(parsed.value.predictions)} for {parsed.value.n} eval "
                        f"utterances of **{ui.md_escape(upload_for)}**.",
                        icon=":material/check_circle:",
                    )
        for name, attack in list(uploads.items()):
            forget_col, text_col = st.columns([1, 5], vertical_alignment="center")
            if forget_col.button("Forget", key=f"vm_sbls_forget_{name}", icon=":material/delete:"):
                del uploads[name]
                st.rerun()
            text_col.caption(f"**{ui.md_escape(name)}**: {ui.md_escape(attack.attacker)}.")

if not weights_ok(weights):
    st.error(
        f"The weights must sum to 1; they sum to {sum(weights):.2f}. Adjust w_attr, w_assoc "
        "and w_sub (the paper uses 0.4, 0.4, 0.2).",
        icon=":material/error:",
    )
    st.stop()
options = SBLSOptions(weights=weights, subgroup_lambda=float(lam), min_group_size=int(min_group))
original = study.get(original_name) if with_embeddings else None

# ---------------------------------------------------------------- library calls (cached)
rows: list[SBLSRow] = []
for cond in study.conditions:
    if cond.name in uploads:
        attack = uploads[cond.name]
    elif cond.embeddings is None:
        rows.append(SBLSRow(cond, status="no embeddings: upload predictions to score it"))
        continue
    else:
        out = ui.call(builtin_attack, cond, original, attacker_kind)
        if out is None:
            rows.append(SBLSRow(cond, status="the built-in attacker failed (see above)"))
            continue
        attack = out.value
    result = ui.safe_call(sbls_result, attack, options)
    status = attack.short
    if attacker_kind == "original" and cond.name == original_name and cond.name not in uploads:
        status = "original (itself)"
    rows.append(SBLSRow(cond, attack=attack, result=result, status=status))

scored = [row for row in rows if row.result is not None]
without = [row.name for row in rows if row.attack is None and row.condition.embeddings is None]
if without:
    st.info(
        f"{', '.join(ui.md_escape(n) for n in without)}: no utterance embeddings, so the "
        "built-in attacker cannot run on "
        f"{'it' if len(without) == 1 else 'them'} (it needs dev embeddings to train on and "
        "eval embeddings to attack). Upload the predictions of your own attribute classifier "
        "above, or add the embeddings on the Data page.",
        icon=":material/info:",
    )
if not scored:
    st.stop()
results = {row.name: row.result for row in scored}
colors = condition_colors(study.names)
uploaded_names = [row.name for row in scored if row.name in uploads]
builtin_names = [row.name for row in scored if row.name not in uploads]
if builtin_names:
    who = (
        f"the built-in attacker trained on the original speech of **{ui.md_escape(original_name)}**"
        if attacker_kind == "original"
        else "the built-in attacker trained on each condition's own anonymised dev speech"
    )
    st.markdown(f"**Attacker:** {who} (dev split), attacking every eval utterance.")
if uploaded_names:
    st.markdown(
        f"**Attacker of {', '.join(ui.md_escape(n) for n in uploaded_names)}:** the uploaded "
        "predictions."
    )

# ---------------------------------------------------------------- 2. per condition
st.header("Protection per condition", divider="gray")
table_slot = st.empty()
table_slot.dataframe(
    component_frame(scored, intervals=False).style.format(precision=3, na_rep="—"),
    hide_index=True,
)
progress_area = st.container()
chart_slot = st.empty()
with chart_slot.container():
    st.plotly_chart(components_figure(results), config={"displaylogo": False})

# ---------------------------------------------------------------- 3. per attribute
st.header("Per attribute", divider="gray")
names = list(results)
others = [n for n in names if not (attacker_kind == "original" and n == original_name)]
default = min(others or names, key=lambda n: results[n].sbls if results[n].sbls is not None else 2)
if st.session_state.get(INSPECT) not in names:
    st.session_state[INSPECT] = default
inspect_col, attr_col = st.columns([2, 3], vertical_alignment="bottom")
inspect = inspect_col.selectbox(
    "Condition",
    names,
    key=INSPECT,
    help="Opens on the condition with the lowest SBLS (other than the original speech).",
)
result = results[inspect]
row = next(r for r in scored if r.name == inspect)
attr_names = [a.name for a in result.attributes]
if st.session_state.get(ATTRIBUTE) not in attr_names:
    st.session_state[ATTRIBUTE] = attr_names[0]
attr_name = attr_col.radio("Attribute", attr_names, key=ATTRIBUTE, horizontal=True)
attribute = next(a for a in result.attributes if a.name == attr_name)
m1, m2, m3, m4 = st.columns(4)
m1.metric(
    "AUC (aligned)",
    f"{attribute.auc:.3f}" if attribute.auc is not None else "—",
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
    help="(AUC − 0.5) / 0.5 clipped to [0, 1] (balanced accuracy rescaled from chance for "
    "hard predictions). P_attr = 1 − mean L_a.",
)
m4.metric(
    "NMI",
    f"{attribute.nmi:.3f}",
    help="Mutual information of true and predicted classes / ln K. P_assoc = 1 − mean NMI.",
)
conf_col, auc_col = st.columns(2)
with conf_col:
    ui.show_figure(
        confusion_figure(attribute, title=f"{inspect}: {attr_name}, true vs predicted"),
        f"sbls_confusion_{inspect}_{attr_name}",
    )
with auc_col:
    if attribute.auc_matrix is not None:
        ui.show_figure(
            auc_matrix_figure(
                attribute,
                column_labels=row.attack.predictions[attr_name].classes,
                title=f"{inspect}: {attr_name}, AUC per score column",
            ),
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
    attribute_frame(result),
    f"sbls_attributes_{inspect}.csv",
    column_help={
        "AUC (aligned)": "Mean one-vs-rest AUC after matching classes (0.5 = guessing).",
        "Leakage L_a": "0 = chance, 1 = perfect inference.",
        "NMI": "Normalised mutual information (by ln K: below 1 even for a perfect attacker "
        "when the classes are unbalanced).",
    },
)

# ---------------------------------------------------------------- 4. subgroups
st.header("Subgroups", divider="gray")
if st.session_state.get(SUBGROUP_CONDITION) not in names:
    st.session_state[SUBGROUP_CONDITION] = inspect
sub_name = st.selectbox("Condition", names, key=SUBGROUP_CONDITION)
sub_result = results[sub_name]
sub_row = next(r for r in scored if r.name == sub_name)
ui.show_figure(
    subgroup_figure(sub_result, title=f"{sub_name}: joint recovery rate of each subgroup"),
    f"sbls_subgroups_{sub_name}",
)
groups = intersection_frame(sub_result, sub_row.attack)
smallest = groups.loc[groups["Utterances"].idxmin()]
st.caption(
    "Each marker is one intersection of all attributes; its position is the share of its "
    "utterances for which the attacker recovered **every** attribute (L_g, higher = worse), "
    "its size the number of utterances. P_subgroup = λ·(1 − worst L_g) + (1 − λ)·(lowest / "
    "highest 1 − L_g). The rate is not corrected for chance: a uniform guess already "
    "recovers the dashed share."
)
skipped = [r for r in sub_result.subgroups if r.attribute == "all" and not r.used]
if skipped:
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
st.markdown(
    f"**Minimum group size.** The smallest subgroup of {ui.md_escape(sub_name)}, "
    f"{ui.md_escape(short_group(str(smallest['Subgroup'])))}, has "
    f"{int(smallest['Utterances'])} eval utterances from {int(smallest['Speakers'])} "
    f"speakers, so a minimum of up to {int(smallest['Utterances'])} keeps all {len(groups)} "
    f"subgroups (now {options.min_group_size}: "
    f"{int(groups['Used'].sum())} of {len(groups)} used). Utterances of one speaker are not "
    "independent, so the speaker count is the real sample size: a group of 3 speakers gives "
    "a noisy L_g whatever its utterance count."
)
ui.show_table(
    groups,
    f"sbls_intersections_{sub_name}.csv",
    column_help={
        "Joint recovery L_g": "Share of the subgroup's utterances with every attribute "
        "recovered (higher = worse).",
        "Used": "False: below the minimum group size, left out of P_subgroup.",
    },
)
st.markdown("**Each attribute within the subgroups of the others**")
ui.show_table(
    subgroup_frame(sub_result),
    f"sbls_subgroups_{sub_name}.csv",
    column_help={
        "Within subgroup": "The values of the other attributes.",
        "AUC": "Aligned AUC of the attribute inside the subgroup (empty: one class only).",
        "Leakage": "Leakage of the attribute inside the subgroup (0 = chance).",
        "Accuracy": "Share of the subgroup's utterances whose attribute was predicted right.",
    },
)

# ---------------------------------------------------------------- 5. identity vs attributes
st.header("Attributes and identity together", divider="gray")
reports = {}
for name in names:
    rep = ui.call(ui.condition_report, study.get(name))
    reports[name] = rep.value if rep is not None else None
ui.show_table(
    identity_frame(scored, reports),
    "sbls_identity.csv",
    column_help={
        "SBLS": "Soft-biometric protection: higher = more protection.",
        "P_attr": "Attribute inference protection: higher = more protection.",
        "EER": "1-to-1 verification equal error rate: higher = more protection (0.5 = chance).",
        "LIDmax (bits)": "Worst single-trial identity disclosure: higher = LESS protection.",
        "Linkability": "1-to-N identification rate: higher = less protection.",
    },
)
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

# ---------------------------------------------------------------- 2 (completed). intervals
intervals: dict[str, dict] = {}
if n_boot > 0:
    with progress_area:
        for row in scored:
            value = ui.safe_call(
                sbls_intervals,
                row.attack,
                options,
                n_boot=int(n_boot),
                seed=int(seed),
                label=row.name,
            )
            if value is not None:
                intervals[row.name] = value
scored = [SBLSRow(r.condition, r.attack, r.result, intervals.get(r.name), r.status) for r in scored]
with table_slot.container():
    ui.show_table(
        component_frame(scored, intervals=n_boot > 0),
        "sbls_components.csv",
        column_help={
            "Attacker": "The speech the built-in attacker was trained on (dev split): the "
            "original speech of a condition, or the condition's own anonymised speech; or an "
            "uploaded predictions file.",
            "P_attr": "Attribute inference protection, 1 − mean leakage L_a (higher = more "
            "protection).",
            "P_assoc": "Systematic linkage protection, 1 − mean NMI (higher = more protection).",
            "P_subgroup": "Subgroup protection from the joint recovery rates (higher = more "
            "protection; at most about 0.88 for a random guess on sex × 3 age groups).",
            "SBLS": "0.4·P_attr + 0.4·P_assoc + 0.2·P_subgroup by default (higher = more "
            "protection).",
            "Groups used": "Sex × age subgroups that reach the minimum group size.",
            **{
                f"{c} CI": f"95 % speaker-level bootstrap interval of {c}."
                for c in ("P_attr", "P_assoc", "P_subgroup", "SBLS")
            },
        },
    )
    if intervals:
        st.caption(
            f"95 % intervals: speaker-level bootstrap, {int(n_boot):,} replicates, seed "
            f"{int(seed)}; the attacker's predictions are held fixed (it is not retrained)."
        )
        ui.download_table(
            interval_frame(scored), "sbls_intervals.csv", label="Intervals as numbers (CSV)"
        )
    else:
        st.caption("Bootstrap intervals are off (0 replicates).")
with chart_slot.container():
    ui.show_figure(
        components_figure(results, intervals or None),
        "sbls_components",
        show_title=False,
    )
    st.caption(
        "Each group of bars is one condition; taller bars mean more protection. Whiskers: "
        "95 % bootstrap intervals. P_subgroup stays below 1 even for a random guess: the "
        "share of a subgroup recovered by chance (1/6 for sex × 3 age groups) is not "
        "subtracted, so a guess scores at most about 0.88, less with small noisy groups."
    )
