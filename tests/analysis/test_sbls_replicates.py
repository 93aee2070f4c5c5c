"""SBLS's speaker-level bootstrap (voxmetrics.analysis.sbls.replicates) as a reweighting, proven
equal to re-running SBLS on each resample, and the paired comparison."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voxmetrics.analysis.sbls import (
    COMPONENTS,
    Attack,
    SBLSOptions,
    attack_sbls,
    compare_sbls,
    default_attack,
    embeddings_attack,
    sbls_intervals,
    sbls_replicates,
)
from voxmetrics.analysis.sbls import replicates as replicates_module
from voxmetrics.data.predictions import AttributePrediction
from voxmetrics.data.study import Study
from voxmetrics.metrics.bootstrap import speaker_bootstrap
from voxmetrics.metrics.uncertainty import SpeakerDraws
from voxmetrics.synth import demo_study

from .sbls_cases import sbls_statistic


@pytest.fixture(scope="module")
def demo() -> Study:
    return demo_study()


# ---------------------------------------------------------------- the slow reference


def slow_replicates(attack: Attack, options: SBLSOptions, draws: SpeakerDraws):
    """SBLS recomputed on each replicate's utterances (a speaker drawn c times, c copies)."""
    inv = draws.index(attack.speakers)
    statistic = sbls_statistic(attack, options)
    out = {k: np.empty(draws.n_boot) for k in COMPONENTS}
    for b in range(draws.n_boot):
        idx = np.concatenate(
            [np.tile(np.flatnonzero(inv == j), c) for j, c in enumerate(draws.counts[b]) if c]
        )
        for k, v in statistic(idx).items():
            out[k][b] = np.nan if v is None else v
    return out


def _assert_same(fast: dict, slow: dict) -> None:
    for k in COMPONENTS:
        np.testing.assert_array_equal(np.isnan(fast[k]), np.isnan(slow[k]), err_msg=k)
        np.testing.assert_allclose(fast[k], slow[k], rtol=0, atol=1e-12, err_msg=k)


def _attack(rng, n_spk, per_spk, soft, extra_cols, k_age, noise):
    """A random attack: speakers with fixed sex and age group, noisy scores or hard guesses."""
    spk = np.repeat([f"s{i:02d}" for i in range(n_spk)], per_spk)
    sex_of = rng.choice(["F", "M"], size=n_spk)
    age_of = rng.choice([f"a{i}" for i in range(k_age)], size=n_spk)
    labels = {"sex": sex_of[np.arange(n_spk).repeat(per_spk)]}
    labels["age"] = age_of[np.arange(n_spk).repeat(per_spk)]
    predictions = {}
    for a, y in labels.items():
        classes = sorted(set(y.tolist()) | {f"x{i}" for i in range(extra_cols)})
        onehot = (y[:, None] == np.array(classes)[None, :]).astype(float)
        scores = onehot + noise * rng.normal(size=onehot.shape)
        scores = np.round(scores, 1)  # ties, as real classifiers' rounded outputs have
        if soft:
            predictions[a] = AttributePrediction(tuple(classes), scores=scores)
        else:
            hard = np.array(classes)[np.argmax(scores, axis=1)]
            predictions[a] = AttributePrediction(tuple(classes), predicted=hard)
    n = spk.size
    return Attack(labels, predictions, spk, np.arange(n).astype(str), "random", "random")


# ---------------------------------------------------------------- the reweighting is a re-run


def test_replicates_equal_the_re_run_on_the_demo(demo):
    attack = embeddings_attack(demo.get("anon-mild"))
    options = SBLSOptions()
    draws = SpeakerDraws.draw(attack.speakers, n_boot=60, seed=3)
    _assert_same(sbls_replicates(attack, options, draws), slow_replicates(attack, options, draws))


def test_replicates_equal_the_re_run_with_a_minimum_group_size_some_replicates_miss(demo):
    attack = embeddings_attack(demo.get("anon-leaky"))
    options = SBLSOptions(min_group_size=130, subgroup_lambda=0.4, weights=(0.5, 0.3, 0.2))
    draws = SpeakerDraws.draw(attack.speakers, n_boot=40, seed=1)
    fast = sbls_replicates(attack, options, draws)
    _assert_same(fast, slow_replicates(attack, options, draws))
    assert np.isnan(fast["sbls"]).any() and np.isfinite(fast["sbls"]).any()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_spk=st.integers(3, 9),
    per_spk=st.integers(1, 6),
    soft=st.booleans(),
    extra_cols=st.integers(0, 1),
    k_age=st.integers(2, 3),
    noise=st.sampled_from([0.0, 0.4, 1.5]),
    min_group=st.integers(1, 8),
    n_boot=st.integers(3, 12),
)
def test_replicates_equal_the_re_run_property(
    seed, n_spk, per_spk, soft, extra_cols, k_age, noise, min_group, n_boot
):
    """Few speakers: classes vanish from replicates, attributes collapse to one class, the
    alignment changes between replicates, ties in scores, attackers with extra classes; more
    or fewer speakers than replicates (the speaker-pair or the per-utterance AUC sums)."""
    rng = np.random.default_rng(seed)
    attack = _attack(rng, n_spk, per_spk, soft, extra_cols, k_age, noise)
    options = SBLSOptions(min_group_size=min_group)
    draws = SpeakerDraws.draw(attack.speakers, n_boot=n_boot, seed=seed)
    _assert_same(sbls_replicates(attack, options, draws), slow_replicates(attack, options, draws))


def test_per_utterance_auc_sums_equal_the_speaker_pairs(monkeypatch):
    """The two exact routes to the AUCs (speaker pairs; per utterance for many speakers)."""
    rng = np.random.default_rng(5)
    attack = _attack(rng, 12, 5, True, 1, 3, 0.6)
    options = SBLSOptions(min_group_size=3)
    draws = SpeakerDraws.draw(attack.speakers, n_boot=30, seed=2)
    pairs = sbls_replicates(attack, options, draws)
    monkeypatch.setattr(replicates_module, "_PAIR_CELLS", 0)
    monkeypatch.setattr(replicates_module, "_CELLS", 100)  # several chunks of replicates
    direct = sbls_replicates(attack, options, draws)
    _assert_same(direct, pairs)
    _assert_same(direct, slow_replicates(attack, options, draws))


def test_a_resample_with_one_class_is_undefined():
    # two speakers, one per sex: a replicate drawing one of them twice has one class
    y = np.array(["F"] * 4 + ["M"] * 4)
    scores = np.c_[y == "F", y == "M"].astype(float)
    attack = Attack(
        {"sex": y},
        {"sex": AttributePrediction(("F", "M"), scores=scores)},
        np.array(["a"] * 4 + ["b"] * 4),
        np.arange(8).astype(str),
        "perfect",
        "k",
    )
    draws = SpeakerDraws(np.array(["a", "b"]), np.array([[1, 1], [2, 0], [0, 2]]))
    reps = sbls_replicates(attack, SBLSOptions(min_group_size=1), draws)
    assert reps["p_attr"].tolist()[0] == 0.0
    assert np.isnan(reps["p_attr"][1:]).all() and np.isnan(reps["sbls"][1:]).all()


def test_hand_computed_replicate():
    """Speaker a: F utterances scored 0.9, 0.2; speaker b: M scored 0.4; speaker c: M 0.1.

    Replicate (a, a, b): F weights 2 at 0.9 and 0.2, M weight 1 at 0.4; AUC of F with the F
    column = (2*1 [0.9 > 0.4] + 0) / (4 * 1) = 0.5, with the M column (1 - s) likewise 0.5:
    L = 0, P_attr = 1. The full data: AUC = (2 + 1) / (2 * 2) = 0.75, L = 0.5.
    """
    s = np.array([0.9, 0.2, 0.4, 0.1])
    y = np.array(["F", "F", "M", "M"])
    attack = Attack(
        {"sex": y},
        {"sex": AttributePrediction(("F", "M"), scores=np.c_[s, 1 - s])},
        np.array(["a", "a", "b", "c"]),
        np.arange(4).astype(str),
        "hand",
        "hand",
    )
    draws = SpeakerDraws(np.array(["a", "b", "c"]), np.array([[1, 1, 1], [2, 1, 0]]))
    reps = sbls_replicates(attack, SBLSOptions(min_group_size=1), draws)
    np.testing.assert_allclose(reps["p_attr"], [0.5, 1.0])
    assert attack_sbls(attack, SBLSOptions(min_group_size=1)).p_attr == 0.5


def test_intervals_equal_the_old_per_replicate_bootstrap(demo):
    """Same seed, same draws: the intervals of the former re-running bootstrap."""
    attack = embeddings_attack(demo.get("anon-strong"))
    options = SBLSOptions()
    ours = sbls_intervals(attack, options, n_boot=40, seed=7)
    old = speaker_bootstrap(sbls_statistic(attack, options), attack.speakers, n_boot=40, seed=7)
    for k in COMPONENTS:
        assert ours[k].estimate == old[k].estimate
        assert ours[k].n_valid == old[k].n_valid
        assert ours[k].low == pytest.approx(old[k].low, abs=1e-12)
        assert ours[k].high == pytest.approx(old[k].high, abs=1e-12)
        assert ours[k].low <= ours[k].estimate <= ours[k].high


def test_progress_is_reported(demo):
    attack = embeddings_attack(demo.get("anon-mild"))
    seen = []
    sbls_intervals(attack, SBLSOptions(), n_boot=10, progress=lambda f, m: seen.append(f))
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


# ---------------------------------------------------------------- the paired comparison


def test_compare_sbls_pairs_the_replicates(demo):
    a, b = default_attack(demo.get("anon-leaky")), default_attack(demo.get("anon-strong"))
    assert a is not None and b is not None
    draws = SpeakerDraws.draw(np.r_[a.speakers, b.speakers], n_boot=80, seed=0)
    comp = compare_sbls(a, b, draws)
    assert set(comp) == set(COMPONENTS)
    ra, rb = attack_sbls(a), attack_sbls(b)
    c = comp["sbls"]
    assert (c.a, c.b) == (ra.sbls, rb.sbls)
    assert c.difference == pytest.approx(rb.sbls - ra.sbls)
    assert c.interval[0] <= c.difference <= c.interval[1]
    # on the demo the informed attacker reads attributes better through anon-strong (0.74)
    # than through anon-leaky (0.86, which leaks identity, not attributes): a clear difference
    assert c.interval[1] < 0 and c.p_value < 0.05 and c.p_adjusted >= c.p_value - 1e-12
    # the interval is the percentile interval of the paired replicate differences
    d = (
        sbls_replicates(b, SBLSOptions(), draws)["sbls"]
        - sbls_replicates(a, SBLSOptions(), draws)["sbls"]
    )
    np.testing.assert_allclose(c.interval, np.quantile(d[np.isfinite(d)], [0.025, 0.975]))
    # a condition against itself: no difference, p = 1
    same = compare_sbls(a, a, draws)
    assert same["sbls"].difference == 0.0 and same["sbls"].p_value == 1.0


def test_compare_sbls_with_a_cache_gives_the_same_comparisons_once_per_attack(demo, monkeypatch):
    attacks = {n: default_attack(demo.get(n)) for n in ("plain", "anon-mild", "anon-strong")}
    speakers = sorted({s for a in attacks.values() for s in a.speakers.tolist()})
    draws = SpeakerDraws.draw(speakers, n_boot=40, seed=3)
    fresh = [
        compare_sbls(attacks["plain"], attacks[n], draws) for n in ("anon-mild", "anon-strong")
    ]
    calls = []
    real = replicates_module.sbls_replicates
    monkeypatch.setattr(
        replicates_module,
        "sbls_replicates",
        lambda *a, **k: calls.append(a[0].key) or real(*a, **k),
    )
    cache = {}
    cached = [
        compare_sbls(attacks["plain"], attacks[n], draws, cache=cache)
        for n in ("anon-mild", "anon-strong")
    ]
    assert cached == fresh
    assert len(calls) == 3 and len(cache) == 3  # "plain" once, then each other condition


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**16), ties=st.booleans())
def test_auc_sums_without_ties_equal_the_run_sums(seed, ties):
    """Scores without ties skip the sums over runs of tied scores: the same numbers."""
    rng = np.random.default_rng(seed)
    n, b = 60, 7
    y = rng.integers(0, 3, n)
    scores = rng.random((n, 2))
    if ties:
        scores = np.round(scores, 1)
    order = tuple(np.argsort(scores[:, j], kind="stable") for j in range(2))
    starts = tuple(
        np.flatnonzero(np.r_[True, np.diff(scores[o, j]) != 0]) for j, o in enumerate(order)
    )
    att = replicates_module._Attribute(y, 3, scores, order, starts)
    wu = rng.integers(0, 3, (b, n)).astype(np.float64)
    expected = np.full((b, 3, 2), np.nan)
    for j in range(2):  # the sums over runs, as before
        ws = wu[:, order[j]]
        total = np.add.reduceat(ws, starts[j], axis=1)
        ys = y[order[j]]
        for c in range(3):
            pos = np.add.reduceat(np.where(ys == c, ws, 0.0), starts[j], axis=1)
            neg = total - pos
            num = (pos * (np.cumsum(neg, axis=1) - neg + 0.5 * neg)).sum(axis=1)
            den = pos.sum(axis=1) * neg.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                expected[:, c, j] = np.where(den > 0, num / den, np.nan)
    np.testing.assert_array_equal(replicates_module._auc_sums(att, wu), expected)
