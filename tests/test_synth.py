"""The demo study: seeded, the documented conditions, and the properties the dashboard relies on."""

from __future__ import annotations

import numpy as np
import pytest

from voxmetrics import baseline_metrics
from voxmetrics.synth import DEMO_SYSTEMS, demo_study, offset_scores


@pytest.fixture(scope="module")
def study():
    return demo_study()


def _baseline(sm):
    return baseline_metrics(sm.scores, sm.targets)


def test_five_conditions_with_dev_and_eval_of_disjoint_speakers(study):
    assert study.names == ["plain", "random", "anon-mild", "anon-strong", "anon-leaky"]
    for cond in study.conditions:
        assert cond.dev is not None and cond.embeddings is not None
        dev_spk = set(cond.dev.trial_speakers) | set(cond.dev.enrol_speakers)
        eval_spk = set(cond.eval.trial_speakers) | set(cond.eval.enrol_speakers)
        assert not dev_spk & eval_spk
        assert set(cond.eval.attributes) == {"sex", "age_group"}
        assert set(cond.eval.attributes["sex"]) == {"F", "M"}
        assert cond.eval.shape == (320, 40)


def test_seeded():
    a, b, c = demo_study(seed=3), demo_study(seed=3), demo_study(seed=4)
    assert np.array_equal(a.get("anon-mild").eval.scores, b.get("anon-mild").eval.scores)
    assert not np.array_equal(a.get("anon-mild").eval.scores, c.get("anon-mild").eval.scores)


def test_conditions_are_ordered_by_how_much_identity_they_keep(study):
    eer = {c.name: _baseline(c.eval).eer for c in study.conditions}
    assert eer["plain"] < 0.05
    assert eer["plain"] < eer["anon-mild"] < eer["anon-strong"] < eer["random"]
    assert abs(eer["random"] - 0.5) < 0.05


def test_leaky_system_has_high_eer_but_links_a_minority_far_above_chance(study):
    cond = study.get("anon-leaky")
    r = _baseline(cond.eval)
    assert r.eer >= 0.45
    assert r.linkability > 3 * r.chance_linkability
    # the linked trials concentrate on a few speakers: the exposed ones
    rows = np.arange(cond.eval.n_trials)
    mated = cond.eval.scores[rows, cond.eval.targets]
    others = cond.eval.scores.copy()
    others[rows, cond.eval.targets] = -np.inf
    linked = mated > others.max(axis=1)
    speakers = set(cond.eval.trial_speakers)
    per_speaker = {s: linked[cond.eval.trial_speakers == s].mean() for s in speakers}
    exposed = [s for s, v in per_speaker.items() if v > 0.5]
    assert 1 <= len(exposed) <= 0.2 * len(per_speaker)


def test_every_system_is_documented():
    import voxmetrics.synth as synth

    for system in DEMO_SYSTEMS:
        assert f"``{system.name}``" in synth.__doc__
        assert system.description


# ----------------------------------------------------------------------------------------------
# offset_scores, the generator of the threat model's scenarios
# ----------------------------------------------------------------------------------------------


def test_offset_scores_model():
    sm = offset_scores(n_enrolled=4, n_trials=10, margin=0.5, offset_spread=0.0, noise=0.0)
    assert sm.shape == (10, 4)
    assert sm.targets.tolist() == [k % 4 for k in range(10)]
    # no offset, no noise: the own speaker scores `margin`, everyone else 0
    expected = np.zeros((10, 4))
    expected[np.arange(10), sm.targets] = 0.5
    np.testing.assert_array_equal(sm.scores, expected)
    with pytest.raises(ValueError):
        offset_scores(n_enrolled=1)


def test_offset_scores_is_seeded():
    a, b = offset_scores(seed=5), offset_scores(seed=5)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert not np.array_equal(a.scores, offset_scores(seed=6).scores)
