"""Linkage: legally validated metrics (Vauquier et al. 2025) and similarity matrices (VPC 2022)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import linkage
from voxmetrics.analysis.linkage import linkage_table
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
from voxmetrics.ui import cache_linkage

CONDITIONS = "vm_link_conditions"
SAMPLED = "vm_link_sampled"
DRAWS = "vm_link_draws"
SEED = "vm_link_seed"
ORIGINAL = "vm_link_original"
ANONYMISED = "vm_link_anonymised"
CALIBRATION = "vm_link_calibration"
MEAN_CONDITION = "vm_link_mean_condition"
LEGAL_LENGTHS = "vm_link_legal_lengths"
SPLIT = "eval"
CALIBRATIONS = {"pav": "PAV + Laplace (VoicePrivacy 2022)", "raw": "Raw scores (VoicePAT)"}
MAX_UTTERANCES = 3000  # the matrices score every utterance pair: U^2 scores in memory
MAX_CELLS = 250_000  # trial speakers x enrolled speakers drawn in one heat map
NOTES_SPLIT = [2.5, 1.5]  # figure | assumptions


def assumptions(text: str) -> None:
    with st.container(border=True):
        st.markdown("**Assumptions**\n\n" + text)


def names_list(names: list[str]) -> str:
    return ", ".join(f"**{ui.md_escape(n)}**" for n in names)


study = ui.page_setup("Linkage")
st.title("Linkage: linkability, singling out and voice similarity")
ui.require_conditions(study)
study = ui.one_to_n_study(study)  # a sparse trial list: its complete trials

st.markdown(
    "Under the GDPR, data count as anonymous only if no one can **single out** a person, "
    "**link** records of the same person, or **infer** information about them (Article 29 "
    "Working Party, Opinion 05/2014, endorsed by the EDPB). Vauquier et al. 2025 turn the first "
    "two into metrics for speech, and the French data protection authority (CNIL) validated them: "
    "**Linkability**, how often an anonymised utterance is matched to its own speaker among "
    "N' enrolled speakers, and **Singling out**, how often a predicate built from one enrolled "
    "voice isolates exactly one person of a population of N. The VoicePrivacy 2022 voice "
    "similarity matrices add **DeID** (how much the anonymised voices have stopped resembling "
    "their originals) and **G_VD** (how distinguishable the anonymised voices remain among "
    "themselves). Every figure lists the assumptions it rests on."
)

# ---- which conditions
if CONDITIONS in st.session_state:
    st.session_state[CONDITIONS] = [n for n in st.session_state[CONDITIONS] if n in study.names]
else:
    st.session_state[CONDITIONS] = list(study.names)
names = st.multiselect("Conditions", study.names, key=CONDITIONS)
if not names:
    st.info("Choose at least one condition.", icon=":material/info:")
    st.stop()

colors = condition_colors(study.names)
# the study's settings: the same cached reports as the Overview, with their intervals
reports = {r.name: r for r in ui.study_reports(study, names, **study.settings.evaluate_options())}
if not reports:
    st.stop()
with_embeddings = [n for n in reports if study.get(n).embeddings is not None]
scores_only = [n for n in reports if n not in with_embeddings]

# ---- 1. linkability vs N'
st.subheader("Linkability vs number of enrolled speakers")
sampled_col, draws_col, seed_col, _ = st.columns([1.4, 1, 1, 2.6], vertical_alignment="bottom")
sampled = sampled_col.toggle(
    "Add a sampled estimate",
    key=SAMPLED,
    help="Draw R random candidate sets per trial, as Vauquier et al. 2025 do, and show their "
    "mean and standard deviation beside the exact expectation.",
)
draws = draws_col.number_input(
    "Draws R per trial", min_value=2, max_value=2000, value=20, step=10, key=DRAWS,
    disabled=not sampled,
)  # fmt: skip
seed = seed_col.number_input("Seed", min_value=0, value=0, step=1, key=SEED, disabled=not sampled)
curves = {}
for name, report in reports.items():
    curves[name] = report.linkability_curve
    if sampled:
        out = ui.call(
            cache_linkage.sampled_linkability, study.get(name).eval, n_draws=draws, seed=seed
        )
        if out is not None:
            curves[name] = out.value
fig_col, note_col = st.columns(NOTES_SPLIT)
with fig_col:
    bands = {n: r.replicates.curve_band() for n, r in reports.items() if r.replicates is not None}
    ui.show_figure(linkability_vs_n_figure(curves, colors=colors, bands=bands),
                   "linkability_vs_n", show_title=False)  # fmt: skip
with note_col:
    assumptions(
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
            if sampled
            else "- A **sampled** estimate (the paper's procedure) can be added above.\n"
        )
        + "- At N' = N: the Linkability of the matrix. Dashed: chance 1/N'.\n"
        + (
            "- Shaded: the 95 % speaker-bootstrap band of each line (the study's replicates)."
            if bands
            else "- No band: the study's bootstrap is off (Report page)."
        )
    )

# ---- 2. singling out
st.subheader("Singling out")
if scores_only:
    st.info(
        f"{names_list(scores_only)}: scores only, no utterance embeddings. Singling out and "
        "the conversation length need embeddings (several trial utterances per speaker); "
        "load them on the Data page.",
        icon=":material/info:",
    )
singled = {n: reports[n].singling_out for n in with_embeddings}
singled = {n: r for n, r in singled.items() if r is not None}
if singled:
    fig_col, note_col = st.columns(NOTES_SPLIT)
    with fig_col:
        ui.show_figure(singling_out_figure(singled, colors=colors), "singling_out",
                       show_title=False)  # fmt: skip
    with note_col:
        assumptions(
            "- Population: the N trial speakers of the eval split; K trial utterances give "
            "1 held-out and M = K − 1 calibration embeddings.\n"
            "- Predicate: *cosine to an enrolled speaker's profile > threshold*. **Threshold "
            "rule**: midpoint of the M-th and (M+1)-th highest calibration scores, so it "
            "holds for about 1/N of the population.\n"
            "- Isolated = **exactly one** held-out embedding strictly above it, whoever it "
            "belongs to.\n"
            "- Speakers with fewer than 2 trial utterances are left out (as the paper).\n"
            "- Up to 10 utterances per speaker, drawn at random; F = the largest K folds "
            "(fold f holds out utterance f mod K of each speaker); 5 draws, seed 0; mean over "
            "enrolled speakers, folds and draws.\n"
            "- Grey ticks: chance (1 − 1/N)^(N−1) → 1/e ≈ 0.37, each condition at its full N."
        )
    so_curves = {}
    for name in singled:
        outcome = ui.call(cache_linkage.singling_out_vs_n, study.get(name).embeddings)
        if outcome is not None:
            so_curves[name] = outcome.value
    if so_curves:
        fig_col, note_col = st.columns(NOTES_SPLIT)
        with fig_col:
            ui.show_figure(
                singling_out_vs_n_figure(so_curves, colors=colors),
                "singling_out_vs_n",
                show_title=False,
            )
        with note_col:
            assumptions(
                "- Population of N speakers: 20 random sets of N of the speakers (one at the "
                "full N), seed 0; their enrolment profiles are the predicates.\n"
                "- Same threshold and isolation rules as above; error bars: one SD over the "
                "sets.\n"
                "- Dashed: chance (1 − 1/N)^(N−1)."
            )

    st.markdown("**Conversation length**")
    length_curves = {}
    for name in singled:
        es = study.get(name).embeddings
        lengths = cache_linkage.conversation_lengths(es, split=SPLIT)
        out = ui.call(cache_linkage.conversation_curve, es, lengths, split=SPLIT)
        if out is not None:
            length_curves[name] = out.value
            ui.show_warnings([f"{name}: {m}" for m in out.warnings])
    if length_curves:
        fig_col, note_col = st.columns(NOTES_SPLIT)
        with fig_col:
            fig = conversation_length_figure(length_curves, reports, colors=colors)
            ui.show_figure(fig, "conversation_length", show_title=False)
        with note_col:
            longest = max(int(c.lengths.max()) for c in length_curves.values())
            assumptions(
                "- Each speaker's trial embeddings are L2-normalised and averaged in "
                "consecutive groups of L (file order); an incomplete last group is dropped; "
                "enrolment profiles unchanged.\n"
                f"- L = 1, 2, 4, … {longest}: while every speaker keeps 2 groups (one held "
                "out, one calibrating).\n"
                "- Singling out as above; linkability against all N enrolled.\n"
                "- Dashed: chance (independent of L)."
            )

    st.markdown("**Vauquier et al. 2025, figure 1: every metric against the number of "
                "speakers, per conversation length**")  # fmt: skip
    st.session_state.setdefault(LEGAL_LENGTHS, "1, 3, 30")
    text = st.text_input(
        "Conversation lengths L",
        key=LEGAL_LENGTHS,
        help="Comma-separated; the paper uses 1, 3 and 30. A length is skipped for a "
        "condition where no speaker has L trial utterances.",
    )
    try:
        legal_lengths = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        legal_lengths = ()
    if not legal_lengths or min(legal_lengths) < 1:
        st.error("Give the conversation lengths as whole numbers >= 1 separated by commas, "
                 "e.g. 1, 3, 30.")  # fmt: skip
    else:
        evaluations, skipped = {}, []
        for name in singled:
            out = ui.call(cache_linkage.legal, study.get(name).embeddings, legal_lengths,
                          split=SPLIT)  # fmt: skip
            if out is not None:
                evaluations[name] = out.value
                skipped += [f"{name}: L = {length}" for length, _ in out.value.skipped]
        if evaluations:
            fig_col, note_col = st.columns(NOTES_SPLIT)
            with fig_col:
                fig = legal_figure(
                    evaluations,
                    attackers={n: study.get(n).attacker for n in evaluations},
                    colors=colors,
                )
                ui.show_figure(fig, "legal_figure_1", show_title=False)
            with note_col:
                assumptions(
                    "- Rows: singling out vs population size N; linkability and 1 − EER vs "
                    "N' enrolled candidates; columns: L.\n"
                    "- EER at N': ROCCH-EER of the pooled scores when each trial meets its "
                    "own speaker and N' − 1 others drawn at random; mean of 5 draws, seed 0.\n"
                    "- Linkability: exact expectation over the candidate sets; a tie is a "
                    "link, as the authors' code.\n"
                    "- Legend: condition (attacker). Dashed: chance (1 − 1/N)^(N−1), 1/N', "
                    "0.5."
                    + (f"\n- Skipped (too few utterances): {', '.join(skipped)}."
                       if skipped else "")
                )
elif with_embeddings:
    st.info("Singling out could not be computed for the chosen conditions (see the messages "
            "above).", icon=":material/info:")  # fmt: skip

# ---- 3. voice similarity matrices
st.subheader("Voice similarity matrices")
embedded = [n for n in study.names if study.get(n).embeddings is not None]
if len(embedded) < 1:
    st.info(
        "The voice similarity matrices compare original and anonymised utterance embeddings; "
        "no condition of the study has embeddings.",
        icon=":material/info:",
    )
    similarity = None
else:
    if st.session_state.get(ORIGINAL) not in embedded:
        st.session_state[ORIGINAL] = "plain" if "plain" in embedded else embedded[0]
    pick_o, pick_a, pick_c = st.columns([1, 1, 1.6], vertical_alignment="bottom")
    original = pick_o.selectbox(
        "Original (unprocessed) voices",
        embedded,
        key=ORIGINAL,
        help="The condition whose embeddings are the original voices (the demo's 'plain').",
    )
    candidates = [n for n in embedded if n != original] or embedded
    if st.session_state.get(ANONYMISED) not in candidates:
        chosen = [n for n in with_embeddings if n in candidates]
        st.session_state[ANONYMISED] = (chosen or candidates)[0]
    anonymised = pick_a.selectbox("Anonymised voices", candidates, key=ANONYMISED)
    calibration = pick_c.radio(
        "Calibration of the pair scores",
        list(CALIBRATIONS),
        format_func=CALIBRATIONS.get,
        horizontal=True,
        key=CALIBRATION,
    )
    o_es, a_es = study.get(original).embeddings, study.get(anonymised).embeddings
    sizes = [linkage.utterance_count(es, split=SPLIT) for es in (o_es, a_es)]
    similarity = None
    if max(sizes) > MAX_UTTERANCES:
        st.info(
            f"The matrices score every pair of utterances of the eval split ({max(sizes):,} "
            f"utterances here, more than the dashboard's {MAX_UTTERANCES:,}). Run `python -m "
            "voxmetrics similarity --original ... --anonymised ...` instead.",
            icon=":material/info:",
        )
    else:
        out = ui.call(cache_linkage.similarity, o_es, a_es, calibration=calibration, split=SPLIT)
        if out is not None:
            ui.show_warnings(out.warnings)
            similarity = out.value
    if similarity is not None:
        d = similarity.distinctiveness
        cols = st.columns(5)
        cols[0].metric(
            "DeID", f"{d.deid:.3f}",
            help="1 − D_diag(M_oa) / D_diag(M_oo): 0 = the anonymised voices are as "
            "recognisable as the originals, 1 = fully de-identified.",
        )  # fmt: skip
        cols[1].metric(
            "G_VD", f"{d.g_vd:.2f} dB",
            help="10 log10(D_diag(M_aa) / D_diag(M_oo)): 0 dB = the anonymised voices are as "
            "distinguishable among themselves as the originals; negative = less.",
        )  # fmt: skip
        cols[2].metric("D_diag(M_oo)", f"{d.d_diag_oo:.3f}")
        cols[3].metric("D_diag(M_oa)", f"{d.d_diag_oa:.3f}")
        cols[4].metric("D_diag(M_aa)", f"{d.d_diag_aa:.3f}")
        order = linkage.speaker_order(o_es, split=SPLIT)
        fig = similarity_matrices_figure(
            similarity,
            order=order.speakers,
            groups=order.groups,
            original=original,
            anonymised=anonymised,
        )
        ui.show_figure(fig, f"similarity_{anonymised}_vs_{original}", show_title=True)
        if similarity.left_out:
            st.caption(
                f"{len(similarity.left_out)} speaker(s) with a single utterance in a set are "
                "left out of the three matrices (a same-speaker pair needs two utterances): "
                + ", ".join(ui.md_escape(s) for s in similarity.left_out[:10])
                + (" ..." if len(similarity.left_out) > 10 else "")
            )
        overlap = linkage.utterance_overlap(o_es, a_es, split=SPLIT)
        if overlap.shared == 0:
            st.warning(
                f"None of the {overlap.anonymised:,} anonymised utterances shares an utterance "
                f"id with an original one: the matrices assume that **{ui.md_escape(anonymised)}"
                f"** is an anonymised copy of **{ui.md_escape(original)}** that keeps each "
                "utterance's id. Check that you picked the right pair.",
                icon=":material/warning:",
            )
        ordering = "sex, then id (white lines between groups)" if order.groups else "id"
        assumptions(
            f"- Utterances: every enrolment and trial utterance of the eval split; originals "
            f"from **{ui.md_escape(original)}**, anonymised from **{ui.md_escape(anonymised)}**"
            ".\n"
            "- M[i, j] = sigmoid(mean LLR over the utterance pairs of speakers i and j **whose "
            "utterance ids differ**): an utterance is never compared with itself or with its "
            f"own anonymised version ({overlap.shared:,} of {overlap.anonymised:,} anonymised "
            "utterances share an original's id). Then symmetrised, (M + Mᵀ) / 2.\n"
            "- **Calibration** (now: "
            f"{CALIBRATIONS[calibration]}): *PAV + Laplace*, the default of VoicePrivacy "
            "2022, pools each matrix's pair scores (same speaker = target) and turns them into "
            "LLRs by pool-adjacent-violators with Laplace's rule, so every LLR is finite; "
            "*raw*, as VoicePAT, puts the cosine scores themselves into the sigmoid.\n"
            "- D\\_diag(M) = |mean of the diagonal − mean off it|. DeID = 1 − "
            "D\\_diag(M\\_oa) / D\\_diag(M\\_oo): 0 = as recognisable as the originals, 1 = "
            "fully de-identified. G\\_VD = 10 log10(D\\_diag(M\\_aa) / D\\_diag(M\\_oo)) dB: "
            "0 = as distinguishable among themselves as the originals, negative = less.\n"
            f"- Speakers ordered by {ordering}; the hover gives the pair, the value, the mean "
            "raw cosine score and the number of ordered utterance pairs."
        )

# ---- 4. mean scores by speaker, from the score matrix alone
st.subheader("Mean scores by speaker")
if st.session_state.get(MEAN_CONDITION) not in reports:
    st.session_state[MEAN_CONDITION] = (scores_only or list(reports))[0]
pick_col, _ = st.columns([1, 2])
mean_name = pick_col.selectbox(
    "Condition",
    list(reports),
    key=MEAN_CONDITION,
    format_func=lambda n: n if n in with_embeddings else f"{n} (scores only)",
    help="Works from the score matrix alone, so also for conditions without embeddings.",
)
sm = study.get(mean_name).eval
n_cells = sm.n_enrolled * len(set(sm.trial_speakers.tolist()))
if n_cells > MAX_CELLS:
    st.info(
        f"{n_cells:,} speaker pairs are too many to draw in one heat map (limit {MAX_CELLS:,}).",
        icon=":material/info:",
    )
else:
    table = cache_linkage.speaker_mean_scores(sm)
    fig_col, note_col = st.columns(NOTES_SPLIT)
    with fig_col:
        fig = mean_score_figure(table, title=f"{mean_name}: mean score by speaker pair")
        ui.show_figure(fig, f"mean_scores_{mean_name}", show_title=True)
    with note_col:
        assumptions(
            "- Needs only the score matrix, so it also covers conditions without embeddings.\n"
            "- Rows: trial speakers, the mean over all their trials; columns: enrolled "
            "speakers, own columns first, so mated cells lie on the diagonal.\n"
            "- Scores as given (cosine for embeddings), not calibrated: compare cells within "
            "a row, not across conditions.\n"
            "- A bright diagonal: each speaker's trials still resemble their own enrolment "
            "more than anybody else's."
        )
    ui.download_table(table, f"mean_scores_{mean_name}.csv", label="Download the mean scores")

# ---- 5. summary
st.subheader("Summary")
distinctiveness = {}
distinctiveness_ci = {}
if similarity is not None:
    bar = st.empty()
    for k, name in enumerate(with_embeddings):
        bar.progress(k / len(with_embeddings), text=f"Similarity matrices of {name}…")
        es = study.get(name).embeddings
        if linkage.utterance_count(es, split=SPLIT) > MAX_UTTERANCES:
            continue
        out = ui.call(cache_linkage.similarity, o_es, es, calibration=calibration, split=SPLIT)
        if out is not None:
            distinctiveness[name] = out.value.distinctiveness
            if study.settings.bootstrap and name != original:
                ci = ui.call(
                    cache_linkage.similarity_ci,
                    o_es,
                    es,
                    out.value,
                    n_boot=study.settings.bootstrap,
                    seed=study.settings.seed,
                    calibration=calibration,
                    split=SPLIT,
                )
                if ci is not None:
                    distinctiveness_ci[name] = ci.value
    bar.empty()
ui.show_table(
    linkage_table(reports, distinctiveness, distinctiveness_ci),
    "linkage_summary.csv",
    column_help={
        "Linkability": "Share of trials whose own speaker scores highest among all N "
        "enrolled (a tie counts as a link, as the authors' code).",
        "Chance 1/N": "Linkability of a blind guess.",
        "Singling out": "Probability that an enrolled voice's threshold predicate isolates "
        "exactly one of the N trial speakers (needs embeddings).",
        "N speakers": "The population singled out from: trial speakers of the eval split.",
        "Chance (1-1/N)^(N-1)": "Singling out by a random predicate of mean 1/N (→ 1/e).",
        "DeID": "De-identification against the original voices (needs embeddings).",
        "G_VD (dB)": "Gain of voice distinctiveness against the original voices.",
        "Linkability 95% CI": "Speaker-level bootstrap (the study's replicates, Report page).",
        "Singling out 95% CI": "Predicate speakers resampled; the population held fixed.",
        "DeID 95% CI": "Speakers of the similarity matrices resampled; matrices held fixed.",
    },
)
if similarity is not None:
    st.caption(
        f"DeID and G_VD against **{ui.md_escape(original)}**, calibration "
        f"{CALIBRATIONS[calibration]}; empty for conditions without embeddings. The original "
        "against itself gives DeID 0 and G_VD 0 dB by construction."
    )
else:
    st.caption("DeID and G_VD need original and anonymised embeddings; they are empty here.")
