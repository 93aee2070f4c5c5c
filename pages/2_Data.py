"""Data: load score files or embeddings into a condition, its utility, and look at its scores."""

from typing import get_args

import streamlit as st

from voxmetrics import ui
from voxmetrics._types import ATTACKERS, SCORE_FORMAT_LABELS, SCORE_KINDS, ScoreFormat
from voxmetrics.analysis.vpc import check_summary_eers
from voxmetrics.data.study import Condition
from voxmetrics.data.summary import condition_facts, score_histogram
from voxmetrics.plots import score_histogram_figure
from voxmetrics.ui.setups_form import attacker_setups_tab
from voxmetrics.ui.utility_form import utility_tab

NEW = "➕ New condition"
CONDITION = "vm_data_condition"
SELECT_NEXT = "vm_data_select_next"
LOADED = "vm_data_loaded"
VPC_LOADED = "vm_data_vpc_loaded"
UTILITY_LOADED = "vm_data_util_loaded"
KIND_LABELS = {"similarity": "similarities", "llr": "LLRs", "distance": "distances"}

study = ui.page_setup("Data")
st.title("Data")
st.caption(
    "Load the scores of one condition (one anonymisation system under one attacker): score "
    "files, or utterance embeddings that are cosine-scored here. Files are checked before "
    "anything changes in the study."
)

# ---- which condition
options = [*study.names, NEW]
if SELECT_NEXT in st.session_state:
    st.session_state[CONDITION] = st.session_state.pop(SELECT_NEXT)
elif st.query_params.get("new") == "1":
    st.session_state[CONDITION] = NEW
    del st.query_params["new"]
if st.session_state.get(CONDITION) not in options:
    st.session_state[CONDITION] = options[0]

pick_col, name_col, attacker_col = st.columns(3)
choice = pick_col.selectbox("Condition", options, key=CONDITION)
existing = study.get(choice) if choice != NEW else None
if existing is None:
    name = name_col.text_input(
        "Name of the new condition", key="vm_data_new_name", placeholder="e.g. my-anonymiser"
    ).strip()
else:
    name = existing.name
    name_col.text_input("Name", value=name, disabled=True, help="Rename in the sidebar.")
attacker = attacker_col.selectbox(
    "Attacker knowledge",
    ATTACKERS,
    index=ATTACKERS.index(existing.attacker if existing else "semi-informed"),
    help="original: no anonymisation, enrolment and trials both original speech (the "
    "baseline; the Embeddings page names such a condition 'original' too); ignorant: "
    "enrolment not anonymised; "
    "lazy-informed: anonymised with another pseudo-speaker; semi-informed: anonymised by the "
    "same system (VoicePrivacy 2024) or by a similar one (Vauquier et al. 2025); informed: "
    "Vauquier et al. 2025's attacker with the same system.",
)
if existing is not None:
    st.caption(f"Loading replaces the data of **{ui.md_escape(name)}**.")


def target_name() -> str | None:
    """The condition name to load into, or None after explaining what is missing."""
    if not name:
        st.error("Give the new condition a name first.")
        return None
    if existing is None and name in study.names:
        st.error(
            f"A condition called '{name}' already exists: pick it in the Condition list to "
            "replace its data, or choose another name."
        )
        return None
    return name


def store(out: ui.Outcome[Condition]) -> None:
    """Put the loaded condition into the study and show it selected after a rerun."""
    if out.failed:  # bad input: ui.compute showed why
        return
    cond, summary = out.value, condition_facts(out.value)
    ui.set_study(ui.get_study().with_condition(cond))  # the whole study, not a subset
    st.session_state[SELECT_NEXT] = cond.name
    st.session_state[LOADED] = {"name": cond.name, "summary": summary, "warnings": out.warnings}
    st.rerun()


TABS = ["Score files", "Embeddings", "Attacker set-ups (original + anonymised embeddings)"]
scores_tab, embeddings_tab, setups_tab, vpc_tab, util_tab = st.tabs(
    [*TABS, "VoicePrivacy tree", "Utility (WER, UAR, ρF0)"]
)

with scores_tab:
    eval_col, dev_col = st.columns(2)
    with eval_col:
        st.markdown("**Evaluation scores (eval)**")
        eval_file = st.file_uploader(
            "Scores file",
            key="vm_eval_file",
            help="Long CSV / Parquet (trial_id, trial_speaker, enrol_speaker, score), NPZ "
            "(scores, trial_ids, trial_speakers, enrol_speakers), or a Kaldi / VoicePrivacy "
            "scores file (enrol_id trial_id score).",
        )
        eval_key = st.file_uploader(
            "Key (trials) file, Kaldi only",
            key="vm_eval_key",
            help="enrol_id trial_id target|nontarget, or an utt2spk file.",
        )
    with dev_col:
        st.markdown("**Calibration scores (dev, optional)**")
        dev_file = st.file_uploader(
            "Scores file", key="vm_dev_file", help="Same formats; speakers disjoint from eval."
        )
        dev_key = st.file_uploader("Key (trials) file, Kaldi only", key="vm_dev_key")
    fmt_col, kind_col = st.columns(2)
    fmt = fmt_col.selectbox(
        "Format", get_args(ScoreFormat), format_func=SCORE_FORMAT_LABELS.get, key="vm_format"
    )
    score_kind = kind_col.radio(
        "The scores are",
        SCORE_KINDS,
        format_func=KIND_LABELS.get,
        horizontal=True,
        key="vm_score_kind",
        help="Similarities: higher = closer (cosine, PLDA...). LLRs: calibrated natural-log "
        "likelihood ratios (adds actual DCFs and ECE curves). Distances: lower = closer "
        "(Euclidean, cosine distance); they are negated on reading and every result says so.",
    )
    attr_file = st.file_uploader(
        "Trial attributes (optional)",
        key="vm_attr_file",
        help="A CSV or Parquet with a trial_id column (one row per trial) or a speaker column "
        "(one row per speaker, e.g. speaker,sex) and attribute columns, joined to the trials "
        "(to dev too when it covers them): e.g. sex for Kaldi / VoicePrivacy scores, which "
        "carry none, so the sidebar's Subset selector can split by it.",
    )
    allow_incomplete = st.checkbox(
        "Allow incomplete score files (leave out and count missing pairs)",
        key="vm_allow_incomplete",
        help="Off: a broken file (key pairs or whole key trials without a score, NaN scores, "
        "rows that end early) is refused; a master key listing more trials than the scores "
        "needs this box. On: its broken pairs are left out, and the condition's results and "
        "reports say how many.",
    )
    if st.button("Load scores", type="primary", key="vm_load_scores", icon=":material/upload:"):
        target = target_name()
        if target is not None and eval_file is None:
            st.error("Choose an eval scores file first.")
        elif target is not None:
            store(
                ui.compute(
                    ui.condition_from_score_files,
                    target,
                    eval_file,
                    eval_trials=eval_key,
                    dev_file=dev_file,
                    dev_trials=dev_key,
                    attributes=attr_file,
                    format=fmt,
                    score_kind=score_kind,
                    attacker=attacker,
                    allow_incomplete=allow_incomplete,
                    cache=False,  # each file is read once (ui.uploads)
                    warn=False,  # shown with the loaded condition, after the rerun
                )
            )

with embeddings_tab:
    emb_col, meta_col = st.columns(2)
    emb_file = emb_col.file_uploader(
        "Embeddings",
        type=["npz", "npy", "parquet", "ark", "h5", "hdf5"],
        key="vm_emb_file",
        help="NPZ with embeddings (U × d) and utt_ids, an NPY whose rows follow the "
        "metadata, a Kaldi ark of x-vectors (binary float / double, or text; an scp cannot "
        "be uploaded: upload the ark it points into), an HDF5 file (one dataset per "
        "utterance, or `embeddings` + `utt_ids`), or a Parquet with the metadata columns and "
        "an `embedding` column.",
    )
    meta_file = meta_col.file_uploader(
        "Metadata CSV (all but Parquet)",
        type=["csv"],
        key="vm_meta_file",
        help="Columns utt_id, speaker, role (enrol / trial), split (dev / eval), optional "
        "attributes (sex, age_group, ...) and system. It may list a subset of the "
        "embeddings: the others are ignored and counted.",
    )
    system = st.text_input(
        "System (optional)",
        key="vm_emb_system",
        placeholder="e.g. original, B1",
        help="Keep only the metadata rows whose `system` column has this value.",
    ).strip()
    st.caption(
        "Trials are cosine-scored against enrolment profiles (mean of the L2-normalised "
        "enrolment embeddings of each speaker); the dev split is scored when the metadata has "
        "dev rows."
    )
    if st.button(
        "Load embeddings", type="primary", key="vm_load_embeddings", icon=":material/upload:"
    ):
        target = target_name()
        if target is not None and emb_file is None:
            st.error("Choose an embeddings file first.")
        elif target is not None:
            store(
                ui.compute(
                    ui.condition_from_embedding_files,
                    target,
                    emb_file,
                    metadata=meta_file,
                    system=system or None,
                    attacker=attacker,
                    cache=False,  # the file is read once (ui.uploads)
                    warn=False,  # shown with the loaded condition, after the rerun
                )
            )

with setups_tab:
    if added := attacker_setups_tab(study):
        st.session_state[SELECT_NEXT] = added[-1]
        st.session_state[LOADED] = {"name": added[-1], "summary": [f"added {', '.join(added)}"],
                                    "warnings": []}  # fmt: skip
        st.rerun()

with vpc_tab:
    st.caption(
        "A VoicePrivacy Challenge evaluation (2024, or 2026 track 1 or 2), zipped: the data/ "
        "and exp/ folders of its run_evaluation.py, or exp/ alone (audio is skipped). Adds one "
        "condition per anonymisation system and attacker (the condition name and attacker above "
        "are not used), with sex (and, in track 2, language) per trial, the WER and UAR of the "
        "results summaries and the challenge's embeddings (speaker_vectors.pt) where it saved "
        "them."
    )
    vpc_zip = st.file_uploader("Evaluation tree (.zip)", type=["zip"], key="vm_vpc_zip")
    if st.button("Load the tree", type="primary", key="vm_load_vpc", icon=":material/upload:"):
        if vpc_zip is None:
            st.error("Choose the zip of the evaluation tree first.")
        else:
            out = ui.compute(ui.study_with_vpc_tree, ui.get_study(), vpc_zip, cache=False)
            if not out.failed:
                new_study, tree = out.value
                check = ui.compute(check_summary_eers, tree, cache=False).value
                ui.set_study(new_study)
                st.session_state[VPC_LOADED] = {**tree.to_dict(), "eer_check": check}
                st.rerun()
    tree_loaded = st.session_state.get(VPC_LOADED)
    if tree_loaded:
        st.success(
            f"Loaded {len(tree_loaded['conditions'])} conditions of a VoicePrivacy "
            f"{tree_loaded['edition']} tree: "
            + ", ".join(ui.md_escape(n) for n in tree_loaded["conditions"])
            + "."
        )
        with st.expander("What was read", icon=":material/list:"):
            st.markdown("\n".join(f"- {ui.md_escape(line)}" for line in tree_loaded["found"]))
        if tree_loaded["missing"]:
            st.warning(
                "Missing from the tree:\n\n"
                + "\n".join(f"- {ui.md_escape(m)}" for m in tree_loaded["missing"])
            )
        eer_check = tree_loaded["eer_check"]  # the summaries' EERs against the scores
        if eer_check is not None and eer_check.agreement:
            st.info(eer_check.agreement + ".", icon=":material/check:")
        if eer_check is not None and eer_check.mismatches:
            st.warning(
                "The results summaries disagree with the scores:\n\n"
                + "\n".join(f"- {ui.md_escape(m.message)}" for m in eer_check.mismatches)
            )
        if tree_loaded["notes"]:
            st.info(
                "Read as the challenge reads it:\n\n"
                + "\n".join(f"- {ui.md_escape(m)}" for m in tree_loaded["notes"]),
                icon=":material/info:",
            )

with util_tab:
    if attached := utility_tab(study):
        st.session_state[UTILITY_LOADED] = attached.lines
        st.rerun()
    if lines := st.session_state.get(UTILITY_LOADED):
        st.success("Utility attached:\n\n" + "\n".join(f"- {ui.md_escape(line)}" for line in lines))

# ---- what was loaded, and the scores of the selected condition
loaded = st.session_state.get(LOADED)
if loaded and existing is not None and loaded["name"] == existing.name:
    st.success(f"Loaded **{ui.md_escape(loaded['name'])}**: " + "; ".join(loaded["summary"]) + ".")
    ui.show_warnings(loaded["warnings"], prefix=loaded["name"])

if existing is not None:
    st.divider()
    st.subheader(f"Scores of {existing.name}")
    facts = condition_facts(existing)
    ui.show_warnings(existing.input_warnings, prefix=existing.name)  # its incomplete files
    st.caption("; ".join(facts) + (f". {existing.description}" if existing.description else "."))
    split = "eval"
    if existing.dev is not None:
        split = st.radio("Split", ["eval", "dev"], horizontal=True, key="vm_data_split")
    sm = existing.eval if split == "eval" else existing.dev
    hist = ui.compute(score_histogram, sm).value
    if hist is not None:
        fig = score_histogram_figure(hist, title=f"{existing.name} ({split}): mated vs non-mated")
        ui.show_figure(fig, f"{existing.name}_{split}_scores")
        st.caption(
            "Each pool is normalised to unit area. The more the two overlap, the higher the "
            "EER; the overlap says nothing about how often the right speaker still ranks first."
        )
