"""One verdict per number (voxmetrics.analysis.verdicts): the rule, its stability, small N.

The rule by hand for each of its three clauses, its invariants under hypothesis (a level is
"ok" only when nothing in its interval or chance level says otherwise; the vectorised levels
equal the scalar ones; a stability is a share), and the card of the demo at N = 5, where
LIDmax and linkability of one row must agree that the N is too small to judge.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.verdicts import (
    FLIP_MARK,
    FLIP_SHARE,
    LEVELS,
    REPORT_CARD_THRESHOLDS,
    Verdict,
    condition_verdicts,
    judge,
    replicate_stability,
    zebra_tag_index,
)
from voxmetrics.errors import VoxMetricsWarning
from voxmetrics.evaluation import evaluate_study
from voxmetrics.evaluation.card import report_card
from voxmetrics.metrics.zebra import zebra_tag
from voxmetrics.synth import demo_study

LINK = REPORT_CARD_THRESHOLDS["linkability_ratio"]
LID = REPORT_CARD_THRESHOLDS["lid_max"]
EER = REPORT_CARD_THRESHOLDS["eer"]


# ------------------------------------------------------------------ the rule by hand


def test_a_number_beyond_chance_is_read_off_its_thresholds():
    assert judge(LINK, 3.0, interval=(2.5, 3.5), chance=1.0, ceiling=40, n=40) == ("risk", "")
    assert judge(EER, 0.368, interval=(0.336, 0.402), n=40) == ("caution", "")


def test_at_chance_is_ok_only_when_chance_at_this_n_is_safe():
    assert judge(LINK, 1.1, interval=(0.6, 1.4), chance=1.0, ceiling=40, n=40) == (
        "ok",
        "≈ chance",
    )
    # a wide interval at chance is still "≈ chance" (random scores: few trials against N)
    assert judge(LINK, 1.5, interval=(0.0, 3.0), chance=1.0, ceiling=90, n=90)[0] == "ok"
    # the row's LIDmax says the N is too small: linkability's "≈ chance" says nothing either
    why = "LIDmax's chance is 0.52 bits, in the caution band"
    level, note = judge(LINK, 1.4, interval=(0.6, 2.0), chance=1.0, ceiling=5, n=5, small_n=why)
    assert level == "uninformative" and note == f"≈ chance, uninformative at N = 5: {why}"
    # beyond chance, the row's small N is no reason: the number is read off its thresholds
    assert judge(LINK, 3.0, interval=(2.5, 3.5), chance=1.0, ceiling=5, n=5, small_n=why) == (
        "risk",
        "",
    )
    # chance itself in the caution band (LIDmax at N = 5)
    level, note = judge(LID, 0.7, interval=(0.38, 0.70), chance=0.52, ceiling=math.log2(5), n=5)
    assert level == "uninformative" and "chance itself is 0.52" in note
    # chance at the ceiling log2 N
    level, note = judge(LID, 2.3, interval=(2.2, 2.32), chance=2.3219, ceiling=math.log2(5), n=5)
    assert level == "uninformative" and "ceiling" in note


def test_an_interval_spanning_ok_to_risk_cannot_say_either():
    level, note = judge(EER, 0.40, interval=(0.28, 0.47), n=12)
    assert level == "uninformative" and note == (
        "uninformative at N = 12: its interval [0.28, 0.47] spans ok to risk"
    )
    # caution to risk is still a verdict: the point's
    assert judge(EER, 0.31, interval=(0.28, 0.40), n=12) == ("caution", "")


def test_a_ceiling_below_the_risk_band_can_never_say_risk():
    # linkability at N = 2 is at most 2x chance: never above 2x
    assert judge(LINK, 2.0, ceiling=2, n=2)[0] == "uninformative"
    assert judge(LINK, 2.0, ceiling=3, n=3) == ("caution", "")


def test_unknown_is_not_available():
    assert judge(EER, None) == ("n/a", "")
    assert judge(EER, math.nan, interval=(0.1, 0.2)) == ("n/a", "")


# ------------------------------------------------------------------ invariants

_finite = st.floats(-5, 5, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(list(REPORT_CARD_THRESHOLDS)),
    _finite,
    st.one_of(st.none(), st.tuples(_finite, _finite)),
    st.one_of(st.none(), _finite),
    st.one_of(st.none(), st.floats(0, 10, allow_nan=False)),
)
def test_ok_only_when_nothing_says_otherwise(key, value, interval, chance, ceiling):
    t = REPORT_CARD_THRESHOLDS[key]
    if interval is not None:
        interval = (min(interval), max(interval))
    level, note = judge(t, value, interval=interval, chance=chance, ceiling=ceiling, n=7)
    assert level in LEVELS
    if not note:  # read off the thresholds
        assert level == t.level(value)
    if level == "ok" and not note and interval is not None:
        assert "risk" not in {t.level(value), t.level(interval[0]), t.level(interval[1])}
    if level == "ok" and note == "≈ chance":
        assert t.level(chance) == "ok"
        assert ceiling is None or chance < ceiling - 1e-3
    if ceiling is not None and t.level(ceiling) != "risk":
        assert level == "uninformative"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(REPORT_CARD_THRESHOLDS)),
    st.lists(st.one_of(_finite, st.just(math.nan)), max_size=30),
)
def test_vectorised_levels_equal_the_scalar_ones(key, values):
    t = REPORT_CARD_THRESHOLDS[key]
    assert t.levels(values).tolist() == [t.level(v) for v in values]
    for b in (t.caution, t.risk):  # boundaries: exactly on a threshold
        assert t.levels([b]).tolist() == [t.level(b)]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(list(REPORT_CARD_THRESHOLDS)),
    st.sampled_from(LEVELS),
    st.lists(st.one_of(_finite, st.just(math.nan)), max_size=40),
)
def test_stability_is_a_share_of_the_defined_replicates(key, level, reps):
    share, n = replicate_stability(REPORT_CARD_THRESHOLDS[key], level, reps)
    finite = [x for x in reps if math.isfinite(x)]
    if level in ("uninformative", "n/a") or not finite:
        assert share is None and n == 0
    else:
        assert 0.0 <= share <= 1.0 and n == len(finite)


def test_a_verdict_that_flips_is_marked():
    v = Verdict("eer", 0.45, "0.450", "ok", stability=FLIP_SHARE - 0.01, n_replicates=100)
    assert v.flips and v.text == f"0.450 {FLIP_MARK}"
    assert not Verdict("eer", 0.45, "0.450", "ok", stability=FLIP_SHARE).flips


def test_zebra_tag_index_is_the_tags_order():
    values = [0.0, 0.5, 1.0, 1.01, 2.0, 3.9, 4.0, 4.5, 5.5, 6.0, 6.1, np.nan]
    expected = [0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6]
    assert zebra_tag_index(values)[:-1].tolist() == expected
    assert math.isnan(zebra_tag_index(values)[-1])
    tags = ("0", "A", "B", "C", "D", "E", "F")
    assert [tags[i] for i in expected] == [zebra_tag(v) for v in values[:-1]]


# ------------------------------------------------------------------ the card at small N


@functools.cache
def _small(n_speakers: int = 5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        return evaluate_study(demo_study(n_speakers=n_speakers), bootstrap=200)


def test_one_small_n_rule_for_lidmax_and_linkability():
    reports = _small()
    card = report_card(reports)
    levels = card.frame("level").set_index("Condition")
    # random at N = 5: LIDmax's chance is in the caution band, so neither it nor linkability
    # (at chance, against the same N) can say "ok", and both say so with the same words
    row = levels.loc["random"]
    assert row["LIDmax (bits)"] == row["Linkability vs chance"] == "uninformative"
    text = card.frame("text").set_index("Condition").loc["random"]
    for col in ("LIDmax (bits)", "Linkability vs chance"):
        assert "uninformative at N = 5" in text[col]
    # no row has an "ok ≈ chance" linkability beside a LIDmax whose chance says the N is
    # too small
    notes = card.frame("note").set_index("Condition")
    for name in levels.index:
        lid, link = notes.loc[name, "LIDmax (bits)"], notes.loc[name, "Linkability vs chance"]
        if ("chance itself" in lid or "ceiling" in lid) and link.startswith("≈ chance"):
            assert link.startswith("≈ chance, uninformative at N = 5")


def test_every_card_cell_has_a_stability_with_a_bootstrap():
    card = report_card(_small())
    for row in card.cells:
        for cell in row:
            if cell.level in ("ok", "caution", "risk") and cell.n_replicates:
                assert 0.0 <= cell.stability <= 1.0
            if cell.level in ("uninformative", "n/a"):
                assert cell.stability is None
    d = card.to_dict()
    assert d["stability"]["flip_share"] == FLIP_SHARE
    for cells in d["conditions"].values():
        assert all({"stability", "flips", "note"} <= set(c) for c in cells.values())


def test_the_verdicts_are_the_cards():
    reports = _small()
    card = report_card(reports)
    for r, row in zip(reports, card.cells, strict=True):
        verdicts = condition_verdicts(r)
        assert [v.level for v in verdicts.values()] == [c.level for c in row]
        assert [v.text for v in verdicts.values()] == [c.text for c in row]


def test_without_a_bootstrap_the_levels_are_the_thresholds():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VoxMetricsWarning)
        reports = evaluate_study(demo_study(n_speakers=8), bootstrap=0)
    for r in reports:
        v = condition_verdicts(r)
        assert v["eer"].level == EER.level(r.baseline.eer) and v["eer"].stability is None
        ratio = r.baseline.linkability / r.chance_linkability
        assert v["linkability_ratio"].level == LINK.level(ratio)


def test_a_utility_with_replicates_has_a_stability():
    from voxmetrics.data.utility import Utility

    r = _small()[1]
    reps = np.array([0.05] * 90 + [0.12] * 10)
    u = Utility(wer=0.05, intervals={"wer": (0.05, 0.12)}, replicates={"wer": reps})
    v = condition_verdicts(dataclasses.replace(r, utility=u))["wer"]
    assert v.level == "ok" and v.stability == pytest.approx(0.9) and v.n_replicates == 100
    fixed = condition_verdicts(dataclasses.replace(r, utility=Utility(wer=0.05)))["wer"]
    assert fixed.stability is None  # known only as a number: taken as fixed
