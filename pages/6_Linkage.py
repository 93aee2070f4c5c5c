"""Linkage: legally validated metrics (Vauquier et al. 2025) and similarity matrices (VPC 2022)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import linkage
from voxmetrics.evaluation import voice_conditions
from voxmetrics.plots.linkage import (
    condition_colors,
    conversation_length_figure,
    legal_figure,
    linkability_vs_n_figure,
    mean_score_figure,
    similarity_matrices_figure,
    singling_out_figure,
    singling_out_vs_n_figure,
)
from voxmetrics.ui import linkage_page as text
from voxmetrics.ui.linkage_page import assumptions

SPLIT = "eval"
MAX_UTTERANCES = 3000  # the matrices score every utterance pair: U^2 scores in memory
MAX_CELLS = 250_000  # trial speakers x enrolled speakers drawn in one heat map
NOTES_SPLIT = [2.5, 1.5]  # figure | assumptions


def with_notes(fig, filename: str, notes: str) -> None:
    fig_col, note_col = st.columns(NOTES_SPLIT)
    with fig_col:
        ui.show_figure(fig, filename, show_title=False)
    with note_col:
        assumptions(notes)


study = ui.page_setup("Linkage")
st.title("Linkage: linkability, singling out and voice similarity")
ui.require_conditions(study)
study = ui.one_to_n_study(study)  # sparse lists: complete groups whole, else complete trials
st.markdown(text.INTRO)

# ---- which conditions
chosen = st.session_state.get("vm_link_conditions")
st.session_state["vm_link_conditions"] = (
    list(study.names) if chosen is None else [n for n in chosen if n in study.names]
)
names = st.multiselect("Conditions", study.names, key="vm_link_conditions")
if not names:
    st.info("Choose at least one condition.", icon=":material/info:")
    st.stop()
colors = condition_colors(study.names)
# the linkage numbers alone under the study's settings (the Overview's reports when it has
# them), with their intervals; its warnings about linkage only
reports = text.linkage_reports(study, names)
if not reports:
    st.stop()
with_embeddings = [n for n in reports if study.get(n).embeddings is not None]
scores_only = [n for n in reports if n not in with_embeddings]

# ---- 1. linkability vs N'
st.subheader("Linkability vs number of enrolled speakers")
sampled_col, draws_col, seed_col, _ = st.columns([1.4, 1, 1, 2.6], vertical_alignment="bottom")
sampled = sampled_col.toggle(
    "Add a sampled estimate", key="vm_link_sampled",
    help="Draw R random candidate sets per trial, as Vauquier et al. 2025 do, and show their "
    "mean and standard deviation beside the exact expectation.",
)  # fmt: skip
draws = draws_col.number_input("Draws R per trial", min_value=2, max_value=2000, value=20,
                               step=10, key="vm_link_draws", disabled=not sampled)  # fmt: skip
seed = seed_col.number_input("Seed", min_value=0, value=0, step=1, key="vm_link_seed",
                             disabled=not sampled)  # fmt: skip
curves = {name: r.linkability_curve for name, r in reports.items()}
for name in reports if sampled else []:
    out = ui.compute(linkage.sampled_linkability, study.get(name).eval, n_draws=int(draws),
                     seed=int(seed), warn=False)  # fmt: skip
    if not out.failed:
        curves[name] = out.value
bands = {n: r.replicates.curve_band() for n, r in reports.items() if r.replicates is not None}
with_notes(linkability_vs_n_figure(curves, colors=colors, bands=bands), "linkability_vs_n",
           text.linkability_notes(draws if sampled else None, bool(bands)))  # fmt: skip

# ---- 2. singling out
st.subheader("Singling out")
if scores_only:
    st.info(
        f"{text.names_list(scores_only)}: scores only, no utterance embeddings. Singling out "
        "and the conversation length need embeddings (several trial utterances per speaker); "
        "load them on the Data page.",
        icon=":material/info:",
    )
singled = {n: reports[n].singling_out for n in with_embeddings}
singled = {n: r for n, r in singled.items() if r is not None}
if singled:
    with_notes(singling_out_figure(singled, colors=colors), "singling_out",
               text.SINGLING_OUT_NOTES)  # fmt: skip
    # the curves run singling out hundreds of times: on request beyond AUTO_CURVES_SPEAKERS
    largest = max(r.n_speakers for r in singled.values())
    default = largest <= text.AUTO_CURVES_SPEAKERS
    curves_on = ui.kept_switch(text.CURVES_LABEL, "vm_link_curves", default=default,
                               help=text.CURVES_HELP)  # fmt: skip
    if not curves_on:
        st.info(text.curves_off(largest, len(singled)), icon=":material/info:")
    outs = {n: ui.compute(linkage.singling_out_vs_n, study.get(n).embeddings, warn=False,
                          bar=f"Singling out vs N of {n}")
            for n in (singled if curves_on else [])}  # fmt: skip
    so_curves = {n: o.value for n, o in outs.items() if not o.failed}
    if so_curves:
        with_notes(singling_out_vs_n_figure(so_curves, colors=colors), "singling_out_vs_n",
                   text.SINGLING_OUT_VS_N_NOTES)  # fmt: skip

    length_curves = {}
    if curves_on:
        st.markdown("**Conversation length**")
    for name in singled if curves_on else []:
        es = study.get(name).embeddings
        lengths = ui.compute(linkage.conversation_lengths, es, split=SPLIT, warn=name)
        if lengths.failed:
            continue
        out = ui.compute(linkage.conversation_curve, es, lengths.value, split=SPLIT, warn=name,
                         spinner=f"Conversation lengths of {name}…")  # fmt: skip
        if not out.failed:
            length_curves[name] = out.value
    if length_curves:
        longest = max(int(c.lengths.max()) for c in length_curves.values())
        with_notes(conversation_length_figure(length_curves, reports, colors=colors),
                   "conversation_length", text.conversation_notes(longest))  # fmt: skip

    evaluations, skipped, legal_lengths = {}, [], None
    if curves_on:
        st.markdown("**Vauquier et al. 2025, figure 1: every metric against the number of "
                    "speakers, per conversation length**")  # fmt: skip
        # 1, 3 and the longest the data allow (the paper's 30 when they have it)
        defaults = linkage.default_lengths([study.get(n).embeddings for n in singled],
                                           split=SPLIT)  # fmt: skip
        st.session_state.setdefault("vm_link_legal_lengths", ", ".join(map(str, defaults)))
        typed = st.text_input("Conversation lengths L", key="vm_link_legal_lengths",
                              help=text.LENGTHS_HELP)  # fmt: skip
        legal_lengths = ui.compute(linkage.parse_lengths, typed, cache=False)
    for name in singled if legal_lengths is not None and not legal_lengths.failed else []:
        out = ui.compute(linkage.legal, study.get(name).embeddings, legal_lengths.value,
                         split=SPLIT, warn=False, bar=f"Figure 1 of {name}")  # fmt: skip
        if not out.failed:
            evaluations[name] = out.value
            skipped += [f"{name}: L = {length}" for length, _ in out.value.skipped]
    if evaluations:
        attackers = {n: study.get(n).attacker for n in evaluations}
        with_notes(legal_figure(evaluations, attackers=attackers, colors=colors),
                   "legal_figure_1", text.legal_notes(skipped))  # fmt: skip
elif with_embeddings:
    st.info("Singling out could not be computed for the chosen conditions (see the messages "
            "above).", icon=":material/info:")  # fmt: skip

# ---- 3. voice similarity matrices
st.subheader("Voice similarity matrices")
embedded = [n for n in study.names if study.get(n).embeddings is not None]
similarity = None
if not embedded:
    st.info("The voice similarity matrices compare original and anonymised utterance "
            "embeddings; no condition of the study has embeddings.",
            icon=":material/info:")  # fmt: skip
else:
    original, anonymised, calibration = text.pick_pair(embedded, with_embeddings)
    o_es, a_es = study.get(original).embeddings, study.get(anonymised).embeddings
    size = max(linkage.utterance_count(es, split=SPLIT) for es in (o_es, a_es))
    if size > MAX_UTTERANCES:
        st.info(text.too_many_utterances(size, MAX_UTTERANCES), icon=":material/info:")
    elif not (out := ui.compute(linkage.similarity, o_es, a_es, calibration=calibration,
                                split=SPLIT, warn=anonymised)).failed:  # fmt: skip
        similarity = out.value
    if similarity is not None:
        text.similarity_metrics(similarity.distinctiveness)
        order = linkage.speaker_order(o_es, split=SPLIT)
        fig = similarity_matrices_figure(similarity, order=order.speakers, groups=order.groups,
                                         original=original, anonymised=anonymised)  # fmt: skip
        ui.show_figure(fig, f"similarity_{anonymised}_vs_{original}", show_title=True)
        overlap = linkage.utterance_overlap(o_es, a_es, split=SPLIT)
        text.similarity_warnings(similarity.left_out, overlap, original, anonymised)
        assumptions(text.similarity_notes(original, anonymised, calibration, overlap,
                                          order.groups is not None))  # fmt: skip

# ---- 4. mean scores by speaker, from the score matrix alone
st.subheader("Mean scores by speaker")
if st.session_state.get("vm_link_mean_condition") not in reports:
    st.session_state["vm_link_mean_condition"] = (scores_only or list(reports))[0]
mean_name = st.columns([1, 2])[0].selectbox(
    "Condition", list(reports), key="vm_link_mean_condition",
    format_func=lambda n: n if n in with_embeddings else f"{n} (scores only)",
    help="Works from the score matrix alone, so also for conditions without embeddings.",
)  # fmt: skip
sm = study.get(mean_name).eval
n_cells = sm.n_enrolled * len(set(sm.trial_speakers.tolist()))
if n_cells > MAX_CELLS:
    st.info(f"{n_cells:,} speaker pairs are too many to draw in one heat map (limit "
            f"{MAX_CELLS:,}).", icon=":material/info:")  # fmt: skip
else:
    table = ui.compute(linkage.speaker_mean_scores, sm, warn=mean_name).value
    fig = mean_score_figure(table, title=f"{mean_name}: mean score by speaker pair")
    with_notes(fig, f"mean_scores_{mean_name}", text.MEAN_SCORE_NOTES)
    ui.download_table(table, f"mean_scores_{mean_name}.csv", label="Download the mean scores")

# ---- 5. summary
st.subheader("Summary")
distinctiveness, distinctiveness_ci = {}, {}
if embedded:  # every condition against the original voices, whether or not the pair above failed
    voices = voice_conditions(study)  # one DeID per anonymiser, shared by its attacker set-ups
    out = ui.compute(
        linkage.distinctiveness_against, o_es,
        {n: voices.get(n, study.get(n)).embeddings for n in with_embeddings},
        calibration=calibration, n_boot=study.settings.bootstrap,
        seed=study.settings.seed, split=SPLIT, max_utterances=MAX_UTTERANCES,
        spinner="Similarity matrices of every condition…",
    )  # fmt: skip
    if not out.failed:
        distinctiveness, distinctiveness_ci = out.value
ui.show_table(linkage.linkage_table(reports, distinctiveness, distinctiveness_ci),
              "linkage_summary.csv", column_help=text.SUMMARY_HELP)  # fmt: skip
if embedded:
    st.caption(
        f"DeID and G_VD against **{ui.md_escape(original)}**, calibration "
        f"{text.CALIBRATIONS[calibration]}; empty for a condition without embeddings or "
        "without speakers in common with the original voices (only its own row). The "
        "original against itself gives DeID 0 and G_VD 0 dB by construction. DeID and G_VD "
        "describe the anonymiser: every attacker set-up of one anonymiser shows the value of "
        "its voices (its lazy-informed embeddings first)."
    )
else:
    st.caption("DeID and G_VD need original and anonymised embeddings; they are empty here.")
