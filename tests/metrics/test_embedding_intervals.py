"""Speaker-level intervals and replicates of singling out, DeID and G_VD (embedding_intervals).

The same speaker-level replicate weights as every other number: a drawn speaker brings its
singling-out predicate and its rows and columns of the similarity matrices. Checked against
the resampled matrices built explicitly and against hand-computed values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.metrics.linkage_cases import similarity_result, singled
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.embedding_intervals import (
    similarity_intervals,
    similarity_replicates,
    singling_out_interval,
    singling_out_replicates,
)
from voxmetrics.metrics.uncertainty import SpeakerDraws
from voxmetrics.report.frames import intervals_frame
from voxmetrics.report.study import build_study_report
from voxmetrics.synth import demo_study


@pytest.fixture(scope="module")
def demo():
    return demo_study(n_speakers=12)


def test_weighted_d_diag_equals_the_resampled_matrix_over_distinct_speaker_pairs():
    from voxmetrics.metrics.embedding_intervals import _weighted_d_diag
    from voxmetrics.metrics.similarity import d_diag

    rng = np.random.default_rng(8)
    m = rng.uniform(size=(6, 6))
    m = (m + m.T) / 2 + np.eye(6)
    assert _weighted_d_diag(m, np.ones((1, 6)))[0] == pytest.approx(d_diag(m))
    d = SpeakerDraws.draw(np.arange(6).astype(str), n_boot=20, seed=3)
    got = _weighted_d_diag(m, d.counts.astype(float))
    for b in range(20):
        drawn = np.repeat(np.arange(6), d.counts[b])
        diag = m[drawn, drawn].mean()
        off = [m[i, j] for i in drawn for j in drawn if i != j]
        assert got[b] == pytest.approx(abs(diag - np.mean(off)))


def test_similarity_intervals_bracket_deid_and_g_vd():
    from types import SimpleNamespace

    from voxmetrics.metrics.embedding_intervals import similarity_intervals
    from voxmetrics.metrics.similarity import voice_distinctiveness

    rng = np.random.default_rng(9)
    spk = np.arange(10).astype(str)

    def sim(strength):
        m = rng.uniform(0.2, 0.4, size=(10, 10))
        m = (m + m.T) / 2 + strength * np.eye(10)
        return SimpleNamespace(speakers=spk, matrix=m)

    oo, oa, aa = sim(0.5), sim(0.2), sim(0.3)
    res = SimpleNamespace(
        oo=oo, oa=oa, aa=aa, distinctiveness=voice_distinctiveness(oo.matrix, oa.matrix, aa.matrix)
    )
    ci = similarity_intervals(res, n_boot=200, seed=1)
    for k in ("deid", "g_vd", "d_diag_oo"):
        assert ci[k].low <= ci[k].estimate <= ci[k].high, k
    bad = SimpleNamespace(
        **{**vars(res), "aa": SimpleNamespace(speakers=spk[::-1], matrix=aa.matrix)}
    )
    with pytest.raises(VoxMetricsInputError, match="other speakers"):
        similarity_intervals(bad, n_boot=10)


def test_replicates_with_unit_weights_are_the_estimates():
    so = singled(["a", "b", "c"], [0.2, 0.5, 0.9])
    sim = similarity_result(
        ["a", "b", "c"],
        [[0.9, 0.2, 0.1], [0.2, 0.8, 0.3], [0.1, 0.3, 0.85]],
        [[0.6, 0.3, 0.2], [0.3, 0.5, 0.35], [0.2, 0.35, 0.55]],
        [[0.7, 0.4, 0.3], [0.4, 0.65, 0.45], [0.3, 0.45, 0.7]],
    )
    ones = SpeakerDraws(np.array(["a", "b", "c", "z"]), np.array([[1, 1, 1, 0], [1, 1, 1, 5]]))
    np.testing.assert_allclose(singling_out_replicates(so, ones), so.value)
    reps = similarity_replicates(sim, ones)
    np.testing.assert_allclose(reps["deid"], 0.589744, atol=1e-6)  # docs' worked example
    np.testing.assert_allclose(reps["g_vd"], -3.357921, atol=1e-6)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_intervals_are_unchanged_by_the_shared_replicate_functions(demo):
    """singling_out_interval and similarity_intervals: the weighted means, as before."""
    from voxmetrics.evaluation import evaluate_condition

    r = evaluate_condition(demo.get("anon-mild"))
    so = r.singling_out
    iv = singling_out_interval(so, n_boot=40, seed=3)
    d = SpeakerDraws.draw(so.predicates, n_boot=40, seed=3)
    w = d.counts[:, d.index(so.predicates)]
    ref = (w * so.per_predicate).sum(1) / w.sum(1)
    np.testing.assert_allclose([iv.low, iv.high], np.quantile(ref, [0.025, 0.975]))
    from voxmetrics.metrics.similarity import voice_similarity

    sim = voice_similarity(demo.get("plain").embeddings, demo.get("anon-mild").embeddings)
    ivs = similarity_intervals(sim, n_boot=40, seed=3)
    d = SpeakerDraws.draw(sim.oo.speakers, n_boot=40, seed=3)
    w = d.counts[:, d.index(sim.oo.speakers)].astype(float)

    def ddiag(m):  # the slow reference: mean over drawn diagonal cells, off over distinct pairs
        m = np.asarray(m.matrix)
        out = []
        for row in w:
            diag = (row * np.diag(m)).sum() / row.sum()
            pair = np.outer(row, row)
            np.fill_diagonal(pair, 0)
            out.append(abs(diag - (pair * m).sum() / pair.sum()))
        return np.array(out)

    deid = 1 - ddiag(sim.oa) / ddiag(sim.oo)
    np.testing.assert_allclose(
        [ivs["deid"].low, ivs["deid"].high], np.quantile(deid, [0.025, 0.975])
    )


# ----------------------------------------------------------------------------------------------
# The singling-out interval of a study report: the weighted mean of the predicate rates,
# in the JSON and in the intervals frame
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_report():
    """The study report of the demo of 12 speakers, 60 bootstrap replicates."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return build_study_report(demo_study(n_speakers=12), bootstrap=60)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_singling_out_interval_is_the_weighted_mean_of_predicate_rates(demo_report):
    from voxmetrics.metrics.embedding_intervals import singling_out_interval
    from voxmetrics.metrics.uncertainty import SpeakerDraws

    r = next(r for r in demo_report.reports if r.name == "anon-mild")
    so = r.singling_out
    assert so.per_predicate.mean() == pytest.approx(so.value)
    iv = singling_out_interval(so, n_boot=40, seed=2)
    d = SpeakerDraws.draw(so.predicates, n_boot=40, seed=2)
    w = d.counts[:, d.index(so.predicates)]
    reps = (w * so.per_predicate).sum(1) / w.sum(1)
    np.testing.assert_allclose([iv.low, iv.high], np.quantile(reps, [0.025, 0.975]))
    c = demo_report.to_dict()["conditions"]["anon-mild"]
    assert c["intervals"]["singling_out"] == [
        r.singling_out_interval.low,
        r.singling_out_interval.high,
    ]
    row = intervals_frame([r]).set_index("key").loc["singling_out"]
    assert row["chance"] == so.chance
