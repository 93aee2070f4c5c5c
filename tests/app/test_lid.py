"""The LID page through the app's entrypoint with Streamlit's AppTest (style.md 17)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from app_cases import APP, unescaped_text
from streamlit.testing.v1 import AppTest

from tests.vpc_tree import write_tree
from voxmetrics.analysis.lid import NEEDS_CALIBRATION
from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.data.vpc import read_vpc_tree
from voxmetrics.synth import demo_study
from voxmetrics.ui.state import STUDY_KEY

LID_PAGE = "pages/3_LID.py"
DEMO_NAMES = ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
SUMMARY_COLUMNS = [
    "Condition", "Calibration", "N", "T", "EER", "min Cllr", "ALID (bits)", "PDR (%)",
    "NDR (%)", "LID+ (bits)", "LID- (bits)", "LIDmax (bits)", "w", "b",
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("fresh_app_caches")


def _lid_page(study: Study | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    if study is not None:
        at.session_state[STUDY_KEY] = study
    at.switch_page(LID_PAGE).run()
    assert not at.exception, at.exception
    return at


def _table(at: AppTest, first_column: str = "Condition", with_column: str | None = None):
    """The first dataframe whose columns start with ``first_column`` (and have another)."""
    for df in at.dataframe:
        value = df.value
        if value.columns[0] == first_column and (with_column is None or with_column in value):
            return value
    raise AssertionError(f"no table with {first_column!r} / {with_column!r}")


def _summary(at: AppTest):
    return _table(at, with_column="LIDmax (bits)")


def _trials(at: AppTest):
    tables = [d for d in at.dataframe if (d.key or "").startswith("vm_lid_trials_")]
    assert len(tables) == 1
    return tables[0]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _no_dev_study() -> Study:
    """The demo with one more condition: anon-mild's eval scores without a dev set."""
    demo = demo_study()
    return demo.with_condition(Condition("mild-no-dev", eval=demo.get("anon-mild").eval))


# ---------------------------------------------------------------- smoke test and summary


def test_lid_page_on_the_demo_study():
    at = _lid_page()
    assert not at.error
    assert [h.value for h in at.header] == [
        "Summary",
        "How many trials disclose how much",
        "Posterior of the true speaker",
        "Per-trial disclosure",
        "Calibration",
        "Trial explorer",
    ]
    df = _summary(at)
    assert list(df.columns) == SUMMARY_COLUMNS
    assert list(df["Condition"]) == DEMO_NAMES
    assert set(df["Calibration"]) == {"dev"}
    assert (df["N"] == 40).all() and (df["T"] == 320).all()
    leaky = df.set_index("Condition").loc["anon-leaky"]
    assert leaky["EER"] > 0.45 and leaky["LIDmax (bits)"] > 1.0
    # PDR and NDR are percentages that add up to 100
    assert ((df["PDR (%)"] + df["NDR (%)"]) - 100).abs().max() < 1e-9
    assert (df["LIDmax (bits)"] <= 5.33).all()
    # the plain-words explanation and the localised-vulnerability line
    intro = unescaped_text(at.markdown)
    assert "bits" in intro and "log₂ N" in intro and "Negative LID" in intro
    flagged = [w.value for w in at.warning if "localised vulnerability" in w.value]
    assert len(flagged) == 1 and "anon\\-leaky" in flagged[0]
    # bootstrap is on by default: intervals next to their estimates
    intervals = _table(at, with_column="LID q95 95% CI (bits)")
    assert list(intervals["Condition"]) == DEMO_NAMES
    assert {"ALID 95% CI (bits)", "PDR 95% CI (%)", "LID+ 95% CI (bits)"} <= set(intervals)
    assert intervals["ALID 95% CI (bits)"].str.fullmatch(r"\[-?\d+\.\d\d, -?\d+\.\d\d\]").all()
    # the calibration table has one (w, b) per condition
    cal = _table(at, with_column="Prior log-odds")
    assert list(cal["Condition"]) == DEMO_NAMES and (cal["Variant"] == "reference-code").all()
    # the study's bootstrap (200), the same replicates as the report's intervals
    assert at.number_input(key="vm_lid_boot").value == 200
    assert "200 replicates" in unescaped_text(at.caption)


def test_trial_explorer_opens_on_the_largest_lid_of_the_flagged_condition():
    at = _lid_page()
    assert at.selectbox(key="vm_lid_trial_condition").value == "anon-leaky"
    trials = _trials(at).value
    assert list(trials.columns[:5]) == ["Trial", "Speaker", "Rank", "p(target)", "LID (bits)"]
    assert len(trials) == 320
    assert trials["LID (bits)"].is_monotonic_decreasing
    top = trials.iloc[0]
    summary = _summary(at).set_index("Condition")
    assert top["LID (bits)"] == pytest.approx(summary.loc["anon-leaky", "LIDmax (bits)"])
    shown = _metrics(at)
    assert shown["LID"] == f"{top['LID (bits)']:.2f} bits"
    assert shown["Rank of the true speaker"] == f"{top['Rank']} of 40"
    assert f"Trial {top['Trial']}" in unescaped_text(at.markdown)


def test_selecting_a_trial_shows_it():
    at = _lid_page()
    table = _trials(at)
    trials = table.value
    # AppTest cannot click the grid; the selection state accepts writes through its key
    at.session_state[table.key] = {"selection": {"rows": [7]}}
    at.run()
    assert not at.exception
    row = trials.iloc[7]
    shown = _metrics(at)
    assert shown["LID"] == f"{row['LID (bits)']:.2f} bits"
    assert shown["p(target)"] == f"{row['p(target)']:.3f}"
    assert shown["Rank of the true speaker"] == f"{row['Rank']} of 40"
    assert f"Trial {row['Trial']}" in unescaped_text(at.markdown)
    # another condition: a fresh table, opened on its own largest LID
    at.selectbox(key="vm_lid_trial_condition").select("plain").run()
    assert not at.exception
    plain = _trials(at).value
    assert f"Trial {plain.iloc[0]['Trial']}" in unescaped_text(at.markdown)


def test_clearing_the_selection_falls_back_to_the_largest_lid():
    at = _lid_page()
    table = _trials(at)
    at.session_state[table.key] = {"selection": {"rows": []}}
    at.run()
    assert not at.exception
    assert "No row selected" in unescaped_text(at.caption)
    assert f"Trial {table.value.iloc[0]['Trial']}" in unescaped_text(at.markdown)


# ---------------------------------------------------------------- options


def test_bootstrap_off_hides_the_intervals():
    at = _lid_page()
    at.number_input(key="vm_lid_boot").set_value(0).run()
    assert not at.exception
    for df in at.dataframe:
        assert not [c for c in df.value.columns if "95% CI" in c]
    assert "Bootstrap intervals are off" in unescaped_text(at.caption)
    assert "95 % intervals" not in [s.value for s in at.subheader]
    assert len(_summary(at)) == 5


def test_cross_calibration_of_a_condition_without_dev_set():
    at = _lid_page(_no_dev_study())
    df = _summary(at).set_index("Condition")
    assert df.loc["mild-no-dev", "Calibration"] == NEEDS_CALIBRATION
    assert df["LIDmax (bits)"].isna()["mild-no-dev"]
    assert any("mild\\-no\\-dev" in i.value and "needs calibration" in i.value for i in at.info)
    assert "mild-no-dev" not in at.selectbox(key="vm_lid_trial_condition").options

    toggle = at.toggle(key="vm_lid_crosscal")
    assert not toggle.disabled
    toggle.set_value(True).run()
    assert not at.exception and not at.error
    df = _summary(at).set_index("Condition")
    label = df.loc["mild-no-dev", "Calibration"]
    assert "cross-calibrated" in label and "5-fold" in label
    assert df.loc["anon-mild", "Calibration"] == "dev"
    assert 0 < df.loc["mild-no-dev", "LIDmax (bits)"] <= 5.33
    # labelled in the interval and calibration tables and in the pickers
    intervals = _table(at, with_column="ALID 95% CI (bits)").set_index("Condition")
    assert "cross-calibrated" in intervals.loc["mild-no-dev", "Calibration"]
    cal = _table(at, with_column="Fold w").set_index("Condition")
    assert len(cal.loc["mild-no-dev", "Fold w"].split(", ")) == 5
    at.selectbox(key="vm_lid_cal_condition").select("mild-no-dev").run()
    fold_note = unescaped_text(at.caption)
    assert "curve is computed on eval with the mean of the folds' calibrations" in fold_note
    at.selectbox(key="vm_lid_trial_condition").select("mild-no-dev").run()
    assert not at.exception
    captions = unescaped_text(at.caption)
    assert "trials of mild-no-dev (cross-calibrated)" in captions
    assert "Cross-calibrated: the posterior is drawn with the mean" in captions
    # another k changes the label
    at.number_input(key="vm_lid_k").set_value(3).run()
    assert "3-fold" in _summary(at).set_index("Condition").loc["mild-no-dev", "Calibration"]


def test_cross_calibration_is_disabled_when_every_condition_has_dev():
    at = _lid_page()
    assert at.toggle(key="vm_lid_crosscal").disabled
    assert "cross-calibration is not needed" in unescaped_text(at.caption)


def test_maximum_likelihood_variant_changes_the_calibration():
    at = _lid_page()
    before = _summary(at).set_index("Condition")
    at.radio(key="vm_lid_variant").set_value("maximum-likelihood").run()
    assert not at.exception
    after = _summary(at).set_index("Condition")
    cal = _table(at, with_column="Prior log-odds")
    assert (cal["Variant"] == "maximum-likelihood").all()
    assert (after["w"] != before["w"]).all()
    assert after.loc["anon-leaky", "ALID (bits)"] != before.loc["anon-leaky", "ALID (bits)"]
    assert after["EER"].equals(before["EER"])  # the baseline does not depend on LID options
    notes = unescaped_text(at.caption)
    assert "Only its slope w matters" not in notes  # a note of the balanced fit


def test_condition_selection():
    at = _lid_page()
    at.multiselect(key="vm_lid_conditions").set_value(["random", "anon-leaky"]).run()
    assert not at.exception
    assert list(_summary(at)["Condition"]) == ["random", "anon-leaky"]
    at.multiselect(key="vm_lid_conditions").set_value([]).run()
    assert not at.exception
    assert "Pick at least one condition" in at.info[0].value
    assert not at.dataframe


def test_empty_study_is_explained():
    at = _lid_page(Study())
    assert not at.exception
    assert "no conditions yet" in at.info[0].value
    assert not at.dataframe


def test_lid_is_in_the_menu_and_overview_has_the_lidmax_figure():
    at = _lid_page()
    assert "LID" in [p.label for p in at.sidebar.get("page_link")]
    at.switch_page("pages/1_Overview.py").run()
    assert not at.exception
    assert "EER vs worst-case disclosure (LIDmax)" in unescaped_text(at.markdown)
    assert "shaded corner" in unescaped_text(at.caption)


def test_removing_a_condition_on_the_page_keeps_it_working():
    at = _lid_page()
    at.selectbox(key="vm_manage_condition").select("anon-leaky").run()
    at.button(key="vm_remove").click().run()
    at.button(key="vm_remove_yes").click().run()
    assert not at.exception
    assert at.multiselect(key="vm_lid_conditions").value == DEMO_NAMES[:4]
    assert list(_summary(at)["Condition"]) == DEMO_NAMES[:4]
    # no flagged condition left: the explorer opens on the first one
    assert at.selectbox(key="vm_lid_trial_condition").value == "plain"
    assert "No selected condition has a near-chance EER" in unescaped_text(at.caption)


def test_lid_numbers_are_shown_against_chance():
    at = _lid_page()
    df = _table(at, with_column="Excess over chance")
    assert set(df["Condition"]) == set(DEMO_NAMES)
    alid = df[df["Number"] == "ALID (bits)"].set_index("Condition")
    assert (alid["Excess over chance"] == alid["Value"] - alid["Chance"]).all()
    # every anonymised or plain condition discloses beyond chance; random scores do not
    assert (alid.drop("random")["Excess over chance"] > 0.1).all()
    assert abs(alid.loc["random", "Excess over chance"]) < 0.1


def test_the_variant_defaults_to_the_study_setting():

    from voxmetrics.data.study import StudySettings

    study = dataclasses.replace(
        demo_study(), settings=StudySettings(lid_variant="maximum-likelihood")
    )
    at = _lid_page(study)
    assert at.radio(key="vm_lid_variant").value == "maximum-likelihood"
    cal = _table(at, with_column="Prior log-odds")
    assert (cal["Variant"] == "maximum-likelihood").all()


def test_the_studys_tie_rules_reach_the_eer_and_the_chance_levels():
    """The page's EER and chance levels follow the study's tie rules (it used the defaults)."""

    from voxmetrics.data.study import StudySettings
    from voxmetrics.evaluation import evaluate_condition

    demo = demo_study()
    cond = Condition(
        "tied",
        eval=dataclasses.replace(
            demo.get("anon-leaky").eval, scores=np.round(demo.get("anon-leaky").eval.scores, 1)
        ),
        dev=demo.get("anon-leaky").dev,
    )
    settings = StudySettings(ties="attacker", linkability_rule="strict")
    at = _lid_page(Study(conditions=(cond,), name="tied", settings=settings))
    full = evaluate_condition(cond, ties="attacker", linkability_rule="strict")
    default = evaluate_condition(cond)
    assert full.baseline.eer != default.baseline.eer  # the rules matter on these ties
    summary = _summary(at)
    assert summary["EER"].tolist() == [full.baseline.eer]
    assert summary["LIDmax (bits)"].tolist() == [full.lid.lid_max]


def test_numbers_another_page_computed_are_not_computed_again(monkeypatch):
    import voxmetrics.evaluation.engine as engine

    calls = []
    real = engine.evaluate

    def counted(*args, **kwargs):
        calls.append(kwargs.get("name"))
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "evaluate", counted)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/9_Threat_model.py").run()  # every condition's identity parts
    assert not at.exception, at.exception
    assert sorted(calls) == sorted(DEMO_NAMES)
    at.switch_page(LID_PAGE).run()
    assert not at.exception, at.exception
    assert _summary(at)["Condition"].tolist() == DEMO_NAMES
    assert len(calls) == len(DEMO_NAMES)  # nothing computed again


TIMEOUT = 240


@pytest.mark.filterwarnings("ignore::voxmetrics.errors.VoxMetricsWarning")
@pytest.mark.usefixtures("fresh_app_caches")
def test_lid_page_states_the_ceiling_of_its_own_n():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[STUDY_KEY] = demo_study(n_speakers=5)
    at.run()
    at.switch_page("pages/3_LID.py").run()
    assert not at.exception
    intro = "\n".join(str(m.value) for m in at.markdown)
    assert "2.3 bits: N = 5" in intro and "N = 40" not in intro


def test_a_voiceprivacy_tree_gets_its_calibration_curve_per_gender(tmp_path):
    """A VoicePrivacy list is complete within each gender, its dev list too: LID is calibrated
    per gender, and the calibration curve pools the genders' dev lists (no error)."""
    root = write_tree(tmp_path / "vpc", n_speakers=4, n_utts=4, seed=1)
    study = dataclasses.replace(read_vpc_tree(root).study, settings=StudySettings(bootstrap=0))
    at = _lid_page(study)
    assert not at.error, [e.value for e in at.error]
    assert len(_summary(at)) == len(study)  # every condition's LID, none left out
    shown = at.selectbox(key="vm_lid_cal_condition").value
    assert shown in study.names
    captions = unescaped_text(at.caption)
    assert "Its trials are ranked within their own sex group, and each group is calibrated" in (
        captions
    )
    keys = [b.key for b in at.main.get("download_button")]
    assert f"vm_dl_lid_calibration_{shown}.html" in keys  # the curve is drawn, with its download
