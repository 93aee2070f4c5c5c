"""The Attackers page through the app's entrypoint with Streamlit's AppTest (style.md 17).

Every back-end side by side on a condition's embeddings, the strongest chosen on dev, the
weak-attacker warning, the actions that add attackers' conditions, and the Overview's card
judging the strongest attacker tried (named, with the warning).
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from app_cases import open_page, unescaped_text
from streamlit.testing.v1 import AppTest

from voxmetrics.data import EmbeddingSet
from voxmetrics.data.recipe import WEAK_ATTACKER, AttackerRecipe
from voxmetrics.data.study import Study, StudySettings
from voxmetrics.embeddings.backends import BACKENDS
from voxmetrics.evaluation.attackers import BACKEND_COLUMNS
from voxmetrics.synth import demo_study
from voxmetrics.ui.setup import MENU
from voxmetrics.ui.state import STUDY_KEY, SUBSET_KEY

PAGE = "pages/13_Attackers.py"
OVERVIEW = "pages/1_Overview.py"
SUBHEADERS = [
    "The strongest, chosen on dev",
    "Every back-end side by side",
    "Add attackers to the study",
    "The attacker each system is judged against",
]

pytestmark = [
    pytest.mark.usefixtures("fresh_app_caches"),
    pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning"),
]


def _study(**settings) -> Study:
    """The demo, small and without a bootstrap (the page's numbers need none)."""
    study = demo_study(n_speakers=12)
    return dataclasses.replace(study, settings=StudySettings(bootstrap=0, **settings))


def _page(study: Study | None = None, path: str = PAGE) -> AppTest:
    return open_page(path, _study() if study is None else study, timeout=180)


def _backends(at: AppTest):
    return next(d.value for d in at.dataframe if "Back-end" in d.value.columns)


def test_the_page_is_in_the_menu():
    assert PAGE in [m.path for m in MENU]


def test_every_backend_side_by_side_and_the_strongest_marked():
    at = _page()
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Attackers: is the attacker strong enough?"
    assert [s.value for s in at.subheader] == SUBHEADERS
    # the caption names the condition tried and its attacker, and what each back-end trains on
    said = re.search(
        r"Attackers of \*\*(.+?)\*\* \((.+?)\): each back-end trained on the attacker's own "
        r"data \(train split, else dev\), evaluated on eval\.",
        unescaped_text(at.caption),
    )
    assert said is not None, unescaped_text(at.caption)
    study = at.session_state[STUDY_KEY]
    assert said[1] in study.names and said[2] == study.get(said[1]).attacker
    table = _backends(at)
    assert list(table["Back-end"]) == list(BACKENDS)
    assert list(table.columns) == list(BACKEND_COLUMNS)
    assert table["Strongest"].sum() == 1
    strongest = table.loc[table["Strongest"], "Back-end"].iloc[0]
    tried = table[table["Skipped"] == ""]
    assert tried["EER"].notna().all() and tried["TAR @ FAR 1 %"].notna().all()
    assert tried["LIDmax (bits)"].notna().all() and tried["Linkability"].notna().all()
    # chosen on dev (the lowest dev EER), reported on eval
    assert tried["Dev EER"].min() == table.loc[table["Strongest"], "Dev EER"].iloc[0]
    success = unescaped_text(at.success)
    assert f"**{strongest}** is the strongest" in success and "chosen on dev" in success
    assert "reported on eval" in success
    # procrustes needs the original voices: skipped with its reason, not an error
    assert "original embeddings" in table.set_index("Back-end").loc["procrustes", "Skipped"]
    labels = [b.label for b in at.button]
    assert f"Add the strongest ({strongest})" in labels
    # no recipe in the demo: every condition judged as it is
    assert "No condition of the study carries an attacker recipe" in unescaped_text(at.caption)


def test_the_weak_attacker_warning_with_its_reasons():
    at = _page()
    at.selectbox(key="vm_attackers_condition").set_value("anon-mild").run()
    assert not at.exception, at.exception
    warnings = unescaped_text(at.warning)
    assert WEAK_ATTACKER.capitalize() in warnings
    assert "every trained back-end is weaker than plain cosine scoring" in warnings


def test_the_original_voices_run_the_check_on_original_speech():
    at = _page()
    at.selectbox(key="vm_attackers_condition").set_value("anon-strong").run()
    at.selectbox(key="vm_attackers_original_anon-strong").set_value("plain").run()
    assert not at.exception, at.exception
    text = unescaped_text(at.caption) + unescaped_text(at.warning)
    assert "original_speech" in text or "original (unprotected) speech" in text
    table = _backends(at).set_index("Back-end")
    assert table.loc["procrustes", "Skipped"] == ""  # the mapping learns from plain's pairs


def test_adding_the_strongest_makes_the_card_judge_it_and_name_it():
    at = _page()
    for name in ("anon-mild", "anon-strong", "anon-leaky", "random"):  # one not won by cosine
        at.selectbox(key="vm_attackers_condition").set_value(name).run()
        if not at.button(key="vm_attackers_add_strongest").disabled:
            break
    strongest = _backends(at).query("Strongest")["Back-end"].iloc[0]
    assert strongest != "cosine"  # cosine is the condition's own scores: nothing to add
    at.button(key="vm_attackers_add_strongest").click().run()
    assert not at.exception, at.exception
    study = at.session_state[STUDY_KEY]
    added = study.get(f"{name} [{strongest}]")
    assert added.recipe.backend == strongest and added.recipe.selected_by == "eer"
    assert added.utility == study.get(name).utility and added.attacker == "semi-informed"
    judged = next(d.value for d in at.dataframe if "Judged" in d.value.columns)
    assert set(judged["Condition"]) == {name, f"{name} [{strongest}]"}
    assert judged["Judged"].sum() == 1
    # the Overview's card judges the strongest of the two, names it, and warns when weak
    at.switch_page(OVERVIEW).run()
    assert not at.exception, at.exception
    card = at.dataframe[0].value
    kept = judged.loc[judged["Judged"], "Condition"].iloc[0]
    left = judged.loc[~judged["Judged"], "Condition"].iloc[0]
    assert kept in list(card["Condition"]) and left not in list(card["Condition"])
    notes = unescaped_text(at.markdown)
    assert "Which attacker each row is judged against" in notes
    assert "the strongest of 2 attackers tried" in notes and "(not on the card)" in notes
    if kept != name and added.recipe.weak:  # the weak attacker's row carries its warning
        assert WEAK_ATTACKER in unescaped_text(at.warning)


def test_adding_every_backend_but_the_conditions_own_scores():
    at = _page()
    n = int(_backends(at)["Skipped"].eq("").sum())
    assert "cosine: the condition's own scores" in unescaped_text(at.caption)
    at.button(key="vm_attackers_add_all").click().run()
    assert not at.exception, at.exception
    names = at.session_state[STUDY_KEY].names
    assert sum(name.startswith("plain [") for name in names) == n - 1
    assert "plain [cosine]" not in names  # the demo's scores are cosine scores already
    assert "Added plain [lda]" in unescaped_text(at.success)


def test_a_subset_adds_nothing_and_says_why():
    at = _page()
    at.session_state[SUBSET_KEY] = "sex=F"
    at.run()
    assert not at.exception, at.exception
    assert "choose **All trials**" in unescaped_text(at.info)
    assert not [b for b in at.button if b.key == "vm_attackers_add_strongest"]


def test_no_embeddings_is_explained():
    study = _study()
    bare = dataclasses.replace(
        study, conditions=tuple(dataclasses.replace(c, embeddings=None) for c in study.conditions)
    )
    at = _page(bare)
    assert not at.error
    assert "No condition of the study has utterance embeddings" in unescaped_text(at.info)
    assert not at.dataframe


def test_no_dev_split_is_a_message_not_a_traceback():
    study = _study()
    es = study.get("anon-mild").embeddings
    keep = (es.meta["split"] == "eval").to_numpy()
    eval_only = EmbeddingSet.from_arrays(
        es.embeddings[keep], es.meta[keep].reset_index(drop=True), source="eval only"
    )
    cond = dataclasses.replace(study.get("anon-mild"), dev=None, embeddings=eval_only)
    at = _page(Study(conditions=(cond,), settings=study.settings))
    assert "needs a dev split" in unescaped_text(at.error)
    # one back-end needs no choice and no training data: cosine alone is shown
    at.multiselect(key="vm_attackers_backends").set_value(["cosine"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert list(_backends(at)["Back-end"]) == ["cosine"]


def test_no_backend_chosen_is_a_message():
    at = _page()
    at.multiselect(key="vm_attackers_backends").set_value([]).run()
    assert not at.exception, at.exception
    assert "Choose at least one back-end" in unescaped_text(at.error)


def test_the_overview_warns_of_a_weak_attacker_with_its_reasons():
    study = _study()
    weak = dataclasses.replace(
        study.get("anon-mild"),
        recipe=AttackerRecipe("cosine", cautions=("its training data are too few",)),
    )
    at = _page(study.with_condition(weak), OVERVIEW)
    assert not at.error, [e.value for e in at.error]
    warnings = unescaped_text(at.warning)
    assert f"**anon-mild**: {WEAK_ATTACKER} (its training data are too few)" in warnings
    judged_against = unescaped_text(at.markdown)
    assert "- **anon-mild**: cosine" in judged_against  # the attacker it is judged against
    assert list(at.dataframe[0].value["Condition"]) == study.names  # every row judged
