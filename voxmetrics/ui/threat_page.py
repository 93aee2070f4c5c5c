"""The Threat model page's text, metric row and widget memory (no computation).

The numbers come from :mod:`voxmetrics.evaluation.threat`; this module holds what the page
shows around them: its prose, the row of six metrics every view gets, and the widget values
that must survive a page change (Streamlit drops widget state when the user leaves the page).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from voxmetrics.analysis.exposure import EXPOSED_RANK1
from voxmetrics.evaluation.threat import (
    CALLOUT_EER,
    CALLOUT_LID_MAX,
    CALLOUT_LINKABILITY_FACTOR,
    PAPER_EXAMPLE_W,
    ThreatView,
    example_frame,
)

__all__ = [
    "EDITOR_VERSION_KEY",
    "MATRIX_KEY",
    "WIDGET_DEFAULTS",
    "W_KEY",
    "keep_widgets",
    "metric_row",
    "reset_example",
    "restore_widgets",
]

MATRIX_KEY = "vm_threat_matrix"
"""The edited example matrix: survives page changes."""
EDITOR_VERSION_KEY = "vm_threat_editor_version"
"""Bumped by "Reset": a fresh editor widget."""
W_KEY = "vm_threat_w"
WIDGET_DEFAULTS: dict[str, Any] = {
    W_KEY: PAPER_EXAMPLE_W,
    "vm_threat_n": 20,
    "vm_threat_trials": 200,
    "vm_threat_margin": 0.5,
    "vm_threat_spread": 1.0,
    "vm_threat_noise": 0.2,
    "vm_threat_seed": 0,
}
"""Widget values restored from plain session-state copies after a page change."""


def restore_widgets() -> None:
    """Widget state is dropped when the user leaves the page: put the kept values back."""
    for key, default in WIDGET_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = st.session_state.get(f"{key}_kept", default)


def keep_widgets() -> None:
    """Copy the widget values where a page change does not drop them."""
    for key in WIDGET_DEFAULTS:
        st.session_state[f"{key}_kept"] = st.session_state[key]


def reset_example() -> None:
    """The paper's example and w back, in a fresh editor."""
    st.session_state[MATRIX_KEY] = example_frame()
    st.session_state[EDITOR_VERSION_KEY] = st.session_state.get(EDITOR_VERSION_KEY, 0) + 1
    st.session_state[W_KEY] = PAPER_EXAMPLE_W


_METRIC_HELP = {
    "eer": "1-to-1 verification: pooled mated vs non-mated scores. 0.5 = a coin toss.",
    "eer_rocch": "The EER of the ROC convex hull: the best a threshold-based verifier can do "
    "after optimal calibration. Also 0.5 at chance.",
    "linkability": "1-to-N search: share of trials whose own speaker scores highest in its row.",
    "chance_linkability": "Linkability of an attacker who guesses one of the N enrolled "
    "speakers at random.",
    "alid": "Average local information disclosure: how much one trial tells the attacker "
    "about its speaker, on average. 0 = nothing.",
}


def metric_row(view: ThreatView) -> None:
    """EER, ROCCH-EER, linkability, chance, ALID and LIDmax of one view, side by side."""
    m = view.summary()
    cells = [
        ("EER", "eer", ".3f"),
        ("ROCCH-EER", "eer_rocch", ".3f"),
        ("Linkability", "linkability", ".3f"),
        ("Chance (1/N)", "chance_linkability", ".3f"),
        ("ALID (bits)", "alid", ".2f"),
    ]
    cols = st.columns(6)
    for col, (label, key, fmt) in zip(cols, cells, strict=False):
        col.metric(label, f"{m[key]:{fmt}}", help=_METRIC_HELP[key], border=True)
    cols[5].metric(
        "LIDmax (bits)",
        f"{m['lid_max']:.2f}",
        help=f"The worst trial's disclosure. At most log₂ N = {m['lid_ceiling']:.2f} bits "
        "(the attacker is certain).",
        border=True,
    )


INTRO = (
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
EXAMPLE_INTRO = (
    "Four anonymised recordings (*trials*, rows) are compared with four enrolled speakers "
    "(columns); higher scores mean *more alike*. The last column says which enrolled speaker "
    "really spoke each trial. This is the example of Šterns et al. 2025 (eq. 1). **Edit any "
    "score** and watch both readings."
)
W_HELP = (
    "How strongly the attacker trusts a score that stands out in its row. On real data it is "
    "learned on a separate calibration (dev) set; here you choose it."
)
W_CAPTION = (
    "**w** turns a row's scores into the attacker's belief about who is speaking. At w = 0 "
    "the attacker ignores the scores and learns nothing (LID = 0); the larger w, the more a "
    f"score that stands out in its row convinces them. w = {PAPER_EXAMPLE_W:g} is the value "
    "of the paper's worked example. w changes LID only, never the EER or linkability."
)
POOLED_CAPTION = (
    "The EER forgets which row a score came from. Mated (own-speaker) and non-mated scores "
    "interleave, so no single threshold separates them. At the dashed EER threshold (scores "
    "at or below it are rejected) the share of own-speaker scores rejected equals the share "
    "of other scores accepted: that share is the EER."
)
ROWS_CAPTION = (
    "The attacker looks at one row at a time. Rows sit at different levels (some recordings "
    "score high against everybody), which is what blurs the pooled view. But the attacker "
    "only needs the orange dot, the trial's own speaker, to be the highest of its row: the "
    "ring marks the attacker's pick, ✓ a linked trial. The global threshold is blind to that."
)
TRIAL_HELP = {
    "own score": "Score against the trial's own speaker.",
    "best other score": "Highest score against any other enrolled speaker.",
    "rank": "Position of the own speaker in the row (1 = highest; ties count against the "
    "attacker).",
    "linked": "True when no other speaker scores higher than the own speaker (a tie is a "
    "link, as in linkability).",
    "p(own speaker)": "The attacker's belief in the right speaker after seeing the row (a "
    "random guess: 1/N).",
    "LID (bits)": "log₂(N · p(own speaker)): bits the trial gives away.",
}
MATHS = (
    "**EER (1-to-1).** Pool the T own-speaker scores (mated) and the T(N−1) others "
    "(non-mated). For a threshold t, the false rejection rate is the share of mated scores "
    "≤ t and the false acceptance rate the share of non-mated scores > t; the EER is where "
    "the two meet. In the paper's example the pools are {0.9, 0.7, 0.5, 0.3} and "
    "{0.8, 0.6, 0.4, 0.2} three times each: at t = 0.5 half of each pool is on the wrong "
    "side, so EER = 50 %. The **ROCCH-EER** is the EER of the convex hull of the ROC curve "
    "(37.5 % in the paper's example: the hull interpolates between the corners of the "
    "staircase ROC); docs, Methods > EER and Cllr.\n\n"
    "**Linkability (1-to-N).** The share of trials whose own speaker scores at least as high "
    "as every other enrolled speaker in the same row (a tie is a link, as in the authors' "
    "code); a random guess achieves 1/N (Vauquier et al. 2025).\n\n"
    "**LID (local information disclosure).** Each row is z-normalised with its own mean and "
    "(population) standard deviation, which removes the row's level; the attacker's belief "
    "in speaker j is a softmax of w·z:",
    r"p_{ij} = \frac{e^{w z_{ij}}}{\sum_k e^{w z_{ik}}}, \qquad "
    r"\mathrm{LID}_i = \log_2\!\left(N \, p_{i,m_i}\right) \le \log_2 N",
    "where $m_i$ is the trial's own speaker. LID > 0: the trial points towards its speaker; "
    "0: nothing learned; < 0: it points away. ALID is the mean over trials, LIDmax the worst "
    "trial. In the paper's example every row has the same shape, "
    "z = (√3, −1/√3, −1/√3, −1/√3) with the own speaker first, so with w = 1.5 every trial "
    "gets",
    r"p_{\mathrm{own}} = \frac{e^{1.5\sqrt3}}{e^{1.5\sqrt3} + 3\,e^{-1.5/\sqrt3}} "
    r"\approx 0.914, \qquad \mathrm{LID} = \log_2(4 \times 0.914) \approx 1.87 "
    r"\text{ bits of at most } \log_2 4 = 2.",
    "On real data w is learned by logistic regression on a dev set of other speakers "
    "(Šterns et al. 2025, section 5.1; docs, Methods > LID).",
)
"""Markdown, LaTeX, Markdown, LaTeX, Markdown: the expander "The maths"."""
GENERATOR_INTRO = (
    "A simulated attack with your settings. Each trial's scores are *its own level* (the "
    "**per-trial offset**: some recordings score high against everyone, e.g. because of "
    "their length or channel) plus random **noise**, and the trial's own speaker gets an "
    "extra **margin**. LID is calibrated on a second simulated set of other speakers, as on "
    "real data."
)
GENERATOR_SLIDERS: dict[str, dict[str, Any]] = {
    "vm_threat_n": {
        "label": "Enrolled speakers N", "min_value": 2, "max_value": 200,
        "help": "Size of the attacker's database. Chance linkability is 1/N; LID is at most "
        "log₂ N bits.",
    },
    "vm_threat_trials": {
        "label": "Trials", "min_value": 20, "max_value": 1000, "step": 10,
        "help": "Anonymised recordings the attacker searches with.",
    },
    "vm_threat_margin": {
        "label": "Own-speaker margin", "min_value": 0.0, "max_value": 3.0, "step": 0.05,
        "help": "How much higher the own speaker scores than the others in the same row: the "
        "identity the anonymiser left behind. 0 = none.",
    },
    "vm_threat_spread": {
        "label": "Per-trial offset spread", "min_value": 0.0, "max_value": 5.0, "step": 0.1,
        "help": "Standard deviation of the level of each trial's row. It blurs the pooled "
        "scores (the EER rises) but not the order inside a row.",
    },
    "vm_threat_noise": {
        "label": "Noise", "min_value": 0.0, "max_value": 2.0, "step": 0.05,
        "help": "Random jitter of every score. It hides the margin in every view at once.",
    },
}  # fmt: skip
"""The generator's sliders by session-state key, in their column order (two per column)."""
GENERATOR_CAPTION = (
    "Try it: raise the **offset spread** and the EER climbs towards 50 % while linkability, "
    "ALID and LIDmax do not move at all: the offsets shift whole rows, and the attacker only "
    "compares scores within a row. Raise the **noise** instead, or lower the **margin**, and "
    "every number falls towards chance together."
)
GDPR_URL = "https://eur-lex.europa.eu/eli/reg/2016/679/oj"
WP29_URL = (
    "https://ec.europa.eu/justice/article-29/documentation/opinion-recommendation/files/2014/"
    "wp216_en.pdf"
)
GDPR_INTRO = (
    f"Under [GDPR]({GDPR_URL}) Recital 26, data are anonymous only when the person is no "
    "longer identifiable by any means reasonably likely to be used, *such as singling out*. "
    f"The Article 29 Working Party's [Opinion 05/2014 on Anonymisation Techniques]({WP29_URL}) "
    "(endorsed by the EDPB) names three risks to test. Each maps to an attack on anonymised "
    "voices and to numbers VoxMetrics reports:"
)
GDPR_TABLE = (
    "| Term | What the regulation means | The attack on voices | VoxMetrics metric | Where "
    "| Paper |\n"
    "|---|---|---|---|---|---|\n"
    "| **Singling out** | Isolating the records of one individual in a dataset, even "
    "without learning their name (Recital 26; WP29 05/2014). | Pick out one speaker's "
    "recordings among N, by a threshold on the scores or by the scores of a single trial. | "
    "Singling out (vs chance e⁻¹ ≈ 37 %); **LIDmax** and LID+: how much the most exposed "
    "trials give away, in bits. | Linkage, LID | Vauquier et al. 2025; Šterns et al. 2025 |\n"
    "| **Linkability** | Linking at least two records of the same person, in one dataset or "
    "across two (WP29 05/2014). | **1-to-N search**: match each anonymised recording to a "
    "database of N enrolled speakers. | **Linkability** (vs chance 1/N), linkability vs N; "
    "SRD: the rank of the right speaker, in bits; ALID. | Linkage, SRD, LID | Vauquier et al. "
    "2025; Bäckström et al. 2026; Šterns et al. 2025 |\n"
    "| **Inference** | Deducing an attribute of a person, with significant probability, from "
    "other data (WP29 05/2014). | Predict sex, age, dialect... from the anonymised voice. | "
    "**SBLS**, the soft biometric leakage score. | Soft biometrics | Seo et al. 2025 |\n"
    "| *(not a legal term)* Verification | Are these two recordings the same person? The "
    "question biometric systems answer. | 1-to-1 comparison with a global threshold. | EER, "
    "ROCCH-EER, Cllr; ZEBRA (expected and worst-case evidence). | Overview, ZEBRA | Nautsch "
    "et al. 2020 |"
)
PAPERS = (
    "**Papers.** Šterns et al. 2025, *Goodbye Equal Error Rate, Hello Local Information "
    "Disclosure: Evaluating Voice Anonymisation against 1-to-N Linkage Threats* · Vauquier et "
    "al. 2025, *Legally validated evaluation framework for voice anonymization* · Bäckström "
    "et al. 2026, *Privacy Disclosure of Similarity Rank in Speech and Language Processing* · "
    "Seo et al. 2025, *Measuring Soft Biometric Leakage in Speaker De-Identification Systems* "
    "· Nautsch et al. 2020, *The Privacy ZEBRA: Zero Evidence Biometric Recognition "
    "Assessment*, Interspeech 2020. A 50 % EER answers only the last row; the first three are "
    "what the regulation asks."
)
CHECKED = (
    f"EER ≥ {CALLOUT_EER:g} (looks private on the 1-to-1 view) and either LIDmax ≥ "
    f"{CALLOUT_LID_MAX:g} bit or linkability above {CALLOUT_LINKABILITY_FACTOR:g}× chance "
    "(1/N), each judged as the Overview's report card judges it (a number it reads as "
    "≈ chance or uninformative at this N is not cited)"
)
"""What a call-out needs, in words."""
NO_STUDY = (
    "The study has no conditions yet, so there is nothing to check. The example and the "
    "generator above work without one. Load the demo study from the sidebar, or add your own "
    "scores on the Data page, to see which of your conditions look private on the EER but are "
    "not."
)
WORST_HELP = {
    "rank": "Position of the trial's own speaker among the N (1 = top).",
    "margin": "Own-speaker score minus the best other score: > 0 means linked.",
    "LID (bits)": "Bits the trial gives away about its speaker.",
    "p(own speaker)": "The calibrated attacker's belief in the right speaker.",
}
EXPOSED_INTRO = (
    "An auditor acts per data subject and a vendor fixes per speaker. Each speaker, under "
    "every condition (the original speech left out): how often its trials rank its own "
    "identity first among the N enrolled (the **rank-1 rate**; chance is 1/N), its highest "
    "per-trial LID (bits, at most log₂ N) and, with embeddings, whether it is singled out. A "
    f"speaker is **exposed** under a condition when its rank-1 rate is at least "
    f"{EXPOSED_RANK1:.0%}; the most exposed come first."
)
"""What the exposed speakers' table shows."""
EXPOSED_HELP = {
    "Exposed under": f"How many conditions rank the speaker first in at least "
    f"{EXPOSED_RANK1:.0%} of its trials.",
    "Conditions": "How many conditions rank this speaker's trials (the original speech left out).",
    "Mean rank-1 rate": "Share of its trials ranked first, averaged over the conditions "
    "(chance: 1/N).",
}
"""Help of the exposed speakers' columns."""
CHECKED_HELP = {
    "EER": f"Called out only at or above {CALLOUT_EER:g}: lower EERs already show the leak on "
    "the 1-to-1 view (Overview page).",
    "LIDmax (bits)": "Empty without a dev set: no calibration, no LID.",
    "LIDmax verdict": "The report card's level of LIDmax, and why when the rule sets it "
    "(≈ chance, uninformative at N): the call-out cites only a risk level.",
    "Linkability verdict": "The report card's level of linkability against chance, and why "
    "when the rule sets it.",
}
