"""SRD: similarity rank disclosure and its beta-binomial models (Bäckström et al. 2026)."""

import streamlit as st

from voxmetrics import ui
from voxmetrics.analysis import srd as analysis
from voxmetrics.metrics.srd import fit_beta_binomial
from voxmetrics.plots.srd import (
    condition_colors,
    mean_d_bar_figure,
    rank_distribution_figure,
    speaker_mean_d_figure,
    speaker_rank_figure,
)
from voxmetrics.report import intervals_frame
from voxmetrics.ui.srd_page import (
    rank_caption,
    show_sparse_notice,
    speaker_models_off,
    speaker_models_switch,
    speaker_picker,
    srd_controls,
    srd_reports,
    trial_speaker_count,
)

SPEAKER_CONDITION = "vm_srd_speaker_condition"
SPEAKER_SOURCE = "vm_srd_speaker_source"

study = ui.page_setup("SRD")
st.title("SRD: similarity rank disclosure")
ui.require_conditions(study)
study = ui.one_to_n_study(study)  # sparse lists: complete groups whole, else complete trials

st.markdown(
    "For every anonymised trial the attacker sorts the N enrolled identities by similarity; "
    "**the rank of the true speaker** (1 = the best guess is right) is what SRD looks at. If "
    "a share $p_k$ of the trials puts the true speaker at rank $k$, seeing rank $k$ discloses "
    "$\\log_2(N p_k)$ bits about who is speaking: positive when the rank makes the speaker "
    "more likely than a blind guess among N, 0 at chance. **MeanD** is the average "
    "disclosure (0 bits when ranks are random, $\\log_2 N$ when every trial is at rank 1), "
    "**IdR** $= p_1$ the identification rate (= linkability), **MaxD** the largest "
    "disclosure, **StDD** its standard deviation and **Spread** the share of ranks more "
    "likely than chance. With few trials per rank the histogram is noisy and mostly zeros, "
    "so a two-parameter **beta-binomial model** of the rank is fitted and its statistics are "
    "shown beside the data's (Bäckström et al. 2026)."
)

# ---- what to show
names, losses, log_axes = srd_controls(study)
if not names:
    st.info("Choose at least one condition.", icon=":material/info:")
    st.stop()

colors = condition_colors(study.names)
# the study's settings: the Overview's reports when it has them, else the SRD numbers alone
# (equal to the reports'); its warnings about SRD only
reports = srd_reports(study, names)
if not reports:
    st.stop()

results = {name: r.srd for name, r in reports.items()}
fits = {}
for name, report in reports.items():
    out = ui.compute(analysis.condition_fits, report, losses, warn=name,
                     bar=f"Rank models of {name}")  # fmt: skip
    if not out.failed:
        fits[name] = out.value

# ---- 1. rank distributions, overlaid
st.subheader("Rank of the true speaker")
fig = rank_distribution_figure(results, fits, colors=colors, log=log_axes)
ui.show_figure(fig, "srd_rank_distribution", show_title=False)
st.caption(rank_caption(results, log_axes))
show_sparse_notice(results)

# ---- 2. statistics of the data and of every model
st.subheader("Disclosure statistics")
ui.show_table(
    analysis.srd_table(results, fits, eer={n: r.baseline.eer for n, r in reports.items()}),
    "srd_statistics.csv",
    decimals=4,
    column_help=analysis.STATISTICS_HELP,
)
st.caption(
    "As Bäckström et al. 2026, tables II and III: the statistics of the rank histogram (data) and "
    "of each beta-binomial model, with the model's parameters α, β and two goodness-of-fit "
    "measures."
)

# a markdown heading: the page's st.subheader list is pinned by its tests
st.markdown("#### Against chance, with intervals")
against = intervals_frame(reports.values(), keys=analysis.CHANCE_KEYS)
ui.show_table(
    analysis.against_chance_table(against),
    "srd_against_chance.csv",
    decimals=4,
    column_help=analysis.CHANCE_HELP,
)
st.caption(
    "Read the excess over chance: a statistic whose interval contains its chance level is "
    "not distinguishable from random scores. Intervals follow the study's bootstrap setting "
    "(Report page)."
)

st.subheader("Mean disclosure per condition")
ui.show_figure(
    mean_d_bar_figure(list(reports.values()), colors=colors),
    "srd_mean_d",
    show_title=False,
)
st.caption(
    "Solid bars: MeanD of the rank histogram; hatched: of its CLL model. The grey marks "
    "show the most a condition can disclose, log2 N bits (every trial at rank 1)."
)

# ---- 3. per speaker
st.subheader("Per speaker")
st.caption(
    "One rank histogram per trial speaker, with its own beta-binomial model (Bäckström et al. "
    "2026, figures 6 and 7). A speaker has few trials, so the models matter more here."
)
if st.session_state.get(SPEAKER_CONDITION) not in reports:
    st.session_state[SPEAKER_CONDITION] = next(iter(reports))
# one model per trial speaker: on request beyond AUTO_SPEAKER_MODELS of the chosen condition
n_trial_speakers = trial_speaker_count(study.get(st.session_state[SPEAKER_CONDITION]))
models_on = speaker_models_switch(n_trial_speakers)
pick_col, speaker_col = st.columns(2)
chosen = pick_col.selectbox("Condition", list(reports), key=SPEAKER_CONDITION)
condition = study.get(chosen)
if not models_on:
    st.info(speaker_models_off(n_trial_speakers, chosen), icon=":material/info:")
    st.stop()

speakers = ui.compute(
    analysis.speaker_srd,
    reports[chosen].srd,
    condition.eval.trial_speakers,
    loss="LL",
    bar=f"Per-speaker models of {chosen}",
).value
if speakers is None:
    st.stop()
speaker, index = speaker_picker(speakers, chosen, speaker_col)
# the CLL fit's non-convergence is not a warning here: the caption under the figure says it
cll_fit = ui.compute(fit_beta_binomial, speakers.histograms[index], loss="CLL", warn=False)
speaker_fits = [speakers.fits[index]] + ([] if cll_fit.failed else [cll_fit.value])
fig = speaker_rank_figure(
    speakers,
    speaker,
    speaker_fits,
    color=colors[chosen],
    title=f"{chosen}: speaker {speaker}",
)
ui.show_figure(fig, f"srd_{chosen}_{speaker}", show_title=True)
failed = [f.loss for f in speaker_fits if not f.converged]
st.caption(
    "Linear axes: a speaker's histogram is mostly zeros, which a log axis cannot show; the "
    "cumulative distribution (right) is easier to compare with the models than the bars."
    + (
        f" The {' and '.join(failed)} fit of this speaker did not converge (e.g. every trial "
        "at rank 1 pushes the model to a point mass): do not rely on it."
        if failed
        else ""
    )
)

summary = analysis.mean_d_summary(speakers.model_mean_d)
source = st.radio(
    "Per-speaker MeanD from",
    ["model", "empirical"],
    format_func={"model": "the LL model of each speaker", "empirical": "the data"}.get,
    horizontal=True,
    key=SPEAKER_SOURCE,
)
fig = speaker_mean_d_figure(
    speakers,
    source=source,
    color=colors[chosen],
    title=f"{chosen}: mean disclosure per speaker",
)
ui.show_figure(fig, f"srd_{chosen}_speaker_mean_d", show_title=True)
n_speakers = len(speakers.speakers)
note = f"{summary.n} of {n_speakers} speakers' LL fits converged" + (
    f"; the {summary.n_missing} that did not have no model MeanD and are stacked on top, "
    "hatched grey, at the MeanD of their data (such histograms are often degenerate, e.g. "
    "every trial at rank 1: the most exposed speakers). 'The data' shows every speaker's "
    "empirical MeanD."
    if summary.n_missing and source == "model"
    else "."
)
st.caption(
    "How the privacy leak is shared among speakers (Bäckström et al. 2026, figure 6): a low MeanD "
    f"of the condition can hide a few speakers who are easy to identify. {note}"
)
ui.show_table(speakers.to_frame(), f"srd_{chosen}_speakers.csv")
