"""Threat model: why a 50 % EER does not mean safe (Šterns et al. 2025, section 4)."""

import pandas as pd
import streamlit as st

from voxmetrics import ui
from voxmetrics.plots.threat import (
    lid_per_trial_figure,
    pooled_view_figure,
    row_view_figure,
    scenario_metrics_figure,
)
from voxmetrics.threat import (
    CALLOUT_EER,
    CALLOUT_LID_MAX,
    CALLOUT_LINKABILITY_FACTOR,
    PAPER_EXAMPLE_SCORES,
    PAPER_EXAMPLE_TARGETS,
    PAPER_EXAMPLE_W,
    ThreatView,
    paper_matrix,
    threat_callouts,
    threat_scenario,
    threat_view,
)

MATRIX_KEY = "vm_threat_matrix"  # the edited 4x4 matrix: survives page changes
EDITOR_VERSION_KEY = "vm_threat_editor_version"  # bumped by "Reset": a fresh editor widget
W_KEY = "vm_threat_w"
# widget values, restored from plain session-state copies after a page change
WIDGET_DEFAULTS = {
    W_KEY: PAPER_EXAMPLE_W,
    "vm_threat_n": 20,
    "vm_threat_trials": 200,
    "vm_threat_margin": 0.5,
    "vm_threat_spread": 1.0,
    "vm_threat_noise": 0.2,
    "vm_threat_seed": 0,
}
OWN = "own speaker"
SPEAKER_COLUMNS = [f"speaker {j + 1}" for j in range(len(PAPER_EXAMPLE_SCORES[0]))]
N_EXAMPLE = len(SPEAKER_COLUMNS)

PAPERS = {
    "000": "Šterns et al., *Goodbye Equal Error Rate, Hello Local Information Disclosure: "
    "Evaluating Voice Anonymisation against 1-to-N Linkage Threats*",
    "001": "Vauquier et al., *Legally validated evaluation framework for voice anonymization*",
    "002": "Bäckström et al., *Privacy Disclosure of Similarity Rank in Speech and Language "
    "Processing*",
    "003": "*Measuring Soft Biometric Leakage in Speaker De-Identification Systems*",
    "004": "Nautsch et al., *The Privacy ZEBRA: Zero Evidence Biometric Recognition "
    "Assessment*, Interspeech 2020",
}
GDPR_URL = "https://eur-lex.europa.eu/eli/reg/2016/679/oj"
WP29_URL = (
    "https://ec.europa.eu/justice/article-29/documentation/opinion-recommendation/files/2014/"
    "wp216_en.pdf"
)


def _paper_frame() -> pd.DataFrame:
    """The 4x4 example of Šterns et al. 2025 as the editor shows it (own speaker counted from 1)."""
    frame = pd.DataFrame(
        PAPER_EXAMPLE_SCORES,
        columns=SPEAKER_COLUMNS,
        index=[f"trial {i + 1}" for i in range(len(PAPER_EXAMPLE_SCORES))],
    )
    frame[OWN] = [t + 1 for t in PAPER_EXAMPLE_TARGETS]
    return frame


def _restore_widgets() -> None:
    """Widget state is dropped when the user leaves the page: put the kept values back."""
    for key, default in WIDGET_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = st.session_state.get(f"{key}_kept", default)


def _keep_widgets() -> None:
    for key in WIDGET_DEFAULTS:
        st.session_state[f"{key}_kept"] = st.session_state[key]


def _reset_example() -> None:
    st.session_state[MATRIX_KEY] = _paper_frame()
    st.session_state[EDITOR_VERSION_KEY] = st.session_state.get(EDITOR_VERSION_KEY, 0) + 1
    st.session_state[W_KEY] = PAPER_EXAMPLE_W


def _example_view(frame: pd.DataFrame, w: float) -> ThreatView | None:
    """Both views of the edited matrix, or None after explaining what is wrong with it."""
    empty = [
        f"{trial} ({column})"
        for trial, row in frame.iterrows()
        for column, value in row.items()
        if pd.isna(value)
    ]
    if empty:
        st.error(
            f"Some cells are empty: {', '.join(empty)}. Type a number in each cell, or reset "
            "to the paper's example.",
            icon=":material/error:",
        )
        return None
    own = frame[OWN].astype(float)
    if not (own == own.round()).all():
        st.error(
            f"The own speaker of a trial is a column number, a whole number from 1 to "
            f"{N_EXAMPLE}; got {', '.join(f'{v:g}' for v in own)}.",
            icon=":material/error:",
        )
        return None
    targets = (own.astype(int) - 1).tolist()
    matrix = ui.safe_call(paper_matrix, frame[SPEAKER_COLUMNS].to_numpy(float), targets)
    return None if matrix is None else ui.safe_call(threat_view, matrix, w=w)


def _metric_row(view: ThreatView) -> None:
    m = view.summary()
    cols = st.columns(6)
    cols[0].metric(
        "EER",
        f"{m['eer']:.3f}",
        help="1-to-1 verification: pooled mated vs non-mated scores. 0.5 = a coin toss.",
        border=True,
    )
    cols[1].metric(
        "ROCCH-EER",
        f"{m['eer_rocch']:.3f}",
        help="The EER of the ROC convex hull: the best a threshold-based verifier can do "
        "after optimal calibration. Also 0.5 at chance.",
        border=True,
    )
    cols[2].metric(
        "Linkability",
        f"{m['linkability']:.3f}",
        help="1-to-N search: share of trials whose own speaker scores highest in their row.",
        border=True,
    )
    cols[3].metric(
        "Chance (1/N)",
        f"{m['chance_linkability']:.3f}",
        help="Linkability of an attacker who guesses one of the N enrolled speakers at random.",
        border=True,
    )
    cols[4].metric(
        "ALID (bits)",
        f"{m['alid']:.2f}",
        help="Average local information disclosure: how much one trial tells the attacker "
        "about its speaker, on average. 0 = nothing.",
        border=True,
    )
    cols[5].metric(
        "LIDmax (bits)",
        f"{m['lid_max']:.2f}",
        help=f"The worst trial's disclosure. At most log₂ N = {m['lid_ceiling']:.2f} bits "
        "(the attacker is certain).",
        border=True,
    )


study = ui.page_setup("Threat model")
st.title("Threat model: why a 50 % EER does not mean safe")
st.markdown(
    "Voice anonymisation is usually judged by one number, the **equal error rate (EER)** of a "
    "speaker-verification system: an EER of 50 % means the verifier does no better than a "
    'coin toss when asked *"are these two recordings the same person?"*. That is a '
    "**1-to-1** question.\n\n"
    "A real attacker asks a different one. They hold a database of **N known speakers** and, "
    "for each anonymised recording, **search it for the best match**: a **1-to-N** search. "
    "They never need a global threshold, only to see which speaker stands out *for this "
    "recording*. The same scores can give a perfect-looking EER and a perfect linkage "
    "attack. This page shows how, in four steps."
)

# ---------------------------------------------------------------- 1. the 4x4 example
st.header("1. One matrix, two readings", divider="gray")
st.markdown(
    "Four anonymised recordings (*trials*, rows) are compared with four enrolled speakers "
    "(columns); higher scores mean *more alike*. The last column says which enrolled speaker "
    "really spoke each trial. This is the example of Šterns et al. 2025 (eq. 1). **Edit any "
    "score** and watch both readings."
)
if MATRIX_KEY not in st.session_state:
    st.session_state[MATRIX_KEY] = _paper_frame()
_restore_widgets()
editor_col, w_col = st.columns([3, 2], gap="large")
with editor_col:
    column_config = {
        c: st.column_config.NumberColumn(
            c,
            format="%.2f",
            step=0.01,
            width=90,
            help=f"Score of the trial against enrolled {c}.",
        )
        for c in SPEAKER_COLUMNS
    }
    column_config[OWN] = st.column_config.NumberColumn(
        OWN,
        format="%d",
        step=1,
        width=110,
        help=f"Which enrolled speaker really spoke the trial: a column number from 1 to "
        f"{N_EXAMPLE}.",
    )
    edited = st.data_editor(
        st.session_state[MATRIX_KEY],
        key=f"vm_threat_editor_{st.session_state.get(EDITOR_VERSION_KEY, 0)}",
        num_rows="fixed",
        column_config=column_config,
    )
    st.session_state[MATRIX_KEY] = edited
    st.button(
        "Reset to the paper's example",
        key="vm_threat_reset",
        on_click=_reset_example,
        icon=":material/restart_alt:",
    )
with w_col:
    w = st.slider(
        "Attacker's confidence w",
        min_value=0.0,
        max_value=5.0,
        step=0.1,
        key=W_KEY,
        help="How strongly the attacker trusts a score that stands out in its row. On real "
        "data it is learned on a separate calibration (dev) set; here you choose it.",
    )
    st.caption(
        f"**w** turns a row's scores into the attacker's belief about who is speaking. At "
        f"w = 0 the attacker ignores the scores and learns nothing (LID = 0); the larger w, "
        f"the more a score that stands out in its row convinces them. w = {PAPER_EXAMPLE_W:g} "
        "is the value of the paper's worked example. w changes LID only, never the EER or "
        "linkability."
    )

view = _example_view(edited, w)
if view is not None:
    _metric_row(view)
    b = view.baseline
    n_linked = int(view.linked.sum())
    verdict = (
        "which looks like perfect privacy"
        if b.eer >= CALLOUT_EER
        else "so even the 1-to-1 view sees a leak"
    )
    st.markdown(
        f"**Same {b.n_trials * b.n_enrolled} numbers, two verdicts.** Pooled, the EER is "
        f"{b.eer:.1%}, {verdict}. Row by row, the attacker who picks the highest score of "
        f"each trial finds the right speaker in **{n_linked} of {b.n_trials}** trials "
        f"(a random guess: 1 in {b.n_enrolled}), and the most exposed trial discloses "
        f"**{view.lid.lid_max:.2f} bits** of at most {view.lid.ceiling:.2f}."
    )
    pooled_col, rows_col = st.columns(2, gap="medium")
    with pooled_col:
        ui.show_figure(pooled_view_figure(view), "threat_example_pooled")
        st.caption(
            "The EER forgets which row a score came from. Mated (own-speaker) and non-mated "
            "scores interleave, so no single threshold separates them. At the dashed EER "
            "threshold (scores at or below it are rejected) the share of own-speaker scores "
            "rejected equals the share of other scores accepted: that share is the EER."
        )
    with rows_col:
        ui.show_figure(row_view_figure(view), "threat_example_rows")
        st.caption(
            "The attacker looks at one row at a time. Rows sit at different levels (some "
            "recordings score high against everybody), which is what blurs the pooled view. "
            "But the attacker only needs the orange dot, the trial's own speaker, to be the "
            "highest of its row: the ring marks the attacker's pick, ✓ a linked trial. The "
            "global threshold is blind to that."
        )
    lid_col, table_col = st.columns([1, 2], gap="medium")
    with lid_col:
        ui.show_figure(lid_per_trial_figure(view), "threat_example_lid")
    with table_col:
        st.markdown("**Trial by trial**")
        ui.show_table(
            view.trial_frame(),
            "threat_example_trials.csv",
            column_help={
                "own score": "Score against the trial's own speaker.",
                "best other score": "Highest score against any other enrolled speaker.",
                "rank": "Position of the own speaker in the row (1 = highest; ties count "
                "against the attacker).",
                "linked": "True when no other speaker scores higher than the own speaker (a "
                "tie is a link, as in linkability).",
                "p(own speaker)": "The attacker's belief in the right speaker after seeing "
                "the row (a random guess: 1/N).",
                "LID (bits)": "log₂(N · p(own speaker)): bits the trial gives away.",
            },
        )
    with st.expander("The maths", icon=":material/functions:"):
        st.markdown(
            "**EER (1-to-1).** Pool the T own-speaker scores (mated) and the T(N−1) others "
            "(non-mated). For a threshold t, the false rejection rate is the share of mated "
            "scores ≤ t and the false acceptance rate the share of non-mated scores > t; the "
            "EER is where the two meet. In the paper's example the pools are "
            "{0.9, 0.7, 0.5, 0.3} and {0.8, 0.6, 0.4, 0.2} three times each: at t = 0.5 half "
            "of each pool is on the wrong side, so EER = 50 %. The **ROCCH-EER** is the EER "
            "of the convex hull of the ROC curve (37.5 % in the paper's example: the hull "
            "interpolates between the corners of the staircase ROC); docs, Methods > EER and Cllr."
        )
        st.markdown(
            "**Linkability (1-to-N).** The share of trials whose own speaker scores at least "
            "as high as every other enrolled speaker in the same row (a tie is a link, as in "
            "the authors' code); a random guess achieves 1/N (Vauquier et al. 2025)."
        )
        st.markdown(
            "**LID (local information disclosure).** Each row is z-normalised with its own "
            "mean and (population) standard deviation, which removes the row's level; the "
            "attacker's belief in speaker j is a softmax of w·z:"
        )
        st.latex(
            r"p_{ij} = \frac{e^{w z_{ij}}}{\sum_k e^{w z_{ik}}}, \qquad "
            r"\mathrm{LID}_i = \log_2\!\left(N \, p_{i,m_i}\right) \le \log_2 N"
        )
        st.markdown(
            "where $m_i$ is the trial's own speaker. LID > 0: the trial points towards its "
            "speaker; 0: nothing learned; < 0: it points away. ALID is the mean over trials, "
            "LIDmax the worst trial. In the paper's example every row has the same shape, "
            "z = (√3, −1/√3, −1/√3, −1/√3) with the own speaker first, so with w = 1.5 "
            "every trial gets"
        )
        st.latex(
            r"p_{\mathrm{own}} = \frac{e^{1.5\sqrt3}}{e^{1.5\sqrt3} + 3\,e^{-1.5/\sqrt3}} "
            r"\approx 0.914, \qquad \mathrm{LID} = \log_2(4 \times 0.914) \approx 1.87 "
            r"\text{ bits of at most } \log_2 4 = 2."
        )
        st.markdown(
            "On real data w is learned by logistic regression on a dev set of other speakers "
            "(Šterns et al. 2025, section 5.1; docs, Methods > LID)."
        )

# ---------------------------------------------------------------- 2. generator
st.header("2. Generator: watch the numbers move apart", divider="gray")
st.markdown(
    "A simulated attack with your settings. Each trial's scores are *its own level* (the "
    "**per-trial offset**: some recordings score high against everyone, e.g. because of "
    "their length or channel) plus random **noise**, and the trial's own speaker gets an "
    "extra **margin**. LID is calibrated on a second simulated set of other speakers, as on "
    "real data."
)
with st.container(border=True):
    c1, c2, c3 = st.columns(3, gap="large")
    n_enrolled = c1.slider(
        "Enrolled speakers N",
        min_value=2,
        max_value=200,
        key="vm_threat_n",
        help="Size of the attacker's database. Chance linkability is 1/N; LID is at most "
        "log₂ N bits.",
    )
    n_trials = c1.slider(
        "Trials",
        min_value=20,
        max_value=1000,
        step=10,
        key="vm_threat_trials",
        help="Anonymised recordings the attacker searches with.",
    )
    margin = c2.slider(
        "Own-speaker margin",
        min_value=0.0,
        max_value=3.0,
        step=0.05,
        key="vm_threat_margin",
        help="How much higher the own speaker scores than the others in the same row: the "
        "identity the anonymiser left behind. 0 = none.",
    )
    spread = c2.slider(
        "Per-trial offset spread",
        min_value=0.0,
        max_value=5.0,
        step=0.1,
        key="vm_threat_spread",
        help="Standard deviation of the level of each trial's row. It blurs the pooled "
        "scores (the EER rises) but not the order inside a row.",
    )
    noise = c3.slider(
        "Noise",
        min_value=0.0,
        max_value=2.0,
        step=0.05,
        key="vm_threat_noise",
        help="Random jitter of every score. It hides the margin in every view at once.",
    )
    seed = c3.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key="vm_threat_seed")

_keep_widgets()

scenario = ui.safe_call(
    threat_scenario,
    n_enrolled=int(n_enrolled),
    n_trials=int(n_trials),
    margin=float(margin),
    offset_spread=float(spread),
    noise=float(noise),
    seed=int(seed),
)
if scenario is not None:
    _metric_row(scenario)
    s = scenario.summary()
    near_chance = s["eer"] >= CALLOUT_EER
    st.markdown(
        f"**What moved apart.** The EER is {s['eer']:.1%}"
        + (", close to the 50 % of a coin toss" if near_chance else "")
        + f", yet {s['linkability']:.1%} of the trials are linked to their speaker "
        f"({s['linkability'] / s['chance_linkability']:.1f}× the chance of "
        f"{s['chance_linkability']:.1%}), and the most exposed trial discloses "
        f"{s['lid_max']:.2f} of at most {s['lid_ceiling']:.2f} bits."
    )
    st.caption(
        "Try it: raise the **offset spread** and the EER climbs towards 50 % while "
        "linkability, ALID and LIDmax do not move at all: the offsets shift whole rows, and "
        "the attacker only compares scores within a row. Raise the **noise** instead, or "
        "lower the **margin**, and every number falls towards chance together."
    )
    gen_metrics_col, gen_lid_col = st.columns(2, gap="medium")
    with gen_metrics_col:
        ui.show_figure(
            scenario_metrics_figure(scenario, title="The numbers side by side"),
            "threat_generator_metrics",
        )
    with gen_lid_col:
        ui.show_figure(lid_per_trial_figure(scenario), "threat_generator_lid")
    gen_pooled_col, gen_rows_col = st.columns(2, gap="medium")
    with gen_pooled_col:
        ui.show_figure(pooled_view_figure(scenario), "threat_generator_pooled")
    with gen_rows_col:
        ui.show_figure(row_view_figure(scenario, max_rows=20), "threat_generator_rows")

# ---------------------------------------------------------------- 3. GDPR vocabulary
st.header("3. The regulation's words, the metrics' numbers", divider="gray")
st.markdown(
    f"Under [GDPR]({GDPR_URL}) Recital 26, data are anonymous only when the person is no "
    "longer identifiable by any means reasonably likely to be used, *such as singling out*. "
    f"The Article 29 Working Party's [Opinion 05/2014 on Anonymisation Techniques]({WP29_URL}) "
    "(endorsed by the EDPB) names three risks to test. Each maps to an attack on "
    "anonymised voices and to numbers VoxMetrics reports:"
)
st.markdown(
    "| Term | What the regulation means | The attack on voices | VoxMetrics metric | Where "
    "| Paper |\n"
    "|---|---|---|---|---|---|\n"
    "| **Singling out** | Isolating the records of one individual in a dataset, even "
    "without learning their name (Recital 26; WP29 05/2014). | Pick out one speaker's "
    "recordings among N, by a threshold on the scores or by the scores of a single "
    "trial. | Singling out (vs chance e⁻¹ ≈ 37 %); **LIDmax** and LID+: how much the most "
    "exposed trials give away, in bits. | Linkage, LID | 001, 000 |\n"
    "| **Linkability** | Linking at least two records of the same person, in one "
    "dataset or across two (WP29 05/2014). | **1-to-N search**: match each anonymised "
    "recording to a database of N enrolled speakers. | **Linkability** (vs chance 1/N), "
    "linkability vs N; SRD: the rank of the right speaker, in bits; ALID. | Linkage, SRD, "
    "LID | 001, 002, 000 |\n"
    "| **Inference** | Deducing an attribute of a person, with significant probability, "
    "from other data (WP29 05/2014). | Predict sex, age, dialect... from the anonymised "
    "voice. | **SBLS**, the soft biometric leakage score. | Soft biometrics | 003 |\n"
    "| *(not a legal term)* Verification | Are these two recordings the same person? The "
    "question biometric systems answer. | 1-to-1 comparison with a global threshold. | "
    "EER, ROCCH-EER, Cllr; ZEBRA (expected and worst-case evidence). | Overview, ZEBRA "
    "| 004 |"
)
st.markdown(
    "**Papers.** "
    + " · ".join(f"**{key}**: {title}" for key, title in PAPERS.items())
    + ". A 50 % EER answers only the last row; the first three are what the regulation asks."
)

# ---------------------------------------------------------------- 4. the study
st.header("4. Your study", divider="gray")
checked = (
    f"EER ≥ {CALLOUT_EER:g} (looks private on the 1-to-1 view) and either LIDmax ≥ "
    f"{CALLOUT_LID_MAX:g} bit or linkability above {CALLOUT_LINKABILITY_FACTOR:g}× chance "
    "(1/N)"
)
if len(study) == 0:
    st.info(
        "The study has no conditions yet, so there is nothing to check. The example and the "
        "generator above work without one. Load the demo study from the sidebar, or add your "
        "own scores on the Data page, to see which of your conditions look private on the EER "
        "but are not.",
        icon=":material/info:",
    )
    st.page_link(
        "pages/2_Data.py",
        label="Add a condition",
        icon=":material/add:",
        query_params={"new": "1"},
    )
else:
    st.markdown(
        f"Every condition of **{ui.md_escape(study.name)}** is checked for the pattern above: "
        f"{checked}."
    )
    study = ui.one_to_n_study(study)  # a sparse trial list: its complete trials
    reports = ui.study_reports(study)
    callouts = ui.safe_call(threat_callouts, study, reports) if reports else None
    if callouts:
        for c in callouts:
            st.warning(
                f"**{ui.md_escape(c.condition)}** looks private on the EER ({c.eer:.3f}; "
                f"chance is 0.5) but is not: " + "; ".join(c.reasons) + ".",
                icon=":material/crisis_alert:",
            )
            st.markdown(f"Its most exposed trials ({ui.md_escape(c.condition)}):")
            ui.show_table(
                c.worst_trials,
                f"threat_worst_trials_{c.condition}.csv",
                column_help={
                    "rank": "Position of the trial's own speaker among the N (1 = top).",
                    "margin": "Own-speaker score minus the best other score: > 0 means linked.",
                    "LID (bits)": "Bits the trial gives away about its speaker.",
                    "p(own speaker)": "The calibrated attacker's belief in the right speaker.",
                },
            )
        st.page_link("pages/3_LID.py", label="LID: every trial", icon=":material/insights:")
    elif callouts is not None:
        st.success(
            f"No condition crosses the thresholds: none has {checked}.",
            icon=":material/check_circle:",
        )
    if reports:
        called = {c.condition for c in callouts or []}
        table = pd.DataFrame(
            {
                "Condition": [r.name for r in reports],
                "EER": [r.baseline.eer for r in reports],
                "Linkability": [r.baseline.linkability for r in reports],
                "Chance (1/N)": [r.baseline.chance_linkability for r in reports],
                "LIDmax (bits)": [None if r.lid is None else r.lid.lid_max for r in reports],
                "Called out": [r.name in called for r in reports],
            }
        )
        st.markdown("**Every condition checked**")
        ui.show_table(
            table,
            "threat_conditions.csv",
            column_help={
                "EER": f"Called out only at or above {CALLOUT_EER:g}: lower EERs already show "
                "the leak on the 1-to-1 view (Overview page).",
                "LIDmax (bits)": "Empty without a dev set: no calibration, no LID.",
            },
        )
        no_lid = [r.name for r in reports if r.lid is None]
        if no_lid:
            st.caption(
                f"{', '.join(ui.md_escape(n) for n in no_lid)}: no dev set, so no LID; checked "
                "on linkability only. The LID page can cross-calibrate them on eval."
            )
