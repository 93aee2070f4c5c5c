"""Conversation length and the whole legal evaluation (legal/conversation.py).

Vauquier et al. 2025's figure 1 for one condition: linkability, singling out and the EER
against the number of speakers, for each conversation length L.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.metrics.legal.legal_cases import small_embedding_set
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.eer import eer_rocch
from voxmetrics.metrics.legal import (
    average_consecutive,
    conversation_length_curve,
    legal_evaluation,
    linkability,
    linkability_curve,
    singling_out,
    singling_out_embeddings,
    speaker_profiles,
)


def test_conversation_length_one_equals_the_plain_metrics():
    es = small_embedding_set()
    curve = conversation_length_curve(es, (1, 2, 3, 6))
    sm = es.score_matrix("eval")
    assert curve.linkability[0] == pytest.approx(linkability(sm.scores, sm.targets), abs=1e-12)
    assert curve.singling_out[0] == pytest.approx(singling_out_embeddings(es).value, abs=1e-12)
    assert (curve.n_enrolled, curve.n_speakers) == (6, 6)
    # L = 2, 3 leave 3 and 2 groups per speaker; L = 6 one group: no held-out fold -> NaN
    assert curve.lengths.tolist() == [1, 2, 3, 6]
    assert np.isfinite(curve.singling_out[:3]).all() and np.isnan(curve.singling_out[3])
    assert np.isfinite(curve.linkability).all()


def test_conversation_length_averages_before_scoring():
    # at L = 2 the curve's linkability is that of the explicitly averaged trial embeddings
    es = small_embedding_set(seed=4)
    curve = conversation_length_curve(es, (2,))
    meta = es.meta
    trial = (meta["role"] == "trial").to_numpy()
    enrol = ~trial
    t_emb, t_spk = average_consecutive(es.embeddings[trial], meta["speaker"][trial], 2)
    labels, profiles = speaker_profiles(es.embeddings[enrol], meta["speaker"][enrol])
    scores = t_emb @ profiles.T
    targets = np.array([labels.tolist().index(s) for s in t_spk])
    assert curve.linkability[0] == pytest.approx(linkability(scores, targets), abs=1e-12)
    so = singling_out(es.embeddings[enrol], meta["speaker"][enrol], t_emb, t_spk).value
    assert curve.singling_out[0] == pytest.approx(so, abs=1e-12)


def test_legal_evaluation_on_the_demo_follows_the_protocol():
    from voxmetrics.synth import demo_study

    es = demo_study().get("anon-mild").embeddings
    ev = legal_evaluation(es, lengths=[1, 3, 30], n_draws=3)
    assert ev.lengths == [1, 3]  # nobody has 30 trial utterances in the demo
    assert ev.skipped[0][0] == 30 and "30" in ev.skipped[0][1]
    one, three = ev.results
    # L = 1 is the plain linkability curve of the split's score matrix
    sm = es.score_matrix("eval")
    plain = linkability_curve(sm.scores, sm.targets)
    np.testing.assert_allclose(one.linkability.expected, plain.expected, atol=1e-12)
    assert one.eer.eer[-1] == pytest.approx(eer_rocch(sm.tar, sm.non), abs=1e-12)
    # averaging 3 utterances makes linkage easier and leaves a third of the trials
    assert three.n_trials * 3 <= one.n_trials
    assert three.linkability.expected[-1] > one.linkability.expected[-1]
    assert one.singling_out is not None
    d = json.loads(json.dumps(ev.to_dict()))
    assert d["lengths"] == [1, 3] and d["skipped"][0]["length"] == 30
    assert d["results"][0]["eer_vs_n"][-1][0] == sm.scores.shape[1]
    with pytest.raises(VoxMetricsInputError, match="no conversation length"):
        legal_evaluation(es, lengths=[500])


def test_legal_evaluation_clips_the_sizes_to_the_data():
    from voxmetrics.synth import demo_study

    es = demo_study(n_speakers=8).get("anon-mild").embeddings
    ev = legal_evaluation(es, lengths=[1], n=[2, 5, 1000], n_draws=2)
    r = ev.results[0]
    assert r.linkability.n.tolist() == [2, 5] == r.eer.n.tolist()
    assert r.singling_out is not None and r.singling_out.n.tolist() == [2, 5]
